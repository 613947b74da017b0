/* SPDX-License-Identifier: MIT */
/* The ceiling for a reader that needs yajl's callbacks: yajl with every callback set and
 * doing nothing (strings unvalidated, as tracedoc reads them). Reads stdin. */
#include <stdio.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

static int c0(void *c)
{
	(void)c;
	return 1;
}

static int cb(void *c, int b)
{
	(void)c;
	(void)b;
	return 1;
}

static int cn(void *c, const char *s, size_t n)
{
	(void)c;
	(void)s;
	(void)n;
	return 1;
}

static int cs(void *c, const unsigned char *s, size_t n)
{
	(void)c;
	(void)s;
	(void)n;
	return 1;
}

static const yajl_callbacks cbs = {c0, cb, NULL, NULL, cn, cs, c0, cs, c0, c0, c0};

int main(void)
{
	static unsigned char buf[1 << 20];
	yajl_handle h = yajl_alloc(&cbs, NULL, NULL);
	ssize_t n;

	yajl_config(h, yajl_dont_validate_strings, 1);
	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (yajl_parse(h, buf, (size_t)n) != yajl_status_ok)
			return 1;
	n = yajl_complete_parse(h) != yajl_status_ok;
	yajl_free(h);
	return (int)n;
}
