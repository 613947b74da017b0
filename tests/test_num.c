/* SPDX-License-Identifier: MIT */
/* Microsecond decimals to integer nanoseconds, exactly from the digits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parser/num.h"

static int64_t ns(const char *s, int *st)
{
	int64_t v;
	*st = td_num_scaled(s, strlen(s), 3, &v);
	return v;
}

static void test_exact_fractions(void **state)
{
	int st;
	(void)state;
	/* 1365627862814.773 us: a double would give ...814772.9999 */
	assert_int_equal(ns("1365627862814.773", &st), 1365627862814773LL);
	assert_int_equal(st, TD_NUM_OK);
	assert_int_equal(ns("1707417525512283", &st), 1707417525512283000LL);
	assert_int_equal(ns("0.001", &st), 1);
	assert_int_equal(ns("4.5", &st), 4500);
	assert_int_equal(ns("20.001", &st), 20001);
	assert_int_equal(ns("0", &st), 0);
	assert_int_equal(ns("-5", &st), -5000);
	assert_int_equal(ns("1.5e3", &st), 1500000);
	assert_int_equal(ns("2E-3", &st), 2);
	assert_int_equal(ns("1e0", &st), 1000);
	assert_int_equal(st, TD_NUM_OK);
}

static void test_sub_ns_digits_flagged(void **state)
{
	int st;
	(void)state;
	assert_int_equal(ns("95.0001234", &st), 95000);
	assert_true(st & TD_NUM_INEXACT);
	assert_int_equal(ns("0.0005", &st), 0);
	assert_true(st & TD_NUM_INEXACT);
	assert_int_equal(ns("-0.0015", &st), -1);
	assert_true(st & TD_NUM_INEXACT);
	/* trailing zeros below the unit are exact */
	assert_int_equal(ns("1.0010000", &st), 1001);
	assert_int_equal(st, TD_NUM_OK);
}

static void test_range_and_syntax(void **state)
{
	int64_t v;
	(void)state;
	assert_int_equal(td_num_int("9223372036854775807", 19, &v), TD_NUM_OK);
	assert_int_equal(v, INT64_MAX);
	assert_int_equal(td_num_int("-9223372036854775808", 20, &v), TD_NUM_OK);
	assert_int_equal(v, INT64_MIN);
	assert_true(td_num_int("9223372036854775808", 19, &v) & TD_NUM_RANGE);
	assert_int_equal(v, INT64_MAX);
	assert_true(td_num_int("184467440737095516150", 21, &v) & TD_NUM_RANGE);
	assert_true(td_num_int("99999999999999999999999", 23, &v) & TD_NUM_RANGE);
	assert_true(td_num_scaled("1e400", 5, 3, &v) & TD_NUM_RANGE);
	assert_true(td_num_int("", 0, &v) & TD_NUM_SYNTAX);
	assert_true(td_num_int("-", 1, &v) & TD_NUM_SYNTAX);
	assert_true(td_num_int("1x", 2, &v) & TD_NUM_SYNTAX);
	assert_true(td_num_int("1e", 2, &v) & TD_NUM_SYNTAX);
	assert_true(td_num_int(".", 1, &v) & TD_NUM_SYNTAX);
	/* "1.5" as an integer keeps the integer part, flagged */
	assert_true(td_num_int("1.5", 3, &v) & TD_NUM_INEXACT);
	assert_int_equal(v, 1);
	/* the text is not NUL-terminated in yajl's buffer */
	assert_int_equal(td_num_int("12345", 3, &v), TD_NUM_OK);
	assert_int_equal(v, 123);
}

static void test_many_digits(void **state)
{
	int st;
	(void)state;
	/* more digits than fit in 64 bits: the dropped ones are below the ns unit */
	assert_int_equal(ns("1.000000000000000000000000001", &st), 1000);
	assert_true(st & TD_NUM_INEXACT);
	assert_int_equal(ns("123456789.123456789", &st), 123456789123LL);
	assert_true(st & TD_NUM_INEXACT);
}

/* The number's own bytes in a heap block of exactly its length, so that AddressSanitizer sees
 * a read past the end. */
static int scaled_exact(const char *text, size_t n, int scale, int64_t *out)
{
	char *b = malloc(n ? n : 1);
	int st;

	assert_non_null(b);
	memcpy(b, text, n);
	st = td_num_scaled(b, n, scale, out);
	free(b);
	return st;
}

/* Digits read 8 at a time must give what reading them one by one gives: every integer length
 * up to 15, fractions of 1 to 5 digits, a byte just below '0' or just above '9' (or an 'x' for
 * the dot) at every position; integers alone up to 18 digits at scale 0. */
static void test_eight_at_a_time(void **state)
{
	char buf[40];
	unsigned r = 7;
	int nint, nfrac, bad, k, below;
	(void)state;

	for (below = 0; below < 2; below++) {
		for (nint = 1; nint <= 15; nint++) /* times 1000 fits int64 */
			for (nfrac = -1; nfrac <= 5; nfrac++)
				for (bad = -1; bad < nint + nfrac + 1; bad++) {
					int64_t want = 0, got;
					int n = 0, inexact = 0, st;
					for (k = 0; k < nint; k++) {
						r = r * 1103515245u + 12345u;
						buf[n] = (char)('0' + (r >> 16) % 10);
						want = want * 10 + (buf[n++] - '0');
					}
					want *= 1000;
					if (nfrac >= 0) {
						int64_t f = 100;
						buf[n++] = '.';
						for (k = 0; k < nfrac; k++) {
							r = r * 1103515245u + 12345u;
							buf[n] = (char)('0' + (r >> 16) % 10);
							if (k < 3)
								want += (buf[n] - '0') * f, f /= 10;
							else if (buf[n] != '0')
								inexact = 1;
							n++;
						}
					}
					if (bad >= 0 && bad < n)
						buf[bad] = buf[bad] == '.' ? 'x' : below ? '/' : ':';
					buf[n] = '\0';
					st = scaled_exact(buf, (size_t)n, 3, &got);
					if (nfrac == 0) /* "12.": yajl never hands that over */
						continue;
					if (bad >= 0 && bad < n) {
						if (!(st & TD_NUM_SYNTAX))
							fail_msg("%s: read as %lld (status %d)", buf,
								 (long long)got, st);
					} else {
						if (got != want || st != (inexact ? TD_NUM_INEXACT : TD_NUM_OK))
							fail_msg("%s: %lld (status %d), expected %lld", buf,
								 (long long)got, st, (long long)want);
					}
				}
	}
	for (nint = 1; nint <= 18; nint++) {
		int64_t want = 0, got;
		for (k = 0; k < nint; k++) {
			r = r * 1103515245u + 12345u;
			buf[k] = (char)('0' + (r >> 16) % 10);
			want = want * 10 + (buf[k] - '0');
		}
		assert_int_equal(scaled_exact(buf, (size_t)nint, 0, &got), TD_NUM_OK);
		assert_int_equal(got, want);
		buf[nint] = '.';
		buf[nint + 1] = '0';
		buf[nint + 2] = '7';
		assert_int_equal(scaled_exact(buf, (size_t)nint + 3, 0, &got), TD_NUM_INEXACT);
		assert_int_equal(got, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_fractions),
		cmocka_unit_test(test_sub_ns_digits_flagged),
		cmocka_unit_test(test_range_and_syntax),
		cmocka_unit_test(test_many_digits),
		cmocka_unit_test(test_eight_at_a_time),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
