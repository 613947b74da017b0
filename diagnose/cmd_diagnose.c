/* SPDX-License-Identifier: MIT */
/* tracedoc diagnose TRACE [--format text|md|json] [-o FILE] [--color auto|always|never]:
 * the prioritized fix report. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/out.h"
#include "diagnose/render.h"
#include "parser/trace.h"
#include "rules/config.h"
#include "rules/metrics.h"
#include "rules/rule.h"

static void diagnose_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc diagnose TRACE [--format text|md|json] [-o FILE] [--config FILE]\n"
		   "                         [--color auto|always|never]\n"
		   "  TRACE   a Kineto / PyTorch profiler trace (.json, .json.gz, .json.zst), or -\n"
		   "          for stdin\n"
		   "  prints what slows the run, in order of the time a fix would win back\n");
}

int cmd_diagnose(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *outp = NULL, *color = "auto", *cfgp = NULL;
	static const char *const formats[] = {"text", "md", "json", NULL};
	static const char *const colors[] = {"auto", "always", "never", NULL};
	const struct cli_opt opts[] = {
		{"--format", 0, &format, NULL}, {"--output", 'o', &outp, NULL},
		{"--config", 0, &cfgp, NULL}, {"--color", 0, &color, NULL}, {NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};
	struct td_config cfg;
	struct td_metrics m;
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	struct out_file of;
	struct render_ctx rc;
	int rc_exit;

	rc_exit = cli_parse("diagnose", argc, argv, opts, &ops, diagnose_usage);
	if (rc_exit == EXIT_OK && ops.n > 1) {
		fprintf(stderr, "tracedoc diagnose: one trace at a time\n");
		rc_exit = EXIT_USAGE;
	}
	path = ops.n ? ops.v[0] : NULL;
	cli_operands_free(&ops);
	if (rc_exit != EXIT_OK)
		return rc_exit == CLI_DONE ? EXIT_OK : rc_exit;
	if (!path) {
		diagnose_usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_one_of("diagnose", "--format", format, formats) ||
	    cli_one_of("diagnose", "--color", color, colors))
		return EXIT_USAGE;
	if ((rc_exit = cli_config(cfgp, &cfg)) != EXIT_OK)
		return rc_exit;
	td_trace_init(&t);
	if ((rc_exit = cli_load(path, &t)) != EXIT_OK) {
		td_trace_free(&t);
		td_config_free(&cfg);
		return rc_exit;
	}
	td_analysis_run(&a, &t, &cfg);
	td_diagnose(&a, &r);
	td_metrics_compute(&a, &r, &m);
	if (out_open(&of, outp) != 0) {
		fprintf(stderr, "tracedoc: cannot write %s: %s\n", outp, strerror(errno));
		rc_exit = EXIT_INTERNAL;
	} else {
		rc.path = path;
		rc.a = &a;
		rc.r = &r;
		rc.m = &m;
		rc.color = strcmp(color, "always") == 0 ||
			   (strcmp(color, "auto") == 0 && !outp && strcmp(format, "text") == 0 &&
			    out_use_color(of.f));
		if (strcmp(format, "json") == 0)
			render_json(of.f, &rc);
		else if (strcmp(format, "md") == 0)
			render_md(of.f, &rc);
		else
			render_text(of.f, &rc);
		if (out_close(&of, 1) != 0) {
			fprintf(stderr, "tracedoc: cannot write %s: %s\n", outp ? outp : "stdout",
				strerror(errno));
			rc_exit = EXIT_INTERNAL;
		}
	}
	td_report_free(&r);
	td_analysis_free(&a);
	td_trace_free(&t);
	if (cfg.pattern_limit_hits)
		fprintf(stderr, "tracedoc: warning: %llu pattern matches stopped at the PCRE2 match "
				"limit (treated as no match)\n", (unsigned long long)cfg.pattern_limit_hits);
	td_config_free(&cfg);
	return rc_exit;
}
