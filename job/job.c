/* SPDX-License-Identifier: MIT */
#include "job/job.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "rules/config.h"

void td_job_init(struct td_job *j)
{
	memset(j, 0, sizeof(*j));
	j->world_size = -1;
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
	int64_t start, dur;
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
	size_t n = 0, cap = 0, i, g, r;
	int64_t *durs = td_malloc(j->n * sizeof(*durs)), **ends = NULL;
	size_t *nends = NULL;

	for (r = 0; r < j->n; r++)
		cap += j->rows[r].s->colls.len;
	v = td_malloc((cap ? cap : 1) * sizeof(*v));
	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		for (i = 0; i < s->colls.len; i++) {
			const struct td_sum_coll *c = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
			const char *k = td_strtab_str(&s->keys, c->key);
			v[n].key = td_strtab_intern(keys, k, strlen(k));
			v[n].seq = c->seq;
			v[n].row = (uint32_t)r;
			v[n].start = c->start;
			v[n].dur = c->dur;
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
	for (i = 0; i < n; i = g) {
		int64_t min, med;
		uint32_t late = v[i].row;
		for (g = i; g < n && v[g].key == v[i].key && v[g].seq == v[i].seq; g++)
			;
		if (g - i != j->n) { /* not on every rank (or twice on one): cannot be compared */
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
			}
		}
		med = td_median_i64(durs, j->n);
		if (pass == 0) {
			j->matched++;
			for (r = i; r < g; r++) {
				j->rows[v[r].row].wait_ns += v[r].dur - min;
				/* ends coincide: each rank's end minus rank 0's is its clock offset */
				ends[v[r].row][nends[v[r].row]++] = (v[r].start + v[r].dur) -
								     (v[i].start + v[i].dur);
			}
			j->rows[late].late_ns += med - min;
			j->rows[late].late_count++;
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
	free(durs);
	free(v);
}

/* --- findings ---------------------------------------------------------------------------- */

static const struct td_sum_finding *top_finding(const struct td_summary *s)
{
	size_t i;

	for (i = 0; i < s->findings.len; i++) { /* its own cause: not the waiting it shows */
		const struct td_sum_finding *f = &TD_VEC_AT(&s->findings, struct td_sum_finding, i);
		if (strcmp(f->rule, "communication") && strcmp(f->rule, "gpu-idle"))
			return f;
	}
	for (i = 0; i < s->findings.len; i++)
		if (strcmp(TD_VEC_AT(&s->findings, struct td_sum_finding, i).rule, "communication"))
			return &TD_VEC_AT(&s->findings, struct td_sum_finding, i);
	return NULL;
}

static const char *per_step(const struct td_job *j)
{
	return j->steps ? " per step" : "";
}

static int64_t by_step(const struct td_job *j, int64_t ns)
{
	return j->steps ? ns / (int64_t)j->steps : ns;
}

static void straggler(struct td_job *j, struct td_strtab *keys)
{
	size_t r, best = 0, k, nworst = 0;
	struct td_finding *f;
	const struct td_summary *s;
	const struct td_sum_finding *why;
	struct worst top[8];
	char b1[32], b2[32], b3[32];

	if (j->n < 2 || !j->matched)
		return;
	for (r = 1; r < j->n; r++)
		if (j->rows[r].late_ns > j->rows[best].late_ns)
			best = r;
	if (j->rows[best].late_ns <= 0)
		return;
	s = j->rows[best].s;
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
	why = top_finding(s);
	if (why)
		td_finding_where(f, "rank %lld before it arrived: [%s] %s", (long long)j->rows[best].rank,
				 why->rule, why->title);
	if (s->top_cause >= 0)
		td_finding_where(f, "rank %lld's GPU idles %s, most of it %s%s%s%s",
				 (long long)j->rows[best].rank, td_fmt_dur(b2, sizeof(b2), s->idle_ns),
				 td_cause_title((enum td_cause)s->top_cause),
				 s->top_what && *s->top_what ? " (" : "", s->top_what ? s->top_what : "",
				 s->top_what && *s->top_what ? ")" : "");
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
	if (why && *why->fix)
		td_finding_fix(f, "Make rank %lld arrive on time: the others wait for it. %s",
			       (long long)j->rows[best].rank, why->fix);
	else
		td_finding_fix(f, "Find what rank %lld does before its collectives: diagnose its own "
			       "trace (%s); a slower GPU (nvidia-smi -q: clocks, throttling, ECC) or a "
			       "larger share of the data are the usual causes.",
			       (long long)j->rows[best].rank, s->path);
}

struct kdiff {
	const char *name;
	int64_t max, median;
	int64_t rank;
};

static void imbalance(struct td_job *j)
{
	int64_t *c = td_malloc(j->n * sizeof(*c)), med, max = -1;
	size_t r, best = 0, i, k;
	struct td_strtab names;
	struct kdiff top[3];
	size_t ntop = 0;
	struct td_finding *f;
	char b1[32], b2[32], b3[32];

	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		c[r] = s->compute_ns / (int64_t)(s->steps ? s->steps : 1);
		if (c[r] > max) {
			max = c[r];
			best = r;
		}
	}
	med = td_median_i64(c, j->n);
	free(c);
	if (j->n < 2 || med <= 0 || (double)max < 1.10 * (double)med)
		return;
	/* the kernels whose time differs most across ranks */
	td_strtab_init(&names);
	for (r = 0; r < j->n; r++)
		for (i = 0; i < j->rows[r].s->kernels.len; i++) {
			const char *n = TD_VEC_AT(&j->rows[r].s->kernels, struct td_sum_kernel, i).name;
			td_strtab_intern(&names, n, strlen(n));
		}
	{
		int64_t *per = td_malloc(j->n * sizeof(*per));
		for (k = 1; k <= names.count; k++) {
			struct kdiff d = {td_strtab_str(&names, (uint32_t)k), 0, 0, -1};
			size_t q;
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
				if (q < 3)
					top[q] = top[q - 1];
			if (q < 3 && d.max > d.median) {
				top[q] = d;
				if (ntop < 3)
					ntop++;
			}
		}
		free(per);
	}
	f = td_report_add(&j->report, "imbalance", -1);
	f->busy_ns = (max - med) * (int64_t)(j->steps ? j->steps : 1);
	f->count = j->n;
	*(int64_t *)td_vec_push(&f->ranks) = j->rows[best].rank;
	td_finding_value(f, "rank", j->rows[best].rank);
	td_finding_value(f, "max_compute_ns", max);
	td_finding_value(f, "median_compute_ns", med);
	td_finding_title(f, "Compute differs across ranks: rank %lld computes %s%s, the median rank "
			 "%s (%.2fx); the others wait for it", (long long)j->rows[best].rank,
			 td_fmt_dur(b1, sizeof(b1), max), per_step(j), td_fmt_dur(b2, sizeof(b2), med),
			 (double)max / (double)med);
	for (k = 0; k < ntop; k++)
		td_finding_where(f, "%s: %s%s on rank %lld, the median rank %s", top[k].name,
				 td_fmt_dur(b1, sizeof(b1), top[k].max), per_step(j),
				 (long long)top[k].rank, td_fmt_dur(b3, sizeof(b3), top[k].median));
	td_strtab_free(&names);
	td_finding_fix(f, "%s", "Give every rank the same work: uneven batches or sequence lengths "
		       "make one rank compute longer while the rest wait in the next collective. "
		       "Shard evenly (DistributedSampler(..., drop_last=True)), pack or bucket "
		       "sequences by length so each rank gets the same tokens per step, and check "
		       "that no rank runs extra work (logging, evaluation, a larger shard).");
}

/* Each rank's findings merged by rule: "on 7 of 8 ranks", sized by the worst rank's. */
static void merged(struct td_job *j)
{
	const char *seen[64];
	size_t nseen = 0, r, i, k;
	char b1[32];

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
		const struct td_sum_finding *rep = NULL;
		size_t rep_row = 0, have = 0, shown = 0;
		double lo = 0, hi = 0;
		struct td_finding *f;
		for (r = 0; r < j->n; r++)
			for (i = 0; i < j->rows[r].s->findings.len; i++) {
				const struct td_sum_finding *x = &TD_VEC_AT(&j->rows[r].s->findings,
									    struct td_sum_finding, i);
				if (strcmp(x->rule, seen[k]))
					continue;
				if (!have || x->fraction < lo)
					lo = x->fraction;
				if (!have || x->fraction > hi)
					hi = x->fraction;
				if (!rep || x->savings_ns > rep->savings_ns) {
					rep = x;
					rep_row = r;
				}
				have++;
				break; /* one per rank: its largest, the report is ordered */
			}
		f = td_report_add(&j->report, seen[k], -1);
		f->idle_ns = rep->idle_ns;
		f->busy_ns = rep->busy_ns;
		f->host_ns = rep->host_ns;
		f->count = have;
		if (j->n == 1)
			td_finding_title(f, "%s", rep->title);
		else if (lo == hi || (int)(100 * lo + 0.5) == (int)(100 * hi + 0.5))
			td_finding_title(f, "On %zu of %zu ranks (%.0f%% of the window): %s", have, j->n,
					 100 * hi, rep->title);
		else
			td_finding_title(f, "On %zu of %zu ranks (%.0f-%.0f%% of the window): %s", have,
					 j->n, 100 * lo, 100 * hi, rep->title);
		for (r = 0; r < j->n && shown < 5; r++)
			for (i = 0; i < j->rows[r].s->findings.len; i++) {
				const struct td_sum_finding *x = &TD_VEC_AT(&j->rows[r].s->findings,
									    struct td_sum_finding, i);
				if (strcmp(x->rule, seen[k]))
					continue;
				*(int64_t *)td_vec_push(&f->ranks) = j->rows[r].rank;
				if (j->n > 1 && (r == rep_row || shown < 4)) {
					td_finding_where(f, "rank %lld: %s (saves ~%s)", (long long)j->rows[r].rank,
							 x->title, td_fmt_dur(b1, sizeof(b1), x->savings_ns));
					shown++;
				}
				break;
			}
		td_finding_fix(f, "%s", rep->fix);
	}
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
		if (!strcmp(o->id, "straggler_wait_ns_per_step")) {
			int64_t w = 0;
			for (r = 0; r < j->n; r++)
				if (j->rows[r].late_ns > w)
					w = j->rows[r].late_ns;
			o->value = (double)by_step(j, w);
			o->present = j->n > 1;
		} else if (!strcmp(o->id, "collective_wait_ns_per_step")) {
			int64_t w = 0;
			for (r = 0; r < j->n; r++)
				if (j->rows[r].wait_ns > w)
					w = j->rows[r].wait_ns;
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

int td_job_build(struct td_job *j, struct td_summary *s, size_t n, const struct td_config *cfg,
		 struct td_error *err)
{
	struct td_strtab keys;
	size_t r, i;
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
						    s[r].path, (long long)s[r].world_size,
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
					    j->rows[r - 1].s->path, j->rows[r].s->path,
					    (long long)j->rows[r].rank);
	for (r = 0; j->world_size > 0 && r < n; r++)
		if (j->rows[r].rank >= j->world_size)
			return td_error_set(err, TD_EINVAL, "%s is rank %lld of a world of %lld",
					    j->rows[r].s->path, (long long)j->rows[r].rank,
					    (long long)j->world_size);
	if (j->world_size > 0) { /* the ranks nobody brought */
		int64_t k;
		for (k = 0, r = 0; k < j->world_size; k++) {
			while (r < n && j->rows[r].rank < k)
				r++;
			if (r >= n || j->rows[r].rank != k)
				*(int64_t *)td_vec_push(&j->missing) = k;
		}
	}
	v = td_malloc(n * sizeof(*v));
	for (r = 0; r < n; r++)
		v[r] = j->rows[r].s->window_ns;
	j->window_ns = td_median_i64(v, n);
	for (r = 0; r < n; r++)
		v[r] = (int64_t)j->rows[r].s->steps;
	j->steps = (uint64_t)td_median_i64(v, n);
	free(v);

	td_strtab_init(&keys);
	match(j, &keys, NULL, 0, NULL, 0, 0);
	straggler(j, &keys);
	td_strtab_free(&keys);
	imbalance(j);
	merged(j);
	for (i = 0, r = 0; i < j->report.findings.len; i++) {
		struct td_finding *f = &TD_VEC_AT(&j->report.findings, struct td_finding, i);
		f->savings_ns = f->idle_ns + f->busy_ns;
		if (f->savings_ns < 1000 || (double)f->savings_ns < 0.0001 * (double)j->window_ns) {
			td_finding_free(f); /* next to nothing to win, as for one trace */
			continue;
		}
		f->savings_fraction = j->window_ns > 0 ? (double)f->savings_ns / (double)j->window_ns : 0;
		f->per_step_ns = j->steps ? f->savings_ns / (int64_t)j->steps : 0;
		f->severity = td_grade(&j->params, f->savings_fraction);
		TD_VEC_AT(&j->report.findings, struct td_finding, r++) = *f;
	}
	j->report.findings.len = r;
	td_report_sort(&j->report);
	job_metrics(j);
	return 0;
}
