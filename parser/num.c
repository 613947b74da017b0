/* SPDX-License-Identifier: MIT */
#include "parser/num.h"

#include "parser/scan.h"

static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull,
	1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull, 100000000000000000ull,
	1000000000000000000ull, 10000000000000000000ull,
};

/* 1 when the 8 bytes of w (a little-endian load) are all ASCII digits */
static inline int eight_digits(uint64_t w)
{
	return ((w & 0xF0F0F0F0F0F0F0F0ull) |
		(((w + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) ==
	       0x3333333333333333ull;
}

/* their value, three multiplies instead of eight */
static inline uint64_t parse_eight(uint64_t w)
{
	w = (w & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
	w = (w & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
	return (w & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

int td_num_scaled(const char *s, size_t len, int scale, int64_t *out)
{
	const char *p = s, *end = s + len;
	int neg = 0, st = TD_NUM_OK, ndig = 0, exp10 = scale;
	uint64_t mant = 0;
	int lost_nonzero = 0; /* digits that did not fit in mant */
	int64_t e = 0;

	*out = 0;
	/* fast path: up to 15 integer digits, an optional fraction no longer than the scale */
	if (len > 0 && len <= 19 && scale >= 0 && scale <= 3) {
		uint64_t v = 0;
		const char *q = s;
		int nd = 0, fd = 0;
		uint64_t w;
		if (len >= 8 && eight_digits(w = td_load_le64((const unsigned char *)q))) {
			v = parse_eight(w); /* a timestamp's first 8 of its 10-16 digits */
			q += 8;
			nd = 8;
		}
		while (q < end && *q >= '0' && *q <= '9' && nd < 15) {
			v = v * 10 + (uint64_t)(*q++ - '0');
			nd++;
		}
		if (nd && q < end && *q == '.') {
			q++;
			while (q < end && *q >= '0' && *q <= '9' && fd < scale) {
				v = v * 10 + (uint64_t)(*q++ - '0');
				fd++;
			}
			if (fd == 0)
				q = s; /* "1." is not JSON: take the general path */
		}
		if (nd && q == end) {
			*out = (int64_t)(v * pow10_tab[scale - fd]);
			return TD_NUM_OK;
		}
	}
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
