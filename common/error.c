/* SPDX-License-Identifier: MIT */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int td_error_set(struct td_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}
