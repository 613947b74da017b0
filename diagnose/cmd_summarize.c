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
#include "config/config.h"

static void summarize_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc summarize TRACE [-o FILE] [--config FILE]\n"
		   "  writes the summary of one rank's trace (tracedoc.summary/1) that diagnose and\n"
		   "  gate read in place of the trace\n");
}

/* The summary as JSON, for cli_write. */
static void write_summary(FILE *f, const char *format, int color, const void *sum)
{
	size_t len;
	char *json = td_summary_json(sum, &len);

	(void)format;
	(void)color;
	fwrite(json, 1, len, f);
	free(json);
}

int cmd_summarize(int argc, char **argv)
{
	struct cli_std s = {0};
	const struct cli_opt opts[] = {
		{"--output", 'o', &s.outp, NULL}, {"--config", 0, &s.cfgp, NULL}, {NULL, 0, NULL, NULL},
	};
	struct td_summary sum;
	char msg[1024];
	int rc;

	rc = cli_start("summarize", &s, argc, argv, opts, summarize_usage, 1, NULL);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	rc = jobin_summarize(s.ops.v[0], &s.cfg, &sum, msg, sizeof(msg));
	if (*msg)
		fprintf(stderr, "tracedoc: %s%s\n", rc == EXIT_OK ? "warning: " : "", msg);
	if (rc == EXIT_OK)
		rc = cli_write(s.outp, "json", NULL, write_summary, &sum);
	td_summary_free(&sum);
	return cli_end(&s, rc);
}
