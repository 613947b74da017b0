/* SPDX-License-Identifier: MIT */
/* JSON-RPC 2.0 messages of the MCP stdio transport: a line read into a request (yajl, through
 * parser/jsoncheck.c's depth-limited tree with error positions), a response or an error
 * written compact on one line (the transport's messages hold no newline). */
#include "diagnose/mcp_rpc.h"

#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "diagnose/out.h"
#include "parser/jsoncheck.h"

yajl_val mcp_get(yajl_val o, const char *key)
{
	size_t i;

	if (!o || !YAJL_IS_OBJECT(o))
		return NULL;
	for (i = 0; i < o->u.object.len; i++)
		if (!strcmp(o->u.object.keys[i], key))
			return o->u.object.values[i];
	return NULL;
}

void mcp_req_free(struct mcp_req *r)
{
	if (r->root)
		yajl_tree_free(r->root);
	memset(r, 0, sizeof(*r));
}

int mcp_req_parse(const char *line, size_t n, struct mcp_req *r, char *msg, size_t cap)
{
	struct td_error err;
	yajl_val v, id;

	memset(r, 0, sizeof(*r));
	memset(&err, 0, sizeof(err));
	if (memchr(line, '\0', n)) {
		snprintf(msg, cap, "a NUL byte at byte %zu of the message",
			 (size_t)((const char *)memchr(line, '\0', n) - line));
		return MCP_PARSE_ERROR;
	}
	if (!(r->root = td_json_tree(line, "message", "", TD_EPARSE, &err))) {
		snprintf(msg, cap, "%s", err.msg);
		return MCP_PARSE_ERROR;
	}
	if (YAJL_IS_ARRAY(r->root)) {
		snprintf(msg, cap, "a batch (an array of messages): MCP 2025-06-18 sends one message "
			 "a line");
		return MCP_INVALID_REQUEST;
	}
	if (!YAJL_IS_OBJECT(r->root)) {
		snprintf(msg, cap, "not a JSON-RPC message: an object is expected");
		return MCP_INVALID_REQUEST;
	}
	id = mcp_get(r->root, "id");
	if (id && (YAJL_IS_STRING(id) || YAJL_IS_NUMBER(id)))
		r->id = id;
	v = mcp_get(r->root, "jsonrpc");
	if (!v || !YAJL_IS_STRING(v) || strcmp(v->u.string, "2.0")) {
		snprintf(msg, cap, "\"jsonrpc\" must be \"2.0\"");
		return MCP_INVALID_REQUEST;
	}
	if (id && !r->id) {
		snprintf(msg, cap, "\"id\" must be a string or a number (MCP: never null)");
		return MCP_INVALID_REQUEST;
	}
	v = mcp_get(r->root, "method");
	if (!v) {
		if (r->id && (mcp_get(r->root, "result") || mcp_get(r->root, "error")))
			return 0; /* a response to a request of ours: the caller ignores it */
		snprintf(msg, cap, "no \"method\"");
		return MCP_INVALID_REQUEST;
	}
	if (!YAJL_IS_STRING(v)) {
		snprintf(msg, cap, "\"method\" must be a string");
		return MCP_INVALID_REQUEST;
	}
	r->method = v->u.string;
	r->params = mcp_get(r->root, "params");
	if (r->params && YAJL_IS_NULL(r->params))
		r->params = NULL;
	return 0;
}

void mcp_emit(yajl_gen g, yajl_val v)
{
	size_t i;

	if (!v || YAJL_IS_NULL(v)) {
		yajl_gen_null(g);
	} else if (YAJL_IS_STRING(v)) {
		out_json_str(g, v->u.string);
	} else if (YAJL_IS_NUMBER(v)) {
		yajl_gen_number(g, v->u.number.r, strlen(v->u.number.r));
	} else if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) {
		yajl_gen_bool(g, YAJL_IS_TRUE(v));
	} else if (YAJL_IS_ARRAY(v)) {
		yajl_gen_array_open(g);
		for (i = 0; i < v->u.array.len; i++)
			mcp_emit(g, v->u.array.values[i]);
		yajl_gen_array_close(g);
	} else {
		yajl_gen_map_open(g);
		for (i = 0; i < v->u.object.len; i++) {
			out_json_key(g, v->u.object.keys[i]);
			mcp_emit(g, v->u.object.values[i]);
		}
		yajl_gen_map_close(g);
	}
}

yajl_gen mcp_begin(FILE *f, yajl_val id)
{
	yajl_gen g = out_json_new(f);

	yajl_gen_config(g, yajl_gen_beautify, 0); /* one message, one line */
	yajl_gen_map_open(g);
	out_json_kstr(g, "jsonrpc", "2.0");
	out_json_key(g, "id");
	mcp_emit(g, id);
	return g;
}

int mcp_end(yajl_gen g, FILE *f)
{
	out_json_end(g, f);
	return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}

yajl_gen mcp_error_open(FILE *f, yajl_val id, int code, const char *msg)
{
	yajl_gen g = mcp_begin(f, id);

	out_json_kmap(g, "error");
	out_json_kint(g, "code", code);
	out_json_kstr(g, "message", msg);
	return g;
}

int mcp_error_close(yajl_gen g, FILE *f)
{
	yajl_gen_map_close(g);
	return mcp_end(g, f);
}

int mcp_error(FILE *f, yajl_val id, int code, const char *msg)
{
	return mcp_error_close(mcp_error_open(f, id, code, msg), f);
}
