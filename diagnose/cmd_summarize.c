/* SPDX-License-Identifier: MIT */
/* tracedoc summarize TRACE [-o FILE] [--config FILE]: one rank's summary (tracedoc.summary/1),
 * kilobytes that `diagnose` and `gate` take in place of the trace - what each task of a Slurm
 * array writes where the traces are, for one reduce job to read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/jobload.h"
#include "diagnose/out.h"
#include "job/summary.h"
#include "config/config.h"

static void summarize_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc summarize TRACE [-o FILE] [--config FILE]\n"
		   "  writes the summary of one rank's trace (tracedoc.summary/1) that diagnose and\n"
		   "  gate read in place of the trace\n");
}

int cmd_summarize(int argc, char **argv)
{
	const char *outp = NULL, *cfgp = NULL;
	const struct cli_opt opts[] = {
		{"--output", 'o', &outp, NULL}, {"--config", 0, &cfgp, NULL}, {NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};
	struct td_config cfg;
	struct td_summary s;
	struct out_file of;
	char msg[1024], *json;
	size_t len;
	int rc;

	rc = cli_parse_exactly("summarize", argc, argv, opts, &ops, summarize_usage, 1);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if ((rc = cli_config(cfgp, &cfg)) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc;
	}
	rc = jobin_summarize(ops.v[0], &cfg, &s, msg, sizeof(msg));
	if (*msg)
		fprintf(stderr, "tracedoc: %s%s\n", rc == EXIT_OK ? "warning: " : "", msg);
	if (rc == EXIT_OK) {
		json = td_summary_json(&s, &len);
		if (out_open(&of, outp) != 0) {
			cli_cannot_write(outp, errno);
			rc = EXIT_INTERNAL;
		} else {
			fwrite(json, 1, len, of.f);
			if (out_close(&of, 1) != 0) {
				cli_cannot_write(outp ? outp : "stdout", errno);
				rc = EXIT_INTERNAL;
			}
		}
		free(json);
	}
	td_summary_free(&s);
	td_config_free(&cfg);
	cli_operands_free(&ops);
	return rc;
}
