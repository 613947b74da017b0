/* SPDX-License-Identifier: MIT */
/* Reading the ranks of a job (jobload.c), for diagnose, gate and summarize. */
#ifndef TD_DIAGNOSE_JOBLOAD_H
#define TD_DIAGNOSE_JOBLOAD_H

#include <stddef.h>

#include "job/job.h"

struct td_config;
struct td_error;

struct job_inputs {
	char **paths;
	size_t n;
};

/* The files named by args: files as they are, a directory's .json / .json.gz / .json.zst files
 * sorted by name, a glob the shell did not expand. Returns EXIT_OK, or EXIT_INPUT with err. */
int jobin_expand(const char *const *args, size_t nargs, struct job_inputs *in, char *err,
		 size_t cap);
void jobin_free(struct job_inputs *in);
/* One rank's summary from a document opened on a summary (d is closed). Returns EXIT_OK, or
 * EXIT_INPUT with the message in msg and s all zero (td_summary_free takes either). */
struct cli_doc;
int jobin_summary_text(struct cli_doc *d, struct td_summary *s, char *msg, size_t cap);
/* One rank's summary from a trace or a summary file. Returns EXIT_OK (msg may hold a partial
 * trace's warning) or the exit code of its error, with the message in msg. */
int jobin_summarize(const char *path, struct td_config *cfg, struct td_summary *s, char *msg,
		    size_t cap);
/* Summarizes every input on `jobs` threads and builds the job from those that could be read;
 * the others go to the job's errors. Warnings (partial traces), up to *nwarnings of them, are
 * handed back malloc'd. Returns EXIT_OK, EXIT_INPUT (or worse) when some rank could not be
 * read, EXIT_USAGE when the ranks do not make one job (err says why). */
int jobin_load(const struct job_inputs *in, int jobs, struct td_config *cfg, struct td_job *j,
	       char **warnings, size_t *nwarnings, struct td_error *err);

#endif
