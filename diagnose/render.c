/* SPDX-License-Identifier: MIT */
/* The diagnose report in three forms: text for a terminal (100 columns, colour only on a tty),
 * GitHub Markdown for pull requests (everything from the trace escaped), and JSON
 * (tracedoc.report/1, documented in the README). Same input, same bytes. */
#include "diagnose/render.h"
#include "sizing/whatif.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "diagnose/out.h"
#include "diagnose/render_text.h"
#include "diagnose/render_phases.h"
#include "diagnose/render_critpath.h"
#include "parser/trace.h"
#include "analysis/check.h"
#include "analysis/metrics.h"
#include "analysis/roofline.h"
#include "rules/rule.h"


/* --- the summary every format shares ----------------------------------------------------- */

struct cause_row {
	int cause;       /* enum td_cause; CAUSE_COUNT: a one-off finding's own row */
	int64_t ns;
	uint32_t what;   /* top activity */
	size_t dev;
	const char *title;
};

/* The breakdown table's rows, largest first: the idle by cause, with what one-off findings
 * claim under those one-offs (td_an_idle_by_cause_told). */
static size_t cause_rows(const struct td_analysis *a, struct cause_row *rows)
{
	size_t n = 0, d, i, j;
	int64_t by[CAUSE_COUNT + 1] = {0};
	const char *oneoff = NULL;
	int c;

	for (d = 0; d < a->ndev; d++)
		td_an_idle_by_cause_told(a, d, by, &oneoff);
	for (c = 0; c <= CAUSE_COUNT; c++) {
		int64_t best = -1;
		uint32_t what = 0;
		size_t wd = 0;
		for (d = 0; d < a->ndev && c < CAUSE_COUNT; d++) {
			for (i = 0; i < a->dev[d].idle.len; i++) {
				const struct td_idle_item *it = &TD_VEC_AT(&a->dev[d].idle, struct td_idle_item, i);
				if (it->cause == c && it->ns > best) {
					best = it->ns;
					what = it->what;
					wd = d;
				}
			}
		}
		if (by[c] > 0) {
			rows[n].cause = c;
			rows[n].ns = by[c];
			rows[n].what = what;
			rows[n].dev = wd;
			rows[n].title = c < CAUSE_COUNT ? td_cause_title((enum td_cause)c)
				: oneoff ? oneoff : "one-off";
			n++;
		}
	}
	for (i = 1; i < n; i++) /* largest first; ties by cause order */
		for (j = i; j > 0 && rows[j].ns > rows[j - 1].ns; j--) {
			struct cause_row tmp = rows[j];
			rows[j] = rows[j - 1];
			rows[j - 1] = tmp;
		}
	return n;
}

static void totals(const struct td_analysis *a, int64_t *busy, int64_t *idle, int64_t *win)
{
	size_t d;

	*busy = *idle = *win = 0;
	for (d = 0; d < a->ndev; d++) {
		*busy += a->dev[d].busy_ns;
		*idle += a->dev[d].idle_ns;
		*win += a->dev[d].win_end - a->dev[d].win_start;
	}
}

static const char *dev_name(const struct td_trace *t, int32_t id)
{
	const struct td_device *d = td_trace_find_device(t, id);

	return d && d->name ? td_trace_name(t, d->name) : "";
}

/* The window over every device (the steps' span when there is no device). */
static void window_of(const struct td_analysis *a, int64_t *s, int64_t *e)
{
	size_t d;

	*s = a->has_steps ? a->steps_start : 0;
	*e = a->has_steps ? a->steps_end : 0;
	for (d = 0; d < a->ndev; d++) {
		if (!d || a->dev[d].win_start < *s)
			*s = a->dev[d].win_start;
		if (!d || a->dev[d].win_end > *e)
			*e = a->dev[d].win_end;
	}
}

/* "; left out 1 warm-up step (40.0 ms)" when the leading steps were start-up */
static const char *left_out(const struct td_analysis *a, char *buf, size_t cap)
{
	char b[32];

	if (!a->warm_steps)
		return "";
	snprintf(buf, cap, "; left out %zu warm-up step%s (%s, %gx the median or longer)",
		 a->warm_steps, a->warm_steps == 1 ? "" : "s",
		 td_fmt_dur(b, sizeof(b), a->warm_end - a->warm_start), a->params.warmup_step_ratio);
	return buf;
}

static void wrap_at_9(FILE *f, const char *s)
{
	out_text_wrap(f, s, 9, 9, 100);
}

/* "41.2%: 538.60 of 1307.4 TFLOP/s bf16 (AMD Instinct MI300X), 3.21 TFLOPs/step" (model
 * FLOPs), or NULL without an MFU */
static const char *mfu_line(const struct td_analysis *a, char *buf, size_t cap)
{
	struct td_mfu m;
	int n;

	td_an_mfu(a, &m);
	if (isnan(m.mfu))
		return NULL;
	n = snprintf(buf, cap, "%.1f%%: %.2f of %.1f TFLOP/s %s (%s%s)", 100 * m.mfu,
		     m.achieved_tflops, m.peak_tflops, td_dtype_name((enum td_dtype)m.dtype),
		     a->ndev > 1 ? "all devices, " : "", a->peaks.device);
	if (m.steps && n > 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ", %.3g TFLOPs/step",
			      (double)m.flops / (double)m.steps / 1e12);
	/* a floor where graph replays hold a tenth of the GPU's compute or more: their kernels
	 * carry no op, so no FLOPs; said, with the share the FLOPs are known for */
	if (m.graph_ns * 10 >= m.kernel_ns && m.graph_ns > 0 && n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, "; a floor: graph replays run %.0f%% of the "
			 "kernel time with no FLOPs known, ops with FLOPs known %.0f%%",
			 100.0 * (double)m.graph_ns / (double)m.kernel_ns,
			 100.0 * (double)m.known_ns / (double)m.kernel_ns);
	return buf;
}

void render_text(FILE *f, const struct render_ctx *rc)
{
	const struct td_analysis *a = rc->a;
	const struct td_trace *t = a->t;
	struct col c = {f, rc->color};
	struct cause_row rows[CAUSE_COUNT + 1];
	size_t nrows = cause_rows(a, rows), i;
	int64_t busy, idle, win, ws, we;
	char b1[32], b2[32], lo[128], mline[384];

	totals(a, &busy, &idle, &win);
	window_of(a, &ws, &we);
	sgr(&c, "1");
	fprintf(f, "tracedoc diagnose ");
	out_text_name(f, rc->path, 0);
	sgr(&c, "0");
	fputc('\n', f);
	fprintf(f, "trace    %llu events%s", (unsigned long long)t->n_trace_events,
		t->partial ? " (PARTIAL: input cut short)" : "");
	if (t->rank >= 0) {
		fprintf(f, ", rank %lld", (long long)t->rank);
		if (t->world_size > 0)
			fprintf(f, " of %lld", (long long)t->world_size);
	}
	fputc('\n', f);
	render_context_line(f, t, &a->ctx, "context  ", wrap_at_9, "\n");
	if (rc->check) { /* tracedoc check's health, one line */
		char hl[512];
		td_health_line(rc->check, hl, sizeof(hl));
		fputs("health   ", f);
		wrap_at_9(f, hl);
		fputc('\n', f);
	}
	if (a->has_steps && a->iter_src != TD_ITER_NONE)
		fprintf(f, "window   %zu iteration%s (%s), %s, median %s%s%s\n", a->nsteps,
			a->nsteps == 1 ? "" : "s", td_iter_src_name(a->iter_src),
			td_fmt_dur(b1, sizeof(b1), we - ws),
			td_fmt_dur(b2, sizeof(b2), td_an_median_step(a)), a->warm_steps ? "\n         " : "",
			left_out(a, lo, sizeof(lo)) + (a->warm_steps ? 2 : 0));
	else if (a->has_steps)
		fprintf(f, "window   %zu step%s, %s, median step %s%s%s\n", a->nsteps,
			a->nsteps == 1 ? "" : "s",
			td_fmt_dur(b1, sizeof(b1), we - ws),
			td_fmt_dur(b2, sizeof(b2), td_an_median_step(a)), a->warm_steps ? "\n         " : "",
			left_out(a, lo, sizeof(lo)) + (a->warm_steps ? 2 : 0));
	else if (a->ndev)
		fprintf(f, "window   first to last GPU op, %s (%s)\n", td_fmt_dur(b1, sizeof(b1), we - ws),
			((a->ctx.on & TD_ON_COLLECTOR) || t->nsys) ? "no steps: no NVTX range repeats"
						      : "no ProfilerStep# markers");
	if (!a->ndev) {
		fprintf(f, "GPU      no kernels, copies or memsets in this trace: nothing to say about "
			   "GPU time\n");
	}
	for (i = 0; i < a->ndev; i++) {
		const struct td_dev_analysis *d = &a->dev[i];
		int64_t w = d->win_end - d->win_start;
		fprintf(f, "GPU %-4d ", d->device);
		out_text_name(f, dev_name(t, d->device), 40);
		fprintf(f, "%sbusy %.1f%%, idle %s\n", *dev_name(t, d->device) ? ": " : "",
			w ? 100.0 * (double)d->busy_ns / (double)w : 0.0,
			td_fmt_dur(b1, sizeof(b1), d->idle_ns));
	}
	if (mfu_line(a, mline, sizeof(mline))) {
		fputs("MFU      ", f);
		wrap_at_9(f, mline);
		fputc('\n', f);
	}
	render_phases_text(f, a);
	if (nrows) {
		fprintf(f, "\nwhere the GPU idle time went\n");
		for (i = 0; i < nrows; i++) {
			fprintf(f, "  %-36s %10s %6.1f%%", rows[i].title,
				td_fmt_dur(b1, sizeof(b1), rows[i].ns),
				idle ? 100.0 * (double)rows[i].ns / (double)idle : 0.0);
			if (rows[i].what) {
				fputs("  ", f);
				out_text_name(f, td_an_label(a, rows[i].what), 38);
			}
			fputc('\n', f);
		}
	}
	fputc('\n', f);
	render_findings_text(f, rc->r, rc->color);
	for (i = 0; i < rc->r->suppressed.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&rc->r->suppressed, struct td_finding, i);
		if (i == 0)
			fprintf(f, "suppressed by the config:\n");
		fprintf(f, "   %s (saves ~%s): ", fd->rule, td_fmt_dur(b1, sizeof(b1), fd->savings_ns));
		wrap(f, fd->title, 20, 5);
		fprintf(f, "\n     reason: ");
		wrap(f, fd->suppressed, 13, 13);
		fputc('\n', f);
	}
	if (t->partial)
		fprintf(f, "note: partial trace: %s\n", t->partial_msg);
	if (t->dropped_records > 0)
		fprintf(f, "note: CUPTI dropped %lld records while recording: the trace is incomplete\n",
			(long long)t->dropped_records);
	if (*t->lacks) {
		fputs("note: ", f);
		wrap(f, t->lacks, 6, 6);
		fputc('\n', f);
	}
}

/* --- Markdown ---------------------------------------------------------------------------- */

void render_md(FILE *f, const struct render_ctx *rc)
{
	const struct td_analysis *a = rc->a;
	const struct td_trace *t = a->t;
	struct cause_row rows[CAUSE_COUNT + 1];
	size_t nrows = cause_rows(a, rows), i;
	int64_t busy, idle, win, ws, we;
	char b1[32], lo[128], mline[384];

	totals(a, &busy, &idle, &win);
	window_of(a, &ws, &we);
	fprintf(f, "### tracedoc: %zu finding%s for ", rc->r->findings.len,
		rc->r->findings.len == 1 ? "" : "s");
	out_md(f, rc->path);
	fputs("\n\n", f);
	if (t->partial) {
		fputs("> **Partial trace:** ", f);
		out_md(f, t->partial_msg);
		fputs("\n\n", f);
	}
	if (*t->lacks) {
		fputs("> **Note:** ", f);
		out_md(f, t->lacks);
		fputs("\n\n", f);
	}
	render_context_line(f, t, &a->ctx, "Context: ", out_md, "\n\n");
	if (rc->check) {
		char hl[512];
		td_health_line(rc->check, hl, sizeof(hl));
		fputs("Health: ", f);
		out_md(f, hl);
		fputs("\n\n", f);
	}
	if (a->has_steps && a->iter_src != TD_ITER_NONE)
		fprintf(f, "%zu iteration%s (%s), median %s%s", a->nsteps, a->nsteps == 1 ? "" : "s",
			td_iter_src_name(a->iter_src), td_fmt_dur(b1, sizeof(b1), td_an_median_step(a)),
			left_out(a, lo, sizeof(lo)));
	else if (a->has_steps)
		fprintf(f, "%zu step%s, median step %s%s", a->nsteps, a->nsteps == 1 ? "" : "s",
			td_fmt_dur(b1, sizeof(b1), td_an_median_step(a)), left_out(a, lo, sizeof(lo)));
	else
		fprintf(f, "%s: window is first to last GPU op, %s",
			((a->ctx.on & TD_ON_COLLECTOR) || t->nsys) ? "no steps (no NVTX range repeats)"
						      : "no ProfilerStep# markers",
			td_fmt_dur(b1, sizeof(b1), we - ws));
	for (i = 0; i < a->ndev; i++) {
		const struct td_dev_analysis *d = &a->dev[i];
		int64_t w = d->win_end - d->win_start;
		fprintf(f, " · GPU %d ", d->device);
		out_md(f, dev_name(t, d->device));
		fprintf(f, " busy **%.1f%%**, idle %s", w ? 100.0 * (double)d->busy_ns / (double)w : 0.0,
			td_fmt_dur(b1, sizeof(b1), d->idle_ns));
	}
	if (!a->ndev)
		fputs(" · no GPU activity in this trace", f);
	if (mfu_line(a, mline, sizeof(mline))) {
		fputs(" · MFU ", f);
		out_md(f, mline);
	}
	fputs("\n\n", f);
	render_phases_md(f, a);
	render_findings_md_table(f, rc->r);
	if (nrows) {
		fputs("<details><summary>Where the GPU idle time went</summary>\n\n"
		      "| cause | time | share | top activity |\n|---|---|---|---|\n", f);
		for (i = 0; i < nrows; i++) {
			fprintf(f, "| %s | %s | %.1f%% | ", rows[i].title,
				td_fmt_dur(b1, sizeof(b1), rows[i].ns),
				idle ? 100.0 * (double)rows[i].ns / (double)idle : 0.0);
			out_md(f, rows[i].what ? td_an_label(a, rows[i].what) : "");
			fputs(" |\n", f);
		}
		fputs("\n</details>\n\n", f);
	}
	render_findings_md(f, rc->r);
	if (rc->r->suppressed.len) {
		fputs("<details><summary>Suppressed by the config</summary>\n\n"
		      "| rule | finding | est. savings | reason |\n|---|---|---|---|\n", f);
		for (i = 0; i < rc->r->suppressed.len; i++) {
			const struct td_finding *fd = &TD_VEC_AT(&rc->r->suppressed, struct td_finding, i);
			fprintf(f, "| `%s` | ", fd->rule);
			out_md(f, fd->title);
			fprintf(f, " | %s | ", td_fmt_dur(b1, sizeof(b1), fd->savings_ns));
			out_md(f, fd->suppressed);
			fputs(" |\n", f);
		}
		fputs("\n</details>\n", f);
	}
}

/* --- JSON -------------------------------------------------------------------------------- */

void render_context_line(FILE *f, const struct td_trace *t, const struct td_context *c,
			 const char *label, void (*esc)(FILE *, const char *), const char *end)
{
	char cx[512];

	td_context_line(t, c, cx, sizeof(cx));
	fputs(label, f);
	esc(f, cx);
	fputs(end, f);
}

void render_context_json(yajl_gen g, const struct td_trace *t, const struct td_context *c,
			 const struct td_peaks *pk)
{
	char line[512];
	int k;

	td_context_line(t, c, line, sizeof(line));
	out_json_kmap(g, "context");
	out_json_kstr(g, "line", line);
	out_json_kstr(g, "vendor", td_vendor_name(c->vendor));
	out_json_kstr(g, "device", c->device ? td_trace_name(t, c->device) : "");
	out_json_kstr(g, "run", td_run_name(c->run));
	out_json_kstr(g, "engine", td_engine_name(c->engine));
	out_json_kbool(g, "ddp", !!(c->on & TD_ON_DDP));
	out_json_kbool(g, "fsdp", !!(c->on & TD_ON_FSDP));
	out_json_kbool(g, "torchrec", !!(c->on & TD_ON_TORCHREC));
	out_json_kbool(g, "deepspeed", !!(c->on & TD_ON_DEEPSPEED));
	out_json_kbool(g, "megatron", !!(c->on & TD_ON_MEGATRON));
	out_json_kbool(g, "deepep", !!(c->on & TD_ON_DEEPEP));
	out_json_kbool(g, "compiled", !!(c->on & TD_ON_COMPILED));
	out_json_kbool(g, "graphs_replayed", !!(c->on & TD_ON_GRAPHS));
	out_json_kbool(g, "graph_capture", !!(c->on & TD_ON_CAPTURE));
	out_json_kstr(g, "optimizer", c->optimizer);
	out_json_kstr(g, "optimizer_impl", td_opt_impl_name(c->opt_impl));
	out_json_kstr(g, "precision", td_context_precision(c));
	out_json_kstr(g, "data_loader", c->on & TD_ON_LOADER_MAIN ? "main process"
		      : c->on & TD_ON_LOADER_WORKERS ? "workers" : "");
	out_json_kbool(g, "pin_memory", !!(c->on & TD_ON_PIN_MEMORY));
	out_json_karray(g, "collectives");
	for (k = 0; k < TD_COLL_NKINDS; k++)
		if (c->coll[k])
			out_json_str(g, td_coll_kind_name((enum td_coll_kind)k));
	yajl_gen_array_close(g);
	/* what the groups' descriptions name, then what the collectives' pattern implies */
	out_json_karray(g, "parallelism");
	for (k = TD_PAR_DP; k < TD_PAR_NKINDS; k++) {
		if (!((c->par | c->par_inferred) & (1u << k)))
			continue;
		yajl_gen_map_open(g);
		out_json_kstr(g, "kind", td_par_name((enum td_par)k));
		out_json_kbool(g, "inferred", !(c->par & (1u << k)));
		if (!(c->par & (1u << k)))
			out_json_kstr(g, "evidence", td_par_evidence(c, (enum td_par)k));
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (pk) {
		out_json_kstr(g, "peak_device", pk->device);
		out_json_kmap(g, "peak_tflops");
		for (k = 0; k < TD_DT_COUNT; k++)
			if (pk->tflops[k] > 0)
				out_json_kfixed(g, td_dtype_name((enum td_dtype)k), pk->tflops[k], 2);
		yajl_gen_map_close(g);
		out_json_kfixed(g, "peak_tbps", pk->tbps, 4);
		out_json_kbool(g, "peaks_from_file", pk->from_file);
	}
	yajl_gen_map_close(g);
}

void render_json(FILE *f, const struct render_ctx *rc)
{
	const struct td_analysis *a = rc->a;
	const struct td_trace *t = a->t;
	struct cause_row rows[CAUSE_COUNT + 1];
	size_t nrows = cause_rows(a, rows), i, j;
	int64_t busy, idle, win, ws, we;
	yajl_gen g = out_json_new(f);

	totals(a, &busy, &idle, &win);
	window_of(a, &ws, &we);
	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.report/1");
	out_json_kmap(g, "trace");
	out_json_kstr(g, "path", rc->path);
	out_json_kint(g, "events", (int64_t)t->n_trace_events);
	out_json_kbool(g, "partial", t->partial);
	out_json_kint(g, "rank", t->rank);
	out_json_kint(g, "world_size", t->world_size);
	out_json_kint(g, "dropped_records", t->dropped_records);
	if (*t->lacks) /* what the input lacks (an nsys export's absent tables), as stats says it */
		out_json_kstr(g, "lacks", t->lacks);
	yajl_gen_map_close(g);
	render_context_json(g, t, &a->ctx, &a->peaks);
	if (rc->check) { /* tracedoc check's health: the level and its line */
		char hl[512];
		td_health_line(rc->check, hl, sizeof(hl));
		out_json_kmap(g, "health");
		out_json_kstr(g, "level", td_health_level_name(rc->check->health));
		out_json_kstr(g, "line", hl);
		yajl_gen_map_close(g);
	}
	out_json_kmap(g, "window");
	out_json_kint(g, "start_ns", ws);
	out_json_kint(g, "end_ns", we);
	out_json_kint(g, "duration_ns", we - ws);
	out_json_kint(g, "steps", (int64_t)a->nsteps);
	out_json_kint(g, "median_step_ns", td_an_median_step(a));
	out_json_kint(g, "mean_step_ns", td_an_mean_step(a));
	out_json_kint(g, "warmup_steps", (int64_t)a->warm_steps);
	out_json_kint(g, "warmup_ns", a->warm_end - a->warm_start);
	yajl_gen_map_close(g);
	if (a->iter_src != TD_ITER_NONE)
		render_phases_json(g, a);
	render_kv_json(g, a);
	out_json_kmap(g, "summary");
	out_json_kfixed(g, "gpu_busy_fraction", win ? (double)busy / (double)win : 0.0, 6);
	out_json_kint(g, "gpu_idle_ns", idle);
	{ /* model FLOPs utilization (analysis/roofline.h), where ops have a cost */
		struct td_mfu m;
		td_an_mfu(a, &m);
		if (m.flops > 0) {
			out_json_kmap(g, "mfu");
			out_json_kint(g, "model_flops", m.flops);
			out_json_kint(g, "window_ns", m.window_ns);
			out_json_kint(g, "steps", (int64_t)m.steps);
			out_json_kstr(g, "dtype", m.dtype >= 0 ? td_dtype_name((enum td_dtype)m.dtype) : "");
			out_json_kfixed(g, "achieved_tflops", m.achieved_tflops, 4);
			out_json_kfixed(g, "peak_tflops", m.peak_tflops, 2);
			if (!isnan(m.mfu))
				out_json_kfixed(g, "mfu", m.mfu, 6);
			/* what the FLOPs cover: a graph replay's kernels carry none */
			out_json_kint(g, "kernel_ns", m.kernel_ns);
			out_json_kint(g, "kernel_known_flops_ns", m.known_ns);
			out_json_kint(g, "kernel_graph_ns", m.graph_ns);
			yajl_gen_map_close(g);
		}
	}
	out_json_karray(g, "idle_by_cause");
	for (i = 0; i < nrows; i++) {
		yajl_gen_map_open(g);
		out_json_kstr(g, "cause", rows[i].cause < CAUSE_COUNT
			      ? td_cause_id((enum td_cause)rows[i].cause) : "oneoff");
		if (rows[i].cause == CAUSE_COUNT)
			out_json_kstr(g, "title", rows[i].title);
		out_json_kint(g, "ns", rows[i].ns);
		out_json_kstr(g, "what", rows[i].what ? td_an_label(a, rows[i].what) : "");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	out_json_karray(g, "devices");
	for (i = 0; i < a->ndev; i++) {
		const struct td_dev_analysis *d = &a->dev[i];
		int64_t w = d->win_end - d->win_start;
		yajl_gen_map_open(g);
		out_json_kint(g, "id", d->device);
		out_json_kstr(g, "name", dev_name(t, d->device));
		out_json_kint(g, "window_start_ns", d->win_start);
		out_json_kint(g, "window_end_ns", d->win_end);
		out_json_kint(g, "busy_ns", d->busy_ns);
		out_json_kint(g, "idle_ns", d->idle_ns);
		out_json_kfixed(g, "busy_fraction", w ? (double)d->busy_ns / (double)w : 0.0, 6);
		out_json_kint(g, "kernels", (int64_t)d->kernels);
		out_json_kint(g, "small_kernels", (int64_t)d->small_kernels);
		out_json_karray(g, "idle");
		for (j = 0; j < d->idle.len && j < 20; j++) {
			const struct td_idle_item *it = &TD_VEC_AT(&d->idle, struct td_idle_item, j);
			yajl_gen_map_open(g);
			out_json_kstr(g, "cause", td_cause_id((enum td_cause)it->cause));
			out_json_kstr(g, "what", it->what ? td_an_label(a, it->what) : "");
			out_json_kint(g, "ns", it->ns);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (rc->replay) { /* what the replayed savings stand on */
		const struct td_rp_report *rp = rc->replay;
		out_json_kmap(g, "replay");
		out_json_kint(g, "device", rc->a->dev[rp->device].device);
		out_json_kint(g, "steps", (int64_t)rp->nsteps);
		out_json_kint(g, "window_measured_ns", rp->window_measured_ns);
		out_json_kint(g, "window_replayed_ns", rp->window_replayed_ns);
		out_json_kfixed(g, "window_error", rp->window_error, 6);
		out_json_kfixed(g, "median_step_error", rp->median_step_error, 6);
		out_json_kint(g, "unexplained_delay_ns", rp->unexplained_ns);
		yajl_gen_map_close(g);
	}
	if (rc->critpath) { /* what holds each step (tracedoc critical-path) */
		out_json_kmap(g, "critical_path");
		render_critpath_fields(g, rc->a->t, rc->critpath);
		yajl_gen_map_close(g);
	}
	out_json_key(g, "findings");
	render_findings_json(g, rc->r);
	out_json_karray(g, "suppressed");
	for (i = 0; i < rc->r->suppressed.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&rc->r->suppressed, struct td_finding, i);
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", fd->rule);
		out_json_kstr(g, "title", fd->title);
		out_json_kint(g, "est_savings_ns", fd->savings_ns);
		out_json_kstr(g, "reason", fd->suppressed);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	if (rc->m) {
		out_json_kmap(g, "metrics");
		for (i = 0; i < rc->m->n; i++) {
			if (!rc->m->m[i].present)
				continue;
			out_json_key(g, rc->m->m[i].id);
			if (rc->m->m[i].kind == MK_FRACTION)
				out_json_fixed(g, rc->m->m[i].value, 6);
			else
				out_json_fixed(g, rc->m->m[i].value, 3);
		}
		yajl_gen_map_close(g);
	}
	out_json_end(g, f);
}
