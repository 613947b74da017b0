/* SPDX-License-Identifier: MIT */
/* tracedoc critical-path's output: text, md, json (tracedoc.critical_path/1), and the section
 * the JSON report holds. */
#ifndef TD_DIAGNOSE_RENDER_CRITPATH_H
#define TD_DIAGNOSE_RENDER_CRITPATH_H

#include <stdint.h>
#include <stdio.h>

#include <yajl/yajl_gen.h>

struct td_critpath;
struct td_trace;

/* A finding's fix beside the path: its saving and how much of the path its evidence covers. */
struct cp_fix {
	const char *rule, *title;
	int64_t savings_ns;
	int replayed;
	int64_t on_path_ns;       /* -1: the finding has no evidence to place */
};

struct critpath_ctx {
	const char *path;
	const struct td_trace *t;
	const struct td_critpath *cp;
	const struct cp_fix *fixes;
	size_t nfixes;
};

void render_critpath_text(FILE *f, const void *ctx);
void render_critpath_md(FILE *f, const void *ctx);
void render_critpath_json(FILE *f, const void *ctx);
/* The path's fields (dominant, total, steps, top) into an open JSON map. */
void render_critpath_fields(yajl_gen g, const struct td_trace *t, const struct td_critpath *cp);

#endif
