/* SPDX-License-Identifier: MIT */
#include "parser/num.h"

#include "parser/scan.h"

static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
	1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

/* the value of 8 ASCII digits (a little-endian load), three multiplies instead of eight */
static inline uint64_t parse_eight(uint64_t w)
{
	w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
	w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
	return (w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

/* The bytes of the number from q on, as a little-endian word: 8 of them, or the r < 8 left
 * with zero bytes above them. Loads stay inside s[0..len), len >= 8. */
static inline uint64_t word_at(const char *q, const char *end)
{
	size_t r = (size_t)(end - q);

	if (r >= 8)
		return td_load_le64((const unsigned char *)q);
	return r ? td_load_le64((const unsigned char *)end - 8) >> (8 * (8 - r)) : 0;
}

/* how many of w's bytes, from the low one, are digits before the first that is not (0-8);
 * a carry out of a non-digit byte only disturbs the bytes above it */
static inline unsigned lead_digits(uint64_t w)
{
	uint64_t x = w ^ 0x3030303030303030ull;
	uint64_t bad = (x | (x + 0x0606060606060606ull)) & 0xF0F0F0F0F0F0F0F0ull;

	return bad ? (unsigned)__builtin_ctzll(bad) / 8 : 8;
}

/* the value of the first k (1-8) digit bytes of w */
static inline uint64_t parse_lead(uint64_t w, unsigned k)
{
	return parse_eight(k == 8 ? w : w << (8 * (8 - k)));
}

/* The common cases without a loop per digit: up to 15 integer digits and a fraction no
 * longer than the scale, read 8 bytes at a time (a timestamp "1700000002273.001" in three
 * words). 0 when the text needs the general path. */
static int scaled_fast(const char *s, size_t len, int scale, int64_t *out)
{
	const char *q = s, *end = s + len;
	uint64_t v = 0;
	unsigned nd = 0, fd = 0, k;

	if (len < 8) { /* short: digit by digit */
		while (q < end && *q >= '0' && *q <= '9')
			v = v * 10 + (uint64_t)(*q++ - '0'), nd++;
		if (q < end && *q == '.' && nd) {
			q++;
			while (q < end && *q >= '0' && *q <= '9' && fd < (unsigned)scale)
				v = v * 10 + (uint64_t)(*q++ - '0'), fd++;
			if (!fd)
				return 0;
		}
	} else {
		do {
			uint64_t w = word_at(q, end);
			k = lead_digits(w);
			if (!k)
				break;
			if (nd + k > 15)
				return 0;
			v = v * pow10_tab[k] + parse_lead(w, k);
			nd += k;
			q += k;
		} while (k == 8);
		if (q < end && *q == '.' && nd) {
			uint64_t w;
			q++;
			w = word_at(q, end);
			k = lead_digits(w);
			if (!k || k > (unsigned)scale)
				return 0; /* "1." or more digits than the scale keeps */
			v = v * pow10_tab[k] + parse_lead(w, k);
			fd = k;
			q += k;
		}
	}
	if (!nd || q != end)
		return 0;
	*out = (int64_t)(v * pow10_tab[scale - (int)fd]);
	return 1;
}

int td_num_scaled(const char *s, size_t len, int scale, int64_t *out)
{
	const char *p = s, *end = s + len;
	int neg = 0, st = TD_NUM_OK, ndig = 0, exp10 = scale;
	uint64_t mant = 0;
	int lost_nonzero = 0; /* digits that did not fit in mant */
	int64_t e = 0;

	*out = 0;
	if (len > 0 && len <= 19 && scale >= 0 && scale <= 3 && scaled_fast(s, len, scale, out))
		return TD_NUM_OK;
	if (p < end && (*p == '-' || *p == '+'))
		neg = (*p++ == '-');
	if (p == end)
		return TD_NUM_SYNTAX;
	for (; p < end && *p >= '0' && *p <= '9'; p++, ndig++) {
		if (mant <= (UINT64_MAX - 9) / 10) {
			mant = mant * 10 + (uint64_t)(*p - '0');
		} else {
			exp10++; /* integer digit beyond precision: scale up */
			lost_nonzero |= *p != '0';
		}
	}
	if (p < end && *p == '.') {
		p++;
		for (; p < end && *p >= '0' && *p <= '9'; p++, ndig++) {
			if (mant <= (UINT64_MAX - 9) / 10) {
				mant = mant * 10 + (uint64_t)(*p - '0');
				exp10--;
			} else {
				lost_nonzero |= *p != '0';
			}
		}
	}
	if (ndig == 0)
		return TD_NUM_SYNTAX;
	if (p < end && (*p == 'e' || *p == 'E')) {
		int eneg = 0, edig = 0;
		p++;
		if (p < end && (*p == '-' || *p == '+'))
			eneg = (*p++ == '-');
		for (; p < end && *p >= '0' && *p <= '9'; p++, edig++)
			if (e < 100000)
				e = e * 10 + (*p - '0');
		if (!edig)
			return TD_NUM_SYNTAX;
		exp10 += (int)(eneg ? -e : e);
	}
	if (p != end)
		return TD_NUM_SYNTAX;
	if (lost_nonzero)
		st |= TD_NUM_INEXACT;
	if (mant == 0) {
		*out = 0;
		return st;
	}
	if (exp10 < 0) {
		if (exp10 < -19) {
			mant = 0;
			st |= TD_NUM_INEXACT;
		} else {
			if (mant % pow10_tab[-exp10])
				st |= TD_NUM_INEXACT;
			mant /= pow10_tab[-exp10];
		}
	} else if (exp10 > 0) {
		if (exp10 > 19 || mant > UINT64_MAX / pow10_tab[exp10]) {
			*out = neg ? INT64_MIN : INT64_MAX;
			return st | TD_NUM_RANGE;
		}
		mant *= pow10_tab[exp10];
	}
	if (neg) {
		if (mant > (uint64_t)INT64_MAX + 1) {
			*out = INT64_MIN;
			return st | TD_NUM_RANGE;
		}
		*out = mant == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mant;
	} else {
		if (mant > (uint64_t)INT64_MAX) {
			*out = INT64_MAX;
			return st | TD_NUM_RANGE;
		}
		*out = (int64_t)mant;
	}
	return st;
}
