/* SPDX-License-Identifier: MIT */
/* The sizing (sizing/whatif.h): the graph made on first use or by the second thread, the
 * trace replayed as recorded, each finding's fix replayed and what it wins. */
#include <math.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "analysis/blocking.h"
#include "analysis/finding.h"
#include "sizing/whatif.h"
#include "sizing/internal.h"

/* The trace replayed as recorded, into r (reused as td_replay_again does): each device's
 * window and, on the main device's thread, the steps' images, kept (the replay itself is not:
 * a fix's replay is the one held at a time). */
static void run_base_in(struct td_analysis *a, struct td_rp_times *r)
{
	struct td_whatif *w = a->whatif;
	size_t i, d;
	uint32_t tr;

	if (w->base_done)
		return;
	w->base_done = 1;
	if (w->base_rc) { /* the builder's: r takes its buffers */
		td_rp_times_free(r);
		*r = w->base_r;
		memset(&w->base_r, 0, sizeof(w->base_r));
		if (w->base_rc < 0) {
			w->ok = 0;
			return;
		}
	} else if (td_replay_again(&w->g, NULL, 0, r) != 0) {
		w->ok = 0;
		return;
	}
	for (i = 0; i < a->ndev; i++) {
		w->base_win[i] = a->dev[i].host_track == TD_NONE ? -1 : td_whatif_win(a, i, r);
		w->base_busy[i] = w->base_win[i] < 0 ? -1 : td_whatif_busy(a, i, r);
	}
	d = td_whatif_main_device(a);
	tr = td_whatif_step_track(a, d);
	for (i = 0; i < a->nsteps; i++) {
		w->base_steps[2 * i] = td_replay_map(&w->g, r, tr, a->steps[i].start);
		w->base_steps[2 * i + 1] = td_replay_map(&w->g, r, tr, a->steps[i].end);
	}
}

static void run_base(struct td_analysis *a)
{
	struct td_rp_times r;

	memset(&r, 0, sizeof(r));
	run_base_in(a, &r);
	td_rp_times_free(&r);
}

/* a->whatif made here: td_analysis_free() frees it through a->detach */
static struct td_whatif *attach(struct td_analysis *a)
{
	a->detach = td_whatif_free;
	return a->whatif = td_calloc(1, sizeof(*a->whatif));
}

void td_whatif_start(struct td_analysis *a)
{
	if (a->whatif)
		return;
	attach(a);
	td_wq_start(a, td_whatif_window_in); /* when it cannot start, td_an_whatif() builds */
}

void td_analysis_run_jobs(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg,
			  int jobs)
{
	td_analysis_begin(a, t, cfg, jobs);
	if (jobs > 1) /* what it needs is known: the names' classes */
		td_whatif_start(a);
	td_analysis_finish(a);
}

const struct td_whatif *td_an_whatif(struct td_analysis *a)
{
	struct td_whatif *w = a->whatif;
	size_t i;

	if (w && w->finished)
		return w->ok ? w : NULL;
	if (!w)
		w = attach(a);
	if (w->wq)
		td_wq_built(w);
	else
		td_whatif_build(a, w);
	w->finished = 1;
	if (!w->built)
		return NULL;
	/* start-up calls (a context, a stream, a library handle, the first pool made): the trace
	 * holds the run's start, where pinned buffers are allocated */
	for (i = 0; i < a->nwarm_ev && !w->g.pin_alloc; i++) {
		const struct td_event *e = td_trace_ev(a->t, a->warm_ev[i]);
		w->g.pin_alloc = e->kind == TD_K_RUNTIME &&
				 (a->name_class[e->name] & NC_WARMUP_CALL);
	}
	w->ok = 1;
	w->base_win = td_calloc(a->ndev + 1, sizeof(int64_t));
	w->base_busy = td_calloc(a->ndev + 1, sizeof(int64_t));
	w->base_steps = td_calloc(2 * a->nsteps + 1, sizeof(int64_t));
	if (w->base_rc) { /* replayed by the builder: its windows read, its times let go */
		struct td_rp_times r;
		memset(&r, 0, sizeof(r));
		run_base_in(a, &r);
		td_rp_times_free(&r);
	}
	return w->ok ? w : NULL;
}

/* The window of device d replayed with the edits, into r (zeroed, or holding an earlier
 * replay's buffers to reuse). */
int64_t td_whatif_window_in(struct td_analysis *a, size_t d, const struct td_rp_edit *pre,
			    size_t npre, const struct td_rp_edit *edits, size_t nedits,
			    struct td_rp_times *r, int64_t *busy)
{
	if (d >= a->ndev || a->dev[d].host_track == TD_NONE || !td_an_whatif(a))
		return -1;
	if (!npre && !nedits) {
		run_base(a);
		if (busy)
			*busy = a->whatif->ok ? a->whatif->base_busy[d] : -1;
		return a->whatif->ok ? a->whatif->base_win[d] : -1;
	}
	if (td_replay_after(&a->whatif->g, pre, npre, edits, nedits, r) != 0)
		return -1;
	if (busy)
		*busy = td_whatif_busy(a, d, r);
	return td_whatif_win(a, d, r);
}

int64_t td_whatif_window(struct td_analysis *a, size_t d, const struct td_rp_edit *edits,
			 size_t nedits)
{
	struct td_rp_times r;
	int64_t w;

	memset(&r, 0, sizeof(r));
	w = td_whatif_window_in(a, d, NULL, 0, edits, nedits, &r, NULL);
	td_rp_times_free(&r);
	return w;
}

int td_whatif_starts(struct td_analysis *a, size_t d, const struct td_rp_edit *pre, size_t npre,
		     const struct td_rp_edit *edits, size_t nedits, const uint32_t *evs, size_t n,
		     int64_t *out)
{
	const struct td_dev_analysis *dv;
	struct td_rp_times r;
	int64_t w0;
	size_t i;

	if (d >= a->ndev || a->dev[d].host_track == TD_NONE || !td_an_whatif(a) || !a->whatif->ok)
		return -1;
	dv = &a->dev[d];
	memset(&r, 0, sizeof(r));
	if (td_replay_after(&a->whatif->g, pre, npre, edits, nedits, &r) != 0) {
		td_rp_times_free(&r);
		return -1;
	}
	w0 = td_replay_map(&a->whatif->g, &r, td_whatif_step_track(a, d), dv->host_start);
	for (i = 0; i < n; i++) {
		uint32_t k = td_rp_node_of(&a->whatif->g, evs[i]);
		int64_t ts = td_trace_ev(a->t, evs[i])->ts;
		out[i] = TD_SHIFT_NONE;
		if (k != TD_NONE && ts >= dv->win_start && ts < dv->win_end && r.start[k] != INT64_MIN)
			out[i] = r.start[k] - w0;
	}
	td_rp_times_free(&r);
	return 0;
}

int64_t td_whatif_base(struct td_analysis *a, size_t d)
{
	return td_whatif_window(a, d, NULL, 0);
}

int64_t td_whatif_measured(struct td_analysis *a, size_t d)
{
	if (d >= a->ndev || a->dev[d].host_track == TD_NONE || !td_an_whatif(a))
		return -1;
	return td_whatif_win(a, d, NULL);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

static double rel(int64_t rep, int64_t meas)
{
	return meas > 0 ? (double)(rep - meas) / (double)meas : 0.0;
}

int td_whatif_report(struct td_analysis *a, struct td_rp_report *r)
{
	const struct td_trace *t = a->t;
	struct td_whatif *w;
	struct td_rp_times model;
	double *err;
	size_t d, k, j;
	uint32_t tr;
	int rc, same;

	memset(r, 0, sizeof(*r));
	if (!a->ndev || !td_an_whatif(a))
		return -1;
	w = a->whatif;
	d = r->device = td_whatif_main_device(a);
	if (a->dev[d].host_track == TD_NONE)
		return -1;
	tr = td_whatif_step_track(a, d);
	/* the model alone: the unexplained delays left out (without any, the replay as sized) */
	run_base(a);
	if (!w->ok)
		return -1;
	same = w->g.unexplained_ns == 0;
	if (!same) {
		a->whatif->g.keep_unexplained = 0;
		rc = td_replay_run(&a->whatif->g, NULL, 0, &model);
		a->whatif->g.keep_unexplained = 1;
		if (rc != 0)
			return -1;
	}
	r->window_measured_ns = td_whatif_win(a, d, NULL);
	r->window_replayed_ns = same ? w->base_win[d] : td_whatif_win(a, d, &model);
	r->window_error = rel(r->window_replayed_ns, r->window_measured_ns);
	r->unexplained_ns = w->g.unexplained_ns;
	if (!a->has_steps || !a->nsteps) {
		if (!same)
			td_rp_times_free(&model);
		return 0;
	}
	r->steps = td_calloc(a->nsteps, sizeof(*r->steps));
	err = td_calloc(a->nsteps, sizeof(*err));
	for (k = 0; k < a->nsteps; k++) {
		const struct td_interval *s = &a->steps[k];
		struct td_rp_step *o = &r->steps[r->nsteps++];
		o->number = (int64_t)(a->warm_steps + k);
		/* its ProfilerStep# number: the trace's steps are by start (parser/finalize.c) */
		TD_LOWER_BOUND(j, t->steps.len, TD_VEC_AT(&t->steps, struct td_step, mid).ts < s->start);
		if (j < t->steps.len && TD_VEC_AT(&t->steps, struct td_step, j).ts == s->start)
			o->number = TD_VEC_AT(&t->steps, struct td_step, j).number;
		o->measured_ns = s->end - s->start;
		o->replayed_ns = same ? w->base_steps[2 * k + 1] - w->base_steps[2 * k]
				      : td_replay_map(&w->g, &model, tr, s->end) -
					td_replay_map(&w->g, &model, tr, s->start);
		err[k] = fabs(rel(o->replayed_ns, o->measured_ns));
	}
	/* the median error (the mean of the two middle ones for an even count) */
	qsort(err, r->nsteps, sizeof(*err), cmp_double);
	r->median_step_error = r->nsteps % 2 ? err[r->nsteps / 2]
			       : (err[r->nsteps / 2 - 1] + err[r->nsteps / 2]) / 2;
	free(err);
	if (!same)
		td_rp_times_free(&model);
	return 0;
}

void td_rp_report_free(struct td_rp_report *r)
{
	free(r->steps);
	memset(r, 0, sizeof(*r));
}

/* The unit's fix as a replay edit: a value read to the host (.item(), .cpu(),
 * nonzero) leaves the loop, its op's whole host cost going and one launch coming instead (the
 * value kept on the GPU); a pageable upload becomes a non-blocking copy from pinned memory
 * costing one launch; a synchronize stops waiting. */
static void unit_edit(struct td_analysis *a, const struct td_block_unit *u, struct td_rp_edit *e)
{
	const struct td_trace *t = a->t;
	const struct td_event *f = td_trace_ev(t, u->first), *l = td_trace_ev(t, u->last);
	const struct td_whatif *w = td_an_whatif(a);
	int64_t launch = w ? w->launch_cost : 0;

	e->track = td_trace_track_of(t, u->first);
	e->from = f->ts;
	e->to = td_ev_end(l);
	e->residual = 0;
	if (u->kinds & BK_HTOD) {
		e->kind = TD_RP_COST;
		e->residual = launch;
	} else if ((u->kinds & (BK_ITEM | BK_DTOH | BK_NONZERO)) && u->user != TD_NONE) {
		const struct td_event *op = td_trace_ev(t, u->user);
		e->kind = TD_RP_REMOVE;
		e->track = td_trace_track_of(t, u->user);
		e->from = op->ts < e->from ? op->ts : e->from;
		e->to = td_ev_end(op) > e->to ? td_ev_end(op) : e->to;
		e->residual = launch;
	} else {
		e->kind = TD_RP_UNWAIT;
	}
}

/* Whether a copy call starting in [e->from, e->to) on e's thread copies on a compute stream. */
static int copies_on_compute(const struct td_whatif *w, const struct td_rp_edit *e)
{
	const struct td_replay *g = &w->g;
	uint32_t f = g->track_first[e->track], n, k;
	size_t lo;

	if (f == TD_NONE)
		return 0;
	n = g->track_count[e->track];
	TD_LOWER_BOUND(lo, n, td_rp_event(g, f + (uint32_t)mid)->ts < e->from);
	for (k = f + (uint32_t)lo; k < f + n && td_rp_event(g, k)->ts < e->to; k++)
		if (w->copy_on_compute[k >> 3] & (1u << (k & 7)))
			return 1;
	return 0;
}

void td_whatif_units(struct td_analysis *a, struct td_finding *f,
		     const struct td_block_unit *const *us, size_t n)
{
	const struct td_whatif *w = td_an_whatif(a);
	size_t i;

	for (i = 0; i < n; i++) {
		struct td_rp_edit e;
		unit_edit(a, us[i], &e);
		td_finding_edit(f, &e);
		/* an upload on the compute stream waits for the compute queued before it: the fix
		 * issues it on a side stream too, which the compute waits for before use */
		if (e.kind == TD_RP_COST && w && copies_on_compute(w, &e)) {
			e.kind = TD_RP_SIDE;
			td_finding_edit(f, &e);
		}
	}
}

int td_whatif_side_stream(const struct td_finding *f)
{
	size_t i;

	for (i = 0; i < f->edits.len; i++)
		if (TD_VEC_AT(&f->edits, struct td_rp_edit, i).kind == TD_RP_SIDE)
			return 1;
	return 0;
}

/* A replay the sizing runs. */
struct size_task {
	size_t f;           /* the finding */
	int kind;           /* T_*: T_BOTH with the loader's edits before its own */
	int64_t win;        /* its window replayed, -1: none */
	int64_t busy;       /* the device busy in it */
	int done;           /* replayed on the second thread as its rule stated it */
	int queued;         /* in the second thread's queue: done once it is joined */
};

struct size_job {
	struct td_analysis *a;
	struct td_finding **fs;
	const struct td_finding *loader; /* the DataLoader's finding, when its gates hold the loop */
	struct size_task *task;
	size_t ntask, next; /* next: the next task; task ntask is the baseline, when not yet run */
	int base;
	pthread_mutex_t mu;
};

/* The edits a task of f replays after any of the loader's: its fix's, or its bound's where it
 * states no fix as edits. */
static const struct td_vec *task_edits(const struct td_finding *f, int kind)
{
	return kind == T_BOUND || (kind == T_BOTH && !f->edits.len) ? &f->bound : &f->edits;
}

/* A task's two edit lists, replayed in order: the loader's (T_BOTH), then its own. */
struct task_lists {
	const struct td_rp_edit *pre, *ed;
	size_t npre, ned;
};

static struct task_lists lists_of(const struct size_job *j, const struct size_task *tk)
{
	const struct td_vec *e = task_edits(j->fs[tk->f], tk->kind);
	struct task_lists l = {NULL, e->data, 0, e->len};

	if (tk->kind == T_BOTH) {
		l.pre = j->loader->edits.data;
		l.npre = j->loader->edits.len;
	}
	return l;
}

static int64_t run_task(struct size_job *j, struct size_task *tk, struct td_rp_times *r)
{
	struct task_lists l = lists_of(j, tk);
	int d = td_an_dev_index(j->a, j->fs[tk->f]->device);

	return d < 0 ? -1 : td_whatif_window_in(j->a, (size_t)d, l.pre, l.npre, l.ed, l.ned, r,
					      &tk->busy);
}

/* Runs the job's replays left, into r (each in the same buffers). */
static void size_pool(void *arg, struct td_rp_times *r)
{
	struct size_job *j = arg;

	for (;;) {
		size_t i;
		pthread_mutex_lock(&j->mu);
		i = j->next < j->ntask + (size_t)j->base ? j->next++ : SIZE_MAX;
		pthread_mutex_unlock(&j->mu);
		if (i == SIZE_MAX)
			break;
		if (i < j->ntask && (j->task[i].done || j->task[i].queued))
			continue;
		if (i == j->ntask) /* the replay as recorded, beside the fixes' */
			run_base_in(j->a, r);
		else
			j->task[i].win = run_task(j, &j->task[i], r);
	}
}

static void *size_worker(void *arg)
{
	struct td_rp_times r;

	memset(&r, 0, sizeof(r));
	size_pool(arg, &r);
	td_rp_times_free(&r);
	return NULL;
}

/* Where the loop waits for a DataLoader's workers (the graph's gates), a fix that speeds the
 * loop up elsewhere wins little alone: the time it frees goes to waiting in __next__. Such a
 * fix is sized after the loader's: both replayed together (task `both`), less the loader's fix
 * alone - what it wins in the order the report gives them. Kept alone-sized where that is
 * more. */
static void size_after_loader(struct td_analysis *a, const struct size_job *j)
{
	const struct td_finding *l = j->loader;
	size_t i;
	int d;

	if (!l || !l->replayed || (d = td_an_dev_index(a, l->device)) < 0)
		return;
	for (i = 0; i < j->ntask; i++) {
		struct td_finding *f = j->fs[j->task[i].f];
		int64_t gain, alone, claim = f->idle_ns + f->busy_ns;
		char b1[32], b2[32];
		if (j->task[i].kind != T_BOTH || j->task[i].win < 0 || (!f->replayed && f->edits.len))
			continue;
		/* a bound's: the most its fix wins, no more than it claims */
		alone = f->replayed ? f->replay_ns : f->bounded ? f->bound_ns : claim;
		gain = a->whatif->base_win[d] - l->replay_ns - j->task[i].win;
		if (!f->replayed && gain > claim)
			gain = claim;
		/* a fifth more at least, and 1 us: not the replay's rounding */
		if (gain <= alone + alone / 5 || gain - alone < 1000)
			continue;
		f->after = l->rule;
		f->after_ns = gain;
		if (!f->replayed)
			f->bounded = 1;
		if (alone)
			snprintf(b1, sizeof(b1), "%s~", f->replayed ? "" : "at most ");
		td_finding_where(f, "alone it saves %s%s: the loop waits for the DataLoader's "
				 "workers, so what it wins goes to waiting in __next__ until the "
				 "loader keeps up", alone ? b1 : "nothing",
				 alone ? td_fmt_dur(b2, sizeof(b2), alone) : "");
	}
}

/* A finding whose fix cannot be replayed, its mechanism removed outright winning b: the most
 * any fix of it wins. Where that is less than the idle it claims, the rest of what it claims
 * is off the critical path (something else holds the step then: the host, another stream),
 * and the finding is sized by the bound (td_diagnose() says so). */
static void bounded(struct td_finding *f, int64_t b)
{
	if (b >= f->idle_ns + f->busy_ns)
		return;
	f->bounded = 1;
	f->bound_ns = b;
}

/* What a replayed saving is made of, said where it is not plain: the window before and after
 * the fix, the GPU time it removes and the GPU idle it closes (the two add up to the saving),
 * the host time it frees that does not turn into closed idle (it overlaps the GPU's work, or
 * waits for what the fix does not touch), and what holds the step after it - the GPU's own
 * work where it is then 90% busy, else what the fix does not touch. Told where the saving is
 * 1% of the window or more and less than half the GPU time the finding holds (more than twice
 * it, td_diagnose says why); the JSON report carries it for every replayed finding. */
static void decompose(struct td_finding **fs, size_t n)
{
	char b1[32], b2[32], b3[32], b4[32], freed[160] = "";
	size_t i;

	for (i = 0; i < n; i++) {
		struct td_finding *f = fs[i];
		int64_t held = f->idle_ns + f->busy_ns, w0 = f->win_before_ns, w1 = f->win_after_ns;
		int64_t removed, closed;
		if (!f->replayed || f->after || w0 <= 0 || w1 <= 0 || f->busy_before_ns < 0 ||
		    f->busy_after_ns < 0 || f->replay_ns * 100 < w0 || 2 * f->replay_ns >= held)
			continue;
		removed = f->busy_before_ns - f->busy_after_ns;
		closed = f->replay_ns - removed;
		freed[0] = '\0';
		if (f->host_ns > closed && closed >= 0)
			snprintf(freed, sizeof(freed), "; of the %s of host time it frees, %s does not "
				 "close idle (it overlaps the GPU's work, or waits on)",
				 td_fmt_dur(b3, sizeof(b3), f->host_ns),
				 td_fmt_dur(b4, sizeof(b4), f->host_ns - closed));
		td_finding_where(f, "replayed, the window shrinks by %s of the %s of GPU time it holds: "
				 "%s of GPU work removed, %s of GPU idle closed%s; after the fix the "
				 "GPU is busy %.0f%% of it, %s", td_fmt_dur(b1, sizeof(b1), f->replay_ns),
				 td_fmt_dur(b2, sizeof(b2), held),
				 td_fmt_dur(b3, sizeof(b3), removed > 0 ? removed : 0),
				 td_fmt_dur(b4, sizeof(b4), closed > 0 ? closed : 0), freed,
				 100.0 * (double)f->busy_after_ns / (double)w1,
				 10 * f->busy_after_ns >= 9 * w1 ? "its own work then holds the step"
				 : "the rest of its idle held by what the fix does not touch (the host's "
				   "other work, a wait, another stream)");
	}
}

void td_whatif_size(struct td_analysis *a, struct td_finding **fs, size_t n, int jobs)
{
	struct size_job j;
	struct td_rp_times r;
	pthread_t th[16];
	size_t i, pending = 0;
	int k, started = 0, shared;
	struct td_lag *lags;

	if (!n || !td_an_whatif(a)) /* built here, before the threads read it */
		return;
	/* the second thread, where it goes on beside this one, finishes its queue, then takes
	 * the replays left with this thread's pool */
	shared = td_wq_close(a);
	memset(&j, 0, sizeof(j));
	j.a = a;
	j.fs = fs;
	j.base = !a->whatif->base_done;
	for (i = 0; i < n && !j.loader && a->whatif->g.gates.len; i++)
		if (fs[i]->lifts_gates)
			j.loader = fs[i];
	j.task = td_calloc(2 * n, sizeof(*j.task));
	for (i = 0; i < n; i++)
		if (fs[i]->edits.len)
			j.task[j.ntask++] = (struct size_task){i, T_ALONE, -1, -1, 0, 0};
		else if (fs[i]->bound.len)
			j.task[j.ntask++] = (struct size_task){i, T_BOUND, -1, -1, 0, 0};
	for (i = 0; i < n && j.loader; i++)
		if (fs[i] != j.loader && fs[i]->device == j.loader->device &&
		    (fs[i]->edits.len || fs[i]->bound.len))
			j.task[j.ntask++] = (struct size_task){i, T_BOTH, -1, -1, 0, 0};
	for (i = 0; i < j.ntask; i++) {
		struct task_lists l = lists_of(&j, &j.task[i]);
		int32_t dev = fs[j.task[i].f]->device;
		if (shared)
			j.task[i].queued = td_wq_pending(a->whatif, j.task[i].kind, dev, l.pre, l.npre,
							 l.ed, l.ned);
		else
			j.task[i].done = td_wq_result(a->whatif, j.task[i].kind, dev, l.pre, l.npre,
						      l.ed, l.ned, &j.task[i].win, &j.task[i].busy);
		pending += !j.task[i].done && !j.task[i].queued;
	}
	pthread_mutex_init(&j.mu, NULL);
	jobs = td_whatif_replays_at_once(a, jobs, pending + (size_t)j.base + (size_t)shared);
	if (shared)
		td_wq_share(a, size_pool, &j);
	for (k = 1 + shared; k < jobs; k++) /* the caller's thread is one of them, and the second */
		if (pthread_create(&th[started], NULL, size_worker, &j) == 0)
			started++;
	memset(&r, 0, sizeof(r));
	if (shared)
		td_wq_help(a, &r);
	size_pool(&j, &r);
	for (k = 0; k < started; k++)
		pthread_join(th[k], NULL);
	if (shared) {
		td_wq_join(a);
		for (i = 0; i < j.ntask; i++) {
			struct task_lists l = lists_of(&j, &j.task[i]);
			if (j.task[i].queued &&
			    !td_wq_result(a->whatif, j.task[i].kind, fs[j.task[i].f]->device, l.pre,
					  l.npre, l.ed, l.ned, &j.task[i].win, &j.task[i].busy))
				j.task[i].win = run_task(&j, &j.task[i], &r); /* not expected */
		}
	}
	td_rp_times_free(&r);
	pthread_mutex_destroy(&j.mu);
	lags = td_calloc(a->ndev ? a->ndev : 1, sizeof(*lags));
	for (i = 0; i < a->ndev; i++)
		td_whatif_lag(a, i, &lags[i]);
	for (i = 0; i < j.ntask && a->whatif->ok; i++) {
		struct td_finding *f = fs[j.task[i].f];
		int d = td_an_dev_index(a, f->device);
		int64_t before = d < 0 ? -1 : a->whatif->base_win[d], win = j.task[i].win, s, c;
		if (before < 0 || win < 0 || j.task[i].kind == T_BOTH)
			continue;
		s = before > win ? before - win : 0;
		/* a GPU behind its host: what the steady-state step wins, not the backlog */
		c = td_whatif_lag_cap(a, &lags[d], f, s, a->whatif->base_busy[d] - j.task[i].busy);
		if (j.task[i].kind == T_ALONE) {
			f->replayed = 1;
			f->replay_ns = c;
			f->win_before_ns = c < s ? -1 : before; /* capped: no plain decomposition */
			f->win_after_ns = win;
			f->busy_before_ns = a->whatif->base_busy[d];
			f->busy_after_ns = j.task[i].busy;
		} else {
			bounded(f, c);
		}
	}
	free(lags);
	if (a->whatif->ok)
		size_after_loader(a, &j);
	free(j.task);
	if (a->whatif->ok)
		decompose(fs, n);
}

void td_whatif_early(struct td_analysis *a, const struct td_finding *f)
{
	if (!a->whatif || !a->whatif->wq || !td_an_whatif(a))
		return;
	if (f->edits.len)
		td_wq_submit(a, T_ALONE, f->device, f->edits.data, f->edits.len);
	else
		td_wq_submit(a, T_BOUND, f->device, f->bound.data, f->bound.len);
	if (a->whatif->g.gates.len && f->lifts_gates) /* as td_whatif_size() */
		td_wq_loader(a, f->device, f->edits.data, f->edits.len);
}

void td_whatif_free(struct td_analysis *a)
{
	if (!a->whatif)
		return;
	td_wq_free(a->whatif); /* first: its thread reads the graph */
	td_rp_times_free(&a->whatif->base_r);
	free(a->whatif->base_win);
	free(a->whatif->base_busy);
	free(a->whatif->base_steps);
	free(a->whatif->copy_on_compute);
	free(a->whatif->on_device);
	td_replay_free(&a->whatif->g);
	free(a->whatif);
	a->whatif = NULL;
}
