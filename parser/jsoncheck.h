/* SPDX-License-Identifier: MIT */
/* Small JSON documents of ours - a config, a saved report, a summary - are parsed into a tree
 * (yajl_tree, recursive): first checked to nest no deeper than a limit, so a file of a million
 * '[' is an error at its position instead of a stack overflow; and a parse error gets the
 * line, column and byte yajl_tree does not give. */
#ifndef TD_PARSER_JSONCHECK_H
#define TD_PARSER_JSONCHECK_H

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "common/error.h"

#define TD_DOC_DEPTH_MAX 64 /* our documents nest < 10 */

/* 0, or TD_EFORMAT with err's position set and "nests deeper than N levels" in its message
 * (prefixed by what, e.g. the file name). */
int td_json_depth_check(const char *json, size_t n, unsigned max, const char *what,
			struct td_error *err);
/* Sets err's position to where yajl stops reading json (a syntax error), returns 1; 0 when it
 * parses. */
int td_json_error_pos(const char *json, size_t n, struct td_error *err);

/* json as a tree (yajl_tree_free() it), after the depth check; NULL on error, with err set:
 * the depth message, or "LEAD""not valid JSON at line L, column C (byte B): <yajl's words>" on
 * one line, with its position; err->code is `code` either way. what names the document in
 * the depth message ("config"), lead starts the other ("not a tracedoc report: ", or ""). */
yajl_val td_json_tree(const char *json, const char *what, const char *lead, int code,
		      struct td_error *err);

#endif
