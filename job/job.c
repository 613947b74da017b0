/* SPDX-License-Identifier: MIT */
/* The job: the ranks' summaries gathered (td_job_build), their findings merged and weighed
 * across the ranks, the job's metrics. */
#include "job/job.h"
#include "job/internal.h"


#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "config/config.h"

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

struct entry {
	const struct td_sum_finding *f;
	size_t row;
	int64_t savings;          /* what fixing it on this rank wins back, for the job */
};
#define ENTRY_LESS(x, y) ((x)->savings > (y)->savings || \
	((x)->savings == (y)->savings && (x)->row < (y)->row))
TD_DEFINE_SORT(sort_entries, struct entry, ENTRY_LESS)

/* Whether rank row r took part in matching the collectives (job_held). */
static int meets(const struct td_job *j, size_t r)
{
	return !j->rows[r].s->partial && j->rows[r].s->colls.len > 0;
}

/* The ranks meet in their collectives, so a fix shortens the job's step only as far as the
 * rank that holds it afterwards gains. A rank's step is its own work, what it waits for the
 * others beyond the rank that waits least (that rank's share is the collectives' own) and the
 * rest: fixed on every rank that has it, each rank's work shrinks by its own saving, and the
 * job wins the least of (wait beyond the least + own saving) over every rank - nothing where a
 * rank without it holds the step. Sums over the window: the rank that arrives last may change
 * from one collective to the next. Ranks that take no part in the matching (a partial one, one
 * with no collectives) meet no one: left out. f is sized so, or becomes a note. */
static void job_held(struct td_job *j, struct td_finding *f, const struct entry *v, size_t n,
		     int64_t most)
{
	int64_t wmin = INT64_MAX, best = INT64_MAX, *own = td_malloc(j->n * sizeof(*own));
	size_t r, e, holder = 0, arrives = 0, ncoll = 0;
	int joint = 0;
	char b1[32], b2[32], b3[32], more[80] = "waits least for the others";

	for (r = 0; r < j->n; r++) {
		own[r] = -1; /* not on this rank */
		if (meets(j, r) && j->rows[r].wait_ns < wmin)
			wmin = j->rows[r].wait_ns;
	}
	for (e = 0; e < n; e++)
		own[v[e].row] = v[e].savings;
	for (r = 0; r < j->n; r++) {
		int64_t x;
		if (!meets(j, r))
			continue;
		x = td_sat_add(j->rows[r].wait_ns - wmin, own[r] > 0 ? own[r] : 0);
		if (x < best) {
			best = x;
			holder = r;
		}
	}
	if (best == INT64_MAX) {
		free(own);
		return;
	}
	/* where every rank's summary has the fix's collective shifts: replayed across them - not
	 * where the straggler's share of it is the straggler finding's (its shifts hold that too,
	 * so the ranks' replay would count it here again) */
	if (!(j->straggler >= 0 && !strcmp(f->rule, j->straggler_rule))) {
		const struct td_sum_finding **fs = td_calloc(j->n, sizeof(*fs));
		int64_t gain;
		size_t h;
		for (e = 0; e < n; e++)
			fs[v[e].row] = v[e].f;
		if (td_job_joint_finding(j, fs, &gain, &h, &arrives, &ncoll) == 0) {
			best = gain > 0 ? gain : 0;
			holder = h;
			joint = 1;
		}
		free(fs);
	}
	if (best < most && best < 1000) {
		f->risk = 2;
		f->offpath = 1;
		f->severity = SEV_INFO;
		td_finding_where(f, "the job wins nothing from it now: rank %lld, which %s, then holds "
				 "the ranks' step - where it is fixed, the others only wait longer for "
				 "rank %lld in their collectives", (long long)j->rows[holder].rank,
				 own[holder] < 0 ? "does not have it" : "gains nothing from it",
				 (long long)j->rows[holder].rank);
	} else if (best < most) {
		f->idle_ns = f->idle_ns < best ? f->idle_ns : best;
		f->busy_ns = best - f->idle_ns;
		if (joint) {
			if (arrives)
				snprintf(more, sizeof(more), "arrives last at %zu of the %zu", arrives,
					 ncoll);
			else
				snprintf(more, sizeof(more), "holds their step after the last of them");
			if (own[holder] < 0)
				snprintf(b2, sizeof(b2), "does not have it");
			else
				snprintf(b2, sizeof(b2), "saves ~%s itself", td_fmt_dur(
						 b3, sizeof(b3), own[holder]));
			td_finding_where(f, "the job wins ~%s of it, replayed across the ranks' "
					 "collectives (each rank's replay with the fix, the ranks meeting "
					 "in every collective): rank %lld, which %s, then %s",
					 td_fmt_dur(b1, sizeof(b1), best), (long long)j->rows[holder].rank,
					 b2, more);
		} else {
			if (j->rows[holder].wait_ns > wmin)
				snprintf(more, sizeof(more), "waits %s longer for the others than the "
					 "rank that waits least", td_fmt_dur(b3, sizeof(b3),
									 j->rows[holder].wait_ns - wmin));
			td_finding_where(f, "the job wins ~%s of it: the ranks meet in their "
					 "collectives, and fixed on every rank that has it, rank %lld then "
					 "holds their step (it saves ~%s itself and %s)",
					 td_fmt_dur(b1, sizeof(b1), best), (long long)j->rows[holder].rank,
					 td_fmt_dur(b2, sizeof(b2), own[holder] > 0 ? own[holder] : 0), more);
		}
	}
	free(own);
}

/* Each rank's findings merged by rule: "on 7 of 8 ranks", sized by the rank where fixing it
 * wins most, then by the rank that holds the job's step once it is fixed (job_held). A rank's
 * exposed communication includes its waiting for the last rank to arrive, which the straggler
 * finding owns: only the rest is the communication's. */
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
		int adv;
		struct td_finding *f;
		const struct entry *rep;
		const struct td_rule *rule;
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
		f->host_ns = rep->f->host_ns;
		/* its saving (a replayed one may be less than the idle it claims, or more: the host
		 * time a fix frees), the idle first; less where part of it is another finding's */
		f->idle_ns = rep->f->idle_ns < rep->savings ? rep->f->idle_ns : rep->savings;
		f->busy_ns = rep->savings - f->idle_ns;
		f->replayed = rep->f->sizing == TD_SIZING_REPLAY;
		f->bounded = rep->f->sizing == TD_SIZING_BOUND;
		if ((rule = td_rule_find(seen[k])) != NULL)
			f->bound_what = rule->bound_what;
		if (comm) {
			int64_t wait = j->rows[rep->row].wait_ns;
			f->idle_ns = 0;
			f->busy_ns = rep->savings;
			td_finding_value(f, "exposed_ns", SIZED(rep->f));
			td_finding_value(f, "wait_ns", wait < SIZED(rep->f) ? wait : SIZED(rep->f));
		}
		if (!comm && j->matched && j->n > 1 && !rep->f->risk)
			job_held(j, f, v, n, rep->savings);
		f->count = n;
		f->max_severity = (enum td_severity)rep->f->max_severity;
		for (e = 0; e < n; e++) /* a risk: as severe as on the worst rank */
			if (v[e].f->risk == 1) {
				f->risk = 1;
				if ((int)f->severity < v[e].f->severity)
					f->severity = (enum td_severity)v[e].f->severity;
			}
		for (e = 0, adv = 1; e < n && !f->risk; e++) /* advice or a note on every rank */
			adv &= v[e].f->risk == 2;
		if (!f->risk && adv) {
			f->risk = 2;
			f->severity = SEV_INFO;
			f->offpath = rep->f->offpath; /* a note off the critical path */
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

	td_job_context(j);
	td_strtab_init(&keys);
	td_job_match(j, &keys, NULL, 0, NULL, 0, 0);
	td_job_straggler(j, &keys);
	td_strtab_free(&keys);
	td_job_imbalance(j);
	merged(j);
	for (i = 0, r = 0; i < j->report.findings.len; i++) {
		struct td_finding *f = &TD_VEC_AT(&j->report.findings, struct td_finding, i);
		f->savings_ns = f->risk ? 0 : f->idle_ns + f->busy_ns; /* a note keeps its claims */
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
