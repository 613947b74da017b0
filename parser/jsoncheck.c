/* SPDX-License-Identifier: MIT */
#include "parser/jsoncheck.h"

#include <string.h>
#include <yajl/yajl_parse.h>

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

int td_json_error_pos(const char *json, size_t n, struct td_error *err)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	yajl_status st = yajl_parse(h, (const unsigned char *)json, n);
	size_t at = n;
	int bad = st != yajl_status_ok;

	if (bad)
		at = yajl_get_bytes_consumed(h);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		bad = 1;
	yajl_free(h);
	if (bad)
		position(json, at, err);
	return bad;
}

yajl_val td_json_tree(const char *json, const char *what, const char *lead, int code,
		      struct td_error *err)
{
	char ebuf[512], *nl;
	struct td_error pos;
	size_t n = strlen(json);
	yajl_val root;

	if (td_json_depth_check(json, n, TD_DOC_DEPTH_MAX, what, err) != 0) {
		err->code = code;
		return NULL;
	}
	if ((root = yajl_tree_parse(json, ebuf, sizeof(ebuf))) != NULL)
		return root;
	memset(&pos, 0, sizeof(pos));
	td_json_error_pos(json, n, &pos);
	td_error_set(err, code, "%snot valid JSON at line %u, column %u (byte %llu): %s", lead,
		     pos.line, pos.col, (unsigned long long)pos.offset, ebuf);
	err->has_pos = pos.has_pos;
	err->line = pos.line;
	err->col = pos.col;
	err->offset = pos.offset;
	while ((nl = strchr(err->msg, '\n')) != NULL)
		*nl = ' ';
	return NULL;
}
