/* SPDX-License-Identifier: MIT */
/* The MCP server's tools (mcp_tools.c): each runs a command of main.c's table in this process,
 * by name, with an argv built from the call's arguments, its stdout and stderr captured and
 * answered as a tool result - the command's tracedoc.NAME/1 JSON and a short text. */
#ifndef TD_DIAGNOSE_MCP_TOOLS_H
#define TD_DIAGNOSE_MCP_TOOLS_H

#include <stddef.h>
#include <stdio.h>
#include <yajl/yajl_tree.h>

#include "diagnose/mcp_roots.h"

struct mcp_server {
	FILE *out;              /* the protocol's stdout; fd 1 itself points at /dev/null */
	int devnull;            /* an fd on /dev/null: fd 1 between commands */
	struct mcp_roots roots; /* where paths may lead */
	size_t max_output;      /* the bytes of a command's output a result holds */
	int structured;         /* the protocol has structuredContent (2025-06-18) */
};

/* Answers tools/list to id: the tools whose command this build's table has. */
int mcp_tools_list(struct mcp_server *s, yajl_val id);
/* Answers tools/call to id: the result, or a JSON-RPC error for an unknown tool, bad
 * arguments or a path outside the roots. Returns -1 when the client cannot be written. */
int mcp_tools_call(struct mcp_server *s, yajl_val id, yajl_val params);

#endif
