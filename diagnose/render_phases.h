/* SPDX-License-Identifier: MIT */
/* A serving run's phase table in the report formats (nothing when the steps have no phases),
 * text and md with the KV-cache reservation's line before it. */
#ifndef TD_DIAGNOSE_RENDER_PHASES_H
#define TD_DIAGNOSE_RENDER_PHASES_H

#include <stdio.h>
#include <yajl/yajl_gen.h>

struct td_analysis;

void render_phases_text(FILE *f, const struct td_analysis *a);
void render_phases_md(FILE *f, const struct td_analysis *a);
/* "iterations_from", "phases_from_batch_sizes" and the "phases" array, into an open map */
void render_phases_json(yajl_gen g, const struct td_analysis *a);
/* "kv_cache": the KV-cache reservation (analysis/kvcache.h), into an open map; nothing when
 * the trace shows none */
void render_kv_json(yajl_gen g, const struct td_analysis *a);
/* text: the HTML escaper of the caller */
void render_phases_html(FILE *f, const struct td_analysis *a,
			void (*text)(FILE *f, const char *s));

#endif
