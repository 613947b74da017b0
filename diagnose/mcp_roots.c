/* SPDX-License-Identifier: MIT */
/* The MCP server reads only under its roots: a path a client names is resolved with realpath
 * (every symlink followed, so a link inside a root that points outside is outside) and must
 * name a regular file (a FIFO or a device could block the server) inside one of them. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "diagnose/mcp_roots.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "diagnose/msg.h"

int mcp_roots_add(struct mcp_roots *r, const char *dir, char *msg, size_t cap)
{
	char shown[512];
	char *real = realpath(dir, NULL);
	struct stat st;

	if (!real || stat(real, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(msg, cap, "--root %s: %s", cli_shown(dir, shown, sizeof(shown)),
			 real ? "not a directory" : strerror(errno));
		free(real);
		return -1;
	}
	r->dirs = td_realloc(r->dirs, (r->n + 1) * sizeof(*r->dirs));
	r->dirs[r->n++] = real;
	return 0;
}

void mcp_roots_free(struct mcp_roots *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		free(r->dirs[i]);
	free(r->dirs);
	memset(r, 0, sizeof(*r));
}

const char *mcp_roots_list(const struct mcp_roots *r, char *buf, size_t cap)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < r->n && at < cap; i++) {
		int k = snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", r->dirs[i]);
		if (k < 0)
			break;
		at += (size_t)k;
	}
	return buf;
}

/* 1 when real lies inside dir (dir itself, or below it) */
static int inside(const char *dir, const char *real)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return real[0] == '/';
	return !strncmp(real, dir, n) && (real[n] == '/' || real[n] == '\0');
}

char *mcp_roots_resolve(const struct mcp_roots *r, const char *path, char *msg, size_t cap)
{
	char shown[512], roots[1024], *joined = NULL, *real;
	struct stat st;
	size_t i;

	if (!*path) {
		snprintf(msg, cap, "an empty path");
		return NULL;
	}
	if (path[0] != '/' && r->n) { /* relative: to the first root */
		size_t n = strlen(r->dirs[0]) + strlen(path) + 2;
		joined = td_malloc(n);
		snprintf(joined, n, "%s/%s", r->dirs[0], path);
	}
	real = realpath(joined ? joined : path, NULL);
	free(joined);
	cli_shown(path, shown, sizeof(shown));
	if (!real) {
		snprintf(msg, cap, "%s: %s (paths are resolved against %s)", shown, strerror(errno),
			 r->n ? r->dirs[0] : "the current directory");
		return NULL;
	}
	for (i = 0; i < r->n && !inside(r->dirs[i], real); i++)
		;
	if (i == r->n) {
		snprintf(msg, cap, "%s is outside the directories this server reads (%s); start it "
			 "with --root DIR to add one", shown, mcp_roots_list(r, roots, sizeof(roots)));
		free(real);
		return NULL;
	}
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, cap, "%s: not a regular file", shown);
		free(real);
		return NULL;
	}
	return real;
}
