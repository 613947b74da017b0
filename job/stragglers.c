/* SPDX-License-Identifier: MIT */
/* The ranks that hold the job up (job/job.h): the straggler the others wait for in their
 * collectives and why it is late (before its step, its compute, its host work, a finding only
 * it has), compute imbalance across ranks, and the job's context their fixes follow. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "fixes/catalogue.h"
#include "job/internal.h"

/* --- findings ---------------------------------------------------------------------------- */

/* The rank's finding that most exceeds the median rank's of the same rule (0 where a rank
 * lacks it): what it does that the others do not. Communication is the waiting itself. */
static const struct td_sum_finding *distinct_finding(const struct td_job *j, size_t row,
						     int64_t *median)
{
	const struct td_summary *s = j->rows[row].s;
	const struct td_sum_finding *best = NULL;
	int64_t *v = td_malloc(j->n * sizeof(*v)), best_diff = 0;
	size_t i, r, k;

	for (i = 0; i < s->findings.len; i++) {
		const struct td_sum_finding *f = &TD_VEC_AT(&s->findings, struct td_sum_finding, i);
		int64_t med;
		if (!strcmp(f->rule, "communication"))
			continue;
		for (r = 0; r < j->n; r++) {
			v[r] = 0;
			for (k = 0; k < j->rows[r].s->findings.len; k++) {
				const struct td_sum_finding *x =
					&TD_VEC_AT(&j->rows[r].s->findings, struct td_sum_finding, k);
				if (!strcmp(x->rule, f->rule)) {
					v[r] = SIZED(x);
					break;
				}
			}
		}
		med = td_median_i64(v, j->n);
		if (SIZED(f) - med > best_diff) {
			best_diff = SIZED(f) - med;
			best = f;
			*median = med;
		}
	}
	free(v);
	return best;
}

struct kdiff {
	const char *name;
	int64_t max, median;
	int64_t rank;
};

/* The compute kernels whose time per step differs most across ranks (most on one rank against
 * the median rank), up to cap of them, into top; returns how many. Names point into the
 * summaries. */
static size_t kernel_diffs(const struct td_job *j, struct kdiff *top, size_t cap)
{
	struct td_strtab names;
	int64_t *per = td_malloc((j->n ? j->n : 1) * sizeof(*per));
	const char **ptr = NULL;
	size_t ntop = 0, r, i, k, q, pcap = 0;

	td_strtab_init(&names);
	for (r = 0; r < j->n; r++)
		for (i = 0; i < j->rows[r].s->kernels.len; i++) {
			const char *n = TD_VEC_AT(&j->rows[r].s->kernels, struct td_sum_kernel, i).name;
			uint32_t id = td_strtab_intern(&names, n, strlen(n));
			if (id == names.count) {
				if (id >= pcap)
					ptr = td_realloc(ptr, (pcap = 2 * pcap + 64) * sizeof(*ptr));
				ptr[id] = n;
			}
		}
	for (k = 1; k <= names.count; k++) {
		struct kdiff d = {ptr[k], 0, 0, -1};
		for (r = 0; r < j->n; r++) {
			const struct td_summary *s = j->rows[r].s;
			per[r] = 0;
			for (i = 0; i < s->kernels.len; i++)
				if (!strcmp(TD_VEC_AT(&s->kernels, struct td_sum_kernel, i).name, d.name))
					per[r] = TD_VEC_AT(&s->kernels, struct td_sum_kernel, i).ns /
						 (int64_t)(s->steps ? s->steps : 1);
			if (per[r] > d.max) {
				d.max = per[r];
				d.rank = j->rows[r].rank;
			}
		}
		d.median = td_median_i64(per, j->n);
		for (q = ntop; q > 0 && top[q - 1].max - top[q - 1].median < d.max - d.median; q--)
			if (q < cap)
				top[q] = top[q - 1];
		if (q < cap && d.max > d.median) {
			top[q] = d;
			if (ntop < cap)
				ntop++;
		}
	}
	free(ptr);
	free(per);
	td_strtab_free(&names);
	return ntop;
}

static int64_t compute_per_step(const struct td_summary *s)
{
	return s->compute_ns / (int64_t)(s->steps ? s->steps : 1);
}

/* The job's context: the vendor and the run (training, inference) most of its ranks have. */
void td_job_context(struct td_job *j)
{
	size_t nv[TD_VENDOR_AMD + 1] = {0}, nr[TD_RUN_INFERENCE + 1] = {0}, r;
	int k;

	memset(&j->ctx, 0, sizeof(j->ctx));
	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		if (s->vendor > TD_VENDOR_UNKNOWN && s->vendor <= TD_VENDOR_AMD)
			nv[s->vendor]++;
		if (s->run > TD_RUN_UNKNOWN && s->run <= TD_RUN_INFERENCE)
			nr[s->run]++;
	}
	for (k = TD_VENDOR_NVIDIA; k <= TD_VENDOR_AMD; k++)
		if (nv[k] > nv[j->ctx.vendor])
			j->ctx.vendor = (enum td_vendor)k;
	for (k = TD_RUN_TRAINING; k <= TD_RUN_INFERENCE; k++)
		if (nr[k] > nr[j->ctx.run])
			j->ctx.run = (enum td_run)k;
}

/* The catalogue's fix m for rank's straggler (arg: "rank 3", or more), in f. */
static void rank_fix(const struct td_job *j, struct td_finding *f, enum td_mech m,
		     const char *arg, const char *then)
{
	char b[1600];

	td_fix_text(&j->ctx, m, -1, arg, b, sizeof(b));
	if (then && *then)
		td_finding_fix(f, "%s %s", b, then);
	else
		td_finding_fix(f, "%s", b);
}

/* Why the straggler arrives late, from where its late collectives sit in its step against
 * the others': its GPU starts them later into the step, because its host launches them later
 * (host work before them: name what differs) or its GPU is still busy (more compute: the
 * kernels that differ); or at the same point of a step that began late (the cause lies
 * before the step). */
static void explain(struct td_job *j, size_t row, struct td_finding *f)
{
	const struct td_job_row *w = &j->rows[row];
	const struct td_summary *s = w->s;
	long long rank = (long long)w->rank;
	char b1[32], b2[32], b3[32], who[32];
	int known = w->late_known * 2 > w->late_count;

	snprintf(who, sizeof(who), "rank %lld", rank);

	if (known) {
		td_finding_value(f, "late_launch_in_step_ns", w->late_in_step_ns);
		td_finding_value(f, "late_start_in_step_ns", w->late_gpu_in_step_ns);
	}
	if (known && w->late_gpu_in_step_ns * 2 < w->late_ns) {
		td_finding_where(f, "rank %lld starts these collectives at the same point of its "
				 "step as the others (%s%s later in all), but its step begins up to %s "
				 "after theirs: what holds it up comes before the step", rank,
				 td_fmt_dur(b1, sizeof(b1), by_step(j, w->late_gpu_in_step_ns)),
				 per_step(j), td_fmt_dur(b2, sizeof(b2), w->late_max_ns));
		if (s->steps <= 1)
			td_finding_where(f, "the trace holds %llu step, so what ends rank %lld's "
					 "previous step late is outside it", (unsigned long long)s->steps,
					 rank);
		rank_fix(j, f, TD_FIX_STRAGGLER_BEFORE, who, NULL);
		return;
	}
	if (known && w->late_in_step_ns * 2 < w->late_gpu_in_step_ns) {
		/* launched on time, started late: its GPU is still busy with the step's compute */
		int64_t *c = td_malloc(j->n * sizeof(*c)), med;
		struct kdiff top[3];
		size_t r, k, ntop = kernel_diffs(j, top, 3);
		for (r = 0; r < j->n; r++)
			c[r] = compute_per_step(j->rows[r].s);
		med = td_median_i64(c, j->n);
		free(c);
		td_finding_where(f, "rank %lld's host launches these collectives on time, but its GPU "
				 "starts them %s%s later into the step than the median rank's: it "
				 "computes %s per step, the median rank %s", rank,
				 td_fmt_dur(b1, sizeof(b1), by_step(j, w->late_gpu_in_step_ns)),
				 per_step(j), td_fmt_dur(b2, sizeof(b2), compute_per_step(s)),
				 td_fmt_dur(b3, sizeof(b3), med));
		for (k = 0; k < ntop; k++)
			if (top[k].rank == w->rank)
				td_finding_where(f, "%s: %s per step on rank %lld, the median rank %s",
						 top[k].name, td_fmt_dur(b1, sizeof(b1), top[k].max), rank,
						 td_fmt_dur(b2, sizeof(b2), top[k].median));
		rank_fix(j, f, TD_FIX_STRAGGLER_COMPUTE, who, NULL);
		return;
	}
	if (known)
		td_finding_where(f, "rank %lld launches these collectives %s%s later into its step "
				 "than the median rank: its host work before them takes longer", rank,
				 td_fmt_dur(b1, sizeof(b1), by_step(j, w->late_in_step_ns)),
				 per_step(j));
	{
		int64_t med = 0;
		const struct td_sum_finding *why = distinct_finding(j, row, &med);
		if (why && (SIZED(why) - med) * 10 >= w->late_ns) {
			td_finding_where(f, "rank %lld: [%s] %s (saves ~%s; the median rank ~%s)", rank,
					 why->rule, why->title,
					 td_fmt_dur(b1, sizeof(b1), SIZED(why)),
					 td_fmt_dur(b2, sizeof(b2), med));
			/* the job wins this once: the merged finding leaves it to the straggler */
			snprintf(j->straggler_rule, sizeof(j->straggler_rule), "%s", why->rule);
			if (*why->fix) {
				rank_fix(j, f, TD_FIX_STRAGGLER_ARRIVE, who, why->fix);
				return;
			}
		}
	}
	if (s->top_cause >= 0)
		td_finding_where(f, "rank %lld's GPU idles %s%s, most of it %s%s%s%s", rank,
				 td_fmt_dur(b2, sizeof(b2), by_step(j, s->idle_ns)), per_step(j),
				 td_cause_title((enum td_cause)s->top_cause),
				 s->top_what && *s->top_what ? " (" : "", s->top_what ? s->top_what : "",
				 s->top_what && *s->top_what ? ")" : "");
	{
		char *whose = td_malloc(strlen(s->path) + 32);
		sprintf(whose, "rank %lld (%s)", rank, s->path);
		rank_fix(j, f, TD_FIX_STRAGGLER_UNKNOWN, whose, NULL);
		free(whose);
	}
}

/* What the job wins were row `row` on time: its collectives replayed across the ranks with it
 * arriving no later than the next rank at those it reaches last - the others' own work as it
 * is, so the next rank then holds them. The most any fix of what makes it late wins: f is sized
 * by it where that is less than f claims. */
static void on_time(struct td_job *j, size_t row, struct td_finding *f)
{
	int64_t gain;
	size_t next, arrives, ncoll;
	char b1[32], b2[32], holds[80];

	if (td_job_joint_on_time(j, row, &gain, &next, &arrives, &ncoll) != 0 || gain < 0 ||
	    gain >= f->busy_ns)
		return;
	if (arrives)
		snprintf(holds, sizeof(holds), "arrives last at %zu of the %zu", arrives, ncoll);
	else
		snprintf(holds, sizeof(holds), "holds the step after the last of them");
	td_finding_where(f, "were rank %lld on time, arriving with the next rank at the collectives "
			 "it reaches last, the others would still wait for each other: replayed "
			 "across the ranks' collectives, rank %lld then %s, and the job wins at most "
			 "~%s%s of the %s%s the others wait", (long long)j->rows[row].rank,
			 (long long)j->rows[next].rank, holds,
			 td_fmt_dur(b1, sizeof(b1), by_step(j, gain)), per_step(j),
			 td_fmt_dur(b2, sizeof(b2), by_step(j, f->busy_ns)), per_step(j));
	f->busy_ns = gain;
	f->bounded = 1;
}

void td_job_straggler(struct td_job *j, struct td_strtab *keys)
{
	size_t r, best = 0, k, nworst = 0;
	struct td_finding *f;
	struct worst top[8];
	char b1[32], b2[32], b3[32];

	if (j->n < 2 || !j->matched)
		return;
	for (r = 1; r < j->n; r++)
		if (j->rows[r].late_ns > j->rows[best].late_ns)
			best = r;
	if (j->rows[best].late_ns <= 0)
		return;
	j->straggler = (int64_t)best;
	f = td_report_add(&j->report, "straggler", -1);
	f->busy_ns = j->rows[best].late_ns; /* the others' time waiting in their collectives */
	f->count = j->rows[best].late_count;
	*(int64_t *)td_vec_push(&f->ranks) = j->rows[best].rank;
	for (r = 0; r < j->n; r++) /* other ranks the job also waits for, at a quarter or more */
		if (r != best && j->rows[r].late_ns * 4 >= j->rows[best].late_ns)
			*(int64_t *)td_vec_push(&f->ranks) = j->rows[r].rank;
	td_finding_value(f, "wait_ns", j->rows[best].late_ns);
	td_finding_value(f, "rank", j->rows[best].rank);
	td_finding_value(f, "late_collectives", j->rows[best].late_count);
	td_finding_value(f, "matched_collectives", (int64_t)j->matched);
	td_finding_title(f, "Rank %lld holds up the job: the other ranks wait for it %s%s in their "
			 "collectives (it arrives last at %u of %zu)", (long long)j->rows[best].rank,
			 td_fmt_dur(b1, sizeof(b1), by_step(j, j->rows[best].late_ns)), per_step(j),
			 j->rows[best].late_count, j->matched);
	explain(j, best, f);
	on_time(j, best, f);
	for (r = 1; r < f->ranks.len; r++) {
		size_t q;
		for (q = 0; q < j->n; q++)
			if (j->rows[q].rank == TD_VEC_AT(&f->ranks, int64_t, r))
				td_finding_where(f, "rank %lld also arrives last at %u collectives (%s%s)",
						 (long long)j->rows[q].rank, j->rows[q].late_count,
						 td_fmt_dur(b3, sizeof(b3), by_step(j, j->rows[q].late_ns)),
						 per_step(j));
	}
	td_job_match(j, keys, top, sizeof(top) / sizeof(top[0]), &nworst, (uint32_t)best, 1);
	for (k = 0; k < nworst && (int)k < j->params.evidence_max; k++) {
		char m[600];
		td_finding_evidence(f, top[k].start, top[k].dur, "%s #%u: rank %lld ran %s, the median "
				    "rank %s (rank %lld's clock)",
				    td_mark(m, sizeof(m), td_strtab_str(keys, top[k].key)), top[k].seq,
				    (long long)j->rows[best].rank, td_fmt_dur(b1, sizeof(b1), top[k].dur),
				    td_fmt_dur(b2, sizeof(b2), top[k].median), (long long)j->rows[best].rank);
	}
}

void td_job_imbalance(struct td_job *j)
{
	int64_t *c = td_malloc(j->n * sizeof(*c)), med, max = -1;
	size_t r, best = 0, k;
	struct kdiff top[3];
	size_t ntop;
	struct td_finding *f;
	char b1[32], b2[32], b3[32];

	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		c[r] = compute_per_step(s);
		if (c[r] > max) {
			max = c[r];
			best = r;
		}
	}
	med = td_median_i64(c, j->n);
	free(c);
	if (j->n < 2 || med <= 0 || (double)max < 1.10 * (double)med)
		return;
	/* the others wait only where it arrives last; the straggler finding speaks for its own */
	if (!j->rows[best].late_ns || (j->straggler >= 0 && (size_t)j->straggler == best))
		return;
	ntop = kernel_diffs(j, top, 3);
	f = td_report_add(&j->report, "imbalance", -1);
	f->busy_ns = (max - med) * (int64_t)(j->steps ? j->steps : 1);
	if (f->busy_ns > j->rows[best].late_ns)
		f->busy_ns = j->rows[best].late_ns;
	f->count = j->n;
	*(int64_t *)td_vec_push(&f->ranks) = j->rows[best].rank;
	td_finding_value(f, "rank", j->rows[best].rank);
	td_finding_value(f, "max_compute_ns", max);
	td_finding_value(f, "median_compute_ns", med);
	td_finding_title(f, "Compute differs across ranks: rank %lld computes %s%s, the median rank "
			 "%s (%.2fx); the others wait for it %s at the %u collectives it reaches last",
			 (long long)j->rows[best].rank, td_fmt_dur(b1, sizeof(b1), max), per_step(j),
			 td_fmt_dur(b2, sizeof(b2), med), (double)max / (double)med,
			 td_fmt_dur(b3, sizeof(b3), j->rows[best].late_ns), j->rows[best].late_count);
	for (k = 0; k < ntop; k++)
		td_finding_where(f, "%s: %s%s on rank %lld, the median rank %s", top[k].name,
				 td_fmt_dur(b1, sizeof(b1), top[k].max), per_step(j),
				 (long long)top[k].rank, td_fmt_dur(b3, sizeof(b3), top[k].median));
	on_time(j, best, f);
	rank_fix(j, f, TD_FIX_IMBALANCE, NULL, NULL);
}
