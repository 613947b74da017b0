/* SPDX-License-Identifier: MIT */
/* tracedoc: the command table and main(). What the commands share is below them (cli.c,
 * load.c, doc.c, args.c, msg.c), so no command calls back into this file. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/mcp.h"
#include "parser/nsys.h"
#include "parser/scan.h"
#include "td_version.h"

static const struct cmd cmds[] = {
	{"diagnose", cmd_diagnose, "what slows the run, in order of payoff, with the fix"},
	{"gate", cmd_gate, "fail CI when a trace regresses against a baseline or budgets"},
	{"stats", cmd_stats, "what is in a trace: events, devices, steps, GPU busy, anomalies"},
	{"summarize", cmd_summarize, "a rank's summary, read by diagnose and gate in its place"},
	{"ops", cmd_ops, "the operator table (key_averages) of a trace"},
	{"kernels", cmd_kernels, "the GPU kernel table: time, calls, who launched them"},
	{"annotate", cmd_annotate, "the trace plus tracks of idle causes and findings, for Perfetto"},
	{"whatif", cmd_whatif, "the replayed fixes one at a time and together: the step to expect"},
	{"replay", cmd_replay, "the trace replayed through its dependencies: how far savings hold"},
	{"diff", cmd_diff, "two traces op by op, kernel by kernel: why CURRENT is slower"},
	{"memory", cmd_memory, "device memory: peaks, growth per step, a snapshot's allocation sites"},
	{"record", cmd_record, "run a CUDA program with the CUPTI collector: -- CMD ARGS..."},
	{"check", cmd_check, "can the trace be trusted: PyTorch's validator rules and tracedoc's"},
	{"critical-path", cmd_critical_path, "the path that holds each step, by category, its longest pieces"},
	{"config", cmd_config, "print the default configuration, or check a config file"},
	{"mcp", cmd_mcp, "a Model Context Protocol server on stdio: the commands as tools for agents"},
};

static void usage(FILE *f)
{
	size_t i, w = 0;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) /* the column: the longest name's */
		w = strlen(cmds[i].name) > w ? strlen(cmds[i].name) : w;
	fprintf(f, "usage: tracedoc COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-*s  %s\n", (int)w, cmds[i].name, cmds[i].help);
	fprintf(f, "\nevery command also takes: -j N (threads), --progress / --quiet (the progress "
		   "line),\n  --max-input-bytes SIZE and --max-ratio N (decompression limits)\n");
	fprintf(f, "\n'tracedoc COMMAND --help' describes one command.\n"
		   "exit codes: 0 ok, 1 gate regression, 2 usage, 3 bad input, 4 internal error\n");
}

/* the version, the commit and what this build can do */
static void version(void)
{
	printf("tracedoc %s\ncommit    %s\ngzip      %s\ncollector %s\nscan      %s (the byte scan's "
	       "SIMD tier on this CPU)\n",
	       TD_VERSION, TD_COMMIT, TD_GZIP_IMPL,
#ifdef TD_HAVE_COLLECTOR
	       "CUPTI (tracedoc record)",
#else
	       "none (built without CUPTI: tracedoc record says so)",
#endif
	       td_scan_impl());
	printf("nsys      %s\n", td_nsys_available() ? "SQLite exports (libsqlite3)"
					       : "none (built without SQLite)");
#ifdef TD_SANITIZERS
	printf("built     with sanitize=%s\n", TD_SANITIZERS);
#endif
}

static void oom(size_t n)
{
	fprintf(stderr, "tracedoc: out of memory (allocating %zu bytes)\n", n);
	exit(EXIT_INTERNAL);
}

int main(int argc, char **argv)
{
	size_t i;

	td_set_oom_handler(oom);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0) {
		version();
		return EXIT_OK;
	}
	/* a closed pipe on stdout is an error where it is written (EPIPE), not a silent death:
	 * gate still writes its JUnit file and returns its verdict */
	signal(SIGPIPE, SIG_IGN);
	mcp_set_commands(cmds, sizeof(cmds) / sizeof(cmds[0])); /* mcp runs them by name */
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "tracedoc: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}
