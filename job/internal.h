/* SPDX-License-Identifier: MIT */
/* What the job's files share (job/match.c, job.c, joint.c, stragglers.c). */
#ifndef TD_JOB_INTERNAL_H
#define TD_JOB_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "job/job.h"

/* A rank's finding as the job compares it: what the rank's own report promises (its replayed
 * saving, else the idle-based one); a note (risk), the GPU idle and busy time it claims. The
 * rank's replay does not know the other ranks: the job weighs that (job.c, job_held). */
#define SIZED(x) ((x)->risk ? (x)->idle_ns + (x)->busy_ns : (x)->savings_ns)
#define SIZED_FRACTION(x)                                                                    \
	((x)->savings_ns > 0 ? (x)->fraction * (double)SIZED(x) / (double)(x)->savings_ns      \
			     : (x)->fraction)

/* " per step" when the job has steps (the figures are then per step), else "" */
static inline const char *per_step(const struct td_job *j)
{
	return j->steps ? " per step" : "";
}

static inline int64_t by_step(const struct td_job *j, int64_t ns)
{
	return j->steps ? ns / (int64_t)j->steps : ns;
}

/* A collective the median rank waits long in, the straggler's: the worst first. */
struct worst {
	int64_t delay;       /* median rank's wait */
	int64_t start, dur, median;
	uint32_t key, seq;
};

/* Matches the ranks' collectives (by process group, collective, size and order) and sets each
 * row's wait and lateness; with straggler_row and pass 1, the ntop collectives the others wait
 * longest for it in go to top (*nworst of them). */
void td_job_match(struct td_job *j, struct td_strtab *keys, struct worst *top, size_t ntop,
		  size_t *nworst, uint32_t straggler_row, int pass);
/* A fix replayed across the ranks' collectives (job/joint.c): rank r (of n) waits wait[r * m +
 * i] in collective i (of m, in order) and, with the fix, starts it shift[r * m + i] later into
 * its window (TD_SHIFT_NONE: as the one before), and wins own[r] over its window alone. Returns
 * what the job wins; *holder: the rank that then holds the step - the one that arrives last at
 * the most collectives (*arrives of them), unless one's work after the last gains less (*arrives
 * 0). */
int64_t td_job_joint(size_t n, size_t m, const int64_t *wait, const int64_t *shift,
		     const int64_t *own, size_t *holder, size_t *arrives);
/* The same from the job's summaries: fs[row] the finding on that row, NULL where it has none;
 * the ranks that meet the others (not partial, with collectives) over the *ncoll collectives
 * every one of them ran. Returns 0 with *gain and *holder (a row), or -1 where a rank's finding
 * has no shifts or no collective is on every rank. */
int td_job_joint_finding(const struct td_job *j, const struct td_sum_finding *const *fs,
			 int64_t *gain, size_t *holder, size_t *arrives, size_t *ncoll);
/* What the job wins where row `row` arrived at every collective it reached last no later than
 * the next rank (every other rank's own work as it is): the most any fix of what makes it late
 * wins. Returns 0 with *gain, *next (the row that then holds the step) and *arrives, *ncoll as
 * td_job_joint_finding() gives them, or -1 as it does. */
int td_job_joint_on_time(const struct td_job *j, size_t row, int64_t *gain, size_t *next,
			 size_t *arrives, size_t *ncoll);
/* The vendor and run most ranks have, in j->ctx. */
void td_job_context(struct td_job *j);
/* The straggler finding and its explanation; the imbalance finding. */
void td_job_straggler(struct td_job *j, struct td_strtab *keys);
void td_job_imbalance(struct td_job *j);

#endif
