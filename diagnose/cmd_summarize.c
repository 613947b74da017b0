/* SPDX-License-Identifier: MIT */
/* tracedoc summarize TRACE [-o FILE] [--config FILE]: one rank's summary (tracedoc.summary/1),
 * kilobytes that `diagnose` and `gate` take in place of the trace - what each task of a Slurm
 * array writes where the traces are, for one reduce job to read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/jobload.h"
#include "job/summary.h"
#include "rules/config.h"

static void summarize_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc summarize TRACE [-o FILE] [--config FILE]\n"
		   "  writes the summary of one rank's trace (tracedoc.summary/1) that diagnose and\n"
		   "  gate read in place of the trace\n");
}

/* The summary's bytes, for cli_write. */
struct bytes {
	const char *s;
	size_t n;
};

static void write_bytes(FILE *f, const char *format, int color, const void *ctx)
{
	const struct bytes *b = ctx;

	(void)format;
	(void)color;
	fwrite(b->s, 1, b->n, f);
}

int cmd_summarize(int argc, char **argv)
{
	struct cli_std s = {0};
	const struct cli_opt opts[] = {
		{"--output", 'o', &s.outp, NULL}, {"--config", 0, &s.cfgp, NULL}, {NULL, 0, NULL, NULL},
	};
	struct td_summary sum;
	char msg[1024], *json;
	size_t len;
	int rc;

	rc = cli_start("summarize", &s, argc, argv, opts, summarize_usage, 1, NULL);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	rc = jobin_summarize(s.ops.v[0], &s.cfg, &sum, msg, sizeof(msg));
	if (*msg)
		fprintf(stderr, "tracedoc: %s%s\n", rc == EXIT_OK ? "warning: " : "", msg);
	if (rc == EXIT_OK) {
		struct bytes b;
		json = td_summary_json(&sum, &len);
		b.s = json;
		b.n = len;
		rc = cli_write(s.outp, "json", NULL, write_bytes, &b);
		free(json);
	}
	td_summary_free(&sum);
	return cli_end(&s, rc);
}
