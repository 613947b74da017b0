/* SPDX-License-Identifier: MIT */
/* Replays the graph (replay/replay.h): every node's start is the latest of its edges, its end
 * its start plus its own cost (a wait: no earlier than what it waits for, plus the tail). Times
 * are pulled depth-first with an explicit stack, so a chain of millions of calls needs no deep
 * recursion; a cycle (the measured order contradicting an edge, which the slack allows) is cut
 * at the node first met again, which then counts with its measured time. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/replay.h"

#define NONE_T INT64_MIN /* no constraint: a removed node nothing gates */

enum { F_REMOVED = 1, F_UNWAIT = 2, F_COST = 4, F_FUSED = 8 };

struct sim {
	const struct td_replay *g;
	const int64_t *gap;    /* the lane lags after the edits */
	const int64_t *cost;   /* own costs the edits set (F_COST) */
	const uint8_t *flag;
	int64_t *start, *end;
	uint8_t *state;        /* per point (node * 2 + end): 0 new, 1 pushed, 3 begun, 2 done */
	uint32_t *stack;
	size_t sp;
};

static int64_t measured(const struct sim *s, uint32_t p)
{
	const struct td_event *e = td_trace_ev(s->g->t, s->g->nodes[p / 2].ev);
	return p & 1 ? td_ev_end(e) : e->ts;
}

/* The value of point p when done; when open (a cycle), its measured time. */
static int64_t val(const struct sim *s, uint32_t p)
{
	if (s->state[p] != 2)
		return measured(s, p);
	return p & 1 ? s->end[p / 2] : s->start[p / 2];
}

static void later(int64_t *acc, int64_t v, int64_t lag)
{
	if (v != NONE_T && v + lag > *acc)
		*acc = v + lag;
}

/* The predecessors of point p not done yet go on the stack; returns 1 when there were some. */
static int push_preds(struct sim *s, uint32_t p)
{
	const struct td_rp_node *n = &s->g->nodes[p / 2];
	uint32_t pre[3];
	size_t np = 0, i;
	int pushed = 0;

	if (p & 1) {
		pre[np++] = p - 1;
		if (!n->gpu && n->waits && n->src != TD_NONE && !(s->flag[p / 2] & F_UNWAIT))
			pre[np++] = n->src * 2 + 1;
	} else {
		if (n->prev != TD_NONE)
			pre[np++] = n->prev * 2 + 1;
		if (n->gpu && n->src != TD_NONE)
			pre[np++] = n->src * 2;
		if (n->x != TD_NONE)
			pre[np++] = n->x * 2 + 1;
	}
	/* a point pushed before but not yet begun goes on top again (the stale entry is skipped
	 * once it is done); one begun (3) is on the path to here: a cycle, cut */
	for (i = 0; i < np; i++)
		if (s->state[pre[i]] <= 1) {
			s->state[pre[i]] = 1;
			s->stack[s->sp++] = pre[i];
			pushed = 1;
		}
	return pushed;
}

static void compute(struct sim *s, uint32_t p)
{
	const struct td_replay *g = s->g;
	uint32_t k = p / 2;
	const struct td_rp_node *n = &g->nodes[k];
	int removed = s->flag[k] & F_REMOVED;
	int64_t v = NONE_T;

	if (p & 1) {
		int64_t st = s->start[k];
		if (removed) {
			v = st;
		} else {
			later(&v, st, (s->flag[k] & F_COST) ? s->cost[k] : n->cost);
			if (!n->gpu && n->waits && n->src != TD_NONE && !(s->flag[k] & F_UNWAIT))
				later(&v, val(s, n->src * 2 + 1), g->tail);
		}
		s->end[k] = v;
		return;
	}
	if (removed && n->gpu) {
		/* a removed op passes its stream's and its other edge's times on, and takes none */
		if (n->prev != TD_NONE)
			later(&v, val(s, n->prev * 2 + 1), 0);
		if (n->x != TD_NONE)
			later(&v, val(s, n->x * 2 + 1), 0);
		s->start[k] = v;
		return;
	}
	if (s->flag[k] & F_FUSED) { /* right after the part before it, launched with it */
		if (n->prev != TD_NONE)
			later(&v, val(s, n->prev * 2 + 1), 0);
		if (n->x != TD_NONE)
			later(&v, val(s, n->x * 2 + 1), n->xlag);
	} else {
		int64_t un = g->keep_unexplained ? n->unexpl : 0;
		if (n->prev != TD_NONE)
			later(&v, val(s, n->prev * 2 + 1), s->gap[k] + (n->gpu && n->waits ? un : 0));
		if (n->gpu && n->src != TD_NONE && !(s->flag[n->src] & F_REMOVED)) /* pinned: no staging */
			later(&v, val(s, n->src * 2), n->lag + (n->waits ? 0 : un) -
							      ((s->flag[n->src] & F_COST) ? n->staging : 0));
	}
	if (n->x != TD_NONE)
		later(&v, val(s, n->x * 2 + 1), n->xlag);
	if (v == NONE_T) /* nothing before it: where it was, less the host time dropped before it */
		v = td_trace_ev(g->t, n->ev)->ts + (n->prev == TD_NONE ? s->gap[k] : 0);
	s->start[k] = v;
}

static void settle(struct sim *s, uint32_t root)
{
	if (s->state[root] == 2)
		return;
	s->state[root] = 1;
	s->stack[s->sp++] = root;
	while (s->sp) {
		uint32_t p = s->stack[s->sp - 1];
		if (s->state[p] == 2) {
			s->sp--;
			continue;
		}
		/* state 1: first visit pushes what is missing; the second computes */
		if (s->state[p] == 1 && push_preds(s, p)) {
			s->state[p] = 3; /* preds pushed: compute when back on top */
			continue;
		}
		compute(s, p);
		s->state[p] = 2;
		s->sp--;
	}
}

/* --- edits -------------------------------------------------------------------------------- */

/* The first node of track tr with an index at or after `from` in time (its gap ends after it). */
static uint32_t first_after(const struct td_replay *g, uint32_t tr, int64_t ts)
{
	uint32_t f = g->track_first[tr], n = g->track_count[tr];
	size_t lo;

	TD_LOWER_BOUND(lo, n, td_trace_ev(g->t, g->nodes[f + mid].ev)->ts <= ts);
	return f + (uint32_t)lo;
}

static int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

static void apply(const struct td_replay *g, const struct td_rp_edit *ed, int64_t *gap,
		  int64_t *cost, uint8_t *flag)
{
	const struct td_trace *t = g->t;
	uint32_t f, end, k;
	int resid = 0;

	if (ed->track >= t->tracks.len || g->track_first[ed->track] == TD_NONE || ed->to <= ed->from)
		return;
	f = g->track_first[ed->track];
	end = f + g->track_count[ed->track];
	if (ed->kind == TD_RP_FUSE) {
		uint32_t lo = first_after(g, ed->track, ed->from - 1);
		for (k = lo; k < end && td_trace_ev(t, g->nodes[k].ev)->ts < ed->to; k++) {
			uint32_t h = g->nodes[k].src;
			if (k == lo)
				continue; /* the fused op's launch */
			flag[k] |= F_FUSED;
			if (h != TD_NONE && !(flag[h] & F_COST)) {
				flag[h] |= F_COST;
				cost[h] = 0;
			}
		}
		return;
	}
	if (ed->kind == TD_RP_COST) {
		uint32_t lo = first_after(g, ed->track, ed->from - 1);
		for (k = lo; k < end && td_trace_ev(t, g->nodes[k].ev)->ts < ed->to; k++) {
			flag[k] |= F_UNWAIT | F_COST;
			cost[k] = ed->residual;
		}
		return;
	}
	if (ed->kind == TD_RP_UNWAIT || ed->kind == TD_RP_REMOVE) {
		uint32_t lo = first_after(g, ed->track, ed->from - 1);
		for (k = lo; k < end && td_trace_ev(t, g->nodes[k].ev)->ts < ed->to; k++)
			flag[k] |= ed->kind == TD_RP_UNWAIT ? F_UNWAIT : F_REMOVED;
		if (ed->kind == TD_RP_UNWAIT)
			return;
	}
	/* the gaps that end after `from`, while they begin before `to` */
	for (k = first_after(g, ed->track, ed->from); k < end; k++) {
		const struct td_rp_node *n = &g->nodes[k];
		int64_t ge = td_trace_ev(t, n->ev)->ts, gs, ov;
		if (n->prev == TD_NONE) { /* the thread's first call: it moves earlier */
			ov = overlap(INT64_MIN, ge, ed->from, ed->to);
			gap[k] -= ov - (resid ? 0 : ed->residual > ov ? ov : ed->residual);
			resid = 1;
			continue;
		}
		gs = td_ev_end(td_trace_ev(t, g->nodes[n->prev].ev));
		if (gs >= ed->to)
			break;
		ov = overlap(gs, ge, ed->from, ed->to);
		if (!ov)
			continue;
		gap[k] = gap[k] > ov ? gap[k] - ov : 0;
		if (!resid) {
			gap[k] += ed->residual;
			resid = 1;
		}
	}
}

int td_replay_run(const struct td_replay *g, const struct td_rp_edit *edits, size_t nedits,
		  struct td_rp_times *out)
{
	struct sim s;
	int64_t *gap = td_malloc((g->n + 1) * sizeof(int64_t));
	int64_t *cost = td_calloc(g->n + 1, sizeof(int64_t));
	uint8_t *flag = td_calloc(g->n + 1, 1);
	size_t k;

	for (k = 0; k < g->n; k++)
		gap[k] = g->nodes[k].gap;
	for (k = 0; k < nedits; k++)
		apply(g, &edits[k], gap, cost, flag);
	/* a removed call's GPU ops go with it */
	for (k = g->nhost; k < g->n; k++)
		if (g->nodes[k].src != TD_NONE && (flag[g->nodes[k].src] & F_REMOVED))
			flag[k] |= F_REMOVED;
	memset(&s, 0, sizeof(s));
	s.g = g;
	s.gap = gap;
	s.flag = flag;
	s.cost = cost;
	s.start = td_malloc((g->n + 1) * sizeof(int64_t));
	s.end = td_malloc((g->n + 1) * sizeof(int64_t));
	s.state = td_calloc(2 * g->n + 1, 1);
	s.stack = td_malloc((6 * g->n + 2) * sizeof(uint32_t)); /* <= 3 preds a point */
	for (k = 0; k < g->n; k++)
		settle(&s, (uint32_t)(2 * k + 1));
	free(s.state);
	free(s.stack);
	free(gap);
	free(cost);
	free(flag);
	out->start = s.start;
	out->end = s.end;
	out->n = g->n;
	return 0;
}

void td_rp_times_free(struct td_rp_times *r)
{
	free(r->start);
	free(r->end);
	memset(r, 0, sizeof(*r));
}

/* --- mapping host instants ---------------------------------------------------------------- */

static int64_t rstart(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	return r ? r->start[k] : td_trace_ev(g->t, g->nodes[k].ev)->ts;
}

static int64_t rend(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	return r ? r->end[k] : td_ev_end(td_trace_ev(g->t, g->nodes[k].ev));
}

int64_t td_replay_map(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
		      int64_t ts)
{
	const struct td_trace *t = g->t;
	uint32_t f, n, k;
	size_t lo;
	int64_t a, me;

	if (!r || track >= t->tracks.len || g->track_first[track] == TD_NONE)
		return ts;
	f = g->track_first[track];
	n = g->track_count[track];
	/* the last call starting at or before ts */
	TD_LOWER_BOUND(lo, n, td_trace_ev(t, g->nodes[f + mid].ev)->ts <= ts);
	if (lo == 0) /* before the thread's first call: nothing moves it */
		return ts < rstart(g, r, f) ? ts : rstart(g, r, f);
	k = f + (uint32_t)lo - 1;
	me = td_ev_end(td_trace_ev(t, g->nodes[k].ev));
	if (ts < me) { /* inside the call */
		a = rstart(g, r, k) + (ts - td_trace_ev(t, g->nodes[k].ev)->ts);
		return a < rend(g, r, k) ? a : rend(g, r, k);
	}
	/* in a gap: as far after the call before as it was, no later than the next call starts */
	a = rend(g, r, k) + (ts - me);
	if (lo < n && rstart(g, r, k + 1) < a)
		a = rstart(g, r, k + 1);
	return a > rend(g, r, k) ? a : rend(g, r, k);
}

int64_t td_replay_window(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
			 int64_t from, int64_t to)
{
	const struct td_trace *t = g->t;
	int64_t a = td_replay_map(g, r, track, from), b = td_replay_map(g, r, track, to);
	size_t k;

	for (k = g->nhost; k < g->n; k++) {
		const struct td_rp_node *n = &g->nodes[k];
		int64_t lts, e;
		if (n->src == TD_NONE)
			continue;
		lts = td_trace_ev(t, g->nodes[n->src].ev)->ts;
		if (lts < from || lts >= to)
			continue;
		e = rend(g, r, (uint32_t)k);
		if (e > b)
			b = e;
	}
	return b - a;
}
