/* SPDX-License-Identifier: MIT */
/* Renderers for the diagnose report. */
#ifndef TD_DIAGNOSE_RENDER_H
#define TD_DIAGNOSE_RENDER_H

#include <stdio.h>

struct td_analysis;
struct td_report;

struct td_metrics;

struct render_ctx {
	const char *path;
	const struct td_analysis *a;
	const struct td_report *r;
	const struct td_metrics *m; /* for the JSON report (a gate baseline); may be NULL */
	int color;
};

void render_text(FILE *f, const struct render_ctx *rc);
void render_md(FILE *f, const struct render_ctx *rc);
void render_json(FILE *f, const struct render_ctx *rc);

#endif
