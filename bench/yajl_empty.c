/* SPDX-License-Identifier: MIT */
/* The ceiling for a reader that needs yajl's callbacks: yajl with every callback set and
 * doing nothing (strings unvalidated, as tracedoc reads them). Reads stdin. */
#include <stdio.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#include "parser/yajl_ignore.h"

static const yajl_callbacks cbs = {
	td_yajl_ignore, td_yajl_ignore_bool, NULL, NULL, td_yajl_ignore_number,
	td_yajl_ignore_string, td_yajl_ignore, td_yajl_ignore_string, td_yajl_ignore,
	td_yajl_ignore, td_yajl_ignore,
};

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
