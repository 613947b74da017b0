/* SPDX-License-Identifier: MIT */
/* The commands' option parser (args.c). */
#ifndef TD_DIAGNOSE_ARGS_H
#define TD_DIAGNOSE_ARGS_H

#include <stdio.h>

#ifndef TD_VERSION /* from CMake: the project's version */
#define TD_VERSION "0.2.0"
#endif
#define CLI_DONE (-1) /* --help or --version was printed: exit 0 */

/* Every command also takes --max-input-bytes SIZE, --max-ratio N (parser/input.h),
 * --progress / --quiet: the progress line, forced on or off (cli_progress 1 / -1; 0: shown on
 * a terminal for inputs over 100 MB). */
extern int cli_progress;
/* ... and -j / --jobs N: the threads to use. One trace: the threads that parse it (parser/split.c;
 * 1: the sequential reader); a job: the ranks read at once. 0: not given (the cores; at most 8
 * for one trace, where the one thread that builds the model is the limit). */
extern int cli_jobs;

/* An option: "--name" (and "-alias"); with `value` it takes one, else it sets *flag. */
struct cli_opt {
	const char *name;
	char alias;
	const char **value;
	int *flag;
};

struct cli_operands {
	const char **v;       /* the operands, in order (cli_operands_free() frees the array) */
	int n;
	int stop_at_operand;  /* in: stop at the first operand or after "--" (record) */
	int rest;             /* out: with stop_at_operand, where the operands start */
};

/* Parses argv[1..argc) of command cmd against opts (terminated by a {NULL} entry). Returns
 * EXIT_OK, CLI_DONE (help or version printed) or EXIT_USAGE (the message printed: unknown
 * option, "needs a value", "takes no value"). */
int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
	      struct cli_operands *ops, void (*usage)(FILE *));
/* cli_parse, then exactly `want` operands (else the usage on stderr and EXIT_USAGE). Returns
 * as cli_parse; ops is freed unless it returns EXIT_OK. */
int cli_parse_exactly(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
		      struct cli_operands *ops, void (*usage)(FILE *), int want);
/* cli_parse for a command of one operand, which it needs: more than one prints "tracedoc CMD:
 * too_many", none the usage on stderr (both EXIT_USAGE). Returns as cli_parse, the operand in
 * *operand; nothing left to free. */
int cli_parse_one(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
		  void (*usage)(FILE *), const char *too_many, const char **operand);
void cli_operands_free(struct cli_operands *ops);
/* A whole number option value in [min, max] into *out; else prints why and EXIT_USAGE. */
int cli_count(const char *cmd, const char *opt, const char *value, long min, long max, int *out);
/* EXIT_OK when value is one of choices (NULL-terminated), else prints why and EXIT_USAGE. */
int cli_one_of(const char *cmd, const char *opt, const char *value, const char *const *choices);

#endif
