/* SPDX-License-Identifier: MIT */
/* tracedoc ops TRACE [--sort COL] [--top N] [--window steps|all] [--group-by name|shape|stack]
 *                    [--fold-runtime] [--memory-own-thread] [--format text|md|json|csv]
 *                    [--wide] [-o FILE]
 *                    [--config FILE] [--peaks FILE] [--capture FILE]
 * The operator table prof.key_averages().table() prints, from a saved trace. */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/tablecmd.h"
#include "tables/ops.h"

static void ops_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc ops TRACE [--sort COL] [--top N] [--window steps|all]\n"
		   "                    [--group-by name|shape|stack] [--fold-runtime]\n"
		   "                    [--memory-own-thread] [--format text|md|json|csv] [--wide]\n"
		   "                    [-o FILE] [--config FILE] [--peaks FILE] [--capture FILE]\n"
		   "  a row per operator, runtime call and GPU activity, as\n"
		   "  prof.key_averages().table() prints it: self and total CPU and CUDA time,\n"
		   "  memory (profile_memory=True), calls, FLOPs (record_shapes=True); sorted by\n"
		   "  cuda_time_total (cpu_time_total without GPU ops), top 15 in text and md, every\n"
		   "  row in json and csv unless --top\n"
		   "  --window        steps (default when the trace has ProfilerStep#) or all\n"
		   "  --group-by      name, shape (Input Dims, record_shapes=True) or stack (the\n"
		   "                  innermost user Python frame, with_stack=True)\n"
		   "  --fold-runtime  no runtime-call or GPU rows: a runtime call's time stays in\n"
		   "                  the op that made it (Self CPU then differs from PyTorch's)\n"
		   "  --memory-own-thread  an op's CUDA/CPU Mem: the [memory] samples of its own\n"
		   "                  thread only (PyTorch counts any thread's, as the default)\n"
		   "  --wide          text: every column and whole names (wider than 100 columns)\n"
		   "  --peaks         the device's peak TFLOP/s and TB/s from a JSON file, over the\n"
		   "                  compiled datasheet table (docs/roofline.md)\n"
		   "  --capture       the graph-capture trace of the same server: kernels replayed\n"
		   "                  from graphs to the ops and modules that captured them\n");
}

/* key_averages' sort_by names */
static const char *const aliases[] = {
	"cpu_time_total", "cpu_total_ns", "cuda_time_total", "cuda_total_ns",
	"self_cpu_time_total", "self_cpu_ns", "self_cuda_time_total", "self_cuda_ns",
	"cpu_time", "cpu_avg_ns", "cuda_time", "cuda_avg_ns", "count", "calls",
	"device_time_total", "cuda_total_ns", "self_device_time_total", "self_cuda_ns",
	"cpu_memory_usage", "cpu_mem_bytes", "self_cpu_memory_usage", "self_cpu_mem_bytes",
	"cuda_memory_usage", "cuda_mem_bytes", "self_cuda_memory_usage", "self_cuda_mem_bytes",
	"flops", "flops", NULL,
};

int cmd_ops(int argc, char **argv)
{
	struct table_cmd c;
	const char *group = "name";
	static const char *const groups[] = {"name", "shape", "stack", NULL};
	struct cli_operands ops = {0};
	struct td_ops_opts o;
	struct td_table t;
	char title[1400], footer[200], b1[32], b2[32], b3[32];
	int rc, fold = 0, own = 0;
	size_t i, ngpu = 0;
	const struct cli_opt opts[] = {
		TABLE_CMD_OPTS(&c), {"--group-by", 0, &group, NULL}, {"--fold-runtime", 0, NULL, &fold},
		{"--memory-own-thread", 0, NULL, &own},
		{NULL, 0, NULL, NULL},
	};

	table_cmd_init(&c);
	rc = cli_parse_exactly("ops", argc, argv, opts, &ops, ops_usage, 1);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (cli_one_of("ops", "--group-by", group, groups) ||
	    (rc = table_cmd_load(&c, "ops", ops.v[0])) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc ? rc : EXIT_USAGE;
	}
	memset(&o, 0, sizeof(o));
	o.window_all = c.window_all;
	o.fold_runtime = fold;
	o.memory_own_thread = own;
	o.group = !strcmp(group, "shape") ? TD_GROUP_SHAPE : !strcmp(group, "stack") ? TD_GROUP_STACK
									     : TD_GROUP_NAME;
	td_ops_table(&c.a, &o, &t);
	for (i = 0; i < c.t.devices.len; i++)
		ngpu += TD_VEC_AT(&c.t.devices, struct td_device, i).ops;
	rc = table_cmd_sort(&c, "ops", &t, aliases, ngpu ? "cuda_total_ns" : "cpu_total_ns");
	if (rc == EXIT_OK) {
		int64_t from = td_table_meta(&t, "window_start_ns")->i;
		int64_t to = td_table_meta(&t, "window_end_ns")->i;
		int64_t orphans = td_table_meta(&t, "gpu_ops_without_op")->i;
		snprintf(title, sizeof(title), "tracedoc ops: %s · window %s (%s%s) · by %s · sorted "
			 "by %s · %zu rows", ops.v[0], td_table_meta(&t, "window")->s,
			 td_fmt_dur(b1, sizeof(b1), to - from),
			 c.a.has_steps && !c.window_all ? ", the steady-state steps" : "", group,
			 c.sort ? c.sort : ngpu ? "cuda_time_total" : "cpu_time_total", t.nrows);
		snprintf(footer, sizeof(footer), "Self CPU time total: %s · Self CUDA time total: %s",
			 table_time(b2, sizeof(b2), td_table_meta(&t, "self_cpu_total_ns")->i),
			 table_time(b3, sizeof(b3), td_table_meta(&t, "self_cuda_total_ns")->i));
		if (orphans)
			snprintf(footer + strlen(footer), sizeof(footer) - strlen(footer),
				 " · %lld GPU ops launched outside any op", (long long)orphans);
		rc = table_cmd_write(&c, &t, title, footer);
	}
	return table_cmd_end(&c, &t, &ops, rc);
}
