/* SPDX-License-Identifier: MIT */
/* The directories an MCP server may read under (--root DIR, the current directory by
 * default), and a path a client names resolved and held to them (mcp_roots.c). */
#ifndef TD_DIAGNOSE_MCP_ROOTS_H
#define TD_DIAGNOSE_MCP_ROOTS_H

#include <stddef.h>

struct mcp_roots {
	char **dirs; /* resolved (realpath), no trailing slash but for "/" */
	size_t n;
};

/* Adds dir, resolved; 0, or -1 with why in msg (it does not exist, is not a directory). */
int mcp_roots_add(struct mcp_roots *r, const char *dir, char *msg, size_t cap);
void mcp_roots_free(struct mcp_roots *r);
/* The roots joined with ", " into buf (cut to cap). */
const char *mcp_roots_list(const struct mcp_roots *r, char *buf, size_t cap);

/* path resolved (a relative one against the first root) with every symlink followed: the
 * real path (free() it) when it is a regular file inside a root - or, with dirs, a directory
 * (a job's ranks) whose every entry is too; else NULL with why in msg, naming the path and,
 * when it lies outside, the roots. */
char *mcp_roots_resolve(const struct mcp_roots *r, const char *path, int dirs, char *msg,
			size_t cap);

#endif
