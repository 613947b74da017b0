/* SPDX-License-Identifier: MIT */
/* tracedoc critical-path's output: text, md, json (tracedoc.critical_path/1), and the section
 * the JSON report holds. */
#ifndef TD_DIAGNOSE_RENDER_CRITPATH_H
#define TD_DIAGNOSE_RENDER_CRITPATH_H

#include <stdio.h>

#include <yajl/yajl_gen.h>

struct td_critpath;
struct td_trace;

struct critpath_ctx {
	const char *path;
	const struct td_trace *t;
	const struct td_critpath *cp;
};

void render_critpath_text(FILE *f, const void *ctx);
void render_critpath_md(FILE *f, const void *ctx);
void render_critpath_json(FILE *f, const void *ctx);
/* The path's fields (dominant, total, steps, top) into an open JSON map. */
void render_critpath_fields(yajl_gen g, const struct td_trace *t, const struct td_critpath *cp);

#endif
