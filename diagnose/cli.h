/* SPDX-License-Identifier: MIT */
/* What the subcommands share: the command table, exit codes and loading a trace with the
 * standard error messages. Only diagnose/ prints and exits. */
#ifndef TD_DIAGNOSE_CLI_H
#define TD_DIAGNOSE_CLI_H

struct td_trace;

/* Exit codes (documented in the README). */
enum {
	EXIT_OK = 0,
	EXIT_REGRESSION = 1, /* gate: a regression or budget failure */
	EXIT_USAGE = 2,      /* bad arguments or configuration */
	EXIT_INPUT = 3,      /* unreadable, not JSON, or not a trace */
	EXIT_INTERNAL = 4,   /* out of memory, cannot write the output */
};

/* Loads path into t, printing "tracedoc: FILE:LINE:COL (byte N): ..." on failure and a
 * warning when the trace is partial. Returns EXIT_OK or EXIT_INPUT. */
int cli_load(const char *path, struct td_trace *t);

struct td_config;
/* Fills cfg with the defaults, then path's settings when path is set; prints the error and
 * returns EXIT_USAGE when the file is wrong. */
int cli_config(const char *path, struct td_config *cfg);

int cmd_stats(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);

#endif
