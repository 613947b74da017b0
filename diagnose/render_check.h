/* SPDX-License-Identifier: MIT */
/* tracedoc check's output: text, md, json (tracedoc.check/1). */
#ifndef TD_DIAGNOSE_RENDER_CHECK_H
#define TD_DIAGNOSE_RENDER_CHECK_H

#include <stdio.h>

#include <yajl/yajl_gen.h>

struct td_health;

struct check_ctx {
	const char *path;
	const struct td_health *c;
};

void render_check_text(FILE *f, const void *ctx);
void render_check_md(FILE *f, const void *ctx);
void render_check_json(FILE *f, const void *ctx);
/* The rules as a JSON array under key "rules", the health beside it (what the report's
 * "health" section and tracedoc.check/1 share). */
void render_check_json_rules(yajl_gen g, const struct td_health *c);

#endif
