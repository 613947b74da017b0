/* SPDX-License-Identifier: MIT */
#include "parser/scan.h"

#include <pthread.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(TD_NO_SIMD) /* -DTD_NO_SIMD: portable */
#define TD_X86 1
#include <immintrin.h>
#define T_SSE __attribute__((target("ssse3")))
#define T_AVX2 __attribute__((target("avx2,pclmul,popcnt")))
#endif

/* --- one block's step: the same arithmetic in every implementation ---------------------- */

struct masks {
	uint64_t q, bs, ws, st; /* bit j for byte j: quote, backslash, whitespace, { } [ ] : , */
};

/* The bytes escaped by the runs of backslashes, branch-free; the carry in and out is whether
 * the block's first byte, and the next block's, is escaped. */
static inline uint64_t escapes(struct td_scan *s, uint64_t bs)
{
	const uint64_t even = 0x5555555555555555ull;
	uint64_t carry = s->bs_run & 1, escaped = 0;

	if (bs | carry) {
		uint64_t starts, follows, odd_starts, sum;
		bs &= ~carry;
		follows = bs << 1 | carry;
		odd_starts = bs & ~even & ~follows;
		carry = __builtin_add_overflow(odd_starts, bs, &sum);
		starts = sum << 1;
		escaped = (even ^ starts) & follows;
	}
	s->bs_run = carry;
	return escaped;
}

/* From the unescaped quotes q and their prefix XOR: the string state, and the whitespace to
 * drop: the runs outside strings that follow a structural byte or a quote. A run is found by
 * adding its seed (its first byte) to the whitespace mask: the carry runs through it. */
static inline uint64_t after_quotes(struct td_scan *s, uint64_t q, uint64_t in, uint64_t ws,
				    uint64_t st, uint64_t at)
{
	uint64_t opens, w, sx, seeds, sum;

	if (s->in_str)
		in = ~in;
	opens = q & in; /* quotes that open a string */
	if (opens)
		s->str_open = at + 63 - (uint64_t)__builtin_clzll(opens);
	s->in_str = (int)(in >> 63);
	w = ws & ~in;
	sx = (st & ~in) | q;
	seeds = w & (sx << 1 | s->ws_seed);
	s->ws_seed = (uint64_t)__builtin_add_overflow(w, seeds, &sum) | sx >> 63;
	return w & ~sum;
}

static inline uint64_t pxor_shift(uint64_t x)
{
	x ^= x << 1;
	x ^= x << 2;
	x ^= x << 4;
	x ^= x << 8;
	x ^= x << 16;
	x ^= x << 32;
	return x;
}

/* --- portable: 8 bytes at a time in a word --------------------------------------------- */

/* the high bits of a td_bytes_eq() result as 8 bits, byte j to bit j */
static inline uint64_t gather8(uint64_t hi)
{
	return (hi >> 7) * 0x0102040810204080ull >> 56;
}

static inline void classify_portable(const unsigned char *b, struct masks *m)
{
	int k;

	m->q = m->bs = m->ws = m->st = 0;
	for (k = 0; k < 8; k++) {
		uint64_t w = td_load_le64(b + 8 * k), w20 = w | 0x2020202020202020ull;
		m->q |= gather8(td_bytes_eq(w, '"')) << (8 * k);
		m->bs |= gather8(td_bytes_eq(w, '\\')) << (8 * k);
		m->ws |= gather8(td_bytes_eq(w, ' ') | td_bytes_eq(w, '\n') | td_bytes_eq(w, '\t') |
				 td_bytes_eq(w, '\r')) << (8 * k);
		/* '[' | 0x20 is '{' and ']' | 0x20 is '}' */
		m->st |= gather8(td_bytes_eq(w20, '{') | td_bytes_eq(w20, '}') | td_bytes_eq(w, ':') |
				 td_bytes_eq(w, ',')) << (8 * k);
	}
}

static inline size_t compact_portable(const unsigned char *b, uint64_t keep, unsigned char *out)
{
	size_t o = 0;
	int j;

	for (j = 0; j < 64; j++) {
		out[o] = b[j];
		o += (size_t)(keep >> j) & 1;
	}
	return o;
}

/* The loop, for each implementation's classify, prefix XOR and compaction; without out, only
 * the string state (quotes and backslashes: CLASSIFY_QB), and whitespace after it is kept. */
#define SCAN_BLOCKS(CLASSIFY, CLASSIFY_QB, PXOR, COMPACT)                                        \
	size_t i, o;                                                                             \
	if (!out) {                                                                              \
		for (i = 0; i < n; i += 64) {                                                    \
			uint64_t q, bs, in;                                                      \
			CLASSIFY_QB(b + i, &q, &bs);                                             \
			q &= ~escapes(s, bs);                                                    \
			in = PXOR(q);                                                            \
			(void)after_quotes(s, q, in, 0, 0, at + i);                              \
			if (s->in_str && at + i + 64 - s->str_open > max) {                      \
				i += 64;                                                         \
				break;                                                           \
			}                                                                        \
		}                                                                                \
		s->ws_seed = 0;                                                                  \
		return i;                                                                        \
	}                                                                                        \
	o = *out_len;                                                                            \
	for (i = 0; i < n; i += 64) {                                                            \
		struct masks m;                                                                  \
		uint64_t q, drop;                                                                \
		CLASSIFY(b + i, &m);                                                             \
		q = m.q & ~escapes(s, m.bs);                                                     \
		drop = after_quotes(s, q, PXOR(q), m.ws, m.st, at + i);                         \
		if (drop) {                                                                      \
			o += COMPACT(b + i, ~drop, out + o);                                     \
		} else {                                                                         \
			memcpy(out + o, b + i, 64);                                              \
			o += 64;                                                                 \
		}                                                                                \
		if (s->in_str && at + i + 64 - s->str_open > max) {                              \
			i += 64;                                                                 \
			break;                                                                   \
		}                                                                                \
		if (i + 64 >= soft && s->ws_seed && !s->in_str) { /* between two tokens */      \
			i += 64;                                                                 \
			break;                                                                   \
		}                                                                                \
	}                                                                                        \
	*out_len = o;                                                                            \
	return i

static inline void qb_portable(const unsigned char *b, uint64_t *q, uint64_t *bs)
{
	int k;

	*q = *bs = 0;
	for (k = 0; k < 8; k++) {
		uint64_t w = td_load_le64(b + 8 * k);
		*q |= gather8(td_bytes_eq(w, '"')) << (8 * k);
		*bs |= gather8(td_bytes_eq(w, '\\')) << (8 * k);
	}
}

static size_t blocks_portable(struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
			      uint64_t max, unsigned char *out, size_t *out_len, size_t soft)
{
	SCAN_BLOCKS(classify_portable, qb_portable, pxor_shift, compact_portable);
}

static uint64_t lines_portable(const unsigned char *b, size_t len, size_t *last_nl)
{
	const unsigned char *s = b, *end = b + len, *nl;
	uint64_t n = 0;

	while (s < end && (nl = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		n++;
		*last_nl = (size_t)(nl - b);
		s = nl + 1;
	}
	return n;
}

#ifdef TD_X86
/* a 64-byte block's newline mask m (the block at i) into the count and the last one */
static inline void lines_block(uint64_t m, size_t i, uint64_t *n, size_t *last_nl)
{
	if (m) {
		*n += (uint64_t)__builtin_popcountll(m);
		*last_nl = i + 63 - (size_t)__builtin_clzll(m);
	}
}

/* the bytes after the last whole block, b[i..len) */
static uint64_t lines_tail(const unsigned char *b, size_t i, size_t len, uint64_t n,
			   size_t *last_nl)
{
	size_t tail_nl = 0;
	uint64_t t = i < len ? lines_portable(b + i, len - i, &tail_nl) : 0;

	if (t)
		*last_nl = i + tail_nl;
	return n + t;
}

/* --- SSE2 masks, SSSE3 compaction (8 bytes through a shuffle from a table) --------------- */

static unsigned char shuf_tab[256][8]; /* the kept bytes' indices first, then 0x80 (zero) */
static unsigned char pop_tab[256];

static inline void classify_sse2(const unsigned char *b, struct masks *m)
{
	const __m128i cq = _mm_set1_epi8('"'), cb = _mm_set1_epi8('\\'), csp = _mm_set1_epi8(' '),
		      cnl = _mm_set1_epi8('\n'), ctab = _mm_set1_epi8('\t'), ccr = _mm_set1_epi8('\r'),
		      c20 = _mm_set1_epi8(0x20), clb = _mm_set1_epi8('{'), crb = _mm_set1_epi8('}'),
		      ccol = _mm_set1_epi8(':'), ccom = _mm_set1_epi8(',');
	int k;

	m->q = m->bs = m->ws = m->st = 0;
	for (k = 0; k < 4; k++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * k));
		__m128i x20 = _mm_or_si128(x, c20);
		__m128i w = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, csp), _mm_cmpeq_epi8(x, cnl)),
					 _mm_or_si128(_mm_cmpeq_epi8(x, ctab), _mm_cmpeq_epi8(x, ccr)));
		__m128i st = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x20, clb), _mm_cmpeq_epi8(x20, crb)),
					  _mm_or_si128(_mm_cmpeq_epi8(x, ccol), _mm_cmpeq_epi8(x, ccom)));
		m->q |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cq)) << (16 * k);
		m->bs |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cb)) << (16 * k);
		m->ws |= (uint64_t)(uint16_t)_mm_movemask_epi8(w) << (16 * k);
		m->st |= (uint64_t)(uint16_t)_mm_movemask_epi8(st) << (16 * k);
	}
}

static inline void qb_sse2(const unsigned char *b, uint64_t *q, uint64_t *bs)
{
	const __m128i cq = _mm_set1_epi8('"'), cb = _mm_set1_epi8('\\');
	int k;

	*q = *bs = 0;
	for (k = 0; k < 4; k++) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + 16 * k));
		*q |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cq)) << (16 * k);
		*bs |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cb)) << (16 * k);
	}
}

T_SSE static inline size_t compact_ssse3(const unsigned char *b, uint64_t keep, unsigned char *out)
{
	size_t o = 0;
	int h;

	for (h = 0; h < 8; h++) {
		unsigned k = (unsigned)(keep >> (8 * h)) & 0xff;
		__m128i x = _mm_loadl_epi64((const __m128i *)(const void *)(b + 8 * h));
		__m128i sh = _mm_loadl_epi64((const __m128i *)(const void *)shuf_tab[k]);
		_mm_storel_epi64((__m128i *)(void *)(out + o), _mm_shuffle_epi8(x, sh));
		o += pop_tab[k];
	}
	return o;
}

T_SSE static size_t blocks_sse(struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
			       uint64_t max, unsigned char *out, size_t *out_len, size_t soft)
{
	SCAN_BLOCKS(classify_sse2, qb_sse2, pxor_shift, compact_ssse3);
}

static uint64_t lines_sse(const unsigned char *b, size_t len, size_t *last_nl)
{
	const __m128i cnl = _mm_set1_epi8('\n');
	uint64_t n = 0;
	size_t i;

	for (i = 0; i + 64 <= len; i += 64) {
		uint64_t m = 0;
		int k;
		for (k = 0; k < 4; k++) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16 * k));
			m |= (uint64_t)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, cnl)) << (16 * k);
		}
		lines_block(m, i, &n, last_nl);
	}
	return lines_tail(b, i, len, n, last_nl);
}

/* --- AVX2: a block is two registers; the SSSE3 compaction ------------------------------- */

T_AVX2 static inline void classify_avx2(const unsigned char *b, struct masks *m)
{
	const __m256i cq = _mm256_set1_epi8('"'), cb = _mm256_set1_epi8('\\'),
		      csp = _mm256_set1_epi8(' '), cnl = _mm256_set1_epi8('\n'),
		      ctab = _mm256_set1_epi8('\t'), ccr = _mm256_set1_epi8('\r'),
		      c20 = _mm256_set1_epi8(0x20), clb = _mm256_set1_epi8('{'),
		      crb = _mm256_set1_epi8('}'), ccol = _mm256_set1_epi8(':'),
		      ccom = _mm256_set1_epi8(',');
	int k;

	m->q = m->bs = m->ws = m->st = 0;
	for (k = 0; k < 2; k++) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32 * k));
		__m256i x20 = _mm256_or_si256(x, c20);
		__m256i w = _mm256_or_si256(
			_mm256_or_si256(_mm256_cmpeq_epi8(x, csp), _mm256_cmpeq_epi8(x, cnl)),
			_mm256_or_si256(_mm256_cmpeq_epi8(x, ctab), _mm256_cmpeq_epi8(x, ccr)));
		__m256i st = _mm256_or_si256(
			_mm256_or_si256(_mm256_cmpeq_epi8(x20, clb), _mm256_cmpeq_epi8(x20, crb)),
			_mm256_or_si256(_mm256_cmpeq_epi8(x, ccol), _mm256_cmpeq_epi8(x, ccom)));
		m->q |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, cq)) << (32 * k);
		m->bs |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, cb)) << (32 * k);
		m->ws |= (uint64_t)(uint32_t)_mm256_movemask_epi8(w) << (32 * k);
		m->st |= (uint64_t)(uint32_t)_mm256_movemask_epi8(st) << (32 * k);
	}
}

T_AVX2 static inline void qb_avx2(const unsigned char *b, uint64_t *q, uint64_t *bs)
{
	const __m256i cq = _mm256_set1_epi8('"'), cb = _mm256_set1_epi8('\\');
	int k;

	*q = *bs = 0;
	for (k = 0; k < 2; k++) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32 * k));
		*q |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, cq)) << (32 * k);
		*bs |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(x, cb)) << (32 * k);
	}
}

/* the prefix XOR as one carry-less multiply by all ones */
T_AVX2 static inline uint64_t pxor_clmul_avx2(uint64_t q)
{
	__m128i v = _mm_clmulepi64_si128(_mm_cvtsi64_si128((long long)q), _mm_set1_epi8((char)0xff), 0);
	return (uint64_t)_mm_cvtsi128_si64(v);
}

T_AVX2 static size_t blocks_avx2(struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
				 uint64_t max, unsigned char *out, size_t *out_len, size_t soft)
{
	SCAN_BLOCKS(classify_avx2, qb_avx2, pxor_clmul_avx2, compact_ssse3);
}

T_AVX2 static uint64_t lines_avx2(const unsigned char *b, size_t len, size_t *last_nl)
{
	const __m256i cnl = _mm256_set1_epi8('\n');
	uint64_t n = 0;
	size_t i;

	for (i = 0; i + 64 <= len; i += 64) {
		uint64_t m = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
			_mm256_loadu_si256((const __m256i *)(const void *)(b + i)), cnl));
		m |= (uint64_t)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(
			_mm256_loadu_si256((const __m256i *)(const void *)(b + i + 32)), cnl)) << 32;
		lines_block(m, i, &n, last_nl);
	}
	return lines_tail(b, i, len, n, last_nl);
}

#endif

/* --- dispatch ------------------------------------------------------------------------- */

enum { IMPL_PORTABLE, IMPL_SSE, IMPL_AVX2, IMPL_N };
static const char *const impl_names[IMPL_N] = {"portable", "sse", "avx2"};
static int impl_have[IMPL_N];
static int impl = IMPL_PORTABLE;
static pthread_once_t impl_once = PTHREAD_ONCE_INIT;

static void impl_init(void)
{
	impl_have[IMPL_PORTABLE] = 1;
#ifdef TD_X86
	{
		unsigned k, j;
		for (k = 0; k < 256; k++) {
			unsigned o = 0;
			memset(shuf_tab[k], 0x80, 8);
			for (j = 0; j < 8; j++)
				if (k >> j & 1)
					shuf_tab[k][o++] = (unsigned char)j;
			pop_tab[k] = (unsigned char)o;
		}
	}
	__builtin_cpu_init();
	impl_have[IMPL_SSE] = __builtin_cpu_supports("ssse3");
	impl_have[IMPL_AVX2] = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("pclmul") &&
			       __builtin_cpu_supports("popcnt");
#endif
	for (impl = IMPL_N - 1; !impl_have[impl]; impl--)
		;
}

static int squeeze_forced = -1;

int td_scan_squeeze_pays(void)
{
	pthread_once(&impl_once, impl_init);
	return squeeze_forced >= 0 ? squeeze_forced : impl != IMPL_PORTABLE;
}

void td_scan_set_squeeze(int on)
{
	squeeze_forced = on;
}

const char *td_scan_impl(void)
{
	pthread_once(&impl_once, impl_init);
	return impl_names[impl];
}

int td_scan_use(const char *name)
{
	int k;

	pthread_once(&impl_once, impl_init);
	for (k = 0; k < IMPL_N; k++)
		if (strcmp(name, impl_names[k]) == 0 && impl_have[k]) {
			impl = k;
			return 0;
		}
	return -1;
}

size_t td_scan_blocks(struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
		      uint64_t max, unsigned char *out, size_t *out_len, size_t soft)
{
	pthread_once(&impl_once, impl_init);
#ifdef TD_X86
	if (impl == IMPL_AVX2)
		return blocks_avx2(s, b, n, at, max, out, out_len, soft);
	if (impl == IMPL_SSE)
		return blocks_sse(s, b, n, at, max, out, out_len, soft);
#endif
	return blocks_portable(s, b, n, at, max, out, out_len, soft);
}

uint64_t td_scan_lines(const void *buf, size_t len, size_t *last_nl)
{
	*last_nl = 0;
	pthread_once(&impl_once, impl_init);
#ifdef TD_X86
	if (impl == IMPL_AVX2)
		return lines_avx2(buf, len, last_nl);
	if (impl == IMPL_SSE)
		return lines_sse(buf, len, last_nl);
#endif
	return lines_portable(buf, len, last_nl);
}

size_t td_scan_index(const struct td_scan *s0, const unsigned char *b, size_t n, uint64_t at,
		     size_t k)
{
	struct td_scan s = *s0;
	size_t i;

	for (i = 0; i + 64 <= n; i += 64) {
		struct masks m;
		uint64_t q, drop;
		size_t kept;
		int j;

		classify_portable(b + i, &m);
		q = m.q & ~escapes(&s, m.bs);
		drop = after_quotes(&s, q, pxor_shift(q), m.ws, m.st, at + i);
		kept = 64 - (size_t)__builtin_popcountll(drop);
		if (k >= kept) {
			k -= kept;
			continue;
		}
		for (j = 0; j < 64; j++)
			if (!(drop >> j & 1) && k-- == 0)
				return i + (size_t)j;
	}
	return i + k;
}
