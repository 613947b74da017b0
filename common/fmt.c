/* SPDX-License-Identifier: MIT */
#include "common/fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

const char *td_fmt_dur(char *buf, size_t cap, int64_t ns)
{
	/* the magnitude unsigned: -INT64_MIN does not fit an int64_t */
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	const char *sign = ns < 0 ? "-" : "";

	if (a < 1000)
		snprintf(buf, cap, "%s%llu ns", sign, (unsigned long long)a);
	else if (a < 1000000)
		snprintf(buf, cap, "%s%.1f us", sign, (double)a / 1e3);
	else if (a < 1000000000)
		snprintf(buf, cap, "%s%.1f ms", sign, (double)a / 1e6);
	else
		snprintf(buf, cap, "%s%.2f s", sign, (double)a / 1e9);
	return buf;
}

const char *td_fmt_bytes(char *buf, size_t cap, double b)
{
	if (b < 1e3)
		snprintf(buf, cap, "%.0f B", b);
	else if (b < 1e6)
		snprintf(buf, cap, "%.1f KB", b / 1e3);
	else if (b < 1e9)
		snprintf(buf, cap, "%.1f MB", b / 1e6);
	else
		snprintf(buf, cap, "%.2f GB", b / 1e9);
	return buf;
}

const char *td_mark(char *buf, size_t cap, const char *name)
{
	size_t n = 0;

	if (cap < 3) {
		if (cap)
			buf[0] = '\0';
		return buf;
	}
	buf[n++] = TD_NAME_OPEN;
	for (; *name && n + 2 < cap; name++)
		buf[n++] = (*name == TD_NAME_OPEN || *name == TD_NAME_CLOSE) ? '?' : *name;
	buf[n++] = TD_NAME_CLOSE;
	buf[n] = '\0';
	return buf;
}

char *td_unmark(const char *s)
{
	size_t n = strlen(s), i, o = 0;
	char *r = td_malloc(n + 1);

	for (i = 0; i < n; i++)
		if (s[i] != TD_NAME_OPEN && s[i] != TD_NAME_CLOSE)
			r[o++] = s[i];
	r[o] = '\0';
	return r;
}

/* the start of the C++ function name in s[0..len): the identifier before the first '(' or '<'
 * at nesting depth 0, after its last "::" */
static size_t func_start(const char *s, size_t len, size_t *end)
{
	size_t i, start;

	for (i = 0; i < len && s[i] != '(' && s[i] != '<'; i++)
		;
	*end = i;
	for (start = i; start > 0 && s[start - 1] != ' ' && s[start - 1] != ':'; start--)
		;
	return start;
}

static int has_scope(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (s[i] == ':' && s[i + 1] == ':')
			return 1;
	return 0;
}

const char *td_short_name(const char *name, size_t len, size_t max, char *buf, size_t cap)
{
	const char *py = NULL;
	size_t i, fs, fe, head, tail;

	if (len <= max || max < 8 || cap < max + 1)
		return name;
	/* a Python frame label "dir/dir/file.py:42 func": keep file.py:42 func */
	for (i = 0; i + 4 <= len; i++)
		if (!memcmp(name + i, ".py:", 4)) {
			py = name + i;
			break;
		}
	if (py) {
		const char *file = py;
		while (file > name && file[-1] != '/')
			file--;
		if ((size_t)(name + len - file) + 4 <= max) {
			snprintf(buf, cap, ".../%.*s", (int)(name + len - file), file);
			return buf;
		}
	}
	/* a C++ symbol (a namespace or template before its arguments, or a return type): keep the
	 * function name, elide the arguments */
	fs = func_start(name, len, &fe);
	if (fe < len && fe > fs &&
	    (name[fe] == '<' || has_scope(name, fe) || !strncmp(name, "void ", 5))) {
		int tmpl = name[fe] == '<';
		size_t need = (fs ? 5 : 0) + (fe - fs) + (tmpl ? 5 : 0) + 5;
		if (need <= max) {
			int o = snprintf(buf, cap, "%s%.*s%s", fs ? "...::" : "", (int)(fe - fs), name + fs,
					 tmpl ? "<...>" : "");
			/* the argument list, when there is one after the templates */
			if (strchr(name + fe, '(') && o > 0 && (size_t)o + 5 < cap)
				snprintf(buf + o, cap - (size_t)o, "(...)");
			return buf;
		}
	}
	/* the head and the tail */
	head = (max - 3) / 2;
	tail = max - 3 - head;
	snprintf(buf, cap, "%.*s...%.*s", (int)head, name, (int)tail, name + len - tail);
	return buf;
}

const char *td_fmt_ranks(char *buf, size_t cap, const int64_t *v, size_t n)
{
	size_t i = 0, k, len;

	if (!cap)
		return buf;
	len = (size_t)snprintf(buf, cap, "rank%s", n == 1 ? "" : "s");
	while (i < n && len < cap) {
		char item[64];
		size_t il;
		for (k = i; k + 1 < n && v[k + 1] == v[k] + 1; k++)
			;
		if (k > i + 1)
			il = (size_t)snprintf(item, sizeof(item), "%s%lld-%lld", i ? ", " : " ",
					      (long long)v[i], (long long)v[k]);
		else
			il = (size_t)snprintf(item, sizeof(item), "%s%lld", i ? ", " : " ",
					      (long long)v[i]), k = i;
		if (len + il + 24 >= cap && k + 1 < n) { /* no room for this and the ending */
			snprintf(buf + len, cap - len, ", ... (%zu ranks)", n);
			return buf;
		}
		len += (size_t)snprintf(buf + len, cap - len, "%s", item);
		i = k + 1;
	}
	return buf;
}

const char *td_fmt_ts(char *buf, size_t cap, int64_t ns)
{
	snprintf(buf, cap, "%lld.%03lld", (long long)(ns / 1000),
		 (long long)((ns % 1000 + 1000) % 1000));
	return buf;
}
