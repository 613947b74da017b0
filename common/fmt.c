/* SPDX-License-Identifier: MIT */
#include "common/fmt.h"

#include <stdio.h>

const char *td_fmt_dur(char *buf, size_t cap, int64_t ns)
{
	int64_t a = ns < 0 ? -ns : ns;
	const char *sign = ns < 0 ? "-" : "";

	if (a < 1000)
		snprintf(buf, cap, "%s%lld ns", sign, (long long)a);
	else if (a < 1000000)
		snprintf(buf, cap, "%s%.1f us", sign, (double)a / 1e3);
	else if (a < 1000000000)
		snprintf(buf, cap, "%s%.1f ms", sign, (double)a / 1e6);
	else
		snprintf(buf, cap, "%s%.2f s", sign, (double)a / 1e9);
	return buf;
}
