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

/* The verdict, then the rows that make up most of the change: text, or Markdown when md. */
static void why_lines(FILE *f, const struct td_diff *d, int md)
{
	char line[1600];
	size_t i;

	verdict(line, sizeof(line), d);
	if (md) {
		out_md(f, line);
		fputs("\n\n", f);
	} else {
		out_text_wrap(f, line, 0, 2, 100);
		fputc('\n', f);
	}
	for (i = 0; i < d->nwhy; i++)
		why_line(f, d, i, md);
}

static const char *unit(const struct td_diff *d)
{
	return d->base.steps && d->cur.steps ? "per step" : "per window";
}

/* A labelled duration row: BASE x, CURRENT y and the change, with its percentage when
 * with_pct; text columns, or a Markdown table's row when md. */
static void dur_row(FILE *f, int md, const char *label, int64_t x, int64_t y, int with_pct)
{
	char b[4][48];

	fprintf(f, md ? "| %s | %s | %s | %s%s |\n" : "%-22s %12s %12s  %s%s\n", label,
		td_fmt_dur(b[0], sizeof(b[0]), x), td_fmt_dur(b[1], sizeof(b[1]), y),
		sdur(b[2], sizeof(b[2]), y - x), with_pct ? pct(b[3], sizeof(b[3]), x, y) : "");
}

/* side s's phase of (device, phase), or NULL */
static const struct td_diff_phase *find_phase(const struct td_diff_side *s, int32_t dev,
					      enum td_phase ph)
{
	size_t i;

	for (i = 0; i < s->nphases; i++)
		if (s->phases[i].device == dev && s->phases[i].phase == ph)
			return &s->phases[i];
	return NULL;
}

/* 1 when either side has phases on more than one device (the rows then name the GPU) */
static int many_devices(const struct td_diff *d)
{
	const struct td_diff_side *s[2] = {&d->base, &d->cur};
	int32_t first = 0;
	int seen = 0;
	size_t k, i;

	for (k = 0; k < 2; k++)
		for (i = 0; i < s[k]->nphases; i++) {
			if (seen && s[k]->phases[i].device != first)
				return 1;
			first = s[k]->phases[i].device;
			seen = 1;
		}
	return 0;
}

/* the rows of one (device, phase): iterations, median iteration, GPU busy and exposed
 * collectives (no compute beside them) per iteration (that row when either side ran them) */
static void phase_rows_of(FILE *f, int md, const struct td_diff *d, int32_t dev,
			  enum td_phase ph, int gpu)
{
	static const struct td_diff_phase none;
	const struct td_diff_phase *x = find_phase(&d->base, dev, ph);
	const struct td_diff_phase *y = find_phase(&d->cur, dev, ph);
	char pre[24] = "", label[64];

	x = x ? x : &none;
	y = y ? y : &none;
	if (gpu && md) /* text names the GPU in a line above its rows */
		snprintf(pre, sizeof(pre), "GPU %d ", (int)dev);
	snprintf(label, sizeof(label), "%s%s iterations", pre, td_phase_name(ph));
	if (md)
		fprintf(f, "| %s | %zu | %zu | |\n", label, x->iters, y->iters);
	else
		fprintf(f, "%-22s %12zu %12zu\n", label, x->iters, y->iters);
	snprintf(label, sizeof(label), "%smedian %s", pre, td_phase_name(ph));
	dur_row(f, md, label, x->median_ns, y->median_ns, 1);
	snprintf(label, sizeof(label), "%s%s busy/iter", pre, td_phase_name(ph));
	dur_row(f, md, label, x->busy_ns_per_iter, y->busy_ns_per_iter, 1);
	if (x->comm_exposed_ns_per_iter || y->comm_exposed_ns_per_iter) {
		snprintf(label, sizeof(label), "%s%s exposed/iter", pre, td_phase_name(ph));
		dur_row(f, md, label, x->comm_exposed_ns_per_iter, y->comm_exposed_ns_per_iter, 1);
	}
}

/* a serving run's phases on either side, on every device with work in them: by device, then
 * phase, each on either side once */
static void phase_rows(FILE *f, int md, const struct td_diff *d)
{
	const struct td_diff_side *s[2] = {&d->base, &d->cur};
	int gpu = many_devices(d), shown = 0;
	int32_t last = 0;
	size_t k, i;

	for (k = 0; k < 2; k++)
		for (i = 0; i < s[k]->nphases; i++) {
			const struct td_diff_phase *p = &s[k]->phases[i];
			if (k == 1 && find_phase(&d->base, p->device, p->phase))
				continue; /* shown with the base's */
			if (gpu && !md && (!shown || p->device != last))
				fprintf(f, "GPU %d\n", (int)p->device);
			last = p->device;
			shown = 1;
			phase_rows_of(f, md, d, p->device, p->phase, gpu);
		}
}

/* The idle of each cause on both sides, a row each (the causes idle on neither left out). */
static void idle_rows(FILE *f, int md, const struct td_diff *d)
{
	char label[128];
	size_t k;

	for (k = 0; k < CAUSE_COUNT; k++) {
		int64_t x = d->base.idle_ns_per_step[k], y = d->cur.idle_ns_per_step[k];
		if (!x && !y)
			continue;
		snprintf(label, sizeof(label), "%s%s", md ? "idle: " : "  ",
			 td_cause_id((enum td_cause)k));
		dur_row(f, md, label, x, y, 0);
	}
}

void render_diff_text(FILE *f, const void *ctx)
{
	const struct diff_ctx *c = ctx;
	const struct td_diff *d = c->d;
	char line[1600];
	struct table_view v;

	snprintf(line, sizeof(line), "tracedoc diff: BASE %s, CURRENT %s", c->base_path, c->cur_path);
	out_text_wrap(f, line, 0, 2, 100);
	fprintf(f, "\n\n%-22s %12s %12s  %s\n", "", "BASE", "CURRENT", "change");
	fprintf(f, "%-22s %12zu %12zu\n", "steps", d->base.steps, d->cur.steps);
	dur_row(f, 0, "median step", d->base.step_median_ns, d->cur.step_median_ns, 1);
	phase_rows(f, 0, d);
	dur_row(f, 0, d->base.steps && d->cur.steps ? "GPU busy per step" : "GPU busy",
		d->base.busy_ns_per_step, d->cur.busy_ns_per_step, 1);
	fputc('\n', f);
	why_lines(f, d, 0);
	fprintf(f, "\nGPU idle by cause, %s:\n", unit(d));
	idle_rows(f, 0, d);
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
	char line[1600];
	struct table_view v;

	fputs("### tracedoc diff: BASE ", f);
	out_md(f, c->base_path);
	fputs(", CURRENT ", f);
	out_md(f, c->cur_path);
	fputs("\n\n| | BASE | CURRENT | change |\n|---|---:|---:|---:|\n", f);
	fprintf(f, "| steps | %zu | %zu | |\n", d->base.steps, d->cur.steps);
	dur_row(f, 1, "median step", d->base.step_median_ns, d->cur.step_median_ns, 1);
	phase_rows(f, 1, d);
	snprintf(line, sizeof(line), "GPU busy %s", unit(d));
	dur_row(f, 1, line, d->base.busy_ns_per_step, d->cur.busy_ns_per_step, 0);
	idle_rows(f, 1, d);
	fputs("\n", f);
	why_lines(f, d, 1);
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
	if (s->nphases) { /* a serving run's phases, on every device with work in them */
		out_json_karray(g, "phases");
		for (k = 0; k < s->nphases; k++) {
			const struct td_diff_phase *p = &s->phases[k];
			yajl_gen_map_open(g);
			out_json_kstr(g, "phase", td_phase_name(p->phase));
			out_json_kint(g, "device", p->device);
			out_json_kint(g, "iterations", (int64_t)p->iters);
			out_json_kint(g, "median_step_ns", p->median_ns);
			out_json_kint(g, "gpu_busy_per_iteration_ns", p->busy_ns_per_iter);
			out_json_kint(g, "collective_exposed_per_iteration_ns",
				      p->comm_exposed_ns_per_iter);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
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
