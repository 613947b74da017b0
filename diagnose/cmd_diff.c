/* SPDX-License-Identifier: MIT */
/* tracedoc diff BASE CURRENT [--top N] [--format text|md|json|csv] [--wide] [-o FILE]
 *                            [--config FILE]
 * Two traces of one program, op by op and kernel by kernel, per step: why CURRENT is slower. */
#include <stdio.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/render_diff.h"
#include "config/config.h"

static void diff_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc diff BASE CURRENT [--top N] [--format text|md|json|csv]\n"
		   "                     [--wide] [-o FILE] [--config FILE]\n"
		   "  two traces of the same program, before and after a change: step time and\n"
		   "  GPU busy per step, the rows that make up most of the step-time change, idle\n"
		   "  causes side by side, then every op (self CPU) and GPU op (total) per step on\n"
		   "  both sides, by the size of the change; top 25 in text and md\n");
}

static const struct cli_render out[] = {
	{"json", render_diff_json}, {"csv", render_diff_csv}, {"md", render_diff_md},
	{NULL, render_diff_text},
};

int cmd_diff(int argc, char **argv)
{
	const char *format = "text", *outp = NULL, *cfgp = NULL, *top_s = NULL;
	static const char *const formats[] = {"text", "md", "json", "csv", NULL};
	int wide = 0, top = 0, rc;
	const struct cli_opt opts[] = {
		{"--format", 0, &format, NULL}, {"--output", 'o', &outp, NULL},
		{"--config", 0, &cfgp, NULL}, {"--top", 0, &top_s, NULL}, {"--wide", 0, NULL, &wide},
		{NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};
	struct td_config cfg;
	struct td_trace t[2];
	struct td_analysis a[2];
	int loaded = 0;

	rc = cli_parse_exactly("diff", argc, argv, opts, &ops, diff_usage, 2);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (cli_one_of("diff", "--format", format, formats) ||
	    (top_s && cli_count("diff", "--top", top_s, 1, 1000000000, &top)) ||
	    (rc = cli_config(cfgp, &cfg)) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc ? rc : EXIT_USAGE;
	}
	for (; loaded < 2; loaded++) {
		td_trace_init(&t[loaded]);
		if ((rc = cli_load(ops.v[loaded], &t[loaded])) != EXIT_OK) {
			td_trace_free(&t[loaded]);
			break;
		}
		td_analysis_run(&a[loaded], &t[loaded], &cfg);
	}
	if (loaded == 2) {
		struct td_diff d;
		struct diff_ctx c;
		td_diff_build(&a[0], &a[1], &d);
		c.base_path = ops.v[0];
		c.cur_path = ops.v[1];
		c.d = &d;
		c.top = top ? (size_t)top : !strcmp(format, "text") || !strcmp(format, "md") ? 25 : 0;
		c.wide = wide;
		rc = cli_write_by(outp, format, out, &c);
		td_diff_free(&d);
	}
	while (loaded-- > 0) {
		td_analysis_free(&a[loaded]);
		td_trace_free(&t[loaded]);
	}
	td_config_free(&cfg);
	cli_operands_free(&ops);
	return rc;
}
