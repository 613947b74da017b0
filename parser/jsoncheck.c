/* SPDX-License-Identifier: MIT */
#include "parser/jsoncheck.h"

#include <stdio.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/utf8.h"

static void position(const char *s, size_t at, struct td_error *err)
{
	size_t i, line = 1, start = 0;

	for (i = 0; i < at; i++)
		if (s[i] == '\n') {
			line++;
			start = i + 1;
		}
	err->has_pos = 1;
	err->offset = at;
	err->line = (uint32_t)(line > UINT32_MAX ? UINT32_MAX : line);
	err->col = (uint32_t)(at - start + 1 > UINT32_MAX ? UINT32_MAX : at - start + 1);
}

int td_json_depth_check(const char *json, size_t n, unsigned max, const char *what,
			struct td_error *err)
{
	size_t i;
	unsigned depth = 0;
	int in_str = 0;

	for (i = 0; i < n; i++) {
		char c = json[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > max) {
				int rc;
				position(json, i, err);
				rc = td_error_set(err, TD_EFORMAT, "the %s nests deeper than %u levels at line "
						  "%u, column %u (byte %llu)", what, max, err->line, err->col,
						  (unsigned long long)err->offset);
				err->has_pos = 1;
				return rc;
			}
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
	}
	return 0;
}

/* where yajl stops reading json, and its words for why (without its own context, which quotes
 * raw bytes from the wrong place) */
static int json_error(const char *json, size_t n, struct td_error *err, char *why, size_t cap)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	yajl_status st = yajl_parse(h, (const unsigned char *)json, n);
	size_t at = n;
	int bad = st != yajl_status_ok;

	if (bad)
		at = yajl_get_bytes_consumed(h);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		bad = 1;
	if (bad) {
		unsigned char *m = yajl_get_error(h, 0, NULL, 0);
		const char *t = (const char *)m;
		/* as the trace reader points (parser/kineto.c): yajl counts the token that failed as
		 * consumed, but after a map's value, in a comment, a bad string or number it stops
		 * at the byte it cannot take - which is never whitespace */
		int at_byte = strstr(t, "after key and value") || strstr(t, "comment") ||
			      strstr(t, "invalid string in json") || strstr(t, "malformed number");
		if (st != yajl_status_ok && !at_byte && at > 0)
			at--;
		while (at_byte && at < n && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
					     json[at] == '\r'))
			at++;
		if (why) {
			size_t k;
			snprintf(why, cap, "%s", t);
			for (k = strlen(why); k && (why[k - 1] == '\n' || why[k - 1] == ' ' ||
						   why[k - 1] == '.'); k--)
				why[k - 1] = '\0';
		}
		yajl_free_error(h, m);
	}
	yajl_free(h);
	if (bad)
		position(json, at, err);
	return bad;
}

int td_json_error_pos(const char *json, size_t n, struct td_error *err)
{
	return json_error(json, n, err, NULL, 0);
}

yajl_val td_json_tree(const char *json, const char *what, const char *lead, int code,
		      struct td_error *err)
{
	char why[256], before[128], after[128];
	struct td_error pos;
	size_t n = strlen(json), b, e;
	yajl_val root;

	if (td_json_depth_check(json, n, TD_DOC_DEPTH_MAX, what, err) != 0) {
		err->code = code;
		return NULL;
	}
	if ((root = yajl_tree_parse(json, NULL, 0)) != NULL)
		return root;
	memset(&pos, 0, sizeof(pos));
	snprintf(why, sizeof(why), "%s", "not valid");
	json_error(json, n, &pos, why, sizeof(why));
	/* the bytes around the error, escaped: nothing in the file reaches the terminal raw */
	b = pos.offset < 24 ? (size_t)pos.offset : 24;
	e = n - (size_t)pos.offset < 24 ? n - (size_t)pos.offset : 24;
	td_quote_bytes(before, sizeof(before), json + pos.offset - b, b);
	td_quote_bytes(after, sizeof(after), json + pos.offset, e);
	td_error_set(err, code, "%snot valid JSON at line %u, column %u (byte %llu): %s: near "
		     "\"%s >>> %s\"", lead, pos.line, pos.col, (unsigned long long)pos.offset, why,
		     before, after);
	err->has_pos = pos.has_pos;
	err->line = pos.line;
	err->col = pos.col;
	err->offset = pos.offset;
	return NULL;
}
