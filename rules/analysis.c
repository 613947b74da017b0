/* SPDX-License-Identifier: MIT */
#include "rules/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "rules/config.h"
#include "rules/internal.h"

/* Span chains deeper than this are cut when classifying (real traces nest < 100 levels). */
#define MAX_CHAIN 256
/* Other threads of a process looked at when the launching thread recorded nothing. */
#define MAX_OTHER_THREADS 64

const char *td_cause_id(enum td_cause c)
{
	static const char *const ids[CAUSE_COUNT] = {
		"dataloader", "warmup", "sync", "transfer", "allocator", "communication", "launch",
		"dependency", "host", "nothing",
	};
	return (unsigned)c < CAUSE_COUNT ? ids[c] : "?";
}

const char *td_cause_title(enum td_cause c)
{
	static const char *const t[CAUSE_COUNT] = {
		"data loading", "start-up work", "synchronizing call", "blocking transfer",
		"allocator", "waiting on a collective", "kernel-launch overhead",
		"waiting on another stream or event", "CPU op / Python", "nothing recorded on the host",
	};
	return (unsigned)c < CAUSE_COUNT ? t[c] : "?";
}

void td_params_default(struct td_params *p)
{
	p->small_kernel_ns = 10000;
	p->small_run_min = 3;
	p->small_run_gap_ns = 20000;
	p->dataloader_share = 0.05;
	p->sev_high = 0.10;
	p->sev_medium = 0.03;
	p->sev_low = 0.01;
	p->launch_delay_ns = 100000;
	p->queued_gap_ns = 30000;
	p->gap_report_ns = 50000;
	p->evidence_max = 5;
	p->low_util = 0.5;
	p->util_chunks = 30;
	p->warmup_step_ratio = 3.0;
	p->memory_high_fraction = 0.9;
	p->gpu_bound_busy = 0.85;
}

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

/* --- labels ------------------------------------------------------------------------------ */

uint32_t td_an_intern(struct td_analysis *a, const char *s)
{
	return td_strtab_intern(&a->labels, s, strlen(s));
}

uint32_t td_an_mark(struct td_analysis *a, const char *name)
{
	size_t n = strlen(name) + 3;
	char stack[512], *buf = n <= sizeof(stack) ? stack : td_malloc(n);
	uint32_t id;

	td_mark(buf, n, name);
	id = td_an_intern(a, buf);
	if (buf != stack)
		free(buf);
	return id;
}

const char *td_an_name(struct td_analysis *a, uint32_t name)
{
	return td_an_label(a, td_an_mark(a, td_trace_name(a->t, name)));
}

static uint32_t intern_name(struct td_analysis *a, uint32_t ev)
{
	return td_an_mark(a, td_trace_name(a->t, td_trace_ev(a->t, ev)->name));
}

static int public_op(const struct td_analysis *a, const struct td_event *x)
{
	return (x->kind == TD_K_CPU_OP || x->kind == TD_K_USER_ANNOTATION) &&
	       !(a->name_class[x->name] & (NC_INTERNAL_OP | NC_STEP | NC_DATALOADER));
}

uint32_t td_an_site(struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	char buf[1024];
	const char *ops[2] = {NULL, NULL};
	int nops = 0, depth = 0;
	uint32_t e, py = TD_NONE;

	for (e = ev; e != TD_NONE && depth < MAX_CHAIN; e = td_trace_parent(t, e), depth++) {
		const struct td_event *x = td_trace_ev(t, e);
		unsigned c = a->name_class[x->name];
		if (x->kind == TD_K_PYTHON && (c & NC_PY_USER) && py == TD_NONE)
			py = e;
		if (nops < 2 && public_op(a, x))
			ops[nops++] = td_trace_name(t, x->name);
		if (py != TD_NONE && nops == 2)
			break;
	}
	if (py != TD_NONE) {
		char fr[512], m1[520], m2[400];
		td_mark(m1, sizeof(m1), td_frame_label(td_trace_name(t, td_trace_ev(t, py)->name), fr,
						       sizeof(fr)));
		if (nops)
			snprintf(buf, sizeof(buf), "%s (%s)", m1, td_mark(m2, sizeof(m2), ops[0]));
		else
			snprintf(buf, sizeof(buf), "%s", m1);
	} else if (nops == 2) {
		char m1[500], m2[500];
		snprintf(buf, sizeof(buf), "%s <- %s", td_mark(m1, sizeof(m1), ops[0]),
			 td_mark(m2, sizeof(m2), ops[1]));
	} else if (nops == 1) {
		td_mark(buf, sizeof(buf), ops[0]);
	} else {
		td_mark(buf, sizeof(buf), td_trace_name(t, td_trace_ev(t, ev)->name));
	}
	return td_an_intern(a, buf);
}

/* The innermost user Python frame of op ev: from the python_function spans around it, else
 * from its "Call stack" arg; "" when neither has one. As a label ("train.py:42 step"). */
const char *td_an_user_frame(const struct td_analysis *a, uint32_t ev, char *buf, size_t cap)
{
	const struct td_trace *t = a->t;
	const struct td_op_args *oa;
	uint32_t p;

	for (p = td_trace_parent(t, ev); a->has_python && p != TD_NONE; p = td_trace_parent(t, p)) {
		const struct td_event *e = td_trace_ev(t, p);
		if (e->kind == TD_K_PYTHON && (td_an_class(a, e->name) & NC_PY_USER))
			return td_frame_label(td_trace_name(t, e->name), buf, cap);
	}
	if ((oa = td_trace_op_args(t, ev)) != NULL && oa->stack) {
		const char *s = td_trace_name(t, oa->stack), *semi;
		while (*s) { /* innermost first, ';'-separated */
			char frame[1024];
			size_t n;
			semi = strchr(s, ';');
			n = semi ? (size_t)(semi - s) : strlen(s);
			if (n < sizeof(frame)) {
				memcpy(frame, s, n);
				frame[n] = '\0';
				if (td_is_user_frame(frame))
					return td_frame_label(frame, buf, cap);
			}
			if (!semi)
				break;
			s = semi + 1;
		}
	}
	buf[0] = '\0';
	return buf;
}

uint32_t td_an_user_op(const struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	uint32_t e;
	int depth = 0;

	for (e = td_trace_parent(t, ev); e != TD_NONE && depth < MAX_CHAIN;
	     e = td_trace_parent(t, e), depth++)
		if (public_op(a, td_trace_ev(t, e)))
			return e;
	return ev;
}

int td_an_is_warm(const struct td_analysis *a, uint32_t ev)
{
	size_t lo = 0, hi = a->nwarm_ev;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->warm_ev[mid] < ev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->nwarm_ev && a->warm_ev[lo] == ev;
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
		if (warm == TD_NONE && ((c & (NC_COMPILE | NC_WARMUP)) ||
					(x->kind == TD_K_RUNTIME && td_an_is_warm(a, e))))
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
		} else if (op == TD_NONE && public_op(a, x) && !(c & NC_DATALOADER)) {
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
		*what = intern_name(a, dl);
	} else if (sync != TD_NONE) {
		*cause = CAUSE_SYNC;
		*what = td_an_site(a, sync);
	} else if (xfer != TD_NONE) {
		*cause = CAUSE_TRANSFER;
		*what = td_an_site(a, xfer);
	} else if (alloc != TD_NONE || rt != TD_NONE) {
		uint32_t r = alloc != TD_NONE ? alloc : rt;
		*cause = alloc != TD_NONE ? CAUSE_ALLOC : CAUSE_LAUNCH;
		*what = intern_name(a, r);
	} else if (py != TD_NONE || op != TD_NONE) {
		char buf[512];
		*cause = CAUSE_HOST;
		if (py != TD_NONE)
			*what = td_an_mark(a, td_frame_label(td_trace_name(t, td_trace_ev(t, py)->name), buf,
							     sizeof(buf)));
		else
			*what = intern_name(a, op);
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
	struct other_piece *p;
	uint8_t cause;
	uint32_t what;

	if (cur == TD_NONE)
		return;
	classify(st->a, cur, &cause, &what);
	if (!(cc->accept & (1u << cause)))
		return;
	p = td_vec_push(&st->pieces);
	p->s = from;
	p->e = to;
	p->cause = cause;
	p->what = what;
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

struct host_ctx {
	uint32_t track;
};

/* Host time before the op was queued: what the launching thread was in. */
static void host_piece(struct attr *st, void *vc, int64_t from, int64_t to, uint32_t cur)
{
	struct host_ctx *hc = vc;
	uint8_t cause;
	uint32_t what;

	if (cur == TD_NONE) {
		others(st, hc->track, from, to, SPECIFIC_CAUSES, CAUSE_NOTHING, 0);
		return;
	}
	classify(st->a, cur, &cause, &what);
	credit(st, cause, what, from, to);
}

struct queued_ctx {
	uint32_t track;
	uint8_t cause;
	uint32_t what;
};

/* Time after the op was queued: a blocking call on the launching thread owns it, else what the
 * op waited for. */
static void queued_piece(struct attr *st, void *vc, int64_t from, int64_t to, uint32_t cur)
{
	struct queued_ctx *qc = vc;
	uint8_t cause;
	uint32_t what;

	if (cur == TD_NONE) {
		others(st, qc->track, from, to, BLOCKING_CAUSES, qc->cause, qc->what);
		return;
	}
	classify(st->a, cur, &cause, &what);
	if ((1u << cause) & BLOCKING_CAUSES)
		credit(st, cause, what, from, to);
	else
		credit(st, qc->cause, qc->what, from, to);
}

/* 1 when the op `next` had to wait for an event: a stream-wait record just before it on its
 * stream, or a cudaStreamWaitEvent on the launching thread since its previous launch. */
static int waited_on_event(const struct td_analysis *a, uint32_t next, uint32_t launch,
			   int64_t *stream)
{
	const struct td_trace *t = a->t;
	const struct td_track *gt = td_trace_track(t, td_trace_ev(t, next)->track);
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
		const struct td_track *ht = td_trace_track(t, td_trace_ev(t, launch)->track);
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

/* What a queued op waited for, after `wait` ns with the device idle. */
static void queued_cause(struct td_analysis *a, uint32_t next, uint32_t launch, uint32_t prev,
			 int64_t wait, int launched_in_gap, uint8_t *cause, uint32_t *what)
{
	const struct td_trace *t = a->t;
	const struct td_event *ne = td_trace_ev(t, next);
	char buf[4096];
	int64_t stream;

	if (launched_in_gap ? wait <= a->params.launch_delay_ns : wait <= a->params.queued_gap_ns) {
		*cause = CAUSE_LAUNCH;
		*what = td_an_intern(a, launched_in_gap ? "launch latency" : TD_LABEL_QUEUED_GAP);
		return;
	}
	if (prev != TD_NONE && td_trace_ev(t, prev)->track != ne->track) {
		const struct td_event *pe = td_trace_ev(t, prev);
		*cause = (a->name_class[pe->name] & NC_COMM) ? CAUSE_COMM : CAUSE_DEPENDENCY;
		snprintf(buf, sizeof(buf), "waiting on stream %lld: %s",
			 (long long)td_trace_track(t, pe->track)->stream, td_an_name(a, pe->name));
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
	*what = td_an_intern(a, "queued op waited while the device was idle: a wait the trace does "
			     "not show (another rank, a host callback, another process)");
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

/* The steady step whose host span holds ts, or SIZE_MAX. */
static size_t step_of(const struct td_analysis *a, int64_t ts)
{
	size_t lo = 0, hi = a->nsteps;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (a->steps[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || ts >= a->steps[lo - 1].end)
		return SIZE_MAX;
	return lo - 1;
}

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
		/* the host side starts with the launch of the window's first op */
		for (i = 0; i < nops; i++) {
			uint32_t l = td_trace_launch(t, ops[i].ev);
			if (l != TD_NONE && td_trace_ev(t, l)->ts < d->host_start)
				d->host_start = td_trace_ev(t, l)->ts;
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
		if (l == TD_NONE || (k = step_of(a, td_trace_ev(t, l)->ts)) == SIZE_MAX)
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

static void analyse_device(struct td_analysis *a, struct td_dev_analysis *d)
{
	const uint32_t *dtr;
	size_t ndtr;
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
	dtr = td_trace_device_tracks(t, d->device, &ndtr);
	for (i = 0; i < ndtr; i++)
		cap += td_trace_track(t, dtr[i])->count;
	ops = td_malloc((cap ? cap : 1) * sizeof(*ops));
	launches = td_malloc((cap ? cap : 1) * sizeof(*launches));
	dtr = td_trace_device_tracks(t, d->device, &ndtr);
	for (i = 0; i < ndtr; i++) {
		const struct td_track *tr = td_trace_track(t, dtr[i]);
		uint32_t k;
		for (k = tr->first; k < tr->first + tr->count; k++) {
			const struct td_event *e = td_trace_ev(t, k);
			uint32_t l;
			if (!td_kind_is_gpu_op(e->kind) || (a->name_class[e->name] & NC_IGNORE))
				continue;
			ops[nops].ts = e->ts;
			ops[nops].ev = k;
			nops++;
			if ((l = td_trace_launch(t, k)) != TD_NONE)
				launches[nl++] = td_trace_ev(t, l)->track;
		}
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
		if (ops[i].ts < d->win_start || ops[i].ts >= d->win_end)
			continue;
		d->ops_in_window++;
		if (td_trace_ev(t, ops[i].ev)->kind == TD_K_KERNEL) {
			d->kernels++;
			d->small_kernels += td_an_is_small(a, ops[i].ev) != 0;
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
		host = launch != TD_NONE ? td_trace_ev(t, launch)->track : d->host_track;
		if (launch != TD_NONE) {
			int64_t lend = td_ev_end(td_trace_ev(t, launch));
			q = lend > gs ? (lend < ge ? lend : ge) : gs;
		} else {
			q = ge;
		}
		/* before the op was queued: what the host was doing */
		if (q > gs) {
			struct host_ctx hc = {host};
			if (host != TD_NONE)
				walk_track(&st, host, gs, q, host_piece, &hc);
			else
				credit(&st, CAUSE_NOTHING, 0, gs, q);
		}
		/* queued: what it waited for, unless a blocking call on the host holds it */
		if (q < ge) {
			struct queued_ctx qc;
			int64_t lend = td_ev_end(td_trace_ev(t, launch));
			qc.track = host;
			queued_cause(a, next, launch, last_end >= gs ? last_op : TD_NONE, ge - q,
				     lend > gs, &qc.cause, &qc.what);
			/* a short wait is launch overhead whatever the host does meanwhile */
			if (qc.cause == CAUSE_LAUNCH)
				credit(&st, qc.cause, qc.what, q, ge);
			else
				walk_track(&st, host, q, ge, queued_piece, &qc);
		}
		g = td_vec_push(&gaps);
		g->start = gs;
		g->end = ge;
		g->next_op = next;
		g->seg = seg0;
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

int td_an_is_small(const struct td_analysis *a, uint32_t k)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, k);
	uint32_t l = td_trace_launch(t, k);

	if (e->kind != TD_K_KERNEL || (a->name_class[e->name] & NC_IGNORE))
		return 0;
	return td_ev_dur(e) < a->params.small_kernel_ns ||
	       (l != TD_NONE && td_ev_dur(e) < td_ev_dur(td_trace_ev(t, l)));
}

void td_an_small_runs(const struct td_analysis *a, size_t d, td_run_fn fn, void *ctx)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t i, ndtr;
	const uint32_t *dtr = td_trace_device_tracks(t, dv->device, &ndtr);

	for (i = 0; i < ndtr; i++) {
		const struct td_track *tr = td_trace_track(t, dtr[i]);
		struct td_small_run run;
		int64_t prev_end = 0;
		uint32_t k;
		int open = 0;

		memset(&run, 0, sizeof(run));
		for (k = tr->first; k <= tr->first + tr->count; k++) {
			const struct td_event *e = k < tr->first + tr->count ? td_trace_ev(t, k) : NULL;
			int small;

			if (e && (e->kind != TD_K_KERNEL || e->ts < dv->win_start || e->ts >= dv->win_end))
				continue;
			small = e && td_an_is_small(a, k);
			if (open && small && e->ts - prev_end <= a->params.small_run_gap_ns) {
				int64_t gap = e->ts > prev_end ? e->ts - prev_end : 0;
				if (gap)
					run.idle_ns += gap - td_an_busy_between(a, d, prev_end, e->ts);
				run.last = k;
				run.n++;
				run.end = td_ev_end(e);
			} else {
				if (open && run.n >= (uint32_t)a->params.small_run_min)
					fn(ctx, &run);
				open = small;
				if (small) {
					run.first = run.last = k;
					run.n = 1;
					run.start = e->ts;
					run.end = td_ev_end(e);
					run.idle_ns = 0;
				}
			}
			if (e)
				prev_end = td_ev_end(e);
		}
	}
}

#define STEP_LESS(x, y) ((x)->start < (y)->start || ((x)->start == (y)->start && (x)->end > (y)->end))
TD_DEFINE_SORT(sort_steps, struct td_interval, STEP_LESS)

/* Steps: spans named ProfilerStep#N or matching the configured step markers, on the host, one
 * per start time. Leading steps of warmup_step_ratio times the median or more are start-up
 * (a cold first step: allocation, autotuning, compilation) and left out of the steady state. */
static void find_steps(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	struct td_vec v;
	uint32_t i;
	size_t k, j, k0 = 0;

	td_vec_init(&v, sizeof(struct td_interval));
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		struct td_interval *s;
		if ((e->kind != TD_K_CPU_OP && e->kind != TD_K_USER_ANNOTATION) ||
		    !(a->name_class[e->name] & NC_STEP))
			continue;
		s = td_vec_push(&v);
		s->start = e->ts;
		s->end = td_ev_end(e);
	}
	sort_steps(v.data, v.len);
	for (k = 0, j = 0; k < v.len; k++) { /* the same step recorded twice */
		struct td_interval *s = &TD_VEC_AT(&v, struct td_interval, k);
		if (j && TD_VEC_AT(&v, struct td_interval, j - 1).start == s->start)
			continue;
		TD_VEC_AT(&v, struct td_interval, j++) = *s;
	}
	if (j >= 3) {
		int64_t *dur = td_malloc(j * sizeof(*dur)), med;
		for (k = 0; k < j; k++)
			dur[k] = TD_VEC_AT(&v, struct td_interval, k).end -
				 TD_VEC_AT(&v, struct td_interval, k).start;
		med = td_median_i64(dur, j);
		free(dur);
		while (k0 + 1 < j && med > 0) {
			const struct td_interval *s = &TD_VEC_AT(&v, struct td_interval, k0);
			if ((double)(s->end - s->start) < a->params.warmup_step_ratio * (double)med)
				break;
			k0++;
		}
	}
	if (k0) {
		a->warm_steps = k0;
		a->warm_start = TD_VEC_AT(&v, struct td_interval, 0).start;
		a->warm_end = TD_VEC_AT(&v, struct td_interval, k0 - 1).end;
		memmove(v.data, (struct td_interval *)v.data + k0, (j - k0) * sizeof(struct td_interval));
		j -= k0;
	}
	a->steps = v.data;
	a->nsteps = j;
	if (j) {
		a->has_steps = 1;
		a->steps_start = a->steps[0].start;
		a->steps_end = a->steps[0].end;
		for (k = 0; k < j; k++)
			if (a->steps[k].end > a->steps_end)
				a->steps_end = a->steps[k].end;
	}
}

static int64_t *step_durations(const struct td_analysis *a)
{
	int64_t *d = td_malloc((a->nsteps ? a->nsteps : 1) * sizeof(*d));
	size_t i;

	for (i = 0; i < a->nsteps; i++)
		d[i] = a->steps[i].end - a->steps[i].start;
	return d;
}

int64_t td_an_median_step(const struct td_analysis *a)
{
	int64_t *d = step_durations(a), med = td_median_i64(d, a->nsteps);
	free(d);
	return med;
}

int64_t td_an_mean_step(const struct td_analysis *a)
{
	return a->nsteps ? (a->steps_end - a->steps_start) / (int64_t)a->nsteps : 0;
}

/* CPU tracks grouped by process, for looking at a thread's siblings; within a process the
 * threads with the most events come first. */
struct trk {
	int64_t pid;
	uint8_t pid_str;
	uint32_t count, id;
};
#define TRK_LESS(x, y) ((x)->pid < (y)->pid || ((x)->pid == (y)->pid && ((x)->pid_str < \
	(y)->pid_str || ((x)->pid_str == (y)->pid_str && ((x)->count > (y)->count || \
	((x)->count == (y)->count && (x)->id < (y)->id))))))
TD_DEFINE_SORT(sort_trk, struct trk, TRK_LESS)

static void group_threads(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	size_t n = t->tracks.len, i, m = 0, g;
	struct trk *v = td_malloc((n ? n : 1) * sizeof(*v));

	a->proc_tracks = td_malloc((n ? n : 1) * sizeof(uint32_t));
	a->proc_of = td_calloc(n ? n : 1, sizeof(uint32_t));
	a->proc_len = td_calloc(n ? n : 1, sizeof(uint32_t));
	for (i = 0; i < n; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (tr->is_gpu)
			continue;
		v[m].pid = tr->pid;
		v[m].pid_str = tr->pid_is_str;
		v[m].count = tr->count;
		v[m].id = (uint32_t)i;
		m++;
	}
	sort_trk(v, m);
	for (i = 0; i < m; i = g) {
		size_t k;
		for (g = i; g < m && v[g].pid == v[i].pid && v[g].pid_str == v[i].pid_str; g++)
			a->proc_tracks[g] = v[g].id;
		for (k = i; k < g; k++) {
			a->proc_of[v[k].id] = (uint32_t)i;
			a->proc_len[v[k].id] = (uint32_t)(g - i);
		}
	}
	free(v);
}

void td_analysis_run(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg)
{
	size_t i, k = 0;

	memset(a, 0, sizeof(*a));
	a->t = t;
	if (!cfg) { /* the defaults, patterns included */
		cfg = a->own_cfg = td_malloc(sizeof(*cfg));
		td_config_default(cfg);
	}
	a->cfg = cfg;
	a->params = cfg->params;
	td_strtab_init(&a->labels);
	a->name_class = td_malloc((t->names.count + 1) * sizeof(uint32_t));
	for (i = 0; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		size_t len = td_strtab_len(&t->names, (uint32_t)i);
		uint32_t c = td_name_class(n);
		if (i) {
			if (td_config_match(cfg, PAT_SYNC_OPS, n, len))
				c |= NC_USER_SYNC;
			if (td_config_match(cfg, PAT_STEP_MARKERS, n, len))
				c |= NC_STEP;
			if (td_config_match(cfg, PAT_DATALOADER, n, len))
				c |= NC_DATALOADER;
			if (td_config_match(cfg, PAT_COMMUNICATION, n, len))
				c |= NC_COMM;
			if (td_config_match(cfg, PAT_WARMUP, n, len))
				c |= NC_WARMUP;
			if (td_config_match(cfg, PAT_IGNORE, n, len)) {
				c |= NC_IGNORE;
				if (!a->skip_name)
					a->skip_name = td_calloc(t->names.count + 1, 1);
				a->skip_name[i] = 1;
			}
		}
		a->name_class[i] = c;
	}
	a->has_python = t->by_kind[TD_K_PYTHON] > 0;
	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		if (strstr(n, "Backward") || strstr(n, "autograd::engine") ||
		    !strncmp(n, "Optimizer.step#", 15) || !strncmp(n, "Optimizer.zero_grad#", 20) ||
		    (a->name_class[i] & NC_SINGLE_TENSOR_OPT))
			a->training = 1;
		else if (strstr(n, "vllm/") || strstr(n, "vllm::") || strstr(n, "sglang/") ||
			 strstr(n, "sglang::"))
			a->serving = 1;
	}
	if (a->training)
		a->serving = 0;
	find_steps(a);
	group_threads(a);
	td_an_detect_warmup(a);
	for (i = 0; i < t->devices.len; i++)
		if (TD_VEC_AT(&t->devices, struct td_device, i).ops)
			a->ndev++;
	a->dev = td_calloc(a->ndev ? a->ndev : 1, sizeof(*a->dev));
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *dv = &TD_VEC_AT(&t->devices, struct td_device, i);
		if (!dv->ops)
			continue;
		a->dev[k].device = dv->id;
		analyse_device(a, &a->dev[k]);
		k++;
	}
}

void td_analysis_free(struct td_analysis *a)
{
	size_t i;

	for (i = 0; i < a->ndev; i++) {
		free(a->dev[i].busy);
		free(a->dev[i].gaps);
		free(a->dev[i].segs);
		free(a->dev[i].gsteps);
		td_vec_free(&a->dev[i].idle);
		td_vec_free(&a->dev[i].claims);
	}
	free(a->dev);
	free(a->name_class);
	free(a->skip_name);
	free(a->steps);
	free(a->warm_ev);
	free(a->proc_tracks);
	free(a->proc_of);
	free(a->proc_len);
	free(a->block_units);
	td_strtab_free(&a->labels);
	if (a->own_cfg) {
		td_config_free(a->own_cfg);
		free(a->own_cfg);
	}
	memset(a, 0, sizeof(*a));
}

int td_an_outer_dataloader(const struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	uint32_t p;
	int depth = 0;

	if (!(a->name_class[td_trace_ev(t, ev)->name] & NC_DATALOADER) ||
	    td_kind_on_gpu_track(td_trace_ev(t, ev)->kind))
		return 0;
	for (p = td_trace_parent(t, ev); p != TD_NONE && depth < MAX_CHAIN;
	     p = td_trace_parent(t, p), depth++)
		if (a->name_class[td_trace_ev(t, p)->name] & NC_DATALOADER)
			return 0;
	return 1;
}

int64_t td_an_idle_of(const struct td_analysis *a, size_t d, enum td_cause c, uint32_t what)
{
	size_t i;

	for (i = 0; i < a->dev[d].idle.len; i++) {
		const struct td_idle_item *it = &TD_VEC_AT(&a->dev[d].idle, struct td_idle_item, i);
		if (it->cause == c && it->what == what)
			return it->ns;
	}
	return 0;
}

int64_t td_an_busy_between(const struct td_analysis *a, size_t d, int64_t from, int64_t to)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t sum = 0;
	size_t lo = 0, hi = dv->nbusy;

	while (lo < hi) { /* first interval ending after from */
		size_t mid = (lo + hi) / 2;
		if (dv->busy[mid].end <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < dv->nbusy && dv->busy[lo].start < to; lo++) {
		int64_t s = dv->busy[lo].start > from ? dv->busy[lo].start : from;
		int64_t e = dv->busy[lo].end < to ? dv->busy[lo].end : to;
		if (e > s)
			sum += e - s;
	}
	return sum;
}

int td_an_dev_index(const struct td_analysis *a, int32_t dev)
{
	size_t lo = 0, hi = a->ndev;

	while (lo < hi) { /* a->dev is by id */
		size_t mid = lo + (hi - lo) / 2;
		if (a->dev[mid].device < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->ndev && a->dev[lo].device == dev ? (int)lo : -1;
}

size_t td_an_dev_of_host(const struct td_analysis *a, uint32_t ev, uint32_t op)
{
	const struct td_trace *t = a->t;
	size_t d;

	if (op != TD_NONE) {
		int i = td_an_dev_index(a, td_trace_track(t, td_trace_ev(t, op)->track)->device);
		if (i >= 0)
			return (size_t)i;
	}
	for (d = 0; d < a->ndev; d++)
		if (a->dev[d].host_track == td_trace_ev(t, ev)->track)
			return d;
	return 0;
}
