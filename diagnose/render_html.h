/* SPDX-License-Identifier: MIT */
/* The report as one self-contained HTML file: inline CSS and SVG, no script, no network. Per
 * device a timeline of the window (utilization per time bucket, the steps marked, every idle
 * stretch coloured by its cause with the finding that claims it in its tooltip), the idle
 * breakdown, busy per step, the findings with their evidence, the top ops and kernels, the
 * memory curve; for a job a row per rank with the straggler marked. Colours from the
 * Okabe-Ito palette (safe for colour-blind readers, each also named in a legend and a table for
 * print); SVG text is real text. Every name from a trace is escaped. Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_HTML_H
#define TD_DIAGNOSE_RENDER_HTML_H

#include <stdio.h>

#include "diagnose/render.h"

struct td_job;
struct td_report;

void render_html(FILE *f, const struct render_ctx *rc);
void render_job_html(FILE *f, const struct td_job *j);

/* Pieces the gate's HTML shares. */
void html_begin(FILE *f, const char *title);
void html_end(FILE *f);
/* Text for HTML content or an attribute: & < > " ' escaped, names' marks dropped, control bytes
 * and invalid UTF-8 replaced by U+FFFD. */
void html_text(FILE *f, const char *s);
void html_findings(FILE *f, const struct td_report *r);

#endif
