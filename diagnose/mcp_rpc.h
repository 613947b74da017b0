/* SPDX-License-Identifier: MIT */
/* JSON-RPC 2.0 as the MCP stdio transport carries it (mcp_rpc.c): one message a line, read
 * into a request with yajl (parser/jsoncheck.c: depth limited, error positions); responses
 * and errors written compact on one line through yajl_gen. */
#ifndef TD_DIAGNOSE_MCP_RPC_H
#define TD_DIAGNOSE_MCP_RPC_H

#include <stddef.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

/* JSON-RPC's error codes */
enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

/* the longest message line read; a longer one is skipped to its end and answered with an
 * error */
#define MCP_LINE_MAX (4u << 20)

struct mcp_req {
	yajl_val root;      /* the parsed message (mcp_req_free) */
	yajl_val id;        /* a string or number; NULL: a notification (or no id to answer) */
	const char *method; /* NULL when the message is not a request */
	yajl_val params;    /* an object, or NULL when absent */
};

/* Reads the message line[0..n) into r. Returns 0, or MCP_PARSE_ERROR (not JSON) or
 * MCP_INVALID_REQUEST (not a JSON-RPC 2.0 request or notification; r->id set when the
 * message had a usable one) with why in msg. r is to be freed either way. */
int mcp_req_parse(const char *line, size_t n, struct mcp_req *r, char *msg, size_t cap);
void mcp_req_free(struct mcp_req *r);

/* The value of key in object o, or NULL. */
yajl_val mcp_get(yajl_val o, const char *key);

/* A response to id on f: the map opened, "jsonrpc" and "id" written; the caller writes
 * "result" (or mcp_error_open's "error") and ends it with mcp_end. */
yajl_gen mcp_begin(FILE *f, yajl_val id);
/* The response closed, its line ended and flushed; returns 0 or -1 when f cannot be
 * written (the client is gone). */
int mcp_end(yajl_gen g, FILE *f);
/* A response with "error" opened and its code and message written; the caller may write
 * "data" before mcp_error_close. */
yajl_gen mcp_error_open(FILE *f, yajl_val id, int code, const char *msg);
int mcp_error_close(yajl_gen g, FILE *f);
/* An error response with no data. */
int mcp_error(FILE *f, yajl_val id, int code, const char *msg);

/* v written to g as it was read (numbers in their own digits). */
void mcp_emit(yajl_gen g, yajl_val v);

#endif
