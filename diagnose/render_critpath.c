/* SPDX-License-Identifier: MIT */
/* tracedoc critical-path's output (diagnose/render_critpath.h). */
#include "diagnose/render_critpath.h"

#include "common/fmt.h"
#include "diagnose/msg.h"
#include "diagnose/out.h"
#include "parser/trace.h"
#include "sizing/critpath.h"

static const char *seg_name(const struct td_trace *t, const struct td_cp_seg *s)
{
	return s->ev == TD_NONE ? "(host work)" : td_trace_name(t, td_trace_ev(t, s->ev)->name);
}

static double pct(int64_t a, int64_t b)
{
	return b > 0 ? 100.0 * (double)a / (double)b : 0.0;
}

static int64_t sum(const int64_t *v)
{
	int64_t s = 0;
	for (int c = 0; c < TD_CP_NCAT; c++)
		s += v[c];
	return s;
}

/* The findings' fixes, their savings beside the path their evidence covers. */
static void fixes_text(FILE *f, const struct critpath_ctx *x)
{
	char b1[32], b2[32];
	size_t i;

	if (!x->nfixes)
		return;
	fputs("\nfixes beside the path they shorten (saving; the path inside the evidence)\n", f);
	for (i = 0; i < x->nfixes; i++) {
		const struct cp_fix *fx = &x->fixes[i];
		fprintf(f, "  %-22s %10s %-9s %10s  ", fx->rule, td_fmt_dur(b1, sizeof(b1), fx->savings_ns),
			fx->replayed ? "replayed" : "claimed",
			fx->on_path_ns < 0 ? "-" : td_fmt_dur(b2, sizeof(b2), fx->on_path_ns));
		out_text_name(f, fx->title, 60);
		fputc('\n', f);
	}
}

void render_critpath_text(FILE *f, const void *ctx)
{
	const struct critpath_ctx *x = ctx;
	const struct td_critpath *cp = x->cp;
	int64_t all = sum(cp->total);
	char b1[32], b2[64];
	size_t i;
	int c;

	fprintf(f, "tracedoc critical-path %s\n", cli_shown(x->path, b2, sizeof(b2)));
	fprintf(f, "bound by %s: %.1f%% of %zu step%s (%s)\n\n", td_cp_cat_name(cp->dominant),
		pct(cp->total[cp->dominant], all), cp->nsteps, cp->nsteps == 1 ? "" : "s",
		td_fmt_dur(b1, sizeof(b1), all));
	fprintf(f, "%-14s %12s %7s\n", "category", "on path", "share");
	for (c = 0; c < TD_CP_NCAT; c++)
		fprintf(f, "%-14s %12s %6.1f%%\n", td_cp_cat_name((enum td_cp_cat)c),
			td_fmt_dur(b1, sizeof(b1), cp->total[c]), pct(cp->total[c], all));
	fputs("\nper step (the path's time by category, adding up to the step)\n", f);
	for (i = 0; i < cp->nsteps; i++) {
		const struct td_cp_step *s = &cp->steps[i];
		int64_t d = s->end - s->start;
		if (s->number >= 0)
			fprintf(f, "  step %-6lld %10s:", (long long)s->number, td_fmt_dur(b1, sizeof(b1), d));
		else
			fprintf(f, "  window      %10s:", td_fmt_dur(b1, sizeof(b1), d));
		for (c = 0; c < TD_CP_NCAT; c++)
			if (s->by[c])
				fprintf(f, " %s %.0f%%", td_cp_cat_name((enum td_cp_cat)c), pct(s->by[c], d));
		fputc('\n', f);
	}
	fputs("\nlongest pieces of the path\n", f);
	for (i = 0; i < cp->ntop; i++) {
		const struct td_cp_seg *s = &TD_VEC_AT(&cp->segs, struct td_cp_seg, cp->top[i]);
		fprintf(f, "  %10s  %-13s ", td_fmt_dur(b1, sizeof(b1), s->dur), td_cp_cat_name(s->cat));
		out_text_name(f, seg_name(x->t, s), 70);
		fprintf(f, "  (step %lld +%.3f ms)\n", (long long)cp->steps[s->step].number,
			(double)(s->start - cp->steps[s->step].start) / 1e6);
	}
	fixes_text(f, x);
}

void render_critpath_md(FILE *f, const void *ctx)
{
	const struct critpath_ctx *x = ctx;
	const struct td_critpath *cp = x->cp;
	int64_t all = sum(cp->total);
	char b1[32], b2[64];
	size_t i;
	int c;

	fputs("# tracedoc critical-path: ", f);
	out_md(f, cli_shown(x->path, b2, sizeof(b2)));
	fprintf(f, "\n\nBound by **%s**: %.1f%% of %zu step(s), %s.\n\n| category | on path | share |\n"
		   "|---|---:|---:|\n", td_cp_cat_name(cp->dominant), pct(cp->total[cp->dominant], all),
		cp->nsteps, td_fmt_dur(b1, sizeof(b1), all));
	for (c = 0; c < TD_CP_NCAT; c++)
		fprintf(f, "| %s | %s | %.1f%% |\n", td_cp_cat_name((enum td_cp_cat)c),
			td_fmt_dur(b1, sizeof(b1), cp->total[c]), pct(cp->total[c], all));
	if (x->nfixes) {
		fputs("\n## Fixes beside the path they shorten\n\n| rule | saving | on the path | "
		      "finding |\n|---|---:|---:|---|\n", f);
		for (i = 0; i < x->nfixes; i++) {
			const struct cp_fix *fx = &x->fixes[i];
			char b3[32];
			fprintf(f, "| `%s` | %s%s | %s | ", fx->rule,
				td_fmt_dur(b1, sizeof(b1), fx->savings_ns), fx->replayed ? " (replayed)" : "",
				fx->on_path_ns < 0 ? "-" : td_fmt_dur(b3, sizeof(b3), fx->on_path_ns));
			out_md(f, fx->title);
			fputs(" |\n", f);
		}
	}
	fputs("\n## Longest pieces\n\n| time | category | what |\n|---:|---|---|\n", f);
	for (i = 0; i < cp->ntop; i++) {
		const struct td_cp_seg *s = &TD_VEC_AT(&cp->segs, struct td_cp_seg, cp->top[i]);
		fprintf(f, "| %s | %s | ", td_fmt_dur(b1, sizeof(b1), s->dur), td_cp_cat_name(s->cat));
		out_md(f, seg_name(x->t, s));
		fputs(" |\n", f);
	}
}

void render_critpath_fields(yajl_gen g, const struct td_trace *t, const struct td_critpath *cp)
{
	size_t i;
	int c;

	out_json_kstr(g, "dominant", td_cp_cat_name(cp->dominant));
	out_json_kmap(g, "total_ns");
	for (c = 0; c < TD_CP_NCAT; c++)
		out_json_kint(g, td_cp_cat_name((enum td_cp_cat)c), cp->total[c]);
	yajl_gen_map_close(g);
	out_json_karray(g, "steps");
	for (i = 0; i < cp->nsteps; i++) {
		const struct td_cp_step *s = &cp->steps[i];
		yajl_gen_map_open(g);
		out_json_kint(g, "number", s->number);
		out_json_kint(g, "start_ns", s->start);
		out_json_kint(g, "duration_ns", s->end - s->start);
		out_json_kmap(g, "by_ns");
		for (c = 0; c < TD_CP_NCAT; c++)
			out_json_kint(g, td_cp_cat_name((enum td_cp_cat)c), s->by[c]);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_karray(g, "top");
	for (i = 0; i < cp->ntop; i++) {
		const struct td_cp_seg *s = &TD_VEC_AT(&cp->segs, struct td_cp_seg, cp->top[i]);
		yajl_gen_map_open(g);
		out_json_kstr(g, "category", td_cp_cat_name(s->cat));
		out_json_kstr(g, "what", seg_name(t, s));
		out_json_kint(g, "start_ns", s->start);
		out_json_kint(g, "duration_ns", s->dur);
		out_json_kint(g, "step", (int64_t)s->step);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void render_critpath_json(FILE *f, const void *ctx)
{
	const struct critpath_ctx *x = ctx;
	yajl_gen g = out_json_new(f);

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.critical_path/1");
	out_json_kstr(g, "source", x->path);
	render_critpath_fields(g, x->t, x->cp);
	out_json_karray(g, "fixes");
	for (size_t i = 0; i < x->nfixes; i++) {
		const struct cp_fix *fx = &x->fixes[i];
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", fx->rule);
		out_json_kstr(g, "title", fx->title);
		out_json_kint(g, "est_savings_ns", fx->savings_ns);
		out_json_kbool(g, "replayed", fx->replayed);
		if (fx->on_path_ns >= 0)
			out_json_kint(g, "on_path_ns", fx->on_path_ns);
		else
			out_json_kstr_or_null(g, "on_path_ns", NULL);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}
