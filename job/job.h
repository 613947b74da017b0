/* SPDX-License-Identifier: MIT */
/* A job: the ranks of one distributed run, each reduced to its summary (job/summary.h), and
 * what only the job shows - which rank the others wait for in their collectives (straggler),
 * compute that differs across ranks (imbalance), and each rank's findings merged ("dataloader
 * on 7 of 8 ranks"). Collectives are matched across ranks by key (process group, collective,
 * size; else the kernel's name) and order, and compared by duration: all ranks of one
 * collective finish together, so the rank whose kernel is shortest arrived last. Clock offsets
 * between ranks are estimated from collective end times and reported, never assumed zero.
 * Library code: never prints. Ownership: td_job_free() frees what the job holds. */
#ifndef TD_JOB_JOB_H
#define TD_JOB_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "job/summary.h"
#include "analysis/metrics.h"
#include "rules/rule.h"

struct td_config;

struct td_job_row {
	struct td_summary *s;
	int64_t rank;
	int rank_source;          /* enum td_rank_source */
	int64_t wait_ns;          /* time in matched collectives waiting for the last rank */
	int64_t late_ns;          /* how long the median rank waited for this one */
	uint32_t late_count;      /* matched collectives this rank arrived at last */
	int64_t late_max_ns;      /* the most the median rank waited for it at one */
	int64_t late_in_step_ns;  /* at those: how much later into its step it launched them */
	int64_t late_gpu_in_step_ns; /* and how much later into its step its GPU started them */
	uint32_t late_known;      /* of those, how many had launch times on every rank */
	int64_t clock_offset_ns;  /* its clock minus rank 0's, from collective end times */
	int has_offset;
};

/* A rank that could not be read: its path and why; its rank when known. */
struct td_job_error {
	char *path, *message;
};

struct td_job {
	struct td_summary *sums;  /* the summaries, as given */
	struct td_job_row *rows;  /* by rank */
	size_t n;
	int64_t world_size;       /* -1 when no trace says */
	struct td_vec errors;     /* struct td_job_error */
	struct td_vec missing;    /* int64_t: ranks of world_size with no trace, the first
				   * TD_JOB_MISSING_LISTED of them */
	uint64_t missing_count;   /* all of them */
	size_t matched, unmatched; /* collectives present on every rank / on some only */
	int64_t straggler;        /* row of the rank the others wait for most, -1 none */
	char straggler_rule[32];  /* its finding that makes it late, "" when none is named */
	int64_t window_ns;        /* the median rank's window */
	uint64_t steps;           /* the median rank's steps */
	struct td_params params;
	struct td_context ctx;    /* the vendor and the run most ranks have (the fixes' context) */
	struct td_report report;  /* the job's findings, ordered */
	struct td_metrics metrics; /* the worst rank's, plus the straggler's wait */
};

#define TD_JOB_MISSING_LISTED 1024
/* The largest world a trace or summary may claim: past it the claim is refused (a job's
 * report would otherwise be sized by a number the file makes up). */
#define TD_JOB_WORLD_MAX (1ll << 24)

void td_job_init(struct td_job *j);
/* Notes a rank file that could not be read (before td_job_build). */
void td_job_add_error(struct td_job *j, const char *path, const char *message);
/* Takes n summaries (freed with the job), gives each its rank - from its trace's
 * distributedInfo, else from its file name (rank3, rank-3, rank_3, worker3), else its place
 * in the list - and analyses the job. Returns 0, or TD_EINVAL with err filled when two have
 * the same rank or their world sizes differ. */
int td_job_build(struct td_job *j, struct td_summary *s, size_t n, const struct td_config *cfg,
		 struct td_error *err);
void td_job_free(struct td_job *j);

#endif
