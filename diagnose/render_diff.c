/* SPDX-License-Identifier: MIT */
#include "diagnose/render_diff.h"

#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/out.h"
#include "diagnose/render_table.h"

static const char *sdur(char *b, size_t cap, int64_t ns)
{
	char t[32];

	if (!ns)
		return "0";
	snprintf(b, cap, "%s%s", ns < 0 ? "-" : "+", td_fmt_dur(t, sizeof(t), ns < 0 ? -ns : ns));
	return b;
}

static const char *pct(char *b, size_t cap, int64_t from, int64_t to)
{
	if (from <= 0)
		return "";
	snprintf(b, cap, " (%+.1f%%)", 100.0 * (double)(to - from) / (double)from);
	return b;
}

/* "CURRENT's median step is 23.3 ms shorter than BASE's (-18.9%); 2 rows make up 95% of it:" */
static void verdict(char *buf, size_t cap, const struct td_diff *d)
{
	int64_t ds = d->cur.step_median_ns - d->base.step_median_ns;
	char b1[32], b2[32];

	if (!d->base.steps || !d->cur.steps) {
		snprintf(buf, cap, "%s", "no steps on one side: per-window figures, no step time to "
			 "compare");
		return;
	}
	if (!ds) {
		snprintf(buf, cap, "%s", "CURRENT's median step is as long as BASE's");
		return;
	}
	snprintf(buf, cap, "CURRENT's median step is %s %s than BASE's%s%s", td_fmt_dur(b1,
		 sizeof(b1), llabs(ds)), ds > 0 ? "longer" : "shorter",
		 pct(b2, sizeof(b2), d->base.step_median_ns, d->cur.step_median_ns),
		 d->nwhy ? "; most of the change:" : "; no op or kernel changed as much");
}

static void why_line(FILE *f, const struct td_diff *d, size_t i, int md)
{
	const struct td_table *t = &d->rows;
	size_t r = d->why[i];
	char b1[32], b2[32], b3[32], line[1400];

	snprintf(line, sizeof(line), "%s %s: %s per step (%s to %s)%s%s",
		 td_table_text(t, td_table_cell(t, r, 0)->s), td_table_text(t, td_table_cell(t, r, 1)->s),
		 sdur(b1, sizeof(b1), td_table_cell(t, r, 4)->i),
		 td_fmt_dur(b2, sizeof(b2), td_table_cell(t, r, 2)->i),
		 td_fmt_dur(b3, sizeof(b3), td_table_cell(t, r, 3)->i),
		 *td_table_text(t, td_table_cell(t, r, 7)->s) ? ", " : "",
		 td_table_text(t, td_table_cell(t, r, 7)->s));
	if (md) {
		fputs("- ", f);
		out_md(f, line);
		fputc('\n', f);
	} else {
		fputs("  ", f);
		out_text_wrap(f, line, 2, 4, 100);
		fputc('\n', f);
	}
}

static const char *unit(const struct td_diff *d)
{
	return d->base.steps && d->cur.steps ? "per step" : "per window";
}

void render_diff_text(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;
	const struct td_diff *d = c->d;
	char b[6][48], line[1600];
	size_t i, k;
	struct table_view v;

	snprintf(line, sizeof(line), "tracedoc diff: BASE %s, CURRENT %s", c->base_path, c->cur_path);
	out_text_wrap(f, line, 0, 2, 100);
	fprintf(f, "\n\n%-22s %12s %12s  %s\n", "", "BASE", "CURRENT", "change");
	fprintf(f, "%-22s %12zu %12zu\n", "steps", d->base.steps, d->cur.steps);
	fprintf(f, "%-22s %12s %12s  %s%s\n", "median step",
		td_fmt_dur(b[0], sizeof(b[0]), d->base.step_median_ns),
		td_fmt_dur(b[1], sizeof(b[1]), d->cur.step_median_ns),
		sdur(b[2], sizeof(b[2]), d->cur.step_median_ns - d->base.step_median_ns),
		pct(b[3], sizeof(b[3]), d->base.step_median_ns, d->cur.step_median_ns));
	fprintf(f, "%-22s %12s %12s  %s%s\n", d->base.steps && d->cur.steps ? "GPU busy per step"
		: "GPU busy", td_fmt_dur(b[0], sizeof(b[0]), d->base.busy_ns_per_step),
		td_fmt_dur(b[1], sizeof(b[1]), d->cur.busy_ns_per_step),
		sdur(b[2], sizeof(b[2]), d->cur.busy_ns_per_step - d->base.busy_ns_per_step),
		pct(b[3], sizeof(b[3]), d->base.busy_ns_per_step, d->cur.busy_ns_per_step));
	fputc('\n', f);
	verdict(line, sizeof(line), d);
	out_text_wrap(f, line, 0, 2, 100);
	fputc('\n', f);
	for (i = 0; i < d->nwhy; i++)
		why_line(f, d, i, 0);
	fprintf(f, "\nGPU idle by cause, %s:\n", unit(d));
	for (k = 0; k < CAUSE_COUNT; k++) {
		int64_t x = d->base.idle_ns_per_step[k], y = d->cur.idle_ns_per_step[k];
		if (!x && !y)
			continue;
		fprintf(f, "  %-20s %12s %12s  %s\n", td_cause_id((enum td_cause)k),
			td_fmt_dur(b[0], sizeof(b[0]), x), td_fmt_dur(b[1], sizeof(b[1]), y),
			sdur(b[2], sizeof(b[2]), y - x));
	}
	fputc('\n', f);
	memset(&v, 0, sizeof(v));
	v.top = c->top;
	v.wide = c->wide;
	v.title = "ops (self CPU) and GPU ops (total), by the size of the change:";
	render_table_text(f, &d->rows, &v);
}

void render_diff_md(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;
	const struct td_diff *d = c->d;
	char b[6][48], line[1600];
	size_t i, k;
	struct table_view v;

	fputs("### tracedoc diff: BASE ", f);
	out_md(f, c->base_path);
	fputs(", CURRENT ", f);
	out_md(f, c->cur_path);
	fputs("\n\n| | BASE | CURRENT | change |\n|---|---:|---:|---:|\n", f);
	fprintf(f, "| steps | %zu | %zu | |\n", d->base.steps, d->cur.steps);
	fprintf(f, "| median step | %s | %s | %s%s |\n",
		td_fmt_dur(b[0], sizeof(b[0]), d->base.step_median_ns),
		td_fmt_dur(b[1], sizeof(b[1]), d->cur.step_median_ns),
		sdur(b[2], sizeof(b[2]), d->cur.step_median_ns - d->base.step_median_ns),
		pct(b[3], sizeof(b[3]), d->base.step_median_ns, d->cur.step_median_ns));
	fprintf(f, "| GPU busy %s | %s | %s | %s |\n", unit(d),
		td_fmt_dur(b[0], sizeof(b[0]), d->base.busy_ns_per_step),
		td_fmt_dur(b[1], sizeof(b[1]), d->cur.busy_ns_per_step),
		sdur(b[2], sizeof(b[2]), d->cur.busy_ns_per_step - d->base.busy_ns_per_step));
	for (k = 0; k < CAUSE_COUNT; k++) {
		int64_t x = d->base.idle_ns_per_step[k], y = d->cur.idle_ns_per_step[k];
		if (!x && !y)
			continue;
		fprintf(f, "| idle: %s | %s | %s | %s |\n", td_cause_id((enum td_cause)k),
			td_fmt_dur(b[0], sizeof(b[0]), x), td_fmt_dur(b[1], sizeof(b[1]), y),
			sdur(b[2], sizeof(b[2]), y - x));
	}
	verdict(line, sizeof(line), d);
	fputs("\n", f);
	out_md(f, line);
	fputs("\n\n", f);
	for (i = 0; i < d->nwhy; i++)
		why_line(f, d, i, 1);
	fputc('\n', f);
	memset(&v, 0, sizeof(v));
	v.top = c->top;
	render_table_md(f, &d->rows, &v);
}

void render_diff_csv(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;
	struct table_view v;

	memset(&v, 0, sizeof(v));
	v.top = c->top;
	render_table_csv(f, &c->d->rows, &v);
}

static void side_json(yajl_gen g, const struct td_diff_side *s)
{
	size_t k;

	yajl_gen_map_open(g);
	out_json_kint(g, "steps", (int64_t)s->steps);
	out_json_kint(g, "step_median_ns", s->step_median_ns);
	out_json_kint(g, "window_ns", s->window_ns);
	out_json_kint(g, "gpu_busy_ns_per_step", s->busy_ns_per_step);
	out_json_kmap(g, "idle_ns_per_step");
	for (k = 0; k < CAUSE_COUNT; k++) {
		out_json_key(g, td_cause_id((enum td_cause)k));
		out_json_int(g, s->idle_ns_per_step[k]);
	}
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

void render_diff_json(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;
	const struct td_diff *d = c->d;
	const struct td_table *t = &d->rows;
	yajl_gen g = out_json_new(f);
	size_t i, n = c->top && c->top < t->nrows ? c->top : t->nrows;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.diff/1");
	out_json_kstr(g, "base_path", c->base_path);
	out_json_kstr(g, "current_path", c->cur_path);
	out_json_key(g, "base");
	side_json(g, &d->base);
	out_json_key(g, "current");
	side_json(g, &d->cur);
	out_json_kint(g, "step_change_ns", d->cur.step_median_ns - d->base.step_median_ns);
	out_json_key(g, "why"); /* indices into rows */
	yajl_gen_array_open(g);
	for (i = 0; i < d->nwhy; i++)
		out_json_int(g, (int64_t)d->why[i]);
	yajl_gen_array_close(g);
	out_json_kint(g, "why_change_ns", d->why_ns);
	render_table_rows_json(g, t, n);
	out_json_end(g, f);
}
