/* SPDX-License-Identifier: MIT */
/* Idle attribution: per device the window, busy time and every idle gap credited to one cause
 * (classify: what the host was in; queued causes: what the GPU waited on). */
#include "analysis/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "config/config.h"
#include "analysis/internal.h"

/* Other threads of a process looked at when the launching thread recorded nothing. */
#define MAX_OTHER_THREADS 64

/* --- the idle map: (cause, what) -> ns ------------------------------------------------- */

struct idle_slot {
	struct td_idle_item item;
	int used;
};

struct idle_map {
	struct idle_slot *slots;
	size_t n, cap; /* cap is a power of two */
};

static struct td_idle_item *idle_slot(struct idle_map *m, uint8_t cause, uint32_t what)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, i;
		struct idle_slot *old = m->slots;
		size_t oldcap = m->cap;

		m->slots = td_calloc(cap, sizeof(*m->slots));
		m->cap = cap;
		m->n = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].used)
				*idle_slot(m, old[i].item.cause, old[i].item.what) = old[i].item;
		free(old);
	}
	j = (((size_t)what * 2654435761u) ^ cause) & (m->cap - 1);
	while (m->slots[j].used &&
	       (m->slots[j].item.cause != cause || m->slots[j].item.what != what))
		j = (j + 1) & (m->cap - 1);
	if (!m->slots[j].used) {
		m->slots[j].used = 1;
		m->slots[j].item.cause = cause;
		m->slots[j].item.what = what;
		m->n++;
	}
	return &m->slots[j].item;
}

/* What the host was doing inside span `cur` (TD_NONE: nothing recorded). */
static void classify(struct td_analysis *a, uint32_t cur, uint8_t *cause, uint32_t *what)
{
	const struct td_trace *t = a->t;
	uint32_t e, dl = TD_NONE, sync = TD_NONE, xfer = TD_NONE, alloc = TD_NONE, rt = TD_NONE;
	uint32_t op = TD_NONE, py = TD_NONE, warm = TD_NONE;
	int depth = 0;

	if (cur == TD_NONE) {
		*cause = CAUSE_NOTHING;
		*what = 0;
		return;
	}
	for (e = cur; e != TD_NONE && depth < MAX_CHAIN; e = td_trace_parent(t, e), depth++) {
		const struct td_event *x = td_trace_ev(t, e);
		unsigned c = a->name_class[x->name];
		if (c & NC_IGNORE)
			continue;
		if (warm == TD_NONE && ((c & (NC_COMPILE | NC_WARMUP)) || td_an_is_warm(a, e)))
			warm = e;
		if (c & NC_DATALOADER)
			dl = e;
		if ((c & NC_USER_SYNC) && sync == TD_NONE)
			sync = e;
		if (x->kind == TD_K_RUNTIME) {
			if (c & NC_SYNC_CALL)
				sync = e;
			else if (c & NC_MEMCPY_CALL)
				xfer = e;
			else if (c & NC_ALLOC)
				alloc = e;
			else if (rt == TD_NONE)
				rt = e;
		} else if (op == TD_NONE && td_an_public_op(a, x) && !(c & NC_DATALOADER)) {
			op = e;
		} else if (x->kind == TD_K_PYTHON && (c & NC_PY_USER) && py == TD_NONE) {
			py = e;
		}
	}
	if (warm != TD_NONE) {
		*cause = CAUSE_WARMUP;
		*what = td_an_warm_label(a, warm);
	} else if (dl != TD_NONE) {
		*cause = CAUSE_DATALOADER;
		*what = td_an_ev_label(a, dl);
	} else if (sync != TD_NONE) {
		*cause = CAUSE_SYNC;
		*what = td_an_site(a, sync);
	} else if (xfer != TD_NONE) {
		*cause = CAUSE_TRANSFER;
		*what = td_an_site(a, xfer);
	} else if (alloc != TD_NONE || rt != TD_NONE) {
		uint32_t r = alloc != TD_NONE ? alloc : rt;
		*cause = alloc != TD_NONE ? CAUSE_ALLOC : CAUSE_LAUNCH;
		*what = td_an_ev_label(a, r);
	} else if (py != TD_NONE || op != TD_NONE) {
		*cause = CAUSE_HOST;
		if (py != TD_NONE)
			*what = td_an_frame_mark(a, td_trace_ev(t, py)->name);
		else
			*what = td_an_ev_label(a, op);
	} else {
		*cause = CAUSE_HOST;
		*what = td_an_intern(a, "untraced host time between ops");
	}
}

/* --- attribution of one device's gaps ---------------------------------------------------- */

struct attr {
	struct td_analysis *a;
	struct idle_map m;
	struct td_vec segs;        /* struct td_seg */
	int64_t by_cause[CAUSE_COUNT];  /* this gap */
	uint32_t what_of[CAUSE_COUNT];
	int64_t what_ns[CAUSE_COUNT];
	struct td_vec pieces;      /* scratch for other threads */
};

static void credit(struct attr *st, uint8_t cause, uint32_t what, int64_t s, int64_t e)
{
	struct td_idle_item *it;
	struct td_seg *last;

	if (e <= s)
		return;
	it = idle_slot(&st->m, cause, what);
	it->ns += e - s;
	it->segments++;
	st->by_cause[cause] += e - s;
	if (e - s > st->what_ns[cause]) {
		st->what_ns[cause] = e - s;
		st->what_of[cause] = what;
	}
	last = st->segs.len ? &TD_VEC_AT(&st->segs, struct td_seg, st->segs.len - 1) : NULL;
	if (last && last->end == s && last->cause == cause && last->what == what) {
		last->end = e;
	} else {
		struct td_seg *g = td_vec_push(&st->segs);
		g->start = s;
		g->end = e;
		g->cause = cause;
		g->what = what;
	}
}

/* Index of the last event of track tr with ts <= at, or TD_NONE. */
static uint32_t last_before(const struct td_trace *t, const struct td_track *tr, int64_t at)
{
	uint32_t lo = tr->first, hi = tr->first + tr->count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (td_trace_ev(t, mid)->ts <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == tr->first ? TD_NONE : lo - 1;
}

typedef void (*span_fn)(struct attr *st, void *ctx, int64_t from, int64_t to, uint32_t cur);

/* Walks a host thread's span tree over [from, to): fn gets each piece with the innermost span
 * the thread was in (TD_NONE: none). */
static void walk_track(struct attr *st, uint32_t track, int64_t from, int64_t to, span_fn fn,
		       void *ctx)
{
	const struct td_analysis *a = st->a;
	const struct td_trace *t = a->t;
	const struct td_track *tr = td_trace_track(t, track);
	uint32_t end = tr->first + tr->count, k, cur;
	int64_t pos = from;
	int depth = 0;

	cur = last_before(t, tr, from);
	k = cur == TD_NONE ? tr->first : cur + 1;
	while (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) <= from && depth++ < MAX_CHAIN)
		cur = td_trace_parent(t, cur);
	if (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) <= from)
		cur = TD_NONE;
	while (pos < to) {
		int64_t seg = to;

		if (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) < seg)
			seg = td_ev_end(td_trace_ev(t, cur));
		if (k < end && td_trace_ev(t, k)->ts < seg)
			seg = td_trace_ev(t, k)->ts;
		if (seg > pos) {
			fn(st, ctx, pos, seg, cur);
			pos = seg;
		}
		depth = 0;
		while (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) <= pos) {
			cur = depth++ < MAX_CHAIN ? td_trace_parent(t, cur) : TD_NONE;
		}
		for (; k < end && td_trace_ev(t, k)->ts <= pos; k++) {
			const struct td_event *x = td_trace_ev(t, k);
			if (td_ev_end(x) > pos && x->kind != TD_K_OTHER_SPAN &&
			    !(a->name_class[x->name] & NC_IGNORE))
				cur = k;
		}
	}
}

/* Other threads: what the process's other threads were in while the launching thread recorded
 * nothing. Only causes in `accept` count; the best by priority wins each instant. */
struct other_piece {
	int64_t s, e;
	uint32_t what;
	uint8_t cause;
};

static int cause_prio(int c)
{
	switch (c) {
	case CAUSE_DATALOADER: return 6;
	case CAUSE_WARMUP: return 5;
	case CAUSE_SYNC: return 4;
	case CAUSE_TRANSFER: return 3;
	case CAUSE_ALLOC: return 2;
	default: return 0;
	}
}

struct collect_ctx {
	unsigned accept; /* 1 << cause */
};

static void collect_piece(struct attr *st, void *vc, int64_t from, int64_t to, uint32_t cur)
{
	struct collect_ctx *cc = vc;
	uint8_t cause;
	uint32_t what;

	if (cur == TD_NONE)
		return;
	classify(st->a, cur, &cause, &what);
	/* another thread's host time counts only as an op's (the backward's on the autograd
	 * thread): a thread in Python alone (a tqdm monitor, a queue's get) waits too */
	if (!(cc->accept & (1u << cause)) ||
	    (cause == CAUSE_HOST && td_trace_ev(st->a->t, cur)->kind != TD_K_CPU_OP))
		return;
	*(struct other_piece *)td_vec_push(&st->pieces) =
		(struct other_piece){from, to, what, cause};
}

#define OP_PIECE_LESS(x, y) ((x)->s < (y)->s || ((x)->s == (y)->s && (x)->e < (y)->e))
TD_DEFINE_SORT(sort_pieces, struct other_piece, OP_PIECE_LESS)

static void others(struct attr *st, uint32_t track, int64_t from, int64_t to, unsigned accept,
		   uint8_t dcause, uint32_t dwhat)
{
	const struct td_analysis *a = st->a;
	struct collect_ctx cc = {accept};
	uint32_t g0 = a->proc_of[track], glen = a->proc_len[track], i;
	struct other_piece *p, *active[MAX_OTHER_THREADS + 1];
	size_t np, nact = 0, next = 0;
	int64_t pos = from;

	st->pieces.len = 0;
	for (i = 0; i < glen && i < MAX_OTHER_THREADS; i++)
		if (a->proc_tracks[g0 + i] != track)
			walk_track(st, a->proc_tracks[g0 + i], from, to, collect_piece, &cc);
	np = st->pieces.len;
	p = st->pieces.data;
	if (!np) {
		credit(st, dcause, dwhat, from, to);
		return;
	}
	sort_pieces(p, np);
	/* sweep: each thread's pieces are disjoint, so at most one per thread is active */
	while (pos < to) {
		int64_t stop = to;
		const struct other_piece *best = NULL;
		size_t j, m;

		for (j = 0, m = 0; j < nact; j++)
			if (active[j]->e > pos)
				active[m++] = active[j];
		nact = m;
		while (next < np && p[next].s <= pos) {
			if (p[next].e > pos && nact < MAX_OTHER_THREADS + 1)
				active[nact++] = &p[next];
			next++;
		}
		if (next < np && p[next].s < stop)
			stop = p[next].s;
		for (j = 0; j < nact; j++) {
			if (active[j]->e < stop)
				stop = active[j]->e;
			if (!best || cause_prio(active[j]->cause) > cause_prio(best->cause))
				best = active[j];
		}
		if (best)
			credit(st, best->cause, best->what, pos, stop);
		else
			credit(st, dcause, dwhat, pos, stop);
		pos = stop;
	}
}

#define BLOCKING_CAUSES ((1u << CAUSE_SYNC) | (1u << CAUSE_TRANSFER))
#define SPECIFIC_CAUSES ((1u << CAUSE_DATALOADER) | (1u << CAUSE_WARMUP) | BLOCKING_CAUSES | \
			 (1u << CAUSE_ALLOC))

/* A stretch of a gap, walked over the launching thread's spans: where the thread recorded
 * nothing, what its other threads were in (of the causes `accept`), else cause/what; where it
 * was in a span, that span's cause if `keep` has it, else cause/what. Before the op was queued
 * the host's own work owns the time (keep: every cause; nothing recorded: nothing); after, what
 * the op waited for. */
struct piece_ctx {
	uint32_t track;
	unsigned accept, keep;
	uint8_t cause;
	uint32_t what;
	int queued;     /* after the op was queued: a start-up call the host is in holds it */
};

/* The start-up runtime call span cur is inside (TD_NONE: none): a first launch loading its
 * module, a context's first call. Loading a module may synchronize the context (CUDA's lazy
 * loading), so an op queued before it waits until it is done. */
static uint32_t warm_call(const struct td_analysis *a, uint32_t cur)
{
	int depth = 0;

	for (; cur != TD_NONE && depth < MAX_CHAIN; cur = td_trace_parent(a->t, cur), depth++)
		if (td_trace_ev(a->t, cur)->kind == TD_K_RUNTIME)
			return td_an_is_warm(a, cur) ? cur : TD_NONE;
	return TD_NONE;
}

/* 1 when span cur, the innermost the thread is in, is a Python frame of a C built-in
 * ("<built-in method run_backward of ...>"): its own time is C code that recorded no op. */
static int waits_in_builtin(const struct td_analysis *a, uint32_t cur)
{
	const struct td_event *e = td_trace_ev(a->t, cur);

	return e->kind == TD_K_PYTHON && !strncmp(td_trace_name(a->t, e->name), "<built-in ", 10);
}

static void piece(struct attr *st, void *vc, int64_t from, int64_t to, uint32_t cur)
{
	struct piece_ctx *pc = vc;
	uint8_t cause;
	uint32_t what, w;

	if (cur != TD_NONE && pc->queued && (w = warm_call(st->a, cur)) != TD_NONE) {
		credit(st, CAUSE_WARMUP, td_an_warm_label(st->a, w), from, to);
		return;
	}
	if (cur == TD_NONE) {
		others(st, pc->track, from, to, pc->accept, pc->cause, pc->what);
		return;
	}
	classify(st->a, cur, &cause, &what);
	/* the thread is inside a C built-in with no op under it (autograd's run_backward, a
	 * join, a queue's get): it waits on its process's other threads, so what they do then
	 * (the backward's ops and frees on the autograd thread) holds the time, the built-in's
	 * frame only where they do nothing */
	if (!pc->queued && cause == CAUSE_HOST && waits_in_builtin(st->a, cur)) {
		others(st, pc->track, from, to, pc->accept | (1u << CAUSE_LAUNCH) |
		       (1u << CAUSE_HOST), cause, what);
		return;
	}
	if ((1u << cause) & pc->keep)
		credit(st, cause, what, from, to);
	else
		credit(st, pc->cause, pc->what, from, to);
}

/* 1 when the op `next` had to wait for an event: a stream-wait record just before it on its
 * stream, or a cudaStreamWaitEvent on the launching thread since its previous launch. */
static int waited_on_event(const struct td_analysis *a, uint32_t next, uint32_t launch,
			   int64_t *stream)
{
	const struct td_trace *t = a->t;
	const struct td_track *gt = td_trace_track(t, td_trace_track_of(t, next));
	uint32_t k;
	int n;

	*stream = -1;
	for (k = next, n = 0; k > gt->first && n < 16; n++) {
		const struct td_event *x = td_trace_ev(t, --k);
		if (td_kind_is_gpu_op(x->kind))
			break;
		if (x->kind == TD_K_SYNC && (strstr(td_trace_name(t, x->name), "Wait") || x->aux)) {
			*stream = x->aux ? (int64_t)x->aux - 1 : -1;
			return 1;
		}
	}
	if (launch != TD_NONE) {
		const struct td_track *ht = td_trace_track(t, td_trace_track_of(t, launch));
		for (k = launch, n = 0; k > ht->first && n < 64; n++) {
			const struct td_event *x = td_trace_ev(t, --k);
			unsigned c = a->name_class[x->name];
			if (x->kind != TD_K_RUNTIME)
				continue;
			if (c & NC_STREAM_WAIT)
				return 1;
			if (c & NC_LAUNCH)
				break;
		}
	}
	return 0;
}

/* Whether runtime call l launches a CUDA (HIP) graph. */
static int graph_launch(const struct td_trace *t, uint32_t l)
{
	const char *n = td_trace_name(t, td_trace_ev(t, l)->name);
	return strstr(n, "GraphLaunch") != NULL;
}

/* What a queued op waited for, after `wait` ns with the device idle. */
static void queued_cause(struct td_analysis *a, uint32_t next, uint32_t launch, uint32_t prev,
			 int64_t wait, int launched_in_gap, uint8_t *cause, uint32_t *what)
{
	const struct td_trace *t = a->t;
	char buf[4096];
	int64_t stream;

	if (launched_in_gap ? wait <= a->params.launch_delay_ns : wait <= a->params.queued_gap_ns) {
		*cause = CAUSE_LAUNCH;
		*what = td_an_intern(a, launched_in_gap ? "launch latency" : TD_LABEL_QUEUED_GAP);
		return;
	}
	if (prev != TD_NONE && td_trace_track_of(t, prev) != td_trace_track_of(t, next)) {
		const struct td_event *pe = td_trace_ev(t, prev);
		*cause = (a->name_class[pe->name] & NC_COMM) ? CAUSE_COMM : CAUSE_DEPENDENCY;
		snprintf(buf, sizeof(buf), "waiting on stream %lld: %s",
			 (long long)td_trace_track(t, td_trace_track_of(t, prev))->stream,
			 td_an_name(a, pe->name));
		*what = td_an_intern(a, buf);
		return;
	}
	*cause = CAUSE_DEPENDENCY;
	if (waited_on_event(a, next, launch, &stream)) {
		if (stream >= 0)
			snprintf(buf, sizeof(buf), "waiting on an event of stream %lld", (long long)stream);
		else
			snprintf(buf, sizeof(buf), "waiting on an event (cudaStreamWaitEvent)");
		*what = td_an_intern(a, buf);
		return;
	}
	*what = td_an_intern(a, a->waits_dropped
			     ? "queued op waited while the device was idle, on a wait this filtered "
			       "trace dropped"
			     : launch != TD_NONE && graph_launch(t, launch) ? TD_LABEL_GRAPH_WAIT
			     : !a->has_comm && t->world_size <= 1 ? TD_LABEL_UNSEEN_WAIT_ONE
								   : TD_LABEL_UNSEEN_WAIT);
}

/* --- per device ---------------------------------------------------------------------------- */

struct op_at {
	int64_t ts;
	uint32_t ev;
};
#define OP_LESS(x, y) ((x)->ts < (y)->ts || ((x)->ts == (y)->ts && (x)->ev < (y)->ev))
TD_DEFINE_SORT(sort_ops, struct op_at, OP_LESS)

#define ITEM_LESS(x, y)                                                                        \
	((x)->ns > (y)->ns || ((x)->ns == (y)->ns && ((x)->cause < (y)->cause ||                 \
						       ((x)->cause == (y)->cause && (x)->what < (y)->what))))
TD_DEFINE_SORT(sort_items, struct td_idle_item, ITEM_LESS)

/* The device's window: the steady steps, run on to the end of the GPU work they launched. */
#define U32_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_u32, uint32_t, U32_LESS)

static void device_window(struct td_analysis *a, struct td_dev_analysis *d, const struct op_at *ops,
			  size_t nops)
{
	const struct td_trace *t = a->t;
	size_t i;

	if (!a->has_steps) {
		const struct td_device *dv = td_trace_find_device(t, d->device);
		d->win_start = d->host_start = dv ? dv->first_ts : 0;
		d->win_end = d->host_end = dv ? dv->last_end : 0;
		/* the host side starts with the launch of the window's first op; a launch that
		 * loaded its module first (start-up) counts from its end: the cold start before
		 * the GPU's first op is one-off time before the window (switch-a100: a first
		 * cudaLaunchKernel of 347 ms ahead of a 244 ms window) */
		for (i = 0; i < nops; i++) {
			uint32_t l = td_trace_launch(t, ops[i].ev);
			int64_t at;
			if (l == TD_NONE)
				continue;
			at = td_an_is_warm(a, l) ? td_ev_end(td_trace_ev(t, l)) : td_trace_ev(t, l)->ts;
			if (at < d->host_start)
				d->host_start = at;
		}
		return;
	}
	d->win_start = d->host_start = a->steps_start;
	d->win_end = d->host_end = a->steps_end;
	d->gsteps = td_malloc(a->nsteps * sizeof(*d->gsteps));
	for (i = 0; i < a->nsteps; i++)
		d->gsteps[i] = a->steps[i];
	for (i = 0; i < nops; i++) {
		uint32_t l = td_trace_launch(t, ops[i].ev);
		int64_t end = td_ev_end(td_trace_ev(t, ops[i].ev));
		size_t k;
		if (l == TD_NONE || (k = td_an_step_of(a, td_trace_ev(t, l)->ts)) == SIZE_MAX)
			continue;
		if (end > d->gsteps[k].end)
			d->gsteps[k].end = end;
		if (end > d->win_end)
			d->win_end = end;
	}
	for (i = 1; i < a->nsteps; i++) /* a step's GPU side starts when the previous one ends */
		if (d->gsteps[i].start < d->gsteps[i - 1].end)
			d->gsteps[i].start = d->gsteps[i - 1].end < d->gsteps[i].end
				? d->gsteps[i - 1].end : d->gsteps[i].end;
}

void td_an_analyse_device(struct td_analysis *a, struct td_dev_analysis *d)
{
	struct td_dev_events gpu;
	struct td_track_cursor lcur;
	uint32_t k;
	const struct td_trace *t = a->t;
	struct attr st;
	struct op_at *ops;
	size_t nops = 0, i, cap = 0, oi = 0, nl = 0, most;
	uint32_t *launches;
	struct td_vec gaps;
	uint32_t last_op = TD_NONE; /* the op that ended last among those started so far */
	int64_t prev, last_end = INT64_MIN;

	memset(&st, 0, sizeof(st));
	st.a = a;
	td_vec_init(&st.segs, sizeof(struct td_seg));
	td_vec_init(&st.pieces, sizeof(struct other_piece));
	/* the device's GPU ops by start time, and the thread that launches most of them */
	cap = td_dev_events_count(t, d->device);
	memset(&lcur, 0, sizeof(lcur));
	ops = td_malloc((cap ? cap : 1) * sizeof(*ops));
	launches = td_malloc((cap ? cap : 1) * sizeof(*launches));
	for (td_dev_events_begin(&gpu, t, d->device); td_dev_events_next(&gpu, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t l;
		if (!td_kind_is_gpu_op(e->kind) || (a->name_class[e->name] & NC_IGNORE))
			continue;
		ops[nops].ts = e->ts;
		ops[nops].ev = k;
		nops++;
		if ((l = td_trace_launch(t, k)) != TD_NONE)
			launches[nl++] = td_trace_track_at(t, &lcur, l);
	}
	sort_ops(ops, nops);
	/* the thread with the most launches (ties: the first), from the launchers sorted */
	sort_u32(launches, nl);
	d->host_track = TD_NONE;
	for (i = 0, most = 0; i < nl; ) {
		size_t j = i;
		while (j < nl && launches[j] == launches[i])
			j++;
		if (j - i > most) {
			most = j - i;
			d->host_track = launches[i];
		}
		i = j;
	}
	free(launches);

	device_window(a, d, ops, nops);
	d->nbusy = td_trace_busy_skip(t, d->device, d->win_start, d->win_end, a->skip_name, &d->busy);
	d->busy_ns = td_intervals_total(d->busy, d->nbusy);
	d->idle_ns = (d->win_end - d->win_start) - d->busy_ns;
	for (i = 0; i < nops; i++) {
		const struct td_event *e = td_trace_ev(t, ops[i].ev);
		if (e->kind == TD_K_KERNEL && (td_an_class(a, e->name) & NC_COMM) &&
		    !(td_an_class(a, e->name) & NC_IGNORE) && e->ts < d->win_end &&
		    td_ev_end(e) > d->win_start)
			d->comm_kernels++;
		if (ops[i].ts < d->win_start || ops[i].ts >= d->win_end)
			continue;
		d->ops_in_window++;
		if (td_trace_ev(t, ops[i].ev)->kind == TD_K_KERNEL) {
			d->kernels++;
			if (td_an_is_small(a, ops[i].ev)) {
				d->small_kernels++;
				a->small[ops[i].ev >> 3] |= (uint8_t)(1u << (ops[i].ev & 7));
			}
		}
	}

	/* the gaps, and who is to blame for each nanosecond of them */
	td_vec_init(&gaps, sizeof(struct td_gap));
	prev = d->win_start;
	for (i = 0; i <= d->nbusy; i++) {
		int64_t gs = prev, ge = i < d->nbusy ? d->busy[i].start : d->win_end, q = gs;
		struct td_gap *g;
		uint32_t next = TD_NONE, launch = TD_NONE, host;
		uint32_t seg0 = (uint32_t)st.segs.len;
		int c, best = -1;

		if (i < d->nbusy)
			prev = d->busy[i].end;
		if (ge <= gs)
			continue;
		memset(st.by_cause, 0, sizeof(st.by_cause));
		memset(st.what_ns, 0, sizeof(st.what_ns));
		memset(st.what_of, 0, sizeof(st.what_of));
		while (oi < nops && ops[oi].ts < ge) {
			int64_t e = td_ev_end(td_trace_ev(t, ops[oi].ev));
			if (e >= last_end) {
				last_end = e;
				last_op = ops[oi].ev;
			}
			oi++;
		}
		if (i < d->nbusy && oi < nops)
			next = ops[oi].ev;
		if (next != TD_NONE)
			launch = td_trace_launch(t, next);
		host = launch != TD_NONE ? td_trace_track_at(t, &lcur, launch) : d->host_track;
		if (launch != TD_NONE) {
			int64_t lend = td_ev_end(td_trace_ev(t, launch));
			q = lend > gs ? (lend < ge ? lend : ge) : gs;
		} else {
			q = ge;
		}
		/* before the op was queued: what the host was doing */
		if (q > gs) {
			struct piece_ctx hc = {host, SPECIFIC_CAUSES, ~0u, CAUSE_NOTHING, 0, 0};
			if (host != TD_NONE)
				walk_track(&st, host, gs, q, piece, &hc);
			else
				credit(&st, CAUSE_NOTHING, 0, gs, q);
		}
		/* queued: what it waited for. A blocking call the host is in meanwhile (a
		 * synchronize, a copy to pageable memory) waits for the GPU: it cannot be what the
		 * op queued before it waits for (negq-rank0: a 146 ms copy to the host waits behind
		 * a graph queued 66 ms before the GPU ran it) */
		if (q < ge) {
			struct piece_ctx qc = {host, 0, 0, 0, 0, 1};
			int64_t lend = td_ev_end(td_trace_ev(t, launch));
			queued_cause(a, next, launch, last_end >= gs ? last_op : TD_NONE, ge - q,
				     lend > gs, &qc.cause, &qc.what);
			/* a short wait is launch overhead whatever the host does meanwhile */
			if (qc.cause == CAUSE_LAUNCH)
				credit(&st, qc.cause, qc.what, q, ge);
			else
				walk_track(&st, host, q, ge, piece, &qc);
		}
		g = td_vec_push(&gaps);
		g->start = gs;
		g->end = ge;
		g->next_op = next;
		g->seg = seg0;
		g->host = host;
		for (c = 0; c < CAUSE_COUNT; c++)
			if (st.by_cause[c] && (best < 0 || st.by_cause[c] > st.by_cause[best]))
				best = c;
		g->cause = (uint8_t)(best < 0 ? CAUSE_NOTHING : best);
		g->cause_ns = best < 0 ? 0 : st.by_cause[best];
		g->what = best < 0 ? 0 : st.what_of[best];
	}
	d->gaps = gaps.data;
	d->ngaps = gaps.len;
	d->segs = st.segs.data;
	d->nsegs = st.segs.len;
	td_vec_free(&st.pieces);
	free(ops);

	td_vec_init(&d->idle, sizeof(struct td_idle_item));
	td_vec_init(&d->claims, sizeof(struct td_claim));
	for (i = 0; i < st.m.cap; i++) {
		if (st.m.slots[i].used) {
			struct td_idle_item *it = td_vec_push(&d->idle);
			*it = st.m.slots[i].item;
			d->idle_by_cause[it->cause] += it->ns;
		}
	}
	free(st.m.slots);
	sort_items(d->idle.data, d->idle.len);
}
