/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as what an MCP client sends `tracedoc mcp`: each line read
 * as a JSON-RPC message the way the server reads it (diagnose/mcp_rpc.c), its id and params
 * written back in a response and an error as the server writes them. Must never crash, leak or
 * trip a sanitizer, and every response must be one line. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/mcp_rpc.h"
#include "diagnose/out.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *line, size_t n)
{
	struct mcp_req r;
	char msg[1024], *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int code = mcp_req_parse(line, n, &r, msg, sizeof(msg));

	if (code) {
		mcp_error(m, r.id, code, msg);
	} else if (r.method) {
		yajl_gen g = mcp_begin(m, r.id);
		out_json_key(g, "result");
		mcp_emit(g, r.params);
		mcp_end(g, m);
		(void)mcp_get(r.params, "name");
	}
	mcp_req_free(&r);
	fclose(m);
	if (len && memchr(buf, '\n', len) != buf + len - 1)
		abort(); /* a response of more than one line */
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	size_t at = 0;

	memcpy(s, data, size);
	s[size] = '\0';
	while (at <= size) {
		char *nl = memchr(s + at, '\n', size - at);
		size_t end = nl ? (size_t)(nl - s) : size;
		s[end] = '\0';
		if (end > at)
			one(s + at, end - at);
		at = end + 1;
	}
	free(s);
	return 0;
}
