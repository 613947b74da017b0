/* SPDX-License-Identifier: MIT */
/* A command run in this process with its stdout and stderr captured, and its tool result
 * (mcp_result.c): the output bounded, its JSON as structuredContent, a short summary. */
#ifndef TD_DIAGNOSE_MCP_RESULT_H
#define TD_DIAGNOSE_MCP_RESULT_H

#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_tree.h>

#include "diagnose/mcp_tools.h"

struct mcp_capture {
	char *out, *err;    /* the first bytes of each, NUL-terminated */
	size_t nout, nerr;
	uint64_t out_total; /* the bytes the command wrote to stdout */
	int rc;             /* its exit code */
};

/* Runs fn(argc, argv) with fd 1 and fd 2 on temporary files, then fd 1 back on /dev/null and
 * fd 2 where it was; keeps the first max_out bytes of stdout. Returns 0, or -1 (errno) when
 * the temporary files cannot be made. */
int mcp_run_captured(int (*fn)(int, char **), int argc, char **argv, int devnull,
		     size_t max_out, struct mcp_capture *c);
void mcp_capture_free(struct mcp_capture *c);

/* Answers id with c as tool's result: exit 2 (the arguments) a JSON-RPC invalid-params error
 * with the command's message; 3 and 4 a result with isError; 0 the output - in json, the
 * document as structuredContent (when s->structured) and as text after a summary; else the
 * text - cut at s->max_output with a note. Returns -1 when the client cannot be written. */
int mcp_result(struct mcp_server *s, yajl_val id, const char *tool, const char *format,
	       const struct mcp_capture *c);

#endif
