/* SPDX-License-Identifier: MIT */
/* tracedoc diagnose TRACE... [--format text|md|json] [-o FILE] [--config FILE] [--peaks FILE]
 *                            [-j N] [--job]
 * [--color auto|always|never]: the prioritized fix report of one trace, or of a job's ranks
 * (several traces, a directory, summaries). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "diagnose/args.h"
#include "common/alloc.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/jobload.h"
#include "diagnose/out.h"
#include "diagnose/render.h"
#include "diagnose/render_html.h"
#include "diagnose/render_job.h"
#include "parser/trace.h"
#include "config/config.h"
#include "sizing/critpath.h"
#include "sizing/whatif.h"
#include "analysis/check.h"
#include "analysis/graphmap.h"
#include "analysis/metrics.h"
#include "rules/rule.h"

static void diagnose_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc diagnose TRACE... [--format text|md|json|html] [-o FILE]\n"
		   "                         [--config FILE] [--peaks FILE] [-j N] [--job]\n"
		   "                         [--color auto|always|never] [--capture FILE]\n"
		   "  TRACE   a Kineto / PyTorch profiler trace (.json, .json.gz, .json.zst), or -\n"
		   "          for stdin; several, a directory of them, or their summaries make a job\n"
		   "  -j N    threads: for one trace, those that parse it (default: the cores, at\n"
		   "          most 8); for a job, the ranks read at once (default: the cores)\n"
		   "  --job   the job view even for one trace\n"
		   "  --peaks the device's peak TFLOP/s and TB/s from a JSON file, over the\n"
		   "          compiled datasheet table (docs/roofline.md)\n"
		   "  --capture the graph-capture trace of the same server (one TRACE): the HTML\n"
		   "          report's op and kernel tables give kernels replayed from graphs to the\n"
		   "          ops that captured them\n"
		   "  html    one self-contained file: timelines, idle by cause, findings, tables\n"
		   "  prints what slows the run, in order of the time a fix would win back\n");
}

/* What diagnose writes: one trace's report (one), or a job's (job). */
struct report_out {
	const struct render_ctx *one;
	const struct td_job *job;
};

/* The report in format, for cli_write; colour for text */
static void render_any(FILE *f, const char *format, int color, const void *ctx)
{
	const struct report_out *o = ctx;

	if (!strcmp(format, "json")) {
		if (o->one)
			render_json(f, o->one);
		else
			render_job_json(f, o->job);
	} else if (!strcmp(format, "html")) {
		if (o->one)
			render_html(f, o->one);
		else
			render_job_html(f, o->job);
	} else if (!strcmp(format, "md")) {
		if (o->one)
			render_md(f, o->one);
		else
			render_job_md(f, o->job);
	} else if (o->one) {
		struct render_ctx c = *o->one;
		c.color = color;
		render_text(f, &c);
	} else {
		render_job_text(f, o->job, color);
	}
}

/* --- one trace --------------------------------------------------------------------------- */

/* The trace's health (check's rules) reads the trace alone: it runs beside the analysis on a
 * thread of its own where -j allows one, and is joined before the report is written. */
struct health_job {
	const struct td_trace *t;
	struct td_health *chk;
	pthread_t th;
	int started;
};

static void *health_main(void *arg)
{
	struct health_job *h = arg;
	td_health_run(h->t, h->chk);
	return NULL;
}

static void health_start(struct health_job *h, const struct td_trace *t)
{
	h->t = t;
	h->chk = td_malloc(sizeof(*h->chk));
	h->started = cli_threads() > 1 && pthread_create(&h->th, NULL, health_main, h) == 0;
}

static struct td_health *health_join(struct health_job *h)
{
	if (h->started)
		pthread_join(h->th, NULL);
	else
		td_health_run(h->t, h->chk);
	return h->chk;
}

static int diagnose_one(struct cli_doc *d, struct td_config *cfg, const char *format,
			const char *outp, const char *color, const char *capture)
{
	struct td_trace cap;
	struct td_graph_map gmap;
	const char *path = d->path;
	struct td_metrics m;
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	struct render_ctx rc;
	struct report_out out = {NULL, NULL};
	struct td_rp_report rep;
	struct td_health *chk;
	struct health_job hj;
	struct td_critpath cp;
	int rc_exit, replayed, critpathed;

	td_trace_init(&t);
	if ((rc_exit = cli_doc_trace(d, &t)) != EXIT_OK) {
		td_trace_free(&t);
		return rc_exit;
	}
	if ((rc_exit = cli_capture("diagnose", capture, &t, &cap, &gmap)) != EXIT_OK) {
		td_trace_free(&t);
		return rc_exit;
	}
	health_start(&hj, &t);
	td_analysis_run_jobs(&a, &t, cfg, cli_threads());
	a.gmap = &gmap;
	td_diagnose(&a, &r);
	td_metrics_compute(&a, &r, &m);
	chk = health_join(&hj);
	memset(&rc, 0, sizeof(rc));
	rc.check = chk;
	rc.path = path;
	rc.a = &a;
	rc.r = &r;
	rc.m = &m;
	/* the JSON report says how closely the replay its savings come from fits the trace */
	replayed = !strcmp(format, "json") && td_whatif_report(&a, &rep) == 0;
	rc.replay = replayed ? &rep : NULL;
	/* the JSON report holds each step's critical path, on the graph the replay built */
	critpathed = replayed && td_critpath(&a, &cp) == 0;
	rc.critpath = critpathed ? &cp : NULL;
	critpathed = replayed; /* cp to free, whether it has a path or not */
	out.one = &rc;
	rc_exit = cli_write(outp, format, color, render_any, &out);
	if (replayed)
		td_rp_report_free(&rep);
	if (critpathed)
		td_critpath_free(&cp);
	free(chk);
	td_report_free(&r);
	td_analysis_free(&a);
	td_graph_map_free(&gmap);
	td_trace_free(&t);
	return rc_exit;
}

/* --- a job ------------------------------------------------------------------------------- */

/* The job's report, when its ranks could be read (lrc: how loading it went); j is freed. */
static int job_out(int lrc, struct td_job *j, const char *format, const char *outp,
		   const char *color)
{
	int rc = lrc;

	if (j->n && lrc != EXIT_USAGE) {
		struct report_out out = {NULL, j};
		rc = cli_write(outp, format, color, render_any, &out);
		if (rc == EXIT_OK)
			rc = lrc; /* a rank that could not be read still fails the run */
	}
	td_job_free(j);
	return rc;
}

int cmd_diagnose(int argc, char **argv)
{
	const char *format = "text", *outp = NULL, *color = "auto", *cfgp = NULL, *peaksp = NULL;
	const char *capture = NULL;
	static const char *const formats[] = {"text", "md", "json", "html", NULL};
	static const char *const colors[] = {"auto", "always", "never", NULL};
	int force_job = 0, rc;
	const struct cli_opt opts[] = {
		{"--format", 0, &format, NULL}, {"--output", 'o', &outp, NULL},
		{"--config", 0, &cfgp, NULL}, {"--color", 0, &color, NULL},
		{"--job", 0, NULL, &force_job}, {"--peaks", 0, &peaksp, NULL},
		{"--capture", 0, &capture, NULL}, {NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};
	struct td_config cfg;

	rc = cli_parse("diagnose", argc, argv, opts, &ops, diagnose_usage);
	if (rc != EXIT_OK) {
		cli_operands_free(&ops);
		return rc == CLI_DONE ? EXIT_OK : rc;
	}
	if (!ops.n) {
		cli_operands_free(&ops);
		diagnose_usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_one_of("diagnose", "--format", format, formats) ||
	    cli_one_of("diagnose", "--color", color, colors)) {
		cli_operands_free(&ops);
		return EXIT_USAGE;
	}
	if (capture && (ops.n != 1 || force_job)) {
		fprintf(stderr, "tracedoc diagnose: --capture goes with one trace, not a job\n");
		cli_operands_free(&ops);
		return EXIT_USAGE;
	}
	if ((rc = cli_config(cfgp, &cfg)) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc;
	}
	if ((rc = cli_peaks(peaksp, &cfg)) != EXIT_OK) {
		td_config_free(&cfg);
		cli_operands_free(&ops);
		return rc;
	}
	/* one trace file: its own report; anything more (or a summary, or --job): the job's */
	if (ops.n == 1 && !force_job && !cli_is_ranks(ops.v[0])) {
		static const char *const schemas[] = {TD_SUMMARY_SCHEMA, NULL};
		struct cli_doc d;
		char msg[1024];
		if ((rc = cli_doc_open(ops.v[0], REPORT_DOC_MAX, &d, msg, sizeof(msg))) != EXIT_OK) {
			fprintf(stderr, "tracedoc: %s\n", msg);
		} else if (d.kind != TD_SNIFF_SCHEMA) {
			rc = diagnose_one(&d, &cfg, format, outp, color, capture);
		} else if (!cli_doc_schema_is(&d, schemas, "(a rank's summary) or a trace; a saved "
					      "report is gate's --baseline", msg, sizeof(msg))) {
			fprintf(stderr, "tracedoc: %s\n", msg);
			cli_doc_close(&d);
			rc = EXIT_INPUT;
		} else {
			struct td_job j;
			rc = job_out(cli_load_job_doc("diagnose", &d, cli_jobs, &cfg, &j), &j, format,
				     outp, color);
		}
	} else {
		struct td_job j;
		rc = job_out(cli_load_job("diagnose", ops.v, (size_t)ops.n, cli_jobs, &cfg, &j), &j,
			     format, outp, color);
	}
	cli_operands_free(&ops);
	if (cfg.pattern_limit_hits)
		fprintf(stderr, "tracedoc: warning: %llu pattern matches stopped at the PCRE2 match "
				"limit (treated as no match)%s\n",
			(unsigned long long)cfg.pattern_limit_hits, cfg.patterns_disabled
			? "; patterns that stopped there 16 times were left out for the rest" : "");
	td_config_free(&cfg);
	return rc;
}
