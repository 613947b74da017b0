/* SPDX-License-Identifier: MIT */
/* What the subcommands share: exit codes, loading a trace with the standard error messages
 * (load.c), writing the output, the config, a job's ranks (cli.c). main.c holds the command
 * table. Only diagnose/ prints and exits. */
#ifndef TD_DIAGNOSE_CLI_H
#define TD_DIAGNOSE_CLI_H

#include <stdio.h>

#include "diagnose/args.h"
#include "config/config.h"

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
/* The same from in, an input already open on path (closed here), or from path when in is
 * NULL. */
struct td_input;
int cli_load_from(const char *path, struct td_input *in, struct td_trace *t);
/* --capture FILE: loads the capture trace into *cap and matches t's graph-replayed kernels
 * to its captures (analysis/graphmap.h) into *m, saying on stderr how many it attributed and
 * why the rest were not; cap is freed (scratch). Returns EXIT_OK or the load's exit code.
 * Without FILE (path NULL), t's own captures and graph annotations, silently. */
struct td_graph_map;
int cli_capture(const char *cmd, const char *path, struct td_trace *t, struct td_trace *cap,
		struct td_graph_map *m);
/* cli_load_from without printing: the message (an error, or a partial trace's warning) into
 * msg; on one thread (a job's ranks are read in parallel). */
#include <stddef.h>
int cli_load_quiet(const char *path, struct td_input *in, struct td_trace *t, char *msg,
		   size_t cap);
/* "FILE is a PyTorch memory snapshot ...: run tracedoc memory FILE" into msg: what every
 * trace command says (exit 3) of a snapshot, which only `memory` reads. */
int cli_snapshot_msg(const char *path, char *msg, size_t cap);


/* Writes a command's output to outp (NULL or "-": stdout; else atomically): fn renders it in
 * format, with colour when color is "always", or "auto" on a terminal for text. Prints why and
 * returns EXIT_INTERNAL when it cannot be written; else EXIT_OK. */
#include <stdio.h>
int cli_write(const char *outp, const char *format, const char *color,
	      void (*fn)(FILE *f, const char *format, int color, const void *ctx), const void *ctx);

/* A renderer of a command's output in one format, from the command's context. */
struct cli_render {
	const char *format; /* NULL: the default, for any other format */
	void (*fn)(FILE *f, const void *ctx);
};
/* cli_write without colour, by the renderer for format in r: the first entry that names it,
 * else the {NULL, fn} entry that ends r. */
int cli_write_by(const char *outp, const char *format, const struct cli_render *r,
		 const void *ctx);

/* Fills cfg with the defaults, then path's settings when path is set; prints the error and
 * returns EXIT_USAGE when the file is wrong. */
int cli_config(const char *path, struct td_config *cfg);
/* A --peaks FILE (config/peaks.h) read and checked into cfg->peaks_json (nothing when path is
 * NULL); prints the error and returns EXIT_USAGE when the file is wrong. */
int cli_peaks(const char *path, struct td_config *cfg);

/* What a command that reads its inputs into a report takes from every command line: its
 * operands, --format, --output, --config and the config read from it. Zeroed, with format
 * set to the default, before cli_start. */
struct cli_std {
	const char *format, *outp, *cfgp, *peaksp;
	struct cli_operands ops;
	struct td_config cfg;
};
/* The options of cli_std, for a cli_opt table (a command without --format lists its own). */
#define CLI_STD_OPTS(s) \
	{"--format", 0, &(s)->format, NULL}, {"--output", 'o', &(s)->outp, NULL}, \
	{"--config", 0, &(s)->cfgp, NULL}, {"--peaks", 0, &(s)->peaksp, NULL}

/* The start every such command shares, in one order so that their errors come in one order:
 * argv parsed against opts with exactly `want` operands, --format checked against formats
 * (NULL: the command has no --format), the config read. Returns EXIT_OK (cli_end() when
 * done), or CLI_DONE (help or version printed) or the exit code with the message printed and
 * nothing left to free. */
int cli_start(const char *cmd, struct cli_std *s, int argc, char **argv,
	      const struct cli_opt *opts, void (*usage)(FILE *), int want,
	      const char *const *formats);
/* The command is done: its config and operands freed; returns rc. */
int cli_end(struct cli_std *s, int rc);

/* The ranks named by args (files, directories, globs; traces or summaries) read on `jobs`
 * threads into a job (td_job_free() it); each unreadable rank's error printed. Returns EXIT_OK,
 * EXIT_INPUT when some rank could not be read (the job holds the rest), EXIT_USAGE when the
 * ranks do not make one job. */
struct td_job;
/* 1 when path names several ranks: a directory, or a glob the shell left alone. */
int cli_is_ranks(const char *path);
/* jobs: the ranks read at once; 0: the cores. */
int cli_load_job(const char *cmd, const char *const *args, size_t nargs, int jobs,
		 struct td_config *cfg, struct td_job *j);
/* The job of one rank's summary, d opened on it (closed here); as cli_load_job. */
struct cli_doc;
int cli_load_job_doc(const char *cmd, struct cli_doc *d, int jobs, struct td_config *cfg,
		     struct td_job *j);

/* The machine's cores: the default for -j. */
int cli_cores(void);
/* The threads one trace's work may use: -j, else the cores (at most 8 unless asked). */
int cli_threads(void);
/* One trace for a command that replays it (replay, whatif): a job's ranks refused (a rank's
 * replay does not know the others, EXIT_USAGE), then path loaded into t and analysed into a
 * with cfg, its replays on cli_threads(). Returns EXIT_OK (free a, then t), or the exit code
 * with the message printed and nothing left to free. */
struct td_analysis;
int cli_load_replayable(const char *cmd, const char *path, struct td_config *cfg,
			struct td_trace *t, struct td_analysis *a);

int cmd_stats(int argc, char **argv);
int cmd_summarize(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_whatif(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_critical_path(int argc, char **argv);

#endif
