/* SPDX-License-Identifier: MIT */
/* Renderers for the diagnose report. */
#ifndef TD_DIAGNOSE_RENDER_H
#define TD_DIAGNOSE_RENDER_H

#include <stdio.h>

struct td_analysis;
struct td_report;

struct td_metrics;

struct td_rp_report;
struct td_health;
struct td_critpath;
struct render_ctx {
	const char *path;
	const struct td_analysis *a;
	const struct td_report *r;
	const struct td_metrics *m; /* for the JSON report (a gate baseline); may be NULL */
	const struct td_rp_report *replay; /* the trace replayed as recorded (rules/whatif.h), for
					    * the JSON report; NULL: none */
	const struct td_health *check; /* tracedoc check's rules over the trace (its health
				       * line); NULL: not run */
	const struct td_critpath *critpath; /* each step's critical path, for the JSON report;
					     * NULL: none */
	int color;
};

void render_text(FILE *f, const struct render_ctx *rc);
/* The findings of a report (or a job's) in each format. */
#include <yajl/yajl_gen.h>
void render_findings_text(FILE *f, const struct td_report *r, int color);
void render_findings_md_table(FILE *f, const struct td_report *r);
void render_findings_md(FILE *f, const struct td_report *r);
void render_findings_json(yajl_gen g, const struct td_report *r);
void render_md(FILE *f, const struct render_ctx *rc);
void render_json(FILE *f, const struct render_ctx *rc);
/* "context": what the run is (fixes/context.h), into an open JSON object */
#include "fixes/context.h"
#include "config/peaks.h"
/* The report's "context"; with pk, the roof it used: peak_device, peak_tflops by dtype,
 * peak_tbps (config/peaks.h). */
void render_context_json(yajl_gen g, const struct td_trace *t, const struct td_context *c,
			 const struct td_peaks *pk);
/* The context's line (td_context_line) after label, escaped for the format by esc, then end:
 * how the text, md and html reports state it. */
void render_context_line(FILE *f, const struct td_trace *t, const struct td_context *c,
			 const char *label, void (*esc)(FILE *, const char *), const char *end);

#endif
