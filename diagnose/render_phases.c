/* SPDX-License-Identifier: MIT */
/* A serving run's phase table (prefill, decode, mixed iterations: analysis/phases.c) in each
 * report format, for each device with work in the iterations; and its KV-cache reservation
 * (analysis/kvcache.h) where the trace's memory events show it. */
#include "diagnose/render_phases.h"

#include <string.h>

#include "common/fmt.h"
#include "diagnose/out.h"
#include "analysis/analysis.h"
#include "analysis/kvcache.h"

/* the causes (up to most) holding most of a phase's idle time, as "launch 8.8 ms, host 3.2 ms" */
static void top_n_causes(const struct td_phase_stat *p, char *buf, size_t cap, size_t most)
{
	int used[CAUSE_COUNT + 1] = {0};
	int64_t ns[CAUSE_COUNT + 1];
	size_t len = 0, n;

	memcpy(ns, p->idle_by_cause, sizeof(p->idle_by_cause));
	ns[CAUSE_COUNT] = p->oneoff_ns; /* a one-off's own row, as the breakdown has it */
	buf[0] = '\0';
	for (n = 0; n < most; n++) {
		int c, best = -1;
		char b[32];
		for (c = 0; c <= CAUSE_COUNT; c++)
			if (!used[c] && ns[c] > 0 && (best < 0 || ns[c] > ns[best]))
				best = c;
		if (best < 0)
			break;
		used[best] = 1;
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s %s",
					n ? ", " : "", best < CAUSE_COUNT
					? td_cause_title((enum td_cause)best) : p->oneoff_row,
					td_fmt_dur(b, sizeof(b), ns[best]));
		if (len >= cap)
			break;
	}
}

/* what holds most of a phase's idle: its top label, or a one-off's row where that holds more
 * (NULL: nothing); *ns how much, *cause its cause's id */
static const char *held_most(const struct td_analysis *a, const struct td_phase_stat *p,
			     int64_t *ns, const char **cause)
{
	if (p->oneoff_ns > p->top_what_ns && p->oneoff_row) {
		*ns = p->oneoff_ns;
		*cause = "oneoff";
		return p->oneoff_row;
	}
	*ns = p->top_what_ns;
	*cause = p->top_what ? td_cause_id((enum td_cause)p->top_cause) : "";
	return p->top_what ? td_an_label(a, p->top_what) : NULL;
}

static void top_causes(const struct td_phase_stat *p, char *buf, size_t cap)
{
	top_n_causes(p, buf, cap, 2);
}

static double busy_pct(const struct td_phase_stat *p)
{
	return p->gpu_ns > 0 ? 100.0 * (double)p->busy_ns / (double)p->gpu_ns : 0.0;
}

static double graph_pct(const struct td_phase_stat *p)
{
	return p->busy_ns > 0 ? 100.0 * (double)p->graph_ns / (double)p->busy_ns : 0.0;
}

/* collective time no compute overlapped, per iteration of the phase */
static int64_t exposed_per_iter(const struct td_phase_stat *p)
{
	return p->count ? p->comm_exposed_ns / (int64_t)p->count : 0;
}

/* 1 when some phase of ps[0..n) ran collectives: the tables get their column */
static int any_comm(const struct td_phase_stat *ps, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (ps[i].comm_ns)
			return 1;
	return 0;
}

/* The phases on device index d, 0 when the table leaves it out: a device past the first
 * with no busy time in the iterations (a tensor-parallel server traced on one process has
 * work on each of its devices). */
static size_t stats(const struct td_analysis *a, size_t d, struct td_phase_stat *ps)
{
	size_t n = d < a->ndev ? td_an_phase_stats(a, d, ps) : 0, i;
	int64_t busy = 0;

	for (i = 0; i < n; i++)
		busy += ps[i].busy_ns;
	return d == 0 || busy > 0 ? n : 0;
}

static void phases_text(FILE *f, const struct td_analysis *a, size_t d)
{
	struct td_phase_stat ps[TD_PHASE_COUNT];
	size_t n = stats(a, d, ps), i;

	if (!n)
		return;
	fprintf(f, "\nphases (GPU %d%s)\n  %-8s %10s %10s %10s %9s %12s\n", a->dev[d].device,
		a->phase_by_shape ? ", told from batch sizes" : "", "phase", "iterations",
		"median", "p90", "GPU busy", "from graphs");
	for (i = 0; i < n; i++) {
		char b1[32], b2[32], causes[160];
		const char *held, *cause;
		int64_t held_ns;
		top_causes(&ps[i], causes, sizeof(causes));
		fprintf(f, "  %-8s %10zu %10s %10s %8.1f%% %11.1f%%\n", td_phase_name(ps[i].phase),
			ps[i].count, td_fmt_dur(b1, sizeof(b1), ps[i].median_ns),
			td_fmt_dur(b2, sizeof(b2), ps[i].p90_ns), busy_pct(&ps[i]), graph_pct(&ps[i]));
		if (strlen(causes) > 100 - 24) /* the line in 100 columns */
			top_n_causes(&ps[i], causes, sizeof(causes), 1);
		if (*causes)
			fprintf(f, "           idle mostly: %s\n", causes);
		if ((held = held_most(a, &ps[i], &held_ns, &cause)) != NULL) {
			fprintf(f, "           held most by ");
			out_text_name(f, held, 48);
			fprintf(f, " (%s)\n", td_fmt_dur(b1, sizeof(b1), held_ns));
		}
		if (ps[i].comm_ns)
			fprintf(f, "           collectives exposed %s per iteration (of %s; no "
				   "compute beside them)\n",
				td_fmt_dur(b1, sizeof(b1), exposed_per_iter(&ps[i])),
				td_fmt_dur(b2, sizeof(b2), ps[i].comm_ns / (int64_t)ps[i].count));
		if (ps[i].gaps)
			fprintf(f, "           %llu graph launches, %s of host time between two\n",
				(unsigned long long)ps[i].graph_launches,
				td_fmt_dur(b1, sizeof(b1), ps[i].between_ns / (int64_t)ps[i].gaps));
	}
}

/* the KV-cache line: what the engine's allocation frame reserved, as "8.0 GB on GPU 0 in 8
 * allocations (FRAME); reserved 2.1 GB -> 10.1 GB"; 0 when there is none */
static int kv_line(const struct td_analysis *a, char *buf, size_t cap)
{
	struct td_kv_cache kv;
	char b[3][32];

	if (!td_an_kv_cache(a, &kv))
		return 0;
	snprintf(buf, cap, "%s on GPU %d in %llu allocations (%s)%s%s%s%s%s",
		 td_fmt_bytes(b[0], sizeof(b[0]), (double)kv.bytes), (int)kv.device,
		 (unsigned long long)kv.allocations, td_trace_name(a->t, td_trace_ev(a->t,
								    kv.frame)->name),
		 kv.reserved_after >= 0 ? "; device memory reserved " : "",
		 kv.reserved_before >= 0 ? td_fmt_bytes(b[1], sizeof(b[1]),
							(double)kv.reserved_before) : "",
		 kv.reserved_before >= 0 ? " -> " : "",
		 kv.reserved_after >= 0 ? td_fmt_bytes(b[2], sizeof(b[2]),
						       (double)kv.reserved_after) : "",
		 kv.complete ? "" : " (the memory events begin inside it: a part may be missing)");
	return 1;
}

void render_kv_json(yajl_gen g, const struct td_analysis *a)
{
	struct td_kv_cache kv;

	if (!td_an_kv_cache(a, &kv))
		return;
	out_json_kmap(g, "kv_cache");
	out_json_kstr(g, "frame", td_trace_name(a->t, td_trace_ev(a->t, kv.frame)->name));
	out_json_kint(g, "device", kv.device);
	out_json_kint(g, "bytes", kv.bytes);
	out_json_kint(g, "allocations", (int64_t)kv.allocations);
	out_json_kint(g, "reserved_before_bytes", kv.reserved_before);
	out_json_kint(g, "reserved_after_bytes", kv.reserved_after);
	out_json_kint(g, "allocated_after_bytes", kv.allocated_after);
	out_json_kbool(g, "complete", kv.complete);
	yajl_gen_map_close(g);
}

void render_phases_text(FILE *f, const struct td_analysis *a)
{
	char kv[1024];
	size_t d;

	if (kv_line(a, kv, sizeof(kv))) {
		fputs("KV cache ", f);
		out_text_wrap(f, kv, 9, 9, 100);
		fputc('\n', f);
	}
	for (d = 0; d < a->ndev; d++)
		phases_text(f, a, d);
}

/* the md table's rows (html 0) or the HTML table's, text escaping each name */
static void table_rows(FILE *f, const struct td_analysis *a, const struct td_phase_stat *ps,
		       size_t n, int html, void (*text)(FILE *f, const char *s))
{
	size_t i;
	int comm = any_comm(ps, n);
	const char *held, *cause;
	int64_t held_ns;

	for (i = 0; i < n; i++) {
		char b1[32], b2[32], causes[160];
		const char *name = td_phase_name(ps[i].phase);
		double busy = busy_pct(&ps[i]), graphs = graph_pct(&ps[i]);
		top_causes(&ps[i], causes, sizeof(causes));
		td_fmt_dur(b1, sizeof(b1), ps[i].median_ns);
		td_fmt_dur(b2, sizeof(b2), ps[i].p90_ns);
		if (html)
			fprintf(f, "<tr><td>%s</td><td>%zu</td><td>%s</td><td>%s</td><td>%.1f%%</td>"
				   "<td>%.1f%%</td><td>", name, ps[i].count, b1, b2, busy, graphs);
		else
			fprintf(f, "| %s | %zu | %s | %s | %.1f%% | %.1f%% | ", name, ps[i].count, b1,
				b2, busy, graphs);
		if (comm)
			fprintf(f, html ? "%s</td><td>" : "%s | ",
				td_fmt_dur(b1, sizeof(b1), exposed_per_iter(&ps[i])));
		text(f, causes);
		if ((held = held_most(a, &ps[i], &held_ns, &cause)) != NULL) {
			fputs("; most in ", f);
			text(f, held);
		}
		fputs(html ? "</td></tr>\n" : " |\n", f);
	}
}

void render_phases_md(FILE *f, const struct td_analysis *a)
{
	struct td_phase_stat ps[TD_PHASE_COUNT];
	char kv[1024];
	size_t n, d;

	if (kv_line(a, kv, sizeof(kv))) {
		fputs("**KV cache** ", f);
		out_md(f, kv);
		fputs("\n\n", f);
	}
	for (d = 0; d < a->ndev; d++) {
		if (!(n = stats(a, d, ps)))
			continue;
		fprintf(f, "| phase (GPU %d) | iterations | median | p90 | GPU busy | from graphs | "
			   "%sidle mostly |\n|---|---|---|---|---|---|%s---|\n", a->dev[d].device,
			any_comm(ps, n) ? "collectives exposed / iteration | " : "",
			any_comm(ps, n) ? "---|" : "");
		table_rows(f, a, ps, n, 0, out_md);
		fputc('\n', f);
	}
}

/* the phases array's entries for device index d */
static void phases_json(yajl_gen g, const struct td_analysis *a, size_t d)
{
	struct td_phase_stat ps[TD_PHASE_COUNT];
	size_t n = stats(a, d, ps), i;
	int c;
	const char *held, *cause;
	int64_t held_ns;

	for (i = 0; i < n; i++) {
		yajl_gen_map_open(g);
		out_json_kstr(g, "phase", td_phase_name(ps[i].phase));
		out_json_kint(g, "device", a->dev[d].device);
		out_json_kint(g, "iterations", (int64_t)ps[i].count);
		out_json_kint(g, "median_step_ns", ps[i].median_ns);
		out_json_kint(g, "p90_step_ns", ps[i].p90_ns);
		out_json_kint(g, "gpu_ns", ps[i].gpu_ns);
		out_json_kint(g, "busy_ns", ps[i].busy_ns);
		out_json_kfixed(g, "gpu_busy_fraction", busy_pct(&ps[i]) / 100.0, 6);
		out_json_kint(g, "graph_ns", ps[i].graph_ns);
		out_json_kint(g, "graph_launches", (int64_t)ps[i].graph_launches);
		out_json_kint(g, "host_between_graph_launches_ns",
			      ps[i].gaps ? ps[i].between_ns / (int64_t)ps[i].gaps : 0);
		out_json_kint(g, "collective_ns", ps[i].comm_ns);
		out_json_kint(g, "collective_exposed_ns", ps[i].comm_exposed_ns);
		out_json_kint(g, "collective_exposed_per_iteration_ns", exposed_per_iter(&ps[i]));
		held = held_most(a, &ps[i], &held_ns, &cause);
		out_json_kstr(g, "idle_held_most_by", held ? held : "");
		out_json_kstr(g, "idle_held_most_cause", cause);
		out_json_kint(g, "idle_held_most_ns", held_ns);
		out_json_kmap(g, "idle_by_cause");
		for (c = 0; c < CAUSE_COUNT; c++)
			if (ps[i].idle_by_cause[c])
				out_json_kint(g, td_cause_id((enum td_cause)c), ps[i].idle_by_cause[c]);
		if (ps[i].oneoff_ns)
			out_json_kint(g, "oneoff", ps[i].oneoff_ns);
		yajl_gen_map_close(g);
		yajl_gen_map_close(g);
	}
}

void render_phases_json(yajl_gen g, const struct td_analysis *a)
{
	size_t d;

	out_json_kstr(g, "iterations_from", td_iter_src_name(a->iter_src));
	out_json_kbool(g, "phases_from_batch_sizes", a->phase_by_shape);
	out_json_karray(g, "phases");
	for (d = 0; d < a->ndev; d++)
		phases_json(g, a, d);
	yajl_gen_array_close(g);
}

void render_phases_html(FILE *f, const struct td_analysis *a,
			void (*text)(FILE *f, const char *s))
{
	struct td_phase_stat ps[TD_PHASE_COUNT];
	size_t n, d;

	for (d = 0; d < a->ndev; d++) {
		if (!(n = stats(a, d, ps)))
			continue;
		fprintf(f, "<h2>Phases (GPU %d)</h2>\n<table><tr><th>phase</th><th>iterations</th>"
			   "<th>median</th><th>p90</th><th>GPU busy</th><th>from graphs</th>"
			   "%s<th>idle mostly</th></tr>\n", a->dev[d].device,
			any_comm(ps, n) ? "<th>collectives exposed / iteration</th>" : "");
		table_rows(f, a, ps, n, 1, text);
		fputs("</table>\n", f);
	}
}
