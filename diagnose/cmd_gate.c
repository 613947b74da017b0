/* SPDX-License-Identifier: MIT */
/* tracedoc gate [--baseline BASE] CURRENT [--config FILE] [--format text|md|json|html]
 *               [--junit FILE] [-o FILE]
 * Fails (exit 1) when CURRENT regresses against BASE (a trace, or a JSON report saved by
 * `tracedoc diagnose --format json`) or breaks a budget of the config. */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/utf8.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/jobload.h"
#include "diagnose/render_diff.h"
#include "diagnose/render_html.h"
#include "job/job.h"
#include "diagnose/out.h"
#include "parser/input.h"
#include "parser/trace.h"
#include "config/config.h"
#include "analysis/check.h"
#include "analysis/metrics.h"
#include "rules/rule.h"
#include "tables/snapshot.h"

#define MAX_CHECKS 64

struct side {
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	struct td_metrics m;
	struct td_job job;
	struct td_snapshot snap;
	int loaded; /* 1: trace analysed (t, a, r valid); 2: metrics from a report; 3: a job;
		     * 4: a memory snapshot (snap; no metrics: gated on its peak's budget) */
	char partial[256]; /* a job's: which ranks are partial or missing */
};

static void side_free(struct side *s)
{
	if (s->loaded == 1) {
		td_report_free(&s->r);
		td_analysis_free(&s->a);
		td_trace_free(&s->t);
	}
	if (s->loaded == 3)
		td_job_free(&s->job);
	if (s->loaded == 4)
		td_snapshot_free(&s->snap);
	s->loaded = 0;
}

/* The findings of a side that has them: an analysed trace or a job. */
static const struct td_report *side_report(const struct side *s)
{
	return s->loaded == 1 ? &s->r : s->loaded == 3 ? &s->job.report : NULL;
}

/* A side's job is read: its partial or missing ranks noted. */
static void job_side(struct side *s)
{
	size_t r, k = 0;

	s->m = s->job.metrics;
	s->loaded = 3;
	for (r = 0; r < s->job.n; r++)
		if (s->job.rows[r].s->partial && k < sizeof(s->partial) - 40)
			k += (size_t)snprintf(s->partial + k, sizeof(s->partial) - k, "%srank %lld",
					      k ? ", " : "", (long long)s->job.rows[r].rank);
	if (k)
		snprintf(s->partial + k, sizeof(s->partial) - k, ": the trace ends early");
	else if (s->job.missing_count)
		snprintf(s->partial, sizeof(s->partial), "%llu of the %lld ranks have no trace",
			 (unsigned long long)s->job.missing_count, (long long)s->job.world_size);
	if (*s->partial)
		s->m.partial = 1;
}

/* BASE or CURRENT: a trace, a job (a directory, a glob, a rank's summary) or - for BASE - a
 * report saved by diagnose, told apart by its top-level keys, wherever they stand. */
static int load_side(const char *path, struct td_config *cfg, struct side *s, int allow_report)
{
	static const char *const as_base[] = {"tracedoc.report/1", "tracedoc.job/1",
					      TD_SUMMARY_SCHEMA, NULL};
	static const char *const as_current[] = {TD_SUMMARY_SCHEMA, NULL};
	struct cli_doc d;
	char msg[1024], sh[512];
	int rc;

	memset(s, 0, sizeof(*s));
	if (cli_is_ranks(path)) {
		if ((rc = cli_load_job("gate", &path, 1, cli_jobs, cfg, &s->job)) != EXIT_OK) {
			td_job_free(&s->job);
			return rc;
		}
		job_side(s);
		return EXIT_OK;
	}
	if ((rc = cli_doc_open(path, REPORT_DOC_MAX, &d, msg, sizeof(msg))) != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
		return rc;
	}
	if (d.kind == TD_SNIFF_SCHEMA) {
		struct td_error err;
		char *json;
		if (!cli_doc_schema_is(&d, allow_report ? as_base : as_current, allow_report
				       ? "(saved by diagnose --format json, or a rank's summary) or a "
				       "trace" : "(a rank's summary) or a trace", msg, sizeof(msg))) {
			cli_doc_close(&d);
			if (!allow_report && (!strncmp(d.schema, "tracedoc.report/", 16) ||
					      !strncmp(d.schema, "tracedoc.job/", 13))) {
				cli_shown(path, sh, sizeof(sh));
				fprintf(stderr, "tracedoc gate: %s is a saved report, not a trace: give it "
						"as\n  --baseline %s, and the trace to judge as CURRENT\n", sh,
					sh);
				return EXIT_USAGE;
			}
			fprintf(stderr, "tracedoc: %s\n", msg);
			return EXIT_INPUT;
		}
		if (!strcmp(d.schema, TD_SUMMARY_SCHEMA)) {
			if ((rc = cli_load_job_doc("gate", &d, cli_jobs, cfg, &s->job)) != EXIT_OK) {
				td_job_free(&s->job);
				return rc;
			}
			job_side(s);
			return EXIT_OK;
		}
		json = cli_doc_text(&d, REPORT_DOC_MAX, msg, sizeof(msg));
		cli_doc_close(&d);
		if (!json) {
			fprintf(stderr, "tracedoc: %s\n", msg);
			return EXIT_INPUT;
		}
		memset(&err, 0, sizeof(err));
		rc = td_metrics_from_report(json, &s->m, &err);
		free(json);
		if (rc) {
			fprintf(stderr, "tracedoc: %s: %s\n", cli_shown(path, sh, sizeof(sh)), err.msg);
			return EXIT_INPUT;
		}
		s->loaded = 2;
		return EXIT_OK;
	}
	if (d.kind == TD_SNIFF_SNAPSHOT && allow_report) {
		cli_doc_close(&d);
		fprintf(stderr, "tracedoc gate: %s is a PyTorch memory snapshot: a snapshot is gated "
				"as CURRENT, on the budget\n  gate.budgets.max_snapshot_peak_bytes, without a "
				"baseline (tracedoc memory A B compares two)\n",
			cli_shown(path, sh, sizeof(sh)));
		return EXIT_USAGE;
	}
	if (d.kind == TD_SNIFF_SNAPSHOT) {
		if ((rc = cli_doc_snapshot(&d, &s->snap)) != EXIT_OK)
			return rc;
		s->loaded = 4;
		return EXIT_OK;
	}
	td_trace_init(&s->t);
	if ((rc = cli_doc_trace(&d, &s->t)) != EXIT_OK) {
		td_trace_free(&s->t);
		return rc;
	}
	td_analysis_run(&s->a, &s->t, cfg);
	td_diagnose(&s->a, &s->r);
	td_metrics_compute(&s->a, &s->r, &s->m);
	s->loaded = 1;
	return EXIT_OK;
}

/* gate.fail_on_red_health: the current trace's health (tracedoc check) as one more check;
 * returns 1 when it fails (red). */
static size_t health_check(const struct td_trace *t, struct td_check *c)
{
	struct td_health *h = td_malloc(sizeof(*h));
	char line[512];

	td_health_run(t, h);
	td_health_line(h, line, sizeof(line));
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "trace_health");
	c->base = NAN;
	c->cur = (double)h->health;
	c->threshold = TD_HEALTH_RED;
	snprintf(c->rule, sizeof(c->rule), "the trace's health (tracedoc check) is not red");
	snprintf(c->message, sizeof(c->message), "health %.300s", line);
	c->verdict = h->health == TD_HEALTH_RED ? V_FAIL : V_PASS;
	free(h);
	return c->verdict == V_FAIL;
}

/* A memory snapshot's checks: each device's peak of allocated memory (replayed from its
 * trace; live at the snapshot when it has none) against gate.budgets.max_snapshot_peak_bytes.
 * Returns the failed ones; why is nothing to judge in *why when the budget is not set. */
static size_t snapshot_checks(const struct td_snapshot *s, const struct td_config *cfg,
			      struct td_check *checks, size_t *n, const char **why)
{
	int64_t limit = cfg->gate.max_snapshot_peak_bytes;
	size_t k, fails = 0;
	char v[32], l[32];

	*n = 0;
	if (limit < 0) {
		*why = "a memory snapshot is judged only on its peak, and gate.budgets."
		       "max_snapshot_peak_bytes is not set in the config";
		return 0;
	}
	td_metric_str(l, sizeof(l), "bytes", (double)limit);
	for (k = 0; k < s->ndev && *n < MAX_CHECKS; k++) {
		const struct td_snap_dev *d = &s->dev[k];
		int64_t peak = d->events ? d->peak : d->allocated;
		struct td_check *c = &checks[(*n)++];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), "peak_allocated_bytes (GPU %d)", (int)d->device);
		c->base = NAN;
		c->cur = (double)peak;
		c->threshold = (double)limit;
		snprintf(c->rule, sizeof(c->rule), "<= %s", l);
		c->verdict = peak > limit ? V_FAIL : V_PASS;
		td_metric_str(v, sizeof(v), "bytes", (double)peak);
		snprintf(c->message, sizeof(c->message), "GPU %d's peak allocated memory %s%s is %s "
			 "the budget %s (max_snapshot_peak_bytes)", (int)d->device, v,
			 d->events ? "" : " (live at the snapshot: no history recorded)",
			 peak > limit ? "above" : "within", l);
		fails += c->verdict == V_FAIL;
	}
	if (!*n)
		*why = "the snapshot holds no device";
	return fails;
}

/* --- values for people ------------------------------------------------------------------- */

static const char *fmt_value(char *buf, size_t cap, const char *name, double v)
{
	return td_metric_str(buf, cap, name, v);
}

static const char *fmt_change(char *buf, size_t cap, const struct td_check *c)
{
	if (!c->has_base || isnan(c->base) || isnan(c->cur))
		snprintf(buf, cap, "-");
	else if (c->base == 0)
		snprintf(buf, cap, c->cur == 0 ? "0%%" : "new");
	else
		snprintf(buf, cap, "%+.1f%%", 100 * (c->cur - c->base) / c->base);
	return buf;
}

static const char *verdict_name(enum td_verdict v)
{
	return v == V_FAIL ? "FAIL" : v == V_NEW ? "FAIL (new)" : v == V_SKIP ? "skipped" : "pass";
}

/* --- renderers --------------------------------------------------------------------------- */

struct gate_out {
	const char *base_path, *cur_path;
	const struct side *cur, *base;
	const struct td_check *checks;
	size_t n, fails;
	const char *partial; /* why the inputs cannot be gated, or NULL */
	int empty;           /* ... because there is nothing to judge (else: a partial trace) */
	double seconds;      /* wall time of the run, for JUnit */
};

static const char *blocked_title(const struct gate_out *g)
{
	return g->empty ? "nothing to judge" : "the current trace is partial";
}

static size_t first_worded(const struct gate_out *g)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->checks[i].verdict != V_PASS && *g->checks[i].message)
			return i;
	return SIZE_MAX;
}

static void text_out(FILE *f, const struct gate_out *g)
{
	char b1[48], b2[48], b3[32];
	size_t i;

	fprintf(f, "tracedoc gate: %s", g->fails || g->partial ? "FAIL" : "PASS");
	if (g->partial)
		fprintf(f, " (%s)", blocked_title(g));
	else
		fprintf(f, " (%zu of %zu checks failed)", g->fails, g->n);
	fprintf(f, "\nbaseline %s\ncurrent  %s\n", g->base_path ? cli_shown(g->base_path, b1, sizeof(b1))
		: "(none: budgets only)", cli_shown(g->cur_path, b2, sizeof(b2)));
	if (g->partial) {
		fprintf(f, "%s: ", g->empty ? "nothing to judge" : "partial");
		out_text_wrap(f, g->partial, g->empty ? 18 : 9, 2, 100);
		fputc('\n', f);
	}
	fprintf(f, "\n%-30s %12s %12s %8s  %-22s %s\n", "metric", "baseline", "current", "change",
		"threshold", "verdict");
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		if (!strcmp(c->name, "new high finding")) {
			fprintf(f, "%-30s %12s %12s %8s  %-22s %s\n", c->name, "-", c->rule, "",
				c->verdict == V_NEW ? "not in baseline" : "step time fell",
				verdict_name(c->verdict));
			continue;
		}
		fprintf(f, "%-30s %12s %12s %8s  %-22.22s %s\n", c->name,
			fmt_value(b1, sizeof(b1), c->name, c->base), fmt_value(b2, sizeof(b2), c->name, c->cur),
			fmt_change(b3, sizeof(b3), c), c->rule, verdict_name(c->verdict));
	}
	for (i = 0; i < g->n; i++) { /* the verdicts that need words */
		const struct td_check *c = &g->checks[i];
		if (c->verdict == V_PASS || !*c->message)
			continue;
		fprintf(f, "%s", i == first_worded(g) ? "\n" : "");
		fprintf(f, "%s ", c->verdict == V_SKIP ? "skipped:" : "FAIL:   ");
		out_text_wrap(f, c->message, 9, 9, 100);
		fputc('\n', f);
	}
	if (side_report(g->cur) && side_report(g->cur)->findings.len) {
		const struct td_report *r = side_report(g->cur);
		fprintf(f, "\ntop findings in the current %s:\n", g->cur->loaded == 3 ? "job" : "trace");
		for (i = 0; i < r->findings.len && i < 3; i++) {
			const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
			int col = fprintf(f, "  %zu. [%s] %s: ", i + 1, td_severity_name(fd->severity),
					  fd->rule);
			out_text_wrap(f, fd->title, col, 5, 100);
			fputc('\n', f);
		}
	}
}

/* The baseline and current paths, then the reason the gate fails whatever its checks (a
 * partial trace, nothing to judge), each escaped by esc: what md and html both say under
 * their verdict. mark: the format's text before the baseline, between the paths, after the
 * current, and around the reason. */
static void paths_and_reason(FILE *f, const struct gate_out *g, void (*esc)(FILE *, const char *),
			     const char *const mark[5])
{
	fputs(mark[0], f);
	esc(f, g->base_path ? g->base_path : "(none: budgets only)");
	fputs(mark[1], f);
	esc(f, g->cur_path);
	fputs(mark[2], f);
	if (g->partial) {
		fputs(mark[3], f);
		esc(f, g->partial);
		fputs(mark[4], f);
	}
}

static void md_out(FILE *f, const struct gate_out *g)
{
	static const char *const md_marks[] = {"Baseline ", " · current ", "\n\n", "> ", "\n\n"};
	char b1[48], b2[48], b3[32];
	size_t i;

	if (g->partial)
		fprintf(f, "### :x: tracedoc gate failed: %s\n\n", blocked_title(g));
	else if (g->fails)
		fprintf(f, "### :x: tracedoc gate failed: %zu of %zu checks\n\n", g->fails, g->n);
	else
		fprintf(f, "### :white_check_mark: tracedoc gate passed: %zu checks\n\n", g->n);
	paths_and_reason(f, g, out_md, md_marks);
	fputs("| metric | baseline | current | change | threshold | verdict |\n"
	      "|---|---|---|---|---|---|\n", f);
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		fputs("| ", f);
		out_md(f, c->name);
		if (!strcmp(c->name, "new high finding")) {
			fputs(" | - | `", f);
			out_md(f, c->rule);
			fprintf(f, c->verdict == V_NEW ? "` | | not in baseline | **%s** |\n"
						       : "` | | step time fell | %s |\n", verdict_name(c->verdict));
			continue;
		}
		fprintf(f, " | %s | %s | %s | ", fmt_value(b1, sizeof(b1), c->name, c->base),
			fmt_value(b2, sizeof(b2), c->name, c->cur), fmt_change(b3, sizeof(b3), c));
		out_md(f, c->rule);
		fprintf(f, c->verdict == V_FAIL ? " | **%s** |\n" : " | %s |\n", verdict_name(c->verdict));
	}
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		if (c->verdict == V_PASS || !*c->message)
			continue;
		if (i == first_worded(g))
			fputc('\n', f);
		fputs(c->verdict == V_SKIP ? "- skipped: " : "- **failed:** ", f);
		out_md(f, c->message);
		fputc('\n', f);
	}
	if (side_report(g->cur) && side_report(g->cur)->findings.len) {
		const struct td_report *r = side_report(g->cur);
		fprintf(f, "\n**Top findings in the current %s**\n\n",
			g->cur->loaded == 3 ? "job" : "trace");
		for (i = 0; i < r->findings.len && i < 3; i++) {
			const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
			fprintf(f, "%zu. **%s** `%s`: ", i + 1, td_severity_name(fd->severity), fd->rule);
			out_md(f, fd->title);
			fputs("  \n   Fix: ", f);
			out_md(f, fd->fix);
			fputc('\n', f);
		}
	}
	/* a failure between two traces: what changed, op by op, as tracedoc diff shows it */
	if (g->fails && g->base && g->base->loaded == 1 && g->cur->loaded == 1) {
		struct td_diff d;
		struct diff_ctx c;
		td_diff_build((struct td_analysis *)&g->base->a, (struct td_analysis *)&g->cur->a, &d);
		c.base_path = g->base_path;
		c.cur_path = g->cur_path;
		c.d = &d;
		c.top = 10;
		c.wide = 0;
		fputs("\n<details><summary>What changed: the top rows of tracedoc diff</summary>\n\n", f);
		render_diff_md(f, &c);
		fputs("\n</details>\n", f);
		td_diff_free(&d);
	}
}

static void html_out(FILE *f, const struct gate_out *g)
{
	static const char *const html_marks[] = {"Baseline <code>", "</code>, current <code>",
						 "</code>.</p>\n", "<p><b>", "</b></p>\n"};
	char b1[48], b2[48], b3[32];
	size_t i;
	const struct td_report *r = side_report(g->cur);

	html_begin(f, "tracedoc gate");
	fprintf(f, "<h1 style=\"color:%s\">tracedoc gate: %s</h1>\n<p>", g->fails || g->partial
		? "#a00" : "#006e4f", g->partial ? (g->empty ? "FAIL (nothing to judge)"
		: "FAIL (the current trace is partial)") : g->fails ? "FAIL" : "PASS");
	fprintf(f, "%zu of %zu checks failed. ", g->fails, g->n);
	paths_and_reason(f, g, html_text, html_marks);
	fputs("<table><tr><th>metric</th><th class=\"n\">baseline</th><th class=\"n\">current</th>"
	      "<th class=\"n\">change</th><th>threshold</th><th>verdict</th></tr>\n", f);
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		int bad = c->verdict == V_FAIL || c->verdict == V_NEW;
		fputs("<tr><td>", f);
		html_text(f, c->name);
		if (!strcmp(c->name, "new high finding")) {
			fputs("</td><td class=\"n\">-</td><td class=\"n\"><code>", f);
			html_text(f, c->rule);
			fputs("</code></td><td></td><td></td>", f);
		} else {
			fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%s"
				   "</td><td>", fmt_value(b1, sizeof(b1), c->name, c->base),
				fmt_value(b2, sizeof(b2), c->name, c->cur), fmt_change(b3, sizeof(b3), c));
			html_text(f, c->rule);
			fputs("</td>", f);
		}
		fprintf(f, "<td%s>%s</td></tr>\n", bad ? " class=\"sev-high\"" : "",
			verdict_name(c->verdict));
	}
	fputs("</table>\n<ul>\n", f);
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		if (c->verdict == V_PASS || !*c->message)
			continue;
		fputs(c->verdict == V_SKIP ? "<li>skipped: " : "<li><b>failed:</b> ", f);
		html_text(f, c->message);
		fputs("</li>\n", f);
	}
	fputs("</ul>\n", f);
	if (r && r->findings.len) {
		fprintf(f, "<h2>Findings in the current %s</h2>\n", g->cur->loaded == 3 ? "job" : "trace");
		html_findings(f, r);
	}
	html_end(f);
}

static void json_num(yajl_gen g, double v)
{
	if (isnan(v))
		yajl_gen_null(g);
	else
		out_json_fixed(g, v, 6);
}

static void json_out(FILE *f, const struct gate_out *o)
{
	yajl_gen g = out_json_new(f);
	size_t i;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.gate/1");
	out_json_kstr(g, "verdict", o->fails || o->partial ? "fail" : "pass");
	out_json_kint(g, "failed", (int64_t)o->fails);
	out_json_kstr_or_null(g, "partial", o->partial && !o->empty ? o->partial : NULL);
	out_json_kstr_or_null(g, "nothing_to_judge", o->partial && o->empty ? o->partial : NULL);
	out_json_kstr_or_null(g, "baseline", o->base_path);
	out_json_kstr(g, "current", o->cur_path);
	out_json_karray(g, "checks");
	for (i = 0; i < o->n; i++) {
		const struct td_check *c = &o->checks[i];
		yajl_gen_map_open(g);
		out_json_kstr(g, "name", c->name);
		out_json_key(g, "baseline");
		json_num(g, c->base);
		out_json_key(g, "current");
		json_num(g, c->cur);
		out_json_key(g, "threshold");
		json_num(g, c->threshold);
		out_json_kstr(g, "rule", c->rule);
		out_json_kstr(g, "message", c->message);
		out_json_kstr(g, "verdict", c->verdict == V_PASS ? "pass" : c->verdict == V_SKIP ? "skip"
			      : "fail");
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_karray(g, "findings");
	for (i = 0; side_report(o->cur) && i < side_report(o->cur)->findings.len && i < 5; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&side_report(o->cur)->findings,
							 struct td_finding, i);
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", fd->rule);
		out_json_kstr(g, "severity", td_severity_name(fd->severity));
		out_json_kstr(g, "title", fd->title);
		out_json_kint(g, "est_savings_ns", fd->savings_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}

static void xml(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), i = 0;

	while (i < n) {
		const char *e = out_markup_entity(p[i], 1);
		if (e) {
			fputs(e, f);
			i++;
			continue;
		}
		if (p[i] < 0x20 && p[i] != '\n' && p[i] != '\t') {
			i++;
			continue;
		}
		i += out_utf8_char(f, p + i, n - i);
	}
}

/* JUnit XML as Jenkins' xunit junit-10.xsd has it: every attribute it requires, true counts
 * and the run's wall time, a failure's type and message, and the reason in its body. */
static void junit_out(FILE *f, const struct gate_out *g)
{
	size_t i, tests = g->n + (g->partial ? 1 : 0), fails = g->fails + (g->partial ? 1 : 0);
	size_t skipped = 0;

	for (i = 0; i < g->n; i++)
		skipped += g->checks[i].verdict == V_SKIP;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<testsuites name=\"tracedoc gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		   "time=\"%.3f\">\n"
		   "  <testsuite name=\"tracedoc gate\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
		   "skipped=\"%zu\" time=\"%.3f\">\n",
		tests, fails, g->seconds, tests, fails, skipped, g->seconds);
	if (g->partial) {
		fprintf(f, "    <testcase classname=\"tracedoc.gate\" name=\"%s\" time=\"0\">\n"
			   "      <failure type=\"%s\" message=\"%s\">", g->empty ? "something to judge"
			: "complete trace", g->empty ? "nothing-to-judge" : "partial", blocked_title(g));
		xml(f, g->partial);
		fprintf(f, "</failure>\n    </testcase>\n");
	}
	for (i = 0; i < g->n; i++) {
		const struct td_check *c = &g->checks[i];
		const char *type = c->verdict == V_NEW ? "new-finding"
			: !c->has_base ? "budget" : "regression";
		fprintf(f, "    <testcase classname=\"tracedoc.gate\" name=\"");
		xml(f, c->name);
		if (c->verdict == V_NEW) {
			fprintf(f, " ");
			xml(f, c->rule);
		}
		fprintf(f, "\" time=\"0\">");
		if (c->verdict == V_FAIL || c->verdict == V_NEW) {
			fprintf(f, "\n      <failure type=\"%s\" message=\"", type);
			xml(f, c->message);
			fprintf(f, "\">");
			xml(f, c->message);
			fprintf(f, " Judged by: ");
			xml(f, c->rule);
			fprintf(f, ".</failure>\n    ");
		} else if (c->verdict == V_SKIP) {
			fprintf(f, "\n      <skipped message=\"");
			xml(f, c->message);
			fprintf(f, "\"/>\n    ");
		}
		fprintf(f, "</testcase>\n");
	}
	fprintf(f, "  </testsuite>\n</testsuites>\n");
}

/* junit_out for cli_write (the format is JUnit's, whatever --format says) */
static void junit_write(FILE *f, const char *format, int color, const void *g)
{
	(void)format;
	(void)color;
	junit_out(f, g);
}

/* --- the command ------------------------------------------------------------------------- */

static void gate_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc gate [--baseline BASE] CURRENT [--config FILE]\n"
		   "                     [--format text|md|json|html] [--junit FILE] [-o FILE]\n"
		   "                     [--peaks FILE]\n"
		   "  BASE     a trace, a job (a directory of rank traces or summaries), or a\n"
		   "           report saved by 'tracedoc diagnose --format json'\n"
		   "  CURRENT  a trace, or a job; or a memory snapshot, judged on its peak\n"
		   "           against gate.budgets.max_snapshot_peak_bytes alone\n"
		   "  --peaks  the device's peak TFLOP/s and TB/s from a JSON file, for the MFU\n"
		   "           (docs/roofline.md)\n"
		   "  exit 0 pass, 1 regression or budget failure (or a partial trace, or nothing\n"
		   "  to judge: no steps and no GPU work, every check skipped), 2 usage or config\n"
		   "  error, 3 bad input\n");
}

int cmd_gate(int argc, char **argv)
{
	const char *basep = NULL, *curp = NULL, *format = "text", *outp = NULL, *junitp = NULL;
	const char *cfgp = NULL, *peaksp = NULL;
	static const char *const formats[] = {"text", "md", "json", "html", NULL};
	const struct cli_opt opts[] = {
		{"--baseline", 0, &basep, NULL}, {"--config", 0, &cfgp, NULL},
		{"--format", 0, &format, NULL}, {"--junit", 0, &junitp, NULL},
		{"--output", 'o', &outp, NULL}, {"--peaks", 0, &peaksp, NULL},
		{NULL, 0, NULL, NULL},
	};
	struct td_config cfg;
	struct side *base = NULL, *cur;
	struct td_check checks[MAX_CHECKS];
	struct gate_out g;
	char why[512];
	struct out_file of;
	int rc;

	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = cli_parse_one("gate", argc, argv, opts, gate_usage, "one current trace (the baseline "
			   "goes with --baseline)", &curp);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (cli_one_of("gate", "--format", format, formats))
		return EXIT_USAGE;
	if ((rc = cli_config(cfgp, &cfg)) != EXIT_OK)
		return rc;
	if ((rc = cli_peaks(peaksp, &cfg)) != EXIT_OK) {
		td_config_free(&cfg);
		return rc;
	}
	cur = calloc(1, sizeof(*cur));
	if (basep) {
		base = calloc(1, sizeof(*base));
		if ((rc = load_side(basep, &cfg, base, 1)) != EXIT_OK)
			goto out;
	}
	if ((rc = load_side(curp, &cfg, cur, 0)) != EXIT_OK)
		goto out;
	if (base && cur->loaded == 4) {
		fprintf(stderr, "tracedoc gate: a memory snapshot is judged on its own budget "
				"(gate.budgets.max_snapshot_peak_bytes), without --baseline\n");
		rc = EXIT_USAGE;
		goto out;
	}

	memset(&g, 0, sizeof(g));
	g.base_path = basep;
	g.cur_path = curp;
	g.cur = cur;
	g.base = base;
	g.checks = checks;
	if (cur->loaded == 4)
		g.fails = snapshot_checks(&cur->snap, &cfg, checks, &g.n, &g.partial);
	else
		g.fails = td_gate_compare(base ? &base->m : NULL, &cur->m, &cfg, checks, MAX_CHECKS,
					  &g.n);
	if (cfg.gate.fail_on_red_health && cur->loaded == 1 && g.n < MAX_CHECKS)
		g.fails += health_check(&cur->t, &checks[g.n++]);
	if (cur->loaded == 4)
		g.empty = g.partial != NULL; /* no budget: nothing to judge */
	else if (cur->loaded == 3 && *cur->partial)
		g.partial = cur->partial;
	else if (cur->loaded == 1 && cur->t.partial)
		g.partial = cur->t.partial_msg;
	else if (base && base->loaded == 3 && *base->partial)
		g.partial = "the baseline job is partial";
	else if (base && base->loaded == 1 && base->t.partial)
		g.partial = "the baseline trace is partial";
	else if (base && base->loaded == 2 && base->m.partial)
		g.partial = "the baseline report was made from a partial trace";
	else if ((g.partial = td_gate_nothing(base ? &base->m : NULL, &cur->m, checks, g.n, why,
					      sizeof(why))) != NULL)
		g.empty = 1; /* a change that breaks profiling must not turn the gate green */

	clock_gettime(CLOCK_MONOTONIC, &t1);
	g.seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	if (out_open(&of, outp) != 0) {
		cli_cannot_write(outp, errno);
		rc = EXIT_INTERNAL;
		goto out;
	}
	if (!strcmp(format, "json"))
		json_out(of.f, &g);
	else if (!strcmp(format, "html"))
		html_out(of.f, &g);
	else if (!strcmp(format, "md"))
		md_out(of.f, &g);
	else
		text_out(of.f, &g);
	if (out_close(&of, 1) != 0) {
		int e = errno;
		cli_cannot_write(outp ? outp : "stdout", e);
		/* stdout closed early (gate | head): the JUnit file and the verdict still matter */
		if (outp || e != EPIPE) {
			rc = EXIT_INTERNAL;
			goto out;
		}
	}
	if (junitp && (rc = cli_write(junitp, "xml", NULL, junit_write, &g)) != EXIT_OK)
		goto out;
	if (g.partial) {
		fputs("tracedoc gate: failing: ", stderr);
		out_text_wrap(stderr, g.partial, 24, 2, 100);
		fputc('\n', stderr);
	}
	rc = g.fails || g.partial ? EXIT_REGRESSION : EXIT_OK;
out:
	if (base) {
		side_free(base);
		free(base);
	}
	side_free(cur);
	free(cur);
	td_config_free(&cfg);
	return rc;
}
