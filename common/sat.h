/* SPDX-License-Identifier: MIT */
/* Saturating 64-bit arithmetic: sums of values a file controls (sizes, start + duration) stop
 * at the type's limits instead of wrapping into nonsense ("-2 B") or undefined behaviour. */
#ifndef TD_COMMON_SAT_H
#define TD_COMMON_SAT_H

#include <stdint.h>

static inline int64_t td_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t td_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t td_sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

#endif
