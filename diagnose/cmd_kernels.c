/* SPDX-License-Identifier: MIT */
/* tracedoc kernels TRACE [--sort COL] [--top N] [--window steps|all] [--format text|md|json|csv]
 *                        [--wide] [-o FILE] [--config FILE] [--peaks FILE]
 *                        [--capture FILE]
 * A row per GPU kernel, copy and memset name: time, calls, share of GPU busy, who launched it. */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/tablecmd.h"
#include "tables/kernels.h"

static void kernels_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc kernels TRACE [--sort COL] [--top N] [--window steps|all]\n"
		   "                        [--format text|md|json|csv] [--wide] [-o FILE]\n"
		   "                        [--config FILE] [--peaks FILE] [--capture FILE]\n"
		   "  a row per GPU kernel, copy and memset name: category, calls, total, average,\n"
		   "  min, max, share of GPU busy time, the op that launched most of them; sorted\n"
		   "  by total time, top 15 in text and md, every row in json and csv unless --top\n"
		   "  --window  steps (default when the trace has ProfilerStep#) or all\n"
		   "  --wide    text: every column and whole names (C++ templates are long)\n"
		   "  --peaks   the device's peak TFLOP/s and TB/s from a JSON file, over the\n"
		   "            compiled datasheet table (docs/roofline.md)\n"
		   "  --capture the graph-capture trace of the same server: a kernel replayed from\n"
		   "            a graph to the op that captured it (its top op)\n");
}

static const char *const aliases[] = {
	"total", "total_ns", "cuda_time_total", "total_ns", "count", "calls", "avg", "avg_ns",
	"min", "min_ns", "max", "max_ns", NULL,
};

int cmd_kernels(int argc, char **argv)
{
	struct table_cmd c;
	struct cli_operands ops = {0};
	struct td_table t;
	char title[1400], footer[200], b1[32], b2[32];
	int rc;
	const struct cli_opt opts[] = {TABLE_CMD_OPTS(&c), {NULL, 0, NULL, NULL}};

	table_cmd_init(&c);
	rc = cli_parse_exactly("kernels", argc, argv, opts, &ops, kernels_usage, 1);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if ((rc = table_cmd_load(&c, "kernels", ops.v[0])) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc;
	}
	td_kernels_table(&c.a, c.window_all, &t);
	rc = table_cmd_sort(&c, "kernels", &t, aliases, "total_ns");
	if (rc == EXIT_OK) {
		int64_t from = td_table_meta(&t, "window_start_ns")->i;
		int64_t to = td_table_meta(&t, "window_end_ns")->i;
		snprintf(title, sizeof(title), "tracedoc kernels: %s · window %s (%s%s) · sorted by %s "
			 "· %zu names", ops.v[0], td_table_meta(&t, "window")->s,
			 td_fmt_dur(b1, sizeof(b1), to - from),
			 c.a.has_steps && !c.window_all ? ", the steady-state steps" : "",
			 c.sort ? c.sort : "total", t.nrows);
		snprintf(footer, sizeof(footer), "GPU busy in the window: %s (all devices)",
			 table_time(b2, sizeof(b2), td_table_meta(&t, "gpu_busy_ns")->i));
		rc = table_cmd_write(&c, &t, title, footer);
	}
	return table_cmd_end(&c, &t, &ops, rc);
}
