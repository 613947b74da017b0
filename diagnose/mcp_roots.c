/* SPDX-License-Identifier: MIT */
/* The MCP server reads only under its roots: a path a client names is resolved with realpath
 * (every symlink followed, so a link inside a root that points outside is outside) and must
 * name a regular file (a FIFO or a device could block the server) inside one of them; a
 * directory of a job's ranks only when every entry in it does. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "diagnose/mcp_roots.h"

#include <dirent.h>
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

/* the root real lies in, or -1 */
static int root_of(const struct mcp_roots *r, const char *real)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (inside(r->dirs[i], real))
			return (int)i;
	return -1;
}

/* 0 when every entry of the directory real (but dot files, which a job does not read)
 * resolves to a regular file or a directory inside a root; else -1 with why in msg */
static int entries_inside(const struct mcp_roots *r, const char *real, const char *shown,
			  char *msg, size_t cap)
{
	DIR *d = opendir(real);
	struct dirent *de;
	char roots[1024], esc[512];
	int rc = 0;

	if (!d) {
		snprintf(msg, cap, "%s: cannot list the directory: %s", shown, strerror(errno));
		return -1;
	}
	while (!rc && (de = readdir(d)) != NULL) {
		size_t n = strlen(real) + strlen(de->d_name) + 2;
		char *p, *e;
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		p = td_malloc(n);
		snprintf(p, n, "%s/%s", real, de->d_name);
		e = realpath(p, NULL);
		cli_shown(de->d_name, esc, sizeof(esc));
		if (!e || root_of(r, e) < 0) {
			snprintf(msg, cap, "%s: its entry %s %s (%s)", shown, esc, e ? "leads outside the "
				 "directories this server reads" : "cannot be resolved",
				 mcp_roots_list(r, roots, sizeof(roots)));
			rc = -1;
		} else if (stat(e, &st) != 0 || (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
			snprintf(msg, cap, "%s: its entry %s is not a regular file", shown, esc);
			rc = -1;
		}
		free(e);
		free(p);
	}
	closedir(d);
	return rc;
}

char *mcp_roots_resolve(const struct mcp_roots *r, const char *path, int dirs, char *msg,
			size_t cap)
{
	char shown[512], roots[1024], *joined = NULL, *real;
	struct stat st;

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
	if (root_of(r, real) < 0) {
		snprintf(msg, cap, "%s is outside the directories this server reads (%s); start it "
			 "with --root DIR to add one", shown, mcp_roots_list(r, roots, sizeof(roots)));
		free(real);
		return NULL;
	}
	if (dirs && stat(real, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (entries_inside(r, real, shown, msg, cap) != 0) {
			free(real);
			return NULL;
		}
		return real;
	}
	if (stat(real, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(msg, cap, "%s: not a regular file%s", shown, dirs ? " or a directory" : "");
		free(real);
		return NULL;
	}
	return real;
}
