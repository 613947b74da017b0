/* SPDX-License-Identifier: MIT */
/* The findings of a report in each format - text, Markdown (a table and the details), JSON -
 * for the diagnose report and the job report alike (diagnose/render.h). */
#include "diagnose/render.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/out.h"
#include "diagnose/render_text.h"
#include "rules/rule.h"

/* ": GPU idle won back 200.0 us, exposed communication 1.0 ms; frees 2.01 s of host time" */
static const char *savings_parts(const struct td_finding *fd, char *buf, size_t cap)
{
	char b1[32], b2[32], b3[32];
	size_t n = 0;

	buf[0] = '\0';
	if (fd->busy_ns && !fd->replayed && !fd->bounded) /* the idle-based sizing's parts */
		n += (size_t)snprintf(buf, cap, ": GPU idle won back %s, %s %s",
				      td_fmt_dur(b1, sizeof(b1), fd->idle_ns),
				      !strcmp(fd->rule, "gpu-bound") ? "GPU compute time removed"
								     : "exposed communication",
				      td_fmt_dur(b2, sizeof(b2), fd->busy_ns));
	if (fd->host_ns && n < cap)
		snprintf(buf + n, cap - n, "; frees %s of host time",
			 td_fmt_dur(b3, sizeof(b3), fd->host_ns));
	return buf;
}



/* --- text -------------------------------------------------------------------------------- */

/* --- findings, in each format (the job report shares these) ------------------------------ */

void render_findings_text(FILE *f, const struct td_report *r, int color)
{
	struct col c = {f, color};
	size_t i, j;
	char b1[32], b2[32], b3[48], parts[256];

	if (!r->findings.len)
		fprintf(f, "no findings\n");
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		const char *colour = fd->severity == SEV_HIGH ? "1;31" : fd->severity == SEV_MEDIUM
			? "1;33" : "1";
		int col;

		sgr(&c, colour);
		col = fprintf(f, "%zu. [%s] %s", i + 1, td_severity_name(fd->severity), fd->rule);
		sgr(&c, "0");
		fputc(' ', f);
		wrap(f, fd->title, col + 1, 3);
		if (fd->risk) {
			fputs(fd->offpath
				      ? "\n   off the critical path: nothing to win now, so no time figure\n"
			      : fd->risk == 3 ? "\n   one-off: before the steady state, not a per-step saving\n"
			      : fd->risk == 2 ? "\n   advice: no time figure (no change the trace can size)\n"
					    : "\n   a risk, not a time cost: nothing to win back in time\n", f);
		} else {
			char line[512], sz[TD_SIZING_MAX];
			int n = snprintf(line, sizeof(line), "saves ~%s%s (%.1f%% of the window",
					 td_fmt_dur(b1, sizeof(b1), fd->savings_ns),
					 td_finding_sizing(fd, sz, sizeof(sz)),
					 100.0 * fd->savings_fraction);
			if (fd->per_step_ns && n > 0 && (size_t)n < sizeof(line))
				n += snprintf(line + n, sizeof(line) - (size_t)n, ", %s per step",
					      td_fmt_dur(b2, sizeof(b2), fd->per_step_ns));
			else if (fd->once && n > 0 && (size_t)n < sizeof(line))
				n += snprintf(line + n, sizeof(line) - (size_t)n, ", once, not per step");
			if (n > 0 && (size_t)n < sizeof(line))
				snprintf(line + n, sizeof(line) - (size_t)n, "), count %llu%s",
					 (unsigned long long)fd->count,
					 savings_parts(fd, parts, sizeof(parts)));
			fputs("\n   ", f);
			wrap(f, line, 3, 3);
			fputc('\n', f);
		}
		if (fd->ranks.len) {
			char line[512];
			td_fmt_ranks(line, sizeof(line), fd->ranks.data, fd->ranks.len);
			fputs("   ", f);
			wrap(f, line, 3, 9);
			fputc('\n', f);
		}
		for (j = 0; j < fd->where.len; j++) {
			fprintf(f, "   %s ", j ? "      " : "where:");
			wrap(f, TD_VEC_AT(&fd->where, char *, j), 10, 12);
			fputc('\n', f);
		}
		if (fd->evidence.len)
			fprintf(f, "   evidence (ts in us as in the trace, for Perfetto):\n");
		for (j = 0; j < fd->evidence.len; j++) {
			const struct td_evidence *e = &TD_VEC_AT(&fd->evidence, struct td_evidence, j);
			int n = fprintf(f, "     %s  +%-9s ", td_fmt_ts(b3, sizeof(b3), e->ts),
					td_fmt_dur(b1, sizeof(b1), e->dur));
			wrap(f, e->text, n, 8);
			fputc('\n', f);
		}
		if (fd->fix && *fd->fix) {
			sgr(&c, "1");
			fprintf(f, "   fix:");
			sgr(&c, "0");
			fputc(' ', f);
			wrap(f, fd->fix, 8, 8);
			fputc('\n', f);
		}
		fputc('\n', f);
	}
}

void render_findings_md_table(FILE *f, const struct td_report *r)
{
	size_t i;
	char b1[32];

	if (!r->findings.len) {
		fputs("No findings.\n\n", f);
		return;
	}
	fputs("| # | severity | rule | finding | est. savings |\n|---|---|---|---|---|\n", f);
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		fprintf(f, "| %zu | %s | `%s` | ", i + 1, td_severity_name(fd->severity), fd->rule);
		out_md(f, fd->title);
		if (fd->risk)
			fputs(fd->offpath ? " | off the critical path |\n"
			      : fd->risk == 3 ? " | one-off |\n"
			      : fd->risk == 2 ? " | advice |\n" : " | a risk |\n", f);
		else
			fprintf(f, " | %s (%.1f%%) |\n", td_fmt_dur(b1, sizeof(b1), fd->savings_ns),
				100.0 * fd->savings_fraction);
	}
	fputc('\n', f);
}

void render_findings_md(FILE *f, const struct td_report *r)
{
	size_t i, j;
	char b1[32], b2[32], b3[48], parts[256], sz[TD_SIZING_MAX];

	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		fprintf(f, "#### %zu. ", i + 1);
		out_md(f, fd->title);
		if (fd->risk)
			fprintf(f, "\n\n`%s` · %s · %s", fd->rule, td_severity_name(fd->severity),
				fd->offpath ? "off the critical path, no time figure"
				: fd->risk == 3 ? "one-off, before the steady state"
				: fd->risk == 2 ? "advice, no time figure" : "a risk, not a time cost");
		else
			fprintf(f, "\n\n`%s` · %s · saves ~%s%s (%.1f%% of the window", fd->rule,
				td_severity_name(fd->severity), td_fmt_dur(b1, sizeof(b1),
									   fd->savings_ns),
				td_finding_sizing(fd, sz, sizeof(sz)),
				100.0 * fd->savings_fraction);
		if (fd->per_step_ns)
			fprintf(f, ", %s per step", td_fmt_dur(b2, sizeof(b2), fd->per_step_ns));
		else if (fd->once && !fd->risk)
			fputs(", once, not per step", f);
		if (!fd->risk)
			fprintf(f, ")%s", savings_parts(fd, parts, sizeof(parts)));
		if (fd->ranks.len) {
			char line[512];
			fprintf(f, " · %s", td_fmt_ranks(line, sizeof(line), fd->ranks.data,
							 fd->ranks.len));
		}
		fputs("\n\n", f);
		if (fd->fix && *fd->fix) {
			fputs("**Fix:** ", f);
			out_md(f, fd->fix);
			fputs("\n\n", f);
		}
		if (fd->where.len || fd->evidence.len) {
			fputs("<details><summary>Where and evidence</summary>\n\n", f);
			for (j = 0; j < fd->where.len; j++) {
				fputs("- ", f);
				out_md(f, TD_VEC_AT(&fd->where, char *, j));
				fputc('\n', f);
			}
			if (fd->evidence.len)
				fputs("\n| ts (us, as in the trace) | duration | what |\n|---|---|---|\n", f);
			for (j = 0; j < fd->evidence.len; j++) {
				const struct td_evidence *e = &TD_VEC_AT(&fd->evidence, struct td_evidence, j);
				fprintf(f, "| %s | %s | ", td_fmt_ts(b3, sizeof(b3), e->ts),
					td_fmt_dur(b1, sizeof(b1), e->dur));
				out_md(f, e->text);
				fputs(" |\n", f);
			}
			fputs("\n</details>\n\n", f);
		}
	}
}

void render_findings_json(yajl_gen g, const struct td_report *r)
{
	size_t i, j;

	yajl_gen_array_open(g);
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", fd->rule);
		out_json_kstr(g, "severity", td_severity_name(fd->severity));
		out_json_kint(g, "device", fd->device);
		out_json_kstr(g, "title", fd->title);
		out_json_kbool(g, "risk", fd->risk == 1);
		out_json_kbool(g, "advice", fd->risk == 2);
		out_json_kbool(g, "one_off", fd->risk == 3);
		out_json_kint(g, "est_savings_ns", fd->savings_ns);
		out_json_kstr(g, "sizing", fd->bounded ? "bound" : fd->replayed ? "replay"
					   : fd->risk ? "none" : fd->estimated ? "estimate"
					   : fd->upper ? "upper" : "idle");
		if (fd->after) { /* sized after another fix: what it wins alone besides */
			out_json_kstr(g, "sized_after", fd->after);
			out_json_kint(g, "alone_ns", fd->replayed ? fd->replay_ns : fd->bound_ns);
		}
		out_json_kfixed(g, "est_savings_fraction", fd->savings_fraction, 6);
		out_json_kint(g, "est_savings_per_step_ns", fd->per_step_ns);
		out_json_kint(g, "gpu_idle_ns", fd->idle_ns);
		out_json_kint(g, "gpu_busy_ns", fd->busy_ns);
		out_json_kint(g, "host_freed_ns", fd->host_ns);
		if (fd->replayed && !fd->after && fd->win_before_ns > 0 && fd->win_after_ns > 0 &&
		    fd->busy_before_ns >= 0 && fd->busy_after_ns >= 0) {
			/* the replayed saving, made of: the GPU work the fix removes and the GPU idle
			 * it closes (they add up to it); how busy the GPU is after it */
			int64_t removed = fd->busy_before_ns - fd->busy_after_ns;
			out_json_key(g, "decomposition");
			yajl_gen_map_open(g);
			out_json_kint(g, "window_before_ns", fd->win_before_ns);
			out_json_kint(g, "window_after_ns", fd->win_after_ns);
			out_json_kint(g, "gpu_busy_removed_ns", removed);
			out_json_kint(g, "gpu_idle_closed_ns", fd->replay_ns - removed);
			out_json_kint(g, "gpu_busy_after_ns", fd->busy_after_ns);
			out_json_kstr(g, "holds_after", 10 * fd->busy_after_ns >= 9 * fd->win_after_ns
				      ? "gpu" : "other");
			yajl_gen_map_close(g);
		}
		out_json_kint(g, "count", (int64_t)fd->count);
		if (fd->alts.len) { /* other fixes of its mechanism, each replayed */
			out_json_karray(g, "alternatives");
			for (j = 0; j < fd->alts.len; j++) {
				const struct td_alt *x = &TD_VEC_AT(&fd->alts, struct td_alt, j);
				yajl_gen_map_open(g);
				out_json_kstr(g, "name", x->name);
				out_json_kint(g, "saving_ns", x->saving_ns);
				yajl_gen_map_close(g);
			}
			yajl_gen_array_close(g);
		}
		if (fd->ranks.len) {
			out_json_karray(g, "ranks");
			for (j = 0; j < fd->ranks.len; j++)
				out_json_int(g, TD_VEC_AT(&fd->ranks, int64_t, j));
			yajl_gen_array_close(g);
		}
		out_json_karray(g, "where");
		for (j = 0; j < fd->where.len; j++)
			out_json_str(g, TD_VEC_AT(&fd->where, char *, j));
		yajl_gen_array_close(g);
		out_json_karray(g, "evidence");
		for (j = 0; j < fd->evidence.len; j++) {
			const struct td_evidence *e = &TD_VEC_AT(&fd->evidence, struct td_evidence, j);
			yajl_gen_map_open(g);
			out_json_kint(g, "ts_ns", e->ts);
			out_json_kint(g, "dur_ns", e->dur);
			out_json_kstr(g, "text", e->text);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		out_json_kmap(g, "values");
		for (j = 0; j < fd->values.len; j++) {
			const struct td_value *v = &TD_VEC_AT(&fd->values, struct td_value, j);
			out_json_key(g, v->key);
			out_json_int(g, v->v);
		}
		yajl_gen_map_close(g);
		out_json_kstr(g, "fix", fd->fix ? fd->fix : "");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}


/* A value of the text report's header: after its 9-column label, wrapped at 100 columns. */
