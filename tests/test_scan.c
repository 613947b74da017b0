/* SPDX-License-Identifier: MIT */
/* The byte scan in front of yajl (parser/scan.c): every implementation drops exactly the
 * whitespace a byte-at-a-time reference drops, keeps the same string state, maps yajl's bytes
 * back to the input; and reading with the whitespace left out gives the model, the error and
 * its position that reading everything gives. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/error.h"
#include "parser/load.h"
#include "parser/parser.h"
#include "parser/scan.h"
#include "tests/helpers.h"

static const char *const impls[] = {"portable", "sse", "avx2"};

/* What the scan should hand yajl, one byte at a time: whitespace outside strings is left out
 * when the byte before its run is one of { } [ ] : , or a quote. Backslashes only in strings. */
static size_t ref_squeeze(const unsigned char *b, size_t n, unsigned char *out)
{
	int in = 0, esc = 0, after = 0;
	size_t o = 0, j;

	for (j = 0; j < n; j++) {
		unsigned char c = b[j];
		if (in) {
			out[o++] = c;
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in = 0, after = 1;
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r') {
			if (!after)
				out[o++] = c;
			continue;
		}
		out[o++] = c;
		if (c == '"')
			in = 1;
		else
			after = c && strchr("{}[]:,", c) != NULL;
	}
	return o;
}

/* Random JSON-ish text: structural bytes, numbers, literals, strings with escapes and spaces
 * in them, whitespace runs of every kind and length. */
static size_t gen_doc(unsigned char *b, size_t cap, unsigned seed)
{
	static const char *const toks[] = {"{", "}", "[", "]", ":", ",", "1", "-2.5e3", "true",
					   "null", "0"};
	static const char ws[] = " \n\t\r";
	unsigned r = seed;
	size_t n = 0;

	while (n + 80 < cap) {
		unsigned k;
		r = r * 1103515245u + 12345u;
		k = (r >> 16) % 16;
		if (k < 11) {
			size_t l = strlen(toks[k]);
			memcpy(b + n, toks[k], l);
			n += l;
		} else if (k < 13) { /* a string: letters, spaces, escapes, structural bytes */
			unsigned m = (r >> 8) % 40, i;
			b[n++] = '"';
			for (i = 0; i < m; i++) {
				r = r * 1103515245u + 12345u;
				switch ((r >> 16) % 8) {
				case 0: b[n++] = '\\'; b[n++] = '"'; break;
				case 1: b[n++] = '\\'; b[n++] = '\\'; break;
				case 2: b[n++] = ' '; break;
				case 3: b[n++] = (unsigned char)"{}[]:,"[(r >> 20) % 6]; break;
				case 4: b[n++] = '\\'; b[n++] = 'n'; break;
				default: b[n++] = (unsigned char)('a' + (r >> 20) % 26); break;
				}
			}
			b[n++] = '"';
		} else { /* whitespace: 1 to 70 bytes */
			unsigned m = 1 + (r >> 8) % ((r >> 4) % 4 ? 3 : 70), i;
			for (i = 0; i < m; i++) {
				r = r * 1103515245u + 12345u;
				b[n++] = (unsigned char)ws[(r >> 16) % 4];
			}
		}
	}
	return n;
}

static const char *dflt; /* the implementation this CPU picks */

/* Each implementation's output, for the document scanned in pieces of `piece` bytes, equals
 * the reference (with exact) and the portable one's, as does its state; td_scan_index maps
 * every byte it kept back to the same byte of the input. */
static void scan_agrees(const unsigned char *b, size_t n, size_t piece, int exact)
{
	size_t m = n & ~(size_t)63, nref, nfirst = 0, i;
	unsigned char *ref = malloc(m + 64), *out = malloc(m + 64), *first = malloc(m + 64);
	struct td_scan sfirst = {0};

	nref = ref_squeeze(b, m, ref);
	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		struct td_scan s = {0}, s0;
		size_t o = 0, at = 0;
		if (td_scan_use(impls[i]) != 0)
			continue;
		while (at < m) {
			size_t len = m - at < piece ? m - at : piece, before = o, j;
			s0 = s;
			assert_int_equal(td_scan_blocks(&s, b + at, len, at, UINT64_MAX, out, &o, len),
					 len);
			for (j = before; j < o; j += 1 + (j % 7) + (o - before) / 200) { /* back */
				size_t x = td_scan_index(&s0, b + at, len, at, j - before);
				if (x >= len || b[at + x] != out[j])
					fail_msg("%s, pieces of %zu: byte %zu kept maps to %zu of %zu",
						 impls[i], piece, j, at + x, at + len);
			}
			assert_int_equal(td_scan_index(&s0, b + at, len, at, o - before), len);
			at += len;
		}
		if (exact && (o != nref || memcmp(out, ref, o) != 0))
			fail_msg("%s, pieces of %zu: %zu bytes kept, the reference keeps %zu",
				 impls[i], piece, o, nref);
		if (i == 0) {
			memcpy(first, out, o);
			nfirst = o;
			sfirst = s;
		} else if (o != nfirst || memcmp(out, first, o) != 0 || s.in_str != sfirst.in_str ||
			   s.bs_run != sfirst.bs_run || s.str_open != sfirst.str_open ||
			   s.ws_seed != sfirst.ws_seed) {
			fail_msg("%s, pieces of %zu: output or state differs from portable's", impls[i],
				 piece);
		}
	}
	assert_int_equal(td_scan_use(dflt), 0);
	free(ref);
	free(out);
	free(first);
}

static void test_impls_match_the_reference(void **state)
{
	static const size_t pieces[] = {64, 128, 640, 65536};
	size_t cap = 300000, n, p;
	unsigned char *b = malloc(cap);
	unsigned seed;
	(void)state;

	for (seed = 1; seed <= 6; seed++) {
		n = gen_doc(b, cap, seed);
		for (p = 0; p < sizeof(pieces) / sizeof(pieces[0]); p++)
			scan_agrees(b, n, pieces[p], 1);
	}
	/* arbitrary bytes (backslashes outside strings too): the implementations still agree */
	for (seed = 1; seed <= 3; seed++) {
		unsigned r = seed;
		size_t i;
		for (i = 0; i < cap; i++) {
			r = r * 1103515245u + 12345u;
			b[i] = (unsigned char)("\"\\ \n{},:[]ab1"[(r >> 16) % 13]);
		}
		scan_agrees(b, cap, 640, 0);
	}
	free(b);
}

/* Newlines counted 64 bytes at a time, and the last one found, at every length and offset. */
static void test_lines(void **state)
{
	unsigned char b[300];
	size_t len, i;
	(void)state;

	for (i = 0; i < sizeof(b); i++)
		b[i] = (i * 7) % 11 == 0 ? '\n' : 'x';
	for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
		if (td_scan_use(impls[i]) != 0)
			continue;
		for (len = 0; len <= sizeof(b); len++) {
			size_t last = 99, want_last = 0, j;
			uint64_t want = 0;
			for (j = 0; j < len; j++)
				if (b[j] == '\n')
					want++, want_last = j;
			assert_int_equal(td_scan_lines(b, len, &last), want);
			assert_int_equal(last, want_last);
		}
	}
	assert_int_equal(td_scan_use(dflt), 0);
}

struct outcome {
	int rc;
	uint64_t digest;
	struct td_error err;
};

static struct outcome parse(const unsigned char *buf, size_t len, size_t chunk, int squeeze)
{
	struct outcome o;
	struct td_trace t;
	struct td_parser *p;
	size_t off = 0;

	memset(&o, 0, sizeof(o));
	td_trace_init(&t);
	p = td_parser_new(&t);
	td_parser_set_squeeze(p, squeeze);
	while (off < len && o.rc == 0) {
		size_t n = len - off < chunk ? len - off : chunk;
		o.rc = td_parser_feed(p, buf + off, n, &o.err);
		off += n;
	}
	if (o.rc == 0)
		o.rc = td_parser_finish(p, &o.err);
	td_parser_free(p);
	if (o.rc == 0) {
		td_trace_finalize(&t);
		o.digest = th_digest(&t);
	}
	td_trace_free(&t);
	return o;
}

/* With and without the whitespace, in chunks of several sizes, on every implementation: the
 * same model, or the same error at the same line, column and byte with the same message.
 * (Where yajl is handed a token split over two calls, its error offset shifts: what is
 * compared is the same chunking both ways, which is what squeezing must keep.) */
static void same_both_ways(const char *what, const unsigned char *buf, size_t len, int big)
{
	static const size_t chunks[] = {64, 100, 4096, (size_t)1 << 20};
	size_t c, i;

	for (c = big ? 2 : 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		struct outcome ref = parse(buf, len, chunks[c], 0), o;
		for (i = 0; i < sizeof(impls) / sizeof(impls[0]); i++) {
			if (td_scan_use(impls[i]) != 0)
				continue;
			o = parse(buf, len, chunks[c], 1);
			if (o.rc != ref.rc || (o.rc == 0 && o.digest != ref.digest))
				fail_msg("%s (%s, chunks of %zu): rc %d, without squeezing %d, or the "
					 "model differs", what, impls[i], chunks[c], o.rc, ref.rc);
			if (o.rc && (o.err.line != ref.err.line || o.err.col != ref.err.col ||
				     o.err.offset != ref.err.offset || strcmp(o.err.msg, ref.err.msg)))
				fail_msg("%s (%s, chunks of %zu): %u:%u (byte %llu) '%s', without "
					 "squeezing %u:%u (byte %llu) '%s'", what, impls[i], chunks[c],
					 o.err.line, o.err.col, (unsigned long long)o.err.offset,
					 o.err.msg, ref.err.line, ref.err.col,
					 (unsigned long long)ref.err.offset, ref.err.msg);
		}
	}
	assert_int_equal(td_scan_use(dflt), 0);
}

static void test_fixtures_both_ways(void **state)
{
	static const char *const files[] = {
		"mini-kineto.json", "legacy-autograd.json", "odd/anomalies.json", "odd/truncated.json",
		"bad/not-json.txt", "bad/stray-quote.json", "bad/top-number.json",
		"bad/events-object.json", "bad/no-events.json", "bad/trailing-garbage.json",
		"bad/empty.json",
	};
	size_t f;
	(void)state;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		unsigned char *buf = th_slurp(th_fixture(files[f]), &len);
		assert_non_null(buf);
		same_both_ways(files[f], buf, len, 0);
		free(buf);
	}
}

/* Errors where whitespace separates, or would join, tokens, after enough indented events that
 * the error falls in a squeezed block, at each of 64 offsets. */
static void test_errors_near_whitespace(void **state)
{
	static const char *const bad[] = {
		"{\"ph\": \"X\", \"ts\": 1 2}",        /* two numbers: never joined into 12 */
		"{\"ph\": \"X\", \"ts\": - 1}",
		"{\"ph\": \"X\", \"name\": \"a\" \"b\"}",
		"tru e",
		"{\"ph\": \"X\"}  {\"ph\": \"X\"}",
		"{\"ph\": \"X\", \"ts\": 1.\n 5}",
		"{\"ph\" \n : \"X\",\t\"ts\": @}",
		"{\"ph\": \"X\",\r\n \"name\": \"tab\tinside\"}",   /* a control byte in a string */
		"{\"ph\": \"X\", \"ts\": 1}\n  ]\n  ,\n }",
		"{\"ph\": \"X\", \"ts\": 1}\n ] \n } \n [",              /* trailing garbage */
		"{\"ph\": \"X\", \"ts\": 1}\n ] \n } \n  \n",            /* fine */
		"{\"ph\": \"X\", \"ts\": 1}\n ",                         /* cut short */
		"{\"ph\": \"X\", \"ts\": /,\n \"dur\": 1}",     /* a comment after a colon */
		"{\"ph\": \"X\",\n  /* c */ \"ts\": 1}",
		"[ tXue, 1 ]",
		"[ 1, 2, 1e , 3 ]",
		"[ 1, 2, -\n 3 ]",
	};
	char *doc = malloc(1 << 16);
	size_t i, pad;
	(void)state;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		for (pad = 0; pad < 64; pad++) {
			size_t n = 0, k;
			char what[64];
			n += (size_t)sprintf(doc + n, "{\n  \"traceEvents\": [\n");
			for (k = 0; k < 20; k++)
				n += (size_t)sprintf(doc + n, "  {\n    \"ph\": \"X\", \"name\": \"op %zu\", "
						     "\"pid\": 1, \"tid\": 1,\n    \"ts\": %zu, "
						     "\"dur\": 1.5\n  },\n", k, k * 10);
			memset(doc + n, ' ', pad);
			n += pad;
			n += (size_t)sprintf(doc + n, "%s", bad[i]);
			if (i < 8 || i >= 12)
				n += (size_t)sprintf(doc + n, "\n  ]\n}\n");
			snprintf(what, sizeof(what), "case %zu, pad %zu", i, pad);
			same_both_ways(what, (const unsigned char *)doc, n, 0);
		}
	}
	free(doc);
}

/* A byte order mark shifts an error by its 3 bytes, no more and no less. */
static void test_error_after_bom(void **state)
{
	static const char body[] = "{\"traceEvents\": [\n  {\"ph\": \"X\", \"ts\": 1 \"dur\": 2}\n]}\n";
	unsigned char with[sizeof(body) + 3];
	struct outcome a, b;
	(void)state;

	memcpy(with, "\xef\xbb\xbf", 3);
	memcpy(with + 3, body, sizeof(body) - 1);
	a = parse((const unsigned char *)body, sizeof(body) - 1, 4096, 0);
	b = parse(with, sizeof(body) + 2, 4096, 0);
	assert_int_equal(a.rc, TD_EPARSE);
	assert_int_equal(b.rc, TD_EPARSE);
	assert_int_equal(b.err.offset, a.err.offset + 3);
	assert_int_equal(b.err.line, a.err.line);
	assert_int_equal(a.err.line, 2);
	same_both_ways("with a byte order mark", with, sizeof(body) + 2, 0);
}

static void test_real_traces_both_ways(void **state)
{
	static const char *const files[] = {
		"ddp-v100-rank1.json.gz", "b200-eager-decode.json.gz", "mi250-rocm.json.gz",
	};
	size_t f;
	(void)state;

	TH_SKIP_WITHOUT_SHARED();
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		unsigned char *buf = th_slurp(th_shared(files[f]), &len);
		assert_non_null(buf);
		same_both_ways(files[f], buf, len, 1);
		free(buf);
	}
}

/* The split reader's workers squeeze too: -j 3 in blocks of 64 KiB, both ways, the same. */
static struct outcome load_split(const char *path, int squeeze)
{
	struct outcome o;
	struct td_trace t;
	struct td_load_opts opts = {.jobs = 3, .block = 65536};

	memset(&o, 0, sizeof(o));
	td_scan_set_squeeze(squeeze);
	td_trace_init(&t);
	o.rc = td_trace_load(path, &opts, &t, &o.err);
	if (o.rc == 0)
		o.digest = th_digest(&t);
	td_trace_free(&t);
	td_scan_set_squeeze(-1);
	return o;
}

static void test_split_both_ways(void **state)
{
	static const char *const files[] = {
		"mini-kineto.json", "odd/truncated.json", "bad/stray-quote.json",
		"bad/trailing-garbage.json", "shared:ddp-v100-rank1.json.gz",
		"shared:b200-eager-decode.json.gz",
	};
	size_t f;
	(void)state;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char path[4096];
		struct outcome a, b;
		if (strncmp(files[f], "shared:", 7) == 0) {
			if (!th_have_shared())
				continue;
			snprintf(path, sizeof(path), "%s", th_shared(files[f] + 7));
		} else {
			snprintf(path, sizeof(path), "%s", th_fixture(files[f]));
		}
		a = load_split(path, 1);
		b = load_split(path, 0);
		if (a.rc != b.rc || a.digest != b.digest || a.err.offset != b.err.offset ||
		    a.err.line != b.err.line || a.err.col != b.err.col || strcmp(a.err.msg, b.err.msg))
			fail_msg("%s, split: rc %d / %d, %u:%u (byte %llu) '%s' / %u:%u (byte %llu) "
				 "'%s', or the model differs", files[f], a.rc, b.rc, a.err.line,
				 a.err.col, (unsigned long long)a.err.offset, a.err.msg, b.err.line,
				 b.err.col, (unsigned long long)b.err.offset, b.err.msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impls_match_the_reference),
		cmocka_unit_test(test_lines),
		cmocka_unit_test(test_fixtures_both_ways),
		cmocka_unit_test(test_errors_near_whitespace),
		cmocka_unit_test(test_error_after_bom),
		cmocka_unit_test(test_real_traces_both_ways),
		cmocka_unit_test(test_split_both_ways),
	};
	dflt = td_scan_impl();
	printf("scan implementations here: %s (default)", dflt);
	printf("%s%s\n", td_scan_use("sse") == 0 ? ", sse" : "",
	       td_scan_use("avx2") == 0 ? ", avx2" : "");
	td_scan_use(dflt);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
