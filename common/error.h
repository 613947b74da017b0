/* SPDX-License-Identifier: MIT */
/* Error values shared by every library module. Library code never prints or exits: it returns
 * 0 or a negative TD_E* code and, where it has one, fills a caller-owned struct td_error. */
#ifndef TD_COMMON_ERROR_H
#define TD_COMMON_ERROR_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define TD_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TD_PRINTF(f, a)
#endif

enum td_err {
	TD_OK = 0,
	TD_ENOMEM = -1,  /* allocation failed */
	TD_EIO = -2,     /* cannot open or read the input */
	TD_EPARSE = -3,  /* not JSON */
	TD_EFORMAT = -4, /* JSON of the wrong shape */
	TD_EINVAL = -5,  /* bad argument or configuration */
};

/* Where and why an operation failed. `line`/`col` are 1-based and 0 when unknown; `offset` is
 * the byte offset in the uncompressed input. */
struct td_error {
	int code;
	uint32_t line, col;
	uint64_t offset;
	int has_pos;
	char msg[512];
};

/* Sets code and message (printf-style); returns `code` so callers can `return td_error_set(..)`. */
int td_error_set(struct td_error *err, int code, const char *fmt, ...) TD_PRINTF(3, 4);

#endif
