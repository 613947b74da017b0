/* SPDX-License-Identifier: MIT */
/* yajl callbacks that take a value and do nothing with it: a reader's nulls and booleans it has
 * no use for (parser/snapshot.c), and bench/yajl_empty.c, yajl's ceiling with every callback
 * set. */
#ifndef TD_PARSER_YAJL_IGNORE_H
#define TD_PARSER_YAJL_IGNORE_H

#include <stddef.h>

static inline int td_yajl_ignore(void *ctx)
{
	(void)ctx;
	return 1;
}

static inline int td_yajl_ignore_bool(void *ctx, int v)
{
	(void)v;
	return td_yajl_ignore(ctx);
}

static inline int td_yajl_ignore_number(void *ctx, const char *s, size_t n)
{
	(void)s;
	(void)n;
	return td_yajl_ignore(ctx);
}

static inline int td_yajl_ignore_string(void *ctx, const unsigned char *s, size_t n)
{
	(void)s;
	(void)n;
	return td_yajl_ignore(ctx);
}

#endif
