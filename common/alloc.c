/* SPDX-License-Identifier: MIT */
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

static td_oom_fn oom_handler;

void td_set_oom_handler(td_oom_fn fn)
{
	oom_handler = fn;
}

static void *oom(size_t n)
{
	if (oom_handler)
		oom_handler(n);
	abort();
}

void *td_malloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	return p ? p : oom(n);
}

void *td_calloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	return p ? p : oom(n * size);
}

void *td_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	return q ? q : oom(n);
}

char *td_strndup(const char *s, size_t n)
{
	char *d = td_malloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}
