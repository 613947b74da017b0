/* SPDX-License-Identifier: MIT */
/* The job report in three forms: text (100 columns), Markdown and JSON (tracedoc.job/1): the
 * ranks read and missing, a row per rank, then the job's findings. Same input, same bytes. */
#include "diagnose/render_job.h"

#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/out.h"
#include "diagnose/render.h"
#include "analysis/metrics.h"

static const char *source_name(int s)
{
	return s == TD_RANK_TRACE ? "distributedInfo" : s == TD_RANK_NAME ? "file name" : "order";
}

static double busy_of(const struct td_summary *s)
{
	return s->window_ns ? (double)s->busy_ns / (double)s->window_ns : 0.0;
}

static const char *cause_of(const struct td_summary *s)
{
	return s->top_cause >= 0 ? td_cause_id((enum td_cause)s->top_cause) : "-";
}

/* A rank's figures after its rank (and device): steps, median step, busy, top idle cause,
 * collectives, waiting in them, exposed, data loading, syncs per step; text columns, or the
 * rest of a Markdown row when md. */
static void rank_figures(FILE *f, const struct td_job_row *w, int md)
{
	const struct td_summary *s = w->s;
	char b[5][32];

	fprintf(f, md ? " %llu | %s | %.1f%% | %s | %s | %s | %s | %s | %.2f |\n"
		   : "%5llu %11s %5.1f%%  %-11.11s %11s %9s %9s %9s %6.2f\n",
		(unsigned long long)s->steps,
		s->steps ? td_fmt_dur(b[0], sizeof(b[0]), s->step_median_ns) : "-",
		100.0 * busy_of(s), cause_of(s), td_fmt_dur(b[1], sizeof(b[1]), s->comm_ns),
		td_fmt_dur(b[2], sizeof(b[2]), w->wait_ns),
		td_fmt_dur(b[3], sizeof(b[3]), s->exposed_ns),
		td_fmt_dur(b[4], sizeof(b[4]), s->dataloader_ns), s->syncs_per_step);
}

/* the devices, once: "8 x Tesla V100" when they agree */
static void devices_line(FILE *f, const struct td_job *j, int md)
{
	size_t r, same = 1, nd = 0;
	const char *n0 = NULL;

	for (r = 0; r < j->n; r++) { /* ranks that name no device (a partial trace) say nothing */
		const char *n = j->rows[r].s->device_name;
		if (!n || !*n)
			continue;
		if (!n0)
			n0 = n;
		same &= !strcmp(n, n0);
		nd++;
	}
	if (!n0)
		return;
	if (md) {
		fprintf(f, " · %zu x ", nd);
		out_md(f, same ? n0 : "different devices");
	} else if (same) {
		fprintf(f, "devices  %zu x ", nd);
		out_text_name(f, n0, 60);
		fputc('\n', f);
	} else {
		fprintf(f, "devices  differ across ranks (see the JSON report)\n");
	}
}

/* "partial: ranks 3, 5 (...)" into buf; 0 when every trace is whole. */
const char *render_job_missing(const struct td_job *j, char *buf, size_t cap)
{
	size_t n, i;

	n = (size_t)snprintf(buf, cap, "missing: rank%s", j->missing_count == 1 ? "" : "s");
	for (i = 0; i < j->missing.len && i < 16 && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%lld", i ? ", " : " ",
				      (long long)TD_VEC_AT(&j->missing, int64_t, i));
	if (n < cap && j->missing_count > i)
		n += (size_t)snprintf(buf + n, cap - n, " and %llu more",
				      (unsigned long long)(j->missing_count - i));
	if (n < cap)
		snprintf(buf + n, cap - n, " of the %lld (no trace of them was read)",
			 (long long)j->world_size);
	return buf;
}

static int partial_list(const struct td_job *j, char *buf, size_t cap)
{
	size_t r, n = 0, k = 0;

	for (r = 0; r < j->n; r++)
		k += j->rows[r].s->partial != 0;
	if (!k)
		return 0;
	n = (size_t)snprintf(buf, cap, "partial: rank%s", k == 1 ? "" : "s");
	for (r = 0, k = 0; r < j->n && n < cap - 96; r++)
		if (j->rows[r].s->partial)
			n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k++ ? ", " : " ",
					      (long long)j->rows[r].rank);
	snprintf(buf + n, cap - n, " (the trace ends early: left out of the collective matching)");
	return 1;
}

static void problems_text(FILE *f, const struct td_job *j)
{
	size_t i;
	char buf[4096];

	for (i = 0; i < j->errors.len; i++) {
		const struct td_job_error *e = &TD_VEC_AT(&j->errors, struct td_job_error, i);
		snprintf(buf, sizeof(buf), "not read: %s", e->message);
		fputs("         ", f);
		out_text_wrap(f, buf, 9, 11, 100);
		fputc('\n', f);
	}
	if (partial_list(j, buf, sizeof(buf))) {
		fputs("         ", f);
		out_text_wrap(f, buf, 9, 11, 100);
		fputc('\n', f);
	}
	if (j->missing_count) {
		render_job_missing(j, buf, sizeof(buf));
		fputs("         ", f);
		out_text_wrap(f, buf, 9, 11, 100);
		fputc('\n', f);
	}
}

void render_job_text(FILE *f, const struct td_job *j, int color)
{
	size_t r;

	fprintf(f, "tracedoc diagnose: a job of %zu rank%s", j->n, j->n == 1 ? "" : "s");
	if (j->world_size > 0)
		fprintf(f, " (world size %lld)", (long long)j->world_size);
	fputc('\n', f);
	fprintf(f, "ranks    %zu read; %zu collective%s matched across ranks", j->n, j->matched,
		j->matched == 1 ? "" : "s");
	if (j->unmatched)
		fprintf(f, ", %zu not", j->unmatched);
	fputc('\n', f);
	problems_text(f, j);
	devices_line(f, j, 0);
	fprintf(f, "\n%5s %5s %11s %6s  %-11s %11s %9s %9s %9s %6s\n", "rank", "steps", "median step",
		"busy", "top idle", "collectives", "waiting", "exposed", "data load", "syncs");
	for (r = 0; r < j->n; r++) {
		fprintf(f, "%5lld ", (long long)j->rows[r].rank);
		rank_figures(f, &j->rows[r], 0);
	}
	fputc('\n', f);
	render_findings_text(f, &j->report, color);
}

void render_job_md(FILE *f, const struct td_job *j)
{
	size_t r, i;
	char buf[4096];

	fprintf(f, "### tracedoc: a job of %zu rank%s, %zu finding%s\n\n", j->n, j->n == 1 ? "" : "s",
		j->report.findings.len, j->report.findings.len == 1 ? "" : "s");
	fprintf(f, "%zu rank%s read", j->n, j->n == 1 ? "" : "s");
	if (j->world_size > 0)
		fprintf(f, " of %lld", (long long)j->world_size);
	fprintf(f, " · %zu collective%s matched across ranks", j->matched, j->matched == 1 ? "" : "s");
	devices_line(f, j, 1);
	fputs("\n\n", f);
	for (i = 0; i < j->errors.len; i++) {
		fputs("> **Not read:** ", f);
		out_md(f, TD_VEC_AT(&j->errors, struct td_job_error, i).message);
		fputs("\n\n", f);
	}
	if (partial_list(j, buf, sizeof(buf))) {
		fputs("> **Partial:** ", f);
		out_md(f, buf + strlen("partial: "));
		fputs("\n\n", f);
	}
	if (j->missing_count) {
		fputs("> **Missing ranks:** ", f);
		out_md(f, render_job_missing(j, buf, sizeof(buf)) + strlen("missing: "));
		fputs("\n\n", f);
	}
	render_findings_md_table(f, &j->report);
	fputs("<details><summary>Ranks</summary>\n\n| rank | device | steps | median step | busy | "
	      "top idle cause | collectives | waiting in them | exposed | data loading | syncs/step |\n"
	      "|---|---|---|---|---|---|---|---|---|---|---|\n", f);
	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		fprintf(f, "| %lld | ", (long long)j->rows[r].rank);
		out_md(f, s->device_name ? s->device_name : "");
		fputs(" |", f);
		rank_figures(f, &j->rows[r], 1);
	}
	fputs("\n</details>\n\n", f);
	render_findings_md(f, &j->report);
}

void render_job_json(FILE *f, const struct td_job *j)
{
	yajl_gen g = out_json_new(f);
	size_t r, i;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.job/1");
	out_json_kint(g, "world_size", j->world_size);
	out_json_kint(g, "steps", (int64_t)j->steps);
	out_json_kint(g, "window_ns", j->window_ns);
	out_json_kmap(g, "collectives");
	out_json_kint(g, "matched", (int64_t)j->matched);
	out_json_kint(g, "unmatched", (int64_t)j->unmatched);
	yajl_gen_map_close(g);
	out_json_karray(g, "ranks");
	for (r = 0; r < j->n; r++) {
		const struct td_job_row *w = &j->rows[r];
		const struct td_summary *s = w->s;
		yajl_gen_map_open(g);
		out_json_kint(g, "rank", w->rank);
		out_json_kstr(g, "rank_from", source_name(w->rank_source));
		out_json_kstr(g, "path", s->path);
		out_json_kbool(g, "partial", s->partial);
		out_json_kstr(g, "device", s->device_name ? s->device_name : "");
		out_json_kint(g, "steps", (int64_t)s->steps);
		out_json_kint(g, "median_step_ns", s->step_median_ns);
		out_json_kfixed(g, "busy_fraction", busy_of(s), 6);
		out_json_kstr(g, "top_idle_cause", cause_of(s));
		out_json_kstr(g, "top_idle_what", s->top_what ? s->top_what : "");
		out_json_kint(g, "collective_ns", s->comm_ns);
		out_json_kint(g, "collective_wait_ns", w->wait_ns);
		out_json_kint(g, "exposed_comm_ns", s->exposed_ns);
		out_json_kint(g, "dataloader_ns", s->dataloader_ns);
		out_json_kfixed(g, "syncs_per_step", s->syncs_per_step, 3);
		out_json_kint(g, "late_ns", w->late_ns);
		out_json_kint(g, "late_collectives", w->late_count);
		out_json_key(g, "clock_offset_ns");
		if (w->has_offset)
			out_json_int(g, w->clock_offset_ns);
		else
			yajl_gen_null(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_karray(g, "missing");
	for (i = 0; i < j->missing.len; i++)
		out_json_int(g, TD_VEC_AT(&j->missing, int64_t, i));
	yajl_gen_array_close(g);
	out_json_key(g, "missing_count"); /* "missing" lists the first TD_JOB_MISSING_LISTED */
	out_json_int(g, (int64_t)j->missing_count);
	out_json_karray(g, "errors");
	for (i = 0; i < j->errors.len; i++) {
		const struct td_job_error *e = &TD_VEC_AT(&j->errors, struct td_job_error, i);
		yajl_gen_map_open(g);
		out_json_kstr(g, "path", e->path);
		out_json_kstr(g, "message", e->message);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_key(g, "findings");
	render_findings_json(g, &j->report);
	out_json_kmap(g, "metrics");
	for (i = 0; i < j->metrics.n; i++) {
		if (!j->metrics.m[i].present)
			continue;
		out_json_key(g, j->metrics.m[i].id);
		out_json_fixed(g, j->metrics.m[i].value, j->metrics.m[i].kind == MK_FRACTION ? 6 : 3);
	}
	yajl_gen_map_close(g);
	out_json_karray(g, "high");
	for (i = 0; i < j->metrics.nhigh; i++)
		out_json_str(g, j->metrics.high[i]);
	yajl_gen_array_close(g);
	out_json_karray(g, "suppressed");
	for (i = 0; i < j->metrics.nsuppressed; i++) {
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", j->metrics.suppressed[i]);
		out_json_kstr(g, "reason", j->metrics.why[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}
