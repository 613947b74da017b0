/* SPDX-License-Identifier: MIT */
#include "job/job.h"

/* A rank's finding as the job compares it: the GPU idle and busy time it claims. Its own
 * replayed saving (rules/whatif.h) does not know the other ranks, which the job view does. */
#define SIZED(x) ((x)->idle_ns + (x)->busy_ns)
#define SIZED_FRACTION(x)                                                                    \
	((x)->savings_ns > 0 ? (x)->fraction * (double)SIZED(x) / (double)(x)->savings_ns      \
			     : (x)->fraction)

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "rules/config.h"

void td_job_init(struct td_job *j)
{
	memset(j, 0, sizeof(*j));
	j->world_size = -1;
	j->straggler = -1;
	td_vec_init(&j->errors, sizeof(struct td_job_error));
	td_vec_init(&j->missing, sizeof(int64_t));
	td_report_init(&j->report);
	td_params_default(&j->params);
}

void td_job_add_error(struct td_job *j, const char *path, const char *message)
{
	struct td_job_error *e = td_vec_push(&j->errors);
	e->path = td_strndup(path, strlen(path));
	e->message = td_strndup(message, strlen(message));
}

void td_job_free(struct td_job *j)
{
	size_t i;

	for (i = 0; i < j->errors.len; i++) {
		free(TD_VEC_AT(&j->errors, struct td_job_error, i).path);
		free(TD_VEC_AT(&j->errors, struct td_job_error, i).message);
	}
	td_vec_free(&j->errors);
	td_vec_free(&j->missing);
	for (i = 0; j->sums && i < j->n; i++)
		td_summary_free(&j->sums[i]);
	free(j->sums);
	free(j->rows);
	td_report_free(&j->report);
	memset(j, 0, sizeof(*j));
}

/* "worker3_step_12...", "rank-3.json", "trace_rank_12.json.gz": the rank in a file name */
static int64_t rank_from_name(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	static const char *const words[] = {"rank", "worker", NULL};
	size_t w;

	base = base ? base + 1 : path;
	for (w = 0; words[w]; w++) {
		for (p = base; (p = strstr(p, words[w])) != NULL; p++) {
			const char *q = p + strlen(words[w]);
			int64_t v = 0;
			if (*q == '-' || *q == '_')
				q++;
			if (!isdigit((unsigned char)*q))
				continue;
			for (; isdigit((unsigned char)*q) && v < INT64_MAX / 10 - 10; q++)
				v = v * 10 + (*q - '0');
			return v;
		}
	}
	return -1;
}

#define ROW_LESS(x, y) ((x)->rank < (y)->rank)
TD_DEFINE_SORT(sort_rows, struct td_job_row, ROW_LESS)

/* --- matching collectives ---------------------------------------------------------------- */

struct inst {
	uint32_t key, seq;   /* key: id in the job's key table */
	uint32_t row;
	int64_t start, dur, in_step, gpu_in_step;
};
#define INST_LESS(x, y) ((x)->key < (y)->key || ((x)->key == (y)->key && ((x)->seq < (y)->seq || \
	((x)->seq == (y)->seq && (x)->row < (y)->row))))
TD_DEFINE_SORT(sort_inst, struct inst, INST_LESS)

struct worst {
	int64_t delay;       /* median rank's wait */
	int64_t start, dur, median;
	uint32_t key, seq;
};

static void match(struct td_job *j, struct td_strtab *keys, struct worst *top, size_t ntop,
		  size_t *nworst, uint32_t straggler_row, int pass)
{
	struct inst *v;
	size_t n = 0, cap = 0, i, g, r, kranks;
	int64_t *durs = td_malloc(j->n * sizeof(*durs)), **ends = NULL;
	int64_t *offs = td_malloc(j->n * sizeof(*offs));
	size_t *nends = NULL;

	for (r = 0; r < j->n; r++)
		cap += j->rows[r].s->colls.len;
	v = td_malloc((cap ? cap : 1) * sizeof(*v));
	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		if (s->partial) /* it ends early: its last collectives would match nothing */
			continue;
		for (i = 0; i < s->colls.len; i++) {
			const struct td_sum_coll *c = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
			const char *k = td_strtab_str(&s->keys, c->key);
			v[n].key = td_strtab_intern(keys, k, strlen(k));
			v[n].seq = c->seq;
			v[n].row = (uint32_t)r;
			v[n].start = c->start;
			v[n].dur = c->dur;
			v[n].in_step = c->in_step;
			v[n].gpu_in_step = c->gpu_in_step;
			n++;
		}
	}
	sort_inst(v, n);
	if (pass == 0) {
		ends = td_calloc(j->n, sizeof(*ends));
		nends = td_calloc(j->n, sizeof(*nends));
		for (r = 0; r < j->n; r++)
			ends[r] = td_malloc((j->rows[r].s->colls.len + 1) * sizeof(int64_t));
		j->matched = j->unmatched = 0;
	}
	for (i = 0, kranks = 0; i < n; i = g) {
		int64_t min, med;
		uint32_t late = v[i].row;
		size_t lpos = i;
		for (g = i; g < n && v[g].key == v[i].key && v[g].seq == v[i].seq; g++)
			;
		if (v[i].seq == 0) /* the first of a key: the ranks that run it (its group) */
			kranks = g - i;
		if (g - i != kranks || kranks < 2) { /* not on every rank of its group */
			if (pass == 0)
				j->unmatched++;
			continue;
		}
		min = v[i].dur;
		for (r = i; r < g; r++) {
			durs[r - i] = v[r].dur;
			if (v[r].dur < min) {
				min = v[r].dur;
				late = v[r].row;
				lpos = r;
			}
		}
		med = td_median_i64(durs, g - i);
		if (pass == 0) {
			j->matched++;
			for (r = i; r < g; r++) {
				j->rows[v[r].row].wait_ns += v[r].dur - min;
				/* ends coincide: each rank's end minus the first rank's is its clock
				 * offset, from the groups that include that rank */
				if (v[i].row == 0)
					ends[v[r].row][nends[v[r].row]++] = td_sat_sub(
						td_sat_add(v[r].start, v[r].dur),
						td_sat_add(v[i].start, v[i].dur));
			}
			j->rows[late].late_ns += med - min;
			j->rows[late].late_count++;
			if (med - min > j->rows[late].late_max_ns)
				j->rows[late].late_max_ns = med - min;
			/* did it launch later into its step than the others, or start the step late? */
			{
				size_t no = 0;
				for (r = i; r < g; r++)
					if (r != lpos && v[r].in_step >= 0)
						offs[no++] = v[r].in_step;
				if (v[lpos].in_step >= 0 && no == g - i - 1) {
					int64_t d = v[lpos].in_step - td_median_i64(offs, no);
					j->rows[late].late_in_step_ns += d > 0 ? d : 0;
					for (r = i, no = 0; r < g; r++)
						if (r != lpos)
							offs[no++] = v[r].gpu_in_step;
					d = v[lpos].gpu_in_step - td_median_i64(offs, no);
					j->rows[late].late_gpu_in_step_ns += d > 0 ? d : 0;
					j->rows[late].late_known++;
				}
			}
		} else if (late == straggler_row && med > min) {
			/* the collectives the straggler held up most, for evidence */
			struct worst w;
			size_t k;
			for (r = i; r < g; r++)
				if (v[r].row == straggler_row)
					break;
			w.delay = med - min;
			w.start = v[r].start;
			w.dur = v[r].dur;
			w.median = med;
			w.key = v[i].key;
			w.seq = v[i].seq;
			for (k = *nworst; k > 0 && top[k - 1].delay < w.delay; k--)
				if (k < ntop)
					top[k] = top[k - 1];
			if (k < ntop) {
				top[k] = w;
				if (*nworst < ntop)
					(*nworst)++;
			}
		}
	}
	if (pass == 0) {
		for (r = 0; r < j->n; r++) {
			if (nends[r]) {
				j->rows[r].clock_offset_ns = td_median_i64(ends[r], nends[r]);
				j->rows[r].has_offset = 1;
			}
			free(ends[r]);
		}
		free(ends);
		free(nends);
	}
	free(offs);
	free(durs);
	free(v);
}

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

static const char *per_step(const struct td_job *j)
{
	return j->steps ? " per step" : "";
}

static int64_t by_step(const struct td_job *j, int64_t ns)
{
	return j->steps ? ns / (int64_t)j->steps : ns;
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
static void job_context(struct td_job *j)
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

/* How to check a slow GPU, for the job's vendor: "nvidia-smi -q (clocks, throttling, ECC)". */
static const char *gpu_check(const struct td_job *j)
{
	return j->ctx.vendor == TD_VENDOR_AMD ? "rocm-smi --showclocks --showtemp (clocks, "
						  "throttling) and rocm-smi --showrasinfo (ECC)"
	       : j->ctx.vendor == TD_VENDOR_NVIDIA ? "nvidia-smi -q (clocks, throttling, ECC)"
						   : "nvidia-smi -q or rocm-smi (clocks, throttling, "
						     "ECC)";
}

/* How to give every rank the same work: a sampler's shards in training, the requests in
 * inference. */
static const char *even_work(const struct td_job *j)
{
	return j->ctx.run == TD_RUN_INFERENCE
	       ? "balance the requests across ranks (the same batch size and sequence lengths "
		 "on each: the router's load balancing, padding or bucketing prompts by length)"
	       : "shard evenly (DistributedSampler(..., drop_last=True)), pack or bucket "
		 "sequences by length";
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
	char b1[32], b2[32], b3[32];
	int known = w->late_known * 2 > w->late_count;

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
		td_finding_fix(f, "Look at what rank %lld does between steps: work only it runs "
			       "(logging, checkpointing, evaluation on rank %lld), its next batch "
			       "arriving late, or a slower host or GPU (%s). Record several steps on "
			       "every rank (torch.profiler.schedule(wait=1, warmup=1, active=5)) and "
			       "diagnose the job again to see the step before.", rank, rank,
			       gpu_check(j));
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
		td_finding_fix(f, "Give rank %lld the same work as the others: uneven batches or "
			       "sequence lengths make one rank compute longer while the rest wait in "
			       "the next collective - %s. If the work is the same, its GPU is slower: "
			       "check it with %s and run the job without that node.", rank,
			       even_work(j), gpu_check(j));
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
				td_finding_fix(f, "Make rank %lld arrive on time: the others wait for "
					       "it. %s", rank, why->fix);
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
	td_finding_fix(f, "Find what rank %lld does before its collectives that the others do "
		       "not: diagnose its own trace (%s) beside another rank's; a slower GPU "
		       "(%s) or a larger share of the %s are the usual causes.", rank, s->path,
		       gpu_check(j), j->ctx.run == TD_RUN_INFERENCE ? "requests" : "data");
}

static void straggler(struct td_job *j, struct td_strtab *keys)
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
	for (r = 1; r < f->ranks.len; r++) {
		size_t q;
		for (q = 0; q < j->n; q++)
			if (j->rows[q].rank == TD_VEC_AT(&f->ranks, int64_t, r))
				td_finding_where(f, "rank %lld also arrives last at %u collectives (%s%s)",
						 (long long)j->rows[q].rank, j->rows[q].late_count,
						 td_fmt_dur(b3, sizeof(b3), by_step(j, j->rows[q].late_ns)),
						 per_step(j));
	}
	match(j, keys, top, sizeof(top) / sizeof(top[0]), &nworst, (uint32_t)best, 1);
	for (k = 0; k < nworst && (int)k < j->params.evidence_max; k++) {
		char m[600];
		td_finding_evidence(f, top[k].start, top[k].dur, "%s #%u: rank %lld ran %s, the median "
				    "rank %s (rank %lld's clock)",
				    td_mark(m, sizeof(m), td_strtab_str(keys, top[k].key)), top[k].seq,
				    (long long)j->rows[best].rank, td_fmt_dur(b1, sizeof(b1), top[k].dur),
				    td_fmt_dur(b2, sizeof(b2), top[k].median), (long long)j->rows[best].rank);
	}
}

static void imbalance(struct td_job *j)
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
	td_finding_fix(f, "Give every rank the same work: uneven batches or sequence lengths "
		       "make one rank compute longer while the rest wait in the next collective. "
		       "%c%s so each rank gets the same tokens per step, and check that no rank "
		       "runs extra work (logging, evaluation, a larger share).",
		       toupper((unsigned char)even_work(j)[0]), even_work(j) + 1);
}

struct entry {
	const struct td_sum_finding *f;
	size_t row;
	int64_t savings;          /* what fixing it on this rank wins back, for the job */
};
#define ENTRY_LESS(x, y) ((x)->savings > (y)->savings || \
	((x)->savings == (y)->savings && (x)->row < (y)->row))
TD_DEFINE_SORT(sort_entries, struct entry, ENTRY_LESS)

/* Each rank's findings merged by rule: "on 7 of 8 ranks", sized by the rank where fixing it
 * wins most. A rank's exposed communication includes its waiting for the last rank to arrive,
 * which the straggler finding owns: only the rest is the communication's. */
static void merged(struct td_job *j)
{
	const char *seen[64];
	size_t nseen = 0, r, i, k, n, e, shown, lines;
	struct entry *v = td_malloc((j->n ? j->n : 1) * sizeof(*v));
	int64_t *rk = td_malloc((j->n ? j->n : 1) * sizeof(*rk));
	char b1[32], b2[32], b3[32];

	for (r = 0; r < j->n; r++)
		for (i = 0; i < j->rows[r].s->findings.len && nseen < 64; i++) {
			const char *rule = TD_VEC_AT(&j->rows[r].s->findings, struct td_sum_finding, i).rule;
			int dup = 0;
			for (k = 0; k < nseen; k++)
				dup |= !strcmp(seen[k], rule);
			if (!dup)
				seen[nseen++] = rule;
		}
	for (k = 0; k < nseen; k++) {
		int comm = !strcmp(seen[k], "communication") && j->n > 1;
		double lo = 0, hi = 0;
		struct td_finding *f;
		const struct entry *rep;
		for (r = 0, n = 0; r < j->n; r++)
			for (i = 0; i < j->rows[r].s->findings.len; i++) {
				const struct td_sum_finding *x = &TD_VEC_AT(&j->rows[r].s->findings,
									    struct td_sum_finding, i);
				if (strcmp(x->rule, seen[k]))
					continue;
				v[n].f = x;
				v[n].row = r;
				v[n].savings = SIZED(x);
				if (comm) /* its waiting is the straggler's */
					v[n].savings = SIZED(x) > j->rows[r].wait_ns
						? SIZED(x) - j->rows[r].wait_ns : 0;
				if (j->straggler >= 0 && r == (size_t)j->straggler &&
				    !strcmp(x->rule, j->straggler_rule)) /* what makes it late */
					v[n].savings = SIZED(x) > j->rows[r].late_ns
						? SIZED(x) - j->rows[r].late_ns : 0;
				if (!n || SIZED_FRACTION(x) < lo)
					lo = SIZED_FRACTION(x);
				if (!n || SIZED_FRACTION(x) > hi)
					hi = SIZED_FRACTION(x);
				n++;
				break; /* one per rank: its largest, the report is ordered */
			}
		f = td_report_add(&j->report, seen[k], -1);
		for (e = 0; e < n; e++) /* every rank that has it, in rank order */
			*(int64_t *)td_vec_push(&f->ranks) = j->rows[v[e].row].rank;
		sort_entries(v, n);
		rep = &v[0];
		f->idle_ns = rep->f->idle_ns;
		f->busy_ns = rep->f->busy_ns;
		f->host_ns = rep->f->host_ns;
		if (rep->savings != SIZED(rep->f)) { /* part of it is another finding's */
			f->idle_ns = rep->f->idle_ns < rep->savings ? rep->f->idle_ns : rep->savings;
			f->busy_ns = rep->savings - f->idle_ns;
		}
		if (comm) {
			int64_t wait = j->rows[rep->row].wait_ns;
			f->idle_ns = 0;
			f->busy_ns = rep->savings;
			td_finding_value(f, "exposed_ns", SIZED(rep->f));
			td_finding_value(f, "wait_ns", wait < SIZED(rep->f) ? wait : SIZED(rep->f));
		}
		f->count = n;
		f->max_severity = (enum td_severity)rep->f->max_severity;
		for (e = 0; e < n; e++) /* a risk: as severe as on the worst rank */
			if (v[e].f->risk) {
				f->risk = 1;
				if ((int)f->severity < v[e].f->severity)
					f->severity = (enum td_severity)v[e].f->severity;
			}
		if (j->n == 1)
			td_finding_title(f, "%s", rep->f->title);
		else if (comm)
			td_finding_title(f, "On %zu of %zu ranks: communication not hidden by compute, "
					 "beyond waiting for other ranks: %s%s on rank %lld (its collectives "
					 "are exposed %s%s, %s%s of it waiting for the last rank)", n, j->n,
					 td_fmt_dur(b1, sizeof(b1), by_step(j, rep->savings)), per_step(j),
					 (long long)j->rows[rep->row].rank,
					 td_fmt_dur(b2, sizeof(b2), by_step(j, SIZED(rep->f))), per_step(j),
					 td_fmt_dur(b3, sizeof(b3), by_step(j, SIZED(rep->f) - rep->savings)),
					 per_step(j));
		else if (lo == hi || (int)(100 * lo + 0.5) == (int)(100 * hi + 0.5))
			td_finding_title(f, "On %zu of %zu ranks (%.0f%% of the window): %s", n, j->n,
					 100 * hi, rep->f->title);
		else
			td_finding_title(f, "On %zu of %zu ranks (%.0f-%.0f%% of the window): %s", n,
					 j->n, 100 * lo, 100 * hi, rep->f->title);
		/* the ranks where it wins most, those that say the same in one line */
		for (e = 0, shown = 0, lines = 0; j->n > 1 && e < n && lines < 4; e++) {
			size_t q, nr = 0;
			char rl[256];
			if (!v[e].f)
				continue;
			for (q = e; q < n; q++)
				if (v[q].f && v[q].savings == v[e].savings &&
				    !strcmp(v[q].f->title, v[e].f->title)) {
					rk[nr++] = j->rows[v[q].row].rank;
					if (q != e)
						v[q].f = NULL;
				}
			td_finding_where(f, "%s: %s (saves ~%s)", td_fmt_ranks(rl, sizeof(rl), rk, nr),
					 v[e].f->title, td_fmt_dur(b1, sizeof(b1), v[e].savings));
			shown += nr;
			lines++;
		}
		if (shown < n && j->n > 1)
			td_finding_where(f, "and %zu more rank%s (see each rank's row)", n - shown,
					 n - shown == 1 ? "" : "s");
		td_finding_fix(f, "%s", rep->f->fix);
	}
	free(rk);
	free(v);
}

static void job_metrics(struct td_job *j)
{
	size_t r, i;

	memset(&j->metrics, 0, sizeof(j->metrics));
	if (!j->n)
		return;
	j->metrics = j->rows[0].s->metrics;
	j->metrics.steps = j->steps;
	j->metrics.nhigh = j->metrics.nsuppressed = 0;
	for (r = 1; r < j->n; r++) /* the worst rank's value of each */
		for (i = 0; i < j->metrics.n; i++) {
			const struct td_metric *m = td_metrics_get(&j->rows[r].s->metrics, j->metrics.m[i].id);
			struct td_metric *o = &j->metrics.m[i];
			if (!m || !m->present)
				continue;
			if (!o->present || (o->kind == MK_FRACTION ? m->value < o->value : m->value > o->value))
				o->value = m->value;
			o->present = 1;
		}
	for (i = 0; i < j->metrics.n; i++) {
		struct td_metric *o = &j->metrics.m[i];
		int late = !strcmp(o->id, "straggler_wait_ns_per_step");
		if (late || !strcmp(o->id, "collective_wait_ns_per_step")) {
			int64_t w = 0; /* the most any rank waited (for the last rank, or in all) */
			for (r = 0; r < j->n; r++) {
				int64_t x = late ? j->rows[r].late_ns : j->rows[r].wait_ns;
				if (x > w)
					w = x;
			}
			o->value = (double)by_step(j, w);
			o->present = j->n > 1;
		}
	}
	for (i = 0; i < j->report.findings.len && j->metrics.nhigh < TD_HIGH_MAX; i++) {
		const struct td_finding *f = &TD_VEC_AT(&j->report.findings, struct td_finding, i);
		size_t k;
		int dup = 0;
		if (f->severity != SEV_HIGH)
			continue;
		for (k = 0; k < j->metrics.nhigh; k++)
			dup |= !strcmp(j->metrics.high[k], f->rule);
		if (!dup)
			snprintf(j->metrics.high[j->metrics.nhigh++], sizeof(j->metrics.high[0]), "%s",
				 f->rule);
	}
	for (r = 0; r < j->n; r++) /* a rule suppressed on any rank is suppressed for the job */
		for (i = 0; i < j->rows[r].s->metrics.nsuppressed; i++) {
			size_t k;
			int dup = 0;
			for (k = 0; k < j->metrics.nsuppressed; k++)
				dup |= !strcmp(j->metrics.suppressed[k], j->rows[r].s->metrics.suppressed[i]);
			if (!dup && j->metrics.nsuppressed < TD_HIGH_MAX) {
				memcpy(j->metrics.suppressed[j->metrics.nsuppressed],
				       j->rows[r].s->metrics.suppressed[i], sizeof(j->metrics.suppressed[0]));
				memcpy(j->metrics.why[j->metrics.nsuppressed++], j->rows[r].s->metrics.why[i],
				       sizeof(j->metrics.why[0]));
			}
		}
}

static const char *input_of(const struct td_summary *s)
{
	return s->input ? s->input : s->path ? s->path : "?";
}

int td_job_build(struct td_job *j, struct td_summary *s, size_t n, const struct td_config *cfg,
		 struct td_error *err)
{
	struct td_strtab keys;
	size_t r, i, k;
	int64_t *v;

	if (cfg)
		j->params = cfg->params;
	j->sums = s;
	j->rows = td_calloc(n ? n : 1, sizeof(*j->rows));
	j->n = n;
	for (r = 0; r < n; r++) {
		struct td_job_row *row = &j->rows[r];
		row->s = &s[r];
		if (s[r].rank >= 0) {
			row->rank = s[r].rank;
			row->rank_source = TD_RANK_TRACE;
		} else if ((row->rank = rank_from_name(s[r].path)) >= 0) {
			row->rank_source = TD_RANK_NAME;
		} else {
			row->rank = (int64_t)r;
			row->rank_source = TD_RANK_ORDER;
		}
		if (s[r].world_size > 0) {
			if (j->world_size > 0 && j->world_size != s[r].world_size)
				return td_error_set(err, TD_EINVAL, "%s says the world has %lld ranks, but "
						    "an earlier trace says %lld: these are not one job",
						    input_of(&s[r]), (long long)s[r].world_size,
						    (long long)j->world_size);
			j->world_size = s[r].world_size;
		}
	}
	if (!n)
		return 0;
	sort_rows(j->rows, n);
	for (r = 1; r < n; r++)
		if (j->rows[r].rank == j->rows[r - 1].rank)
			return td_error_set(err, TD_EINVAL, "%s and %s are both rank %lld",
					    input_of(j->rows[r - 1].s), input_of(j->rows[r].s),
					    (long long)j->rows[r].rank);
	for (r = 0; j->world_size > 0 && r < n; r++)
		if (j->rows[r].rank >= j->world_size)
			return td_error_set(err, TD_EINVAL, "%s is rank %lld of a world of %lld",
					    input_of(j->rows[r].s), (long long)j->rows[r].rank,
					    (long long)j->world_size);
	if (j->world_size > 0) { /* the ranks nobody brought: the gaps between those here */
		int64_t q = 0;
		for (r = 0; r <= n; r++) {
			int64_t upto = r < n ? j->rows[r].rank : j->world_size;
			j->missing_count += (uint64_t)(upto - q);
			for (; q < upto && j->missing.len < TD_JOB_MISSING_LISTED; q++)
				*(int64_t *)td_vec_push(&j->missing) = q;
			q = upto + 1;
		}
	}
	/* the median rank's window and steps, of the ranks with GPU work (not a partial stub) */
	v = td_malloc(n * sizeof(*v));
	for (r = 0, k = 0; r < n; r++)
		if (j->rows[r].s->window_ns > 0)
			v[k++] = j->rows[r].s->window_ns;
	j->window_ns = k ? td_median_i64(v, k) : 0;
	for (r = 0, k = 0; r < n; r++)
		if (j->rows[r].s->window_ns > 0)
			v[k++] = (int64_t)j->rows[r].s->steps;
	j->steps = k ? (uint64_t)td_median_i64(v, k) : 0;
	free(v);

	job_context(j);
	td_strtab_init(&keys);
	match(j, &keys, NULL, 0, NULL, 0, 0);
	straggler(j, &keys);
	td_strtab_free(&keys);
	imbalance(j);
	merged(j);
	for (i = 0, r = 0; i < j->report.findings.len; i++) {
		struct td_finding *f = &TD_VEC_AT(&j->report.findings, struct td_finding, i);
		f->savings_ns = f->idle_ns + f->busy_ns;
		if (!f->risk && (f->savings_ns < 1000 ||
				 (double)f->savings_ns < 0.0001 * (double)j->window_ns)) {
			td_finding_free(f); /* next to nothing to win, as for one trace */
			continue;
		}
		f->savings_fraction = j->window_ns > 0 ? (double)f->savings_ns / (double)j->window_ns : 0;
		f->per_step_ns = j->steps ? f->savings_ns / (int64_t)j->steps : 0;
		if (!f->risk)
			f->severity = td_grade(&j->params, f->savings_fraction);
		if (f->max_severity && f->severity > f->max_severity)
			f->severity = f->max_severity;
		TD_VEC_AT(&j->report.findings, struct td_finding, r++) = *f;
	}
	j->report.findings.len = r;
	td_report_sort(&j->report);
	job_metrics(j);
	return 0;
}
