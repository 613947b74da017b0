/* SPDX-License-Identifier: MIT */
/* A growable byte buffer, NUL-terminated; td_buf_gen_cb() makes it a yajl_gen print callback. */
#ifndef TD_COMMON_BUF_H
#define TD_COMMON_BUF_H

#include <stddef.h>

struct td_buf {
	char *s;
	size_t n;
	size_t cap; /* bytes allocated at s; grown by half again, so appends are amortised O(1) */
};

void td_buf_add(struct td_buf *b, const char *s, size_t len);
/* For yajl_gen_config(g, yajl_gen_print_callback, td_buf_gen_cb, &buf). */
void td_buf_gen_cb(void *ctx, const char *s, size_t len);

#endif
