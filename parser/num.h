/* SPDX-License-Identifier: MIT */
/* Exact conversions of JSON number text (as yajl hands it over, not NUL-terminated). */
#ifndef TD_PARSER_NUM_H
#define TD_PARSER_NUM_H

#include <stddef.h>
#include <stdint.h>

enum td_num_status {
	TD_NUM_OK = 0,
	TD_NUM_SYNTAX = 1,   /* not a decimal number */
	TD_NUM_RANGE = 2,    /* does not fit int64 (result saturated) */
	TD_NUM_INEXACT = 4,  /* had digits below the unit (dropped toward zero) */
};

/* Parses a decimal number and scales it by 10^scale (scale 3 turns microseconds into
 * nanoseconds) using only integer arithmetic on the digits, so "1365627862814.773" becomes
 * 1365627862814773 exactly. Digits below 1 after scaling are dropped toward zero and flagged
 * TD_NUM_INEXACT. Returns a mask of enum td_num_status. */
int td_num_scaled(const char *s, size_t len, int scale, int64_t *out);

/* Parses an integer (an exponent or fraction that leaves a whole number is accepted). */
static inline int td_num_int(const char *s, size_t len, int64_t *out)
{
	return td_num_scaled(s, len, 0, out);
}

#endif
