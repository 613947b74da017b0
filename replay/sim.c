/* SPDX-License-Identifier: MIT */
/* Replays the graph (replay/replay.h): every node's start is the latest of its edges, its end
 * its start plus its own cost (a wait: no earlier than what it waits for, plus the tail). One
 * start per node is kept; an end follows from the node's start and, for a wait, its op's. The
 * starts are pulled depth-first with an explicit stack, so a chain of millions of calls needs
 * no deep recursion; a cycle (the measured order contradicting an edge, which the slack allows)
 * is cut at the node met again, which then counts with its measured time. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/edits.h"
#include "replay/internal.h"
#include "replay/replay.h"

#define NONE_T INT64_MIN /* no constraint: a removed op nothing gates */

/* the DFS's state per node, two bits of sim.state */
enum { S_NEW = 0, S_PUSHED = 1, S_DONE = 2, S_BEGUN = 3 };
#define ST(s, k) (((s)->state[(k) >> 2] >> (((k) & 3) * 2)) & 3)
#define SET_ST(s, k, v)                                                                      \
	((s)->state[(k) >> 2] = (uint8_t)(((s)->state[(k) >> 2] & ~(3u << (((k) & 3) * 2))) |   \
					  ((unsigned)(v) << (((k) & 3) * 2))))

struct sim {
	const struct td_replay *g;
	struct td_rp_times *r;
	struct td_vec *stack;  /* uint32_t */
	uint8_t *state;        /* 2 bits a node: S_* */
	uint32_t lane_lo[2], lane_hi[2]; /* the last two lanes a GPU op's device was looked up */
	int32_t lane_dev[2];  /* in (a node's track is a search over the tracks) */
	uint32_t blocked;     /* where the last walk() stopped, its predecessors not done */
	int strict, miss;     /* compute() notes when it reads a node not done (miss), and
			       * whether it matters (strict) */
};

/* The device index of GPU op k, from the last two lanes asked about when it is on one. */
static int32_t dev_of(struct sim *s, uint32_t k)
{
	const struct td_replay *g = s->g;
	uint32_t tr;

	if (k >= s->lane_lo[0] && k < s->lane_hi[0])
		return s->lane_dev[0];
	if (k >= s->lane_lo[1] && k < s->lane_hi[1])
		return s->lane_dev[1];
	tr = td_rp_track(g, k);
	s->lane_lo[1] = s->lane_lo[0];
	s->lane_hi[1] = s->lane_hi[0];
	s->lane_dev[1] = s->lane_dev[0];
	s->lane_lo[0] = g->track_first[tr];
	s->lane_hi[0] = g->track_first[tr] + g->track_count[tr];
	s->lane_dev[0] = g->track_dev[tr];
	return s->lane_dev[0];
}

static int kind_slot(int k)
{
	return k == TD_K_MEMCPY ? 1 : k == TD_K_MEMSET ? 2 : 0;
}

/* The over entry of k (lane gap w, own cost v), or NULL. */
static const struct td_rp_side *over(const struct td_rp_times *r, uint32_t k)
{
	return (r->flag[k] & (F_COST | F_GAP)) ? td_rp_side_of(&r->over, k) : NULL;
}

static const struct td_rp_anchor *anchor_of(const struct td_rp_times *r, uint32_t k)
{
	const struct td_rp_anchor *a = r->anchors.data;
	size_t lo;

	TD_LOWER_BOUND(lo, r->anchors.len, a[mid].node < k);
	return &a[lo]; /* F_ANCHOR: there is one */
}

static int64_t own_cost(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	const struct td_event *e = td_rp_event(g, k);
	int64_t d = td_ev_dur(e), own;

	if (r && (r->flag[k] & F_COST))
		return over(r, k)->v;
	if (r && (r->flag[k] & F_FREE))
		return 0;
	if (!(g->fl[k] & TD_RPF_OWNCOST))
		return d;
	own = (g->fl[k] & TD_RPF_QUEUE) ? g->dev[td_rp_dev_of(g, g->src[k])].launch
	      : (g->fl[k] & TD_RPF_COPY) ? g->copy_cost : g->wait_cost;
	return own < d ? own : d;
}

/* Whether host node k's end waits for its src in r: a wait no edit stopped (a launch held by a
 * full queue keeps it when its thread's waits stop: only costing it otherwise, or fusing it
 * away, does). */
static int waiting(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	if (!(g->fl[k] & TD_RPF_WAITS) || (r->flag[k] & F_COSTED))
		return 0;
	return !(r->flag[k] & F_UNWAIT) || (g->fl[k] & TD_RPF_QUEUE);
}

int64_t td_rp_start(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	return r ? r->start[k] : td_rp_event(g, k)->ts;
}

/* k's end from the starts in r (its op's, for a wait), whatever their state. */
int64_t td_rp_end(const struct td_replay *g, const struct td_rp_times *r, uint32_t k)
{
	const struct td_event *e = td_rp_event(g, k);
	int64_t st, v;

	if (!r)
		return td_ev_end(e);
	st = r->start[k];
	if (st == NONE_T || (r->flag[k] & F_REMOVED))
		return st;
	if (g->fl[k] & TD_RPF_GPU) /* its own time, or the one an edit gave it */
		return st + ((r->flag[k] & F_COST) ? over(r, k)->v : td_ev_dur(e));
	v = st + own_cost(g, r, k);
	if (waiting(g, r, k)) {
		int64_t oe = td_rp_end(g, r, g->src[k]);
		int64_t tail = (g->fl[k] & TD_RPF_QUEUE) ? g->dev[td_rp_dev_of(g, g->src[k])].queue_tail
							: g->tail;
		if (oe != NONE_T && oe + tail > v)
			v = oe + tail;
	}
	if ((g->fl[k] & TD_RPF_POST) && !(r->flag[k] & F_COST)) /* its work after the wait */
		v += td_rp_side_of(&g->posts, k)->v;
	return v;
}

static void later(int64_t *acc, int64_t v, int64_t lag)
{
	if (v != NONE_T && v + lag > *acc)
		*acc = v + lag;
}

static int waits(const struct sim *s, uint32_t k)
{
	return !(s->g->fl[k] & TD_RPF_GPU) && waiting(s->g, s->r, k) &&
	       !(s->r->flag[k] & F_REMOVED);
}

/* The nodes whose starts k's start needs: the lane's previous node and the x edge's (their
 * ends: for a wait, its op's start too), an op's launch call. */
static size_t preds(const struct sim *s, uint32_t k, uint32_t *pre)
{
	const struct td_replay *g = s->g;
	uint32_t p = td_rp_prev(g, k);
	size_t n = 0;

	if ((g->fl[k] & TD_RPF_GPU) && (s->r->flag[k] & (F_SIDE | F_AFTER_SIDE))) {
		/* off its stream: the side stream's copy before it; after moved copies: the
		 * last of them and the op before them */
		const struct td_rp_side *sd = td_rp_side_of(&s->r->sides, k);
		if (sd->ref != TD_NONE)
			pre[n++] = sd->ref;
		if (sd->v >= 0)
			pre[n++] = (uint32_t)sd->v;
		p = TD_NONE;
	}
	if (p != TD_NONE) {
		pre[n++] = p;
		if (waits(s, p))
			pre[n++] = g->src[p];
	}
	if ((g->fl[k] & TD_RPF_X) && !(s->r->flag[k] & F_SIDE) &&
	    ((g->fl[k] & TD_RPF_GPU) || !(s->r->flag[k] & F_NOJOIN))) {
		const struct td_rp_side *x = td_rp_side_of(&g->xs, k);
		if (x) {
			pre[n++] = x->ref;
			if (waits(s, x->ref))
				pre[n++] = g->src[x->ref];
		}
	}
	if ((g->fl[k] & TD_RPF_GPU) && g->src[k] != TD_NONE)
		pre[n++] = g->src[k];
	if (g->fl[k] & TD_RPF_ENGINE)
		pre[n++] = td_rp_side_of(&g->engine, k)->ref;
	if ((g->fl[k] & TD_RPF_GPU) && (s->r->flag[k] & F_ANCHOR)) {
		const struct td_rp_anchor *an = anchor_of(s->r, k);
		pre[n++] = an->compute;
		if (an->lo != TD_NONE)
			pre[n++] = an->lo;
	}
	return n;
}

/* k's replayed start, every predecessor done (or begun: a cycle, cut). */
static int64_t compute(struct sim *s, uint32_t k)
{
	const struct td_replay *g = s->g;
	const struct td_rp_times *r = s->r;
	const struct td_event *e = td_rp_event(g, k);
	uint32_t p = td_rp_prev(g, k), h = g->src[k];
	int gpu = g->fl[k] & TD_RPF_GPU, removed = r->flag[k] & F_REMOVED;
	const struct td_rp_side *x = (g->fl[k] & TD_RPF_X) &&
		((g->fl[k] & TD_RPF_GPU) || !(r->flag[k] & F_NOJOIN)) ? td_rp_side_of(&g->xs, k)
									: NULL;
	const struct td_rp_side *en = (g->fl[k] & TD_RPF_ENGINE) ? td_rp_side_of(&g->engine, k)
								 : NULL;
	int64_t v = NONE_T, gap;

	/* a node not done counts as measured (a cycle, cut); when strict, that is a miss */
#define END(n) (ST(s, n) == S_DONE && (!s->strict || !waits(s, n) || ST(s, g->src[n]) == S_DONE) \
		? td_rp_end(g, r, n) : (s->miss = 1, td_ev_end(td_rp_event(g, n))))
#define START(n) (ST(s, n) == S_DONE ? r->start[n] : (s->miss = 1, td_rp_event(g, n)->ts))
	if (gpu && (removed || (r->flag[k] & F_FUSED))) {
		/* a removed op passes its stream's time on; a fused one follows the part before */
		if (p != TD_NONE)
			later(&v, END(p), 0);
		if (x)
			later(&v, END(x->ref), removed ? 0 : x->v);
		if (en)
			later(&v, END(en->ref), 0);
		if (v == NONE_T && !removed)
			v = e->ts;
		return v;
	}
	gap = (r->flag[k] & F_GAP) ? over(r, k)->w : td_rp_gap_on(g, k, gpu ? dev_of(s, k) : -1);
	if (gpu && (r->flag[k] & (F_SIDE | F_AFTER_SIDE))) {
		const struct td_rp_side *sd = td_rp_side_of(&r->sides, k);
		if (r->flag[k] & F_SIDE) { /* its side stream, then as any op: launch, engine */
			if (sd->ref != TD_NONE)
				later(&v, END(sd->ref), 0);
			x = NULL;
		} else { /* the op before the moved copies, by the gap; the copies themselves */
			if (sd->v >= 0)
				later(&v, END((uint32_t)sd->v), gap);
			later(&v, END(sd->ref), 0);
		}
		p = TD_NONE;
	}
	if (gpu && (r->flag[k] & F_ANCHOR)) { /* overlapped: its stream, then the compute it follows */
		const struct td_rp_anchor *an = anchor_of(r, k);
		if (p != TD_NONE)
			later(&v, END(p), gap);
		later(&v, END(an->compute), an->lag);
		if (an->lo != TD_NONE)
			later(&v, START(an->lo), an->lo_lag);
		if (v == NONE_T)
			v = e->ts;
		return v;
	}
	if (p != TD_NONE) {
		int64_t extra = 0;
		if (gpu && (g->fl[k] & TD_RPF_STREAM) && (g->fl[k] & TD_RPF_EXTRA) && g->keep_unexplained &&
		    !(h != TD_NONE && (r->flag[h] & F_WARM)))
			extra = td_rp_side_of(&g->extras, k)->v;
		later(&v, END(p), gap + extra);
	}
	if (x)
		later(&v, END(x->ref), x->v);
	if (en) /* its engine free */
		later(&v, END(en->ref), 0);
	if (gpu && h != TD_NONE && !(r->flag[h] & F_REMOVED)) {
		int64_t lag = g->dev[dev_of(s, k)].lag[kind_slot(e->kind)];
		if ((g->fl[k] & TD_RPF_EXTRA) && !(g->fl[k] & TD_RPF_STREAM)) {
			int staging = g->fl[k] & TD_RPF_STAGING;
			/* pinned, its copy has no staging; an unexplained delay only when kept */
			if (staging ? !(r->flag[h] & F_COSTED)
				    : g->keep_unexplained && !(r->flag[h] & F_WARM))
				lag += td_rp_side_of(&g->extras, k)->v;
		}
		later(&v, START(h), lag);
	}
	if (!gpu && (g->fl[k] & TD_RPF_GATE)) { /* what it waited for outside the trace */
		const struct td_rp_side *gt = td_rp_side_of(&g->gates, k);
		if (!r->gate_off[gt - (const struct td_rp_side *)g->gates.data])
			later(&v, gt->v, 0);
	}
	if (v == NONE_T) /* nothing before it: where it was, less the host time dropped before it */
		v = e->ts + ((!gpu && (r->flag[k] & F_GAP)) ? over(r, k)->w : 0);
#undef END
#undef START
	return v;
}

static void push(struct sim *s, uint32_t k)
{
	*(uint32_t *)td_vec_push(s->stack) = k;
	SET_ST(s, k, S_PUSHED);
}

/* Whether q is done, after taking the nodes on its lane not yet begun, up to q, in order,
 * while each finds its predecessors done (a wait pulls in its stream's ops: no stack for them).
 * A node whose predecessors are done has the same start whenever it is taken, so this changes
 * no start; s->blocked remembers where the last walk stopped, so a chain is walked once. */
static int walk(struct sim *s, uint32_t q)
{
	uint32_t j;

	if (ST(s, q) != S_NEW)
		return ST(s, q) == S_DONE;
	for (j = q; j != s->blocked && !(s->g->fl[j] & TD_RPF_FIRST) && ST(s, j - 1) == S_NEW; j--)
		;
	if (j == s->blocked)
		return 0;
	for (; j <= q; j++) {
		int64_t v;
		s->strict = 1;
		s->miss = 0;
		v = compute(s, j); /* what it reads is what preds() names */
		s->strict = 0;
		if (s->miss) {
			s->blocked = j;
			return 0;
		}
		s->r->start[j] = v;
		SET_ST(s, j, S_DONE);
	}
	return 1;
}

static void settle(struct sim *s, uint32_t root)
{
	uint32_t pre[8];
	size_t n, i;

	if (walk(s, root) || ST(s, root) == S_DONE)
		return;
	push(s, root);
	while (s->stack->len) {
		uint32_t k = TD_VEC_AT(s->stack, uint32_t, s->stack->len - 1);
		int pushed = 0;
		if (ST(s, k) == S_DONE) {
			s->stack->len--;
			continue;
		}
		if (ST(s, k) == S_PUSHED) {
			/* a node pushed before but not yet begun goes on top again (the stale entry is
			 * skipped once it is done); one begun is on the path to here: a cycle, cut */
			n = preds(s, k, pre);
			for (i = 0; i < n; i++)
				if (ST(s, pre[i]) == S_PUSHED ||
				    (ST(s, pre[i]) == S_NEW && !walk(s, pre[i]))) {
					push(s, pre[i]);
					pushed = 1;
				}
			if (pushed) {
				SET_ST(s, k, S_BEGUN);
				continue;
			}
		}
		s->r->start[k] = compute(s, k);
		SET_ST(s, k, S_DONE);
		s->stack->len--;
	}
}


/* out's buffers for a replay of g: those of an earlier replay of g when it has them (no fresh
 * pages to fault in: on a trace of a million nodes, 12 MB a replay), else new ones. */
static void times_ready(const struct td_replay *g, struct td_rp_times *out, int reuse)
{
	if (reuse && out->start && out->n == g->n) {
		memset(out->flag, 0, g->n + 1);
		memset(out->gate_off, 0, g->gates.len + 1);
		memset(out->state, 0, g->n / 4 + 1);
		out->over.len = out->anchors.len = out->sides.len = out->stack.len = 0;
		out->tails.len = 0;
		if (out->over_slots)
			memset(out->over_ix, 0, out->over_slots * sizeof(uint32_t));
		return;
	}
	if (reuse)
		td_rp_times_free(out);
	memset(out, 0, sizeof(*out));
	out->n = g->n;
	out->start = td_malloc((g->n + 1) * sizeof(int64_t));
	out->flag = td_calloc(g->n + 1, 1);
	out->gate_off = td_calloc(g->gates.len + 1, 1);
	out->state = td_calloc(g->n / 4 + 1, 1);
	td_vec_init(&out->over, sizeof(struct td_rp_side));
	td_vec_init(&out->anchors, sizeof(struct td_rp_anchor));
	td_vec_init(&out->sides, sizeof(struct td_rp_side));
	td_vec_init(&out->stack, sizeof(uint32_t));
	td_vec_init(&out->tails, sizeof(struct td_rp_side));
}

static int replay(const struct td_replay *g, const struct td_rp_edit *pre, size_t npre,
		  const struct td_rp_edit *edits, size_t nedits, struct td_rp_times *out, int reuse)
{
	struct sim s;
	size_t k;

	times_ready(g, out, reuse);
	td_rp_edit_times(g, pre, npre, edits, nedits, out);
	memset(&s, 0, sizeof(s));
	s.g = g;
	s.r = out;
	s.state = out->state;
	s.stack = &out->stack;
	s.blocked = TD_NONE;
	for (k = 0; k < g->n; k++)
		settle(&s, (uint32_t)k);
	return 0;
}

int td_replay_run(const struct td_replay *g, const struct td_rp_edit *edits, size_t nedits,
		  struct td_rp_times *out)
{
	return replay(g, NULL, 0, edits, nedits, out, 0);
}

int td_replay_again(const struct td_replay *g, const struct td_rp_edit *edits, size_t nedits,
		    struct td_rp_times *r)
{
	return replay(g, NULL, 0, edits, nedits, r, 1);
}

int td_replay_after(const struct td_replay *g, const struct td_rp_edit *pre, size_t npre,
		    const struct td_rp_edit *edits, size_t nedits, struct td_rp_times *r)
{
	return replay(g, pre, npre, edits, nedits, r, 1);
}

void td_rp_times_free(struct td_rp_times *r)
{
	free(r->start);
	free(r->flag);
	free(r->gate_off);
	free(r->state);
	free(r->over_ix);
	td_vec_free(&r->over);
	td_vec_free(&r->anchors);
	td_vec_free(&r->sides);
	td_vec_free(&r->stack);
	td_vec_free(&r->tails);
	memset(r, 0, sizeof(*r));
}

/* --- mapping host instants ---------------------------------------------------------------- */

int64_t td_replay_map(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
		      int64_t ts)
{
	uint32_t f, n, k;
	size_t lo;
	int64_t a, me, re;

	if (!r || track >= g->t->tracks.len || g->track_first[track] == TD_NONE)
		return ts;
	f = g->track_first[track];
	n = g->track_count[track];
	/* the last call starting at or before ts */
	TD_LOWER_BOUND(lo, n, td_rp_event(g, f + (uint32_t)mid)->ts <= ts);
	if (lo == 0) /* before the thread's first call: nothing moves it */
		return ts < r->start[f] ? ts : r->start[f];
	k = f + (uint32_t)lo - 1;
	me = td_ev_end(td_rp_event(g, k));
	re = td_rp_end(g, r, k);
	if (ts < me) { /* inside the call */
		a = r->start[k] + (ts - td_rp_event(g, k)->ts);
		return a < re ? a : re;
	}
	/* in a gap: as far after the call before as it was, no later than the next call starts */
	a = re + (ts - me);
	if (lo == n) { /* after the last call: less what edits dropped there */
		const struct td_rp_side *tl = r->tails.data;
		size_t i;
		for (i = 0; i < r->tails.len; i++)
			if (tl[i].node == k)
				a -= overlap(me, ts, tl[i].v, tl[i].w);
	}
	if (lo < n && r->start[k + 1] < a)
		a = r->start[k + 1];
	return a > re ? a : re;
}

/* The GPU tracks to look at: the device's (its id), or every track (-1); *all set for the
 * latter, the tracks then indexed 0..n-1 themselves. */
static const uint32_t *gpu_tracks(const struct td_trace *t, int32_t device, size_t *n, int *all)
{
	*all = device < 0;
	if (*all) {
		*n = t->tracks.len;
		return NULL;
	}
	return td_trace_device_tracks(t, device, n);
}

int64_t td_replay_window(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
			 int64_t from, int64_t to, int32_t device)
{
	const struct td_trace *t = g->t;
	int64_t a = td_replay_map(g, r, track, from), b = td_replay_map(g, r, track, to);
	size_t j, n;
	int all;
	const uint32_t *trs = gpu_tracks(t, device, &n, &all);

	/* per stream, the last op launched in the window: a stream's ends only grow, so it ends
	 * last of them (the ops launched after the window, skipped, are few) */
	for (j = 0; j < n; j++) {
		size_t i = all ? j : trs[j];
		uint32_t f = g->track_first[i], k;
		if (f == TD_NONE || !td_trace_track(t, (uint32_t)i)->is_gpu)
			continue;
		for (k = f + g->track_count[i]; k-- > f;) {
			int64_t lts = g->launch_ts[k - g->nhost], e;
			if (lts == INT64_MIN)
				continue;
			if (lts >= to || lts < from)
				continue;
			e = td_rp_end(g, r, k);
			if (e > b)
				b = e;
			break;
		}
	}
	return b - a;
}

int64_t td_replay_busy(const struct td_replay *g, const struct td_rp_times *r, uint32_t track,
		       int64_t from, int64_t to, int32_t device)
{
	const struct td_trace *t = g->t;
	int64_t a = td_replay_map(g, r, track, from);
	int64_t b = a + td_replay_window(g, r, track, from, to, device), sum = 0;
	struct td_vec v;
	size_t i, n, j, nt;
	int all;
	const uint32_t *trs = gpu_tracks(t, device, &nt, &all);

	td_vec_init(&v, sizeof(struct td_interval));
	for (j = 0; j < nt; j++) {
		const struct td_track *tr;
		i = all ? j : trs[j];
		tr = td_trace_track(t, (uint32_t)i);
		uint32_t f = g->track_first[i], k;
		if (f == TD_NONE || !tr->is_gpu || tr->device != device)
			continue;
		for (k = f; k < f + g->track_count[i]; k++) {
			int64_t s, e, lts = g->launch_ts[k - g->nhost];
			if (lts == INT64_MIN || (r && (r->flag[k] & F_REMOVED)))
				continue;
			if (lts < from || lts >= to)
				continue;
			s = td_rp_start(g, r, k);
			e = td_rp_end(g, r, k);
			if (s == NONE_T || e == NONE_T)
				continue;
			s = s > a ? s : a;
			e = e < b ? e : b;
			if (e > s)
				*(struct td_interval *)td_vec_push(&v) = (struct td_interval){s, e};
		}
	}
	n = td_iv_merge(v.data, v.len);
	for (i = 0; i < n; i++)
		sum += TD_VEC_AT(&v, struct td_interval, i).end - TD_VEC_AT(&v, struct td_interval, i).start;
	td_vec_free(&v);
	return sum;
}
