/* SPDX-License-Identifier: MIT */
#include "common/buf.h"

#include <string.h>

#include "common/alloc.h"

void td_buf_add(struct td_buf *b, const char *s, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap + b->cap / 2;
		b->cap = cap > b->n + len + 1 ? cap : b->n + len + 1 + 256;
		b->s = td_realloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, len);
	b->n += len;
	b->s[b->n] = '\0';
}

void td_buf_gen_cb(void *ctx, const char *s, size_t len)
{
	td_buf_add(ctx, s, len);
}
