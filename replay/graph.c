/* SPDX-License-Identifier: MIT */
/* Builds the replay's dependency graph (replay/replay.h): its nodes, the edges each node's
 * start and end follow, and the model's constants from the trace's own statistics. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/internal.h"
#include "replay/links.h"
#include "replay/replay.h"

#define TOL_MIN_NS 10000    /* start delays under this (or the launch latency) are noise */
#define CROSS_MAX_NS 50000  /* an op on another stream explains a delay ending this close */
#define SCAN_MAX 256        /* ops looked at, backwards, for the one a wait waited for */
#define DELAYS_KEEP 16

static int is_top_call(const struct td_trace *t, uint32_t i)
{
	const struct td_event *e = td_trace_ev(t, i);
	uint32_t p;

	if (e->kind != TD_K_RUNTIME)
		return 0;
	p = td_trace_parent(t, i);
	return p == TD_NONE || td_trace_ev(t, p)->kind != TD_K_RUNTIME;
}

static int same_pid(const struct td_track *a, const struct td_track *b)
{
	return a->pid == b->pid && a->pid_is_str == b->pid_is_str;
}

int64_t td_rp_gap(const struct td_replay *g, uint32_t k)
{
	return td_rp_gap_on(g, k, -1);
}

/* The node of host event ev (a runtime call, or one nested in it), TD_NONE when none; searched
 * from near[track], where the last search on its thread ended (the launches of a stream's ops
 * come in order). */
static uint32_t host_node_of(const struct td_replay *g, uint32_t ev, uint32_t *near)
{
	const struct td_trace *t = g->t;
	uint32_t tr, first, n;
	size_t lo;

	for (;;) {
		uint32_t p = td_trace_parent(t, ev);
		if (p == TD_NONE || td_trace_ev(t, p)->kind != TD_K_RUNTIME)
			break;
		ev = p;
	}
	if (td_trace_ev(t, ev)->kind != TD_K_RUNTIME)
		return TD_NONE;
	tr = td_trace_track_of(t, ev);
	first = g->track_first[tr];
	n = g->track_count[tr];
	if (first == TD_NONE)
		return TD_NONE;
	TD_LOWER_BOUND_NEAR(lo, n, near[tr], g->ev[first + mid] < ev);
	near[tr] = (uint32_t)lo;
	return lo < n && g->ev[first + lo] == ev ? first + (uint32_t)lo : TD_NONE;
}

/* --- the main thread of each process and the bursts of its other threads ----------------- */

struct track_key {
	int64_t pid;
	uint32_t track;
	uint8_t is_str;
};
#define KEY_LESS(x, y)                                                                       \
	((x)->is_str != (y)->is_str ? (x)->is_str < (y)->is_str                              \
	 : (x)->pid != (y)->pid     ? (x)->pid < (y)->pid                                    \
				    : (x)->track < (y)->track)
TD_DEFINE_SORT(sort_keys, struct track_key, KEY_LESS)

static void find_primaries(struct td_replay *g, const uint32_t *steps_on)
{
	const struct td_trace *t = g->t;
	struct track_key *keys = td_calloc(t->tracks.len + 1, sizeof(*keys));
	size_t nk = 0, i, j, m;

	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (tr->is_gpu || g->track_first[i] == TD_NONE)
			continue;
		keys[nk].pid = tr->pid;
		keys[nk].is_str = tr->pid_is_str;
		keys[nk].track = (uint32_t)i;
		nk++;
	}
	sort_keys(keys, nk);
	for (i = 0; i < nk; i = j) {
		uint32_t best = keys[i].track;
		for (j = i; j < nk && keys[j].pid == keys[i].pid && keys[j].is_str == keys[i].is_str;
		     j++) {
			uint32_t k = keys[j].track;
			/* the thread of the steps, else the one that made the process's first call
			 * (it creates the context; the autograd thread, which may make more calls,
			 * starts with the first backward), then the one with the most calls */
			int64_t tk = ts_of(g, g->track_first[k]), tb = ts_of(g, g->track_first[best]);
			if (steps_on[k] != steps_on[best] ? steps_on[k] > steps_on[best]
			    : tk != tb ? tk < tb : g->track_count[k] > g->track_count[best])
				best = k;
		}
		for (m = i; m < j; m++)
			g->primary[keys[m].track] = best;
	}
	free(keys);
}

/* A burst of calls on another thread inside one gap of the main thread (or overlapping one of
 * its calls: then it keeps its measured place on its own thread): its first call follows the
 * main thread's call before it (a fork, its lane gap 0), the main thread's next call follows
 * its last (a join, the main thread's own gap its work before the fork and after the join). */
static void link_bursts(struct td_replay *g, uint32_t tr, struct td_vec *joins)
{
	uint32_t pt = g->primary[tr], pf, pn, k, first = g->track_first[tr];
	uint32_t end = first + g->track_count[tr], b0;

	if (pt == TD_NONE || pt == tr)
		return;
	pf = g->track_first[pt];
	pn = g->track_count[pt];
	for (k = first; k < end; k = b0) {
		int64_t ts = ts_of(g, k);
		size_t lo;
		uint32_t p, last;

		TD_LOWER_BOUND(lo, pn, ts_of(g, pf + (uint32_t)mid) <= ts);
		b0 = k + 1;
		if (lo == 0 || end_of(g, pf + (uint32_t)lo - 1) > ts)
			continue; /* before the main thread's first call, or beside one */
		p = pf + (uint32_t)lo - 1;
		while (b0 < end && (lo >= pn || ts_of(g, b0) < ts_of(g, pf + (uint32_t)lo)))
			b0++;
		last = b0 - 1;
		td_rp_add_side(&g->xs, k, p, ts - end_of(g, p), 0);
		g->fl[k] |= TD_RPF_X;
		g->forks++;
		if (lo < pn && end_of(g, last) <= ts_of(g, pf + (uint32_t)lo)) {
			uint32_t q = pf + (uint32_t)lo;
			int64_t join = ts_of(g, q) - end_of(g, last);
			td_rp_add_side(joins, q, last, join, (ts - end_of(g, p)) + join);
		}
	}
}

/* --- the model's constants --------------------------------------------------------------- */

static int kind_slot(int k)
{
	return k == TD_K_MEMCPY ? 1 : k == TD_K_MEMSET ? 2 : 0;
}

static int64_t median_vec(struct td_vec *v, int64_t dflt)
{
	int64_t m = v->len ? td_median_i64(v->data, v->len) : dflt;
	v->len = 0;
	return m;
}

static void push_i64(struct td_vec *v, int64_t x)
{
	*(int64_t *)td_vec_push(v) = x;
}


/* The launch latency of ops launched onto an idle stream, then the mean gap of queued ops:
 * one pass each. Not samples: an op behind a blocking copy, or a pageable copy itself (that
 * lag is the host staging it), nor a kernel's first launch where the call took over twice a
 * launch's median (it loaded the module: a cold start, 114 us against 24 on the H200's probe,
 * where it was the one kernel launched onto an idle stream). */
struct lag_sample {
	int64_t lag;
	uint32_t key;  /* device * 3 + kind slot */
};
#define LAG_LESS(x, y) ((x)->key != (y)->key ? (x)->key < (y)->key : (x)->lag < (y)->lag)
TD_DEFINE_SORT(sort_lags, struct lag_sample, LAG_LESS)

static void fit_model(struct td_replay *g)
{
	struct td_vec v;
	int64_t *sum = td_calloc(g->ndev + 1, sizeof(int64_t));
	int64_t *cnt = td_calloc(g->ndev + 1, sizeof(int64_t));
	struct lag_sample *ls;
	int64_t *first, launch; /* by name: a kernel's first start; a launch call's median length */
	size_t d, k, i, j;

	first = td_malloc((g->t->names.count + 2) * sizeof(*first));
	for (k = 0; k < g->t->names.count + 2; k++)
		first[k] = INT64_MAX;
	td_vec_init(&v, sizeof(int64_t));
	for (k = g->nhost; k < g->n; k++) { /* each kernel's first start; its launches' length */
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		if (e->kind != TD_K_KERNEL || e->name > g->t->names.count + 1)
			continue;
		if (e->ts < first[e->name])
			first[e->name] = e->ts;
		if (g->src[k] != TD_NONE)
			*(int64_t *)td_vec_push(&v) = td_ev_dur(td_rp_event(g, g->src[k]));
	}
	launch = v.len ? td_median_i64(v.data, v.len) : 0;
	td_vec_free(&v);
	td_vec_init(&v, sizeof(struct lag_sample));
	for (k = g->nhost; k < g->n; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		uint32_t p = td_rp_prev(g, (uint32_t)k), h = g->src[k];
		struct lag_sample *x;
		int64_t lts;
		if (h == TD_NONE || (g->fl[k] & TD_RPF_PAGEABLE) ||
		    (e->kind == TD_K_KERNEL && e->name <= g->t->names.count + 1 &&
		     e->ts == first[e->name] && td_ev_dur(td_rp_event(g, h)) > 2 * launch))
			continue; /* the host's staging (kept as the op's own delay), or cold */
		lts = ts_of(g, h);
		if (e->ts < lts || (p != TD_NONE && end_of(g, p) > lts) || (g->fl[h] & TD_RPF_WAITS) ||
		    ((g->fl[k] & TD_RPF_ENGINE) &&
		     end_of(g, td_rp_side_of(&g->engine, (uint32_t)k)->ref) > lts))
			continue; /* queued (on its stream or its copy engine), or staged by a copy */
		if (e->ts - lts > TOL_MIN_NS) { /* late: after another stream's op, it waited for it */
			uint32_t o = td_rp_prior_other(g, (uint32_t)k);
			if (o != TD_NONE && end_of(g, o) > lts && e->ts - end_of(g, o) <= CROSS_MAX_NS)
				continue;
		}
		x = td_vec_push(&v);
		x->lag = e->ts - lts;
		x->key = (uint32_t)td_rp_dev_of(g, (uint32_t)k) * 3 + (uint32_t)kind_slot(e->kind);
	}
	free(first);
	ls = v.data;
	sort_lags(ls, v.len);
	for (d = 0; d < g->ndev; d++) /* the median of each (device, kind) */
		for (int s = 0; s < 3; s++) {
			uint32_t key = (uint32_t)d * 3 + (uint32_t)s;
			size_t lo, n;
			TD_LOWER_BOUND(lo, v.len, ls[mid].key < key);
			for (j = lo; j < v.len && ls[j].key == key; j++)
				;
			n = j - lo;
			/* a copy's or memset's own few lags are no model: a kernel's then */
			if (s && n < 3)
				g->dev[d].lag[s] = g->dev[d].lag[0];
			else
				g->dev[d].lag[s] = !n ? 0 : n % 2 ? ls[lo + n / 2].lag
					: ls[lo + n / 2 - 1].lag + (ls[lo + n / 2].lag - ls[lo + n / 2 - 1].lag) / 2;
		}
	td_vec_free(&v);
	for (k = g->nhost; k < g->n; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		uint32_t p = td_rp_prev(g, (uint32_t)k);
		int32_t dv;
		int64_t pe, gap;
		if (g->src[k] == TD_NONE || p == TD_NONE)
			continue;
		dv = td_rp_dev_of(g, (uint32_t)k);
		pe = end_of(g, p);
		if (pe <= ts_of(g, g->src[k]) + g->dev[dv].lag[kind_slot(e->kind)])
			continue;
		gap = e->ts - pe;
		if (gap < TOL_MIN_NS) {
			sum[dv] += gap > 0 ? gap : 0;
			cnt[dv]++;
		}
	}
	for (i = 0; i < g->ndev; i++)
		g->dev[i].queued = cnt[i] ? sum[i] / cnt[i] : 0;
	/* ops replayed with their measured lane gap: overlapping the one before, or no launch */
	for (k = g->nhost; k < g->n; k++) {
		uint32_t p = td_rp_prev(g, (uint32_t)k);
		if (p != TD_NONE && (g->src[k] == TD_NONE || ts_of(g, (uint32_t)k) < end_of(g, p)))
			g->fl[k] |= TD_RPF_MEASGAP;
	}
	free(sum);
	free(cnt);
}

/* --- waits -------------------------------------------------------------------------------- */

/* The last op on GPU track tr that ends no later than lim (a stream's ends only grow, but for
 * ops the trace has overlapping), TD_NONE when none. */
static uint32_t last_end_le(const struct td_replay *g, uint32_t tr, int64_t lim)
{
	uint32_t f = g->track_first[tr], n = g->track_count[tr];
	size_t lo;

	if (f == TD_NONE)
		return TD_NONE;
	TD_LOWER_BOUND(lo, n, end_of(g, f + (uint32_t)mid) <= lim);
	return lo ? f + (uint32_t)lo - 1 : TD_NONE;
}

/* The op a wait call waited for: of those launched before it by its process, the one that
 * ended last, no later than the call's end (plus the slack): on each stream, scanning back. */
static uint32_t awaited(const struct td_replay *g, uint32_t call)
{
	const struct td_trace *t = g->t;
	const struct td_track *ct = td_trace_track(t, td_rp_track(g, call));
	int64_t cts = ts_of(g, call), lim = end_of(g, call) + SLACK_NS, best_end = INT64_MIN;
	uint32_t best = TD_NONE;
	size_t i;

	for (i = 0; i < t->tracks.len; i++) {
		uint32_t f = g->track_first[i], k, m;
		if (f == TD_NONE || !td_trace_track(t, (uint32_t)i)->is_gpu)
			continue;
		k = last_end_le(g, (uint32_t)i, lim);
		for (m = 0; k != TD_NONE && k >= f && m < SCAN_MAX; m++, k--) {
			uint32_t h = g->src[k];
			if (end_of(g, k) <= best_end)
				break;
			if (h != TD_NONE && ts_of(g, h) < cts &&
			    same_pid(td_trace_track(t, td_rp_track(g, h)), ct)) {
				best = k;
				best_end = end_of(g, k);
				break;
			}
			if (k == f)
				break;
		}
	}
	return best;
}

static void keep_delay(struct td_replay *g, uint32_t node, int64_t ns)
{
	size_t i, m = 0;

	if (g->ndelays < DELAYS_KEEP) {
		g->delays[g->ndelays].node = node;
		g->delays[g->ndelays++].ns = ns;
		return;
	}
	for (i = 1; i < g->ndelays; i++)
		if (g->delays[i].ns < g->delays[m].ns)
			m = i;
	if (ns > g->delays[m].ns) {
		g->delays[m].node = node;
		g->delays[m].ns = ns;
	}
}

#define DELAY_LESS(x, y) ((x)->ns != (y)->ns ? (x)->ns > (y)->ns : (x)->node < (y)->node)
TD_DEFINE_SORT(sort_delays, struct td_rp_delay, DELAY_LESS)

/* Copy calls that outlasted their own op waited for it (a pageable copy): marked before the
 * model is fitted, so the host's staging stays out of the launch latency. src holds each copy
 * call's op that ended last (set with the launches). */
static void mark_copies(struct td_replay *g, const uint8_t *role, struct td_vec *tails,
			struct td_vec *plain_copy)
{
	size_t k;

	for (k = 0; k < g->nhost; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		uint32_t op = g->src[k];
		if (role[e->name] != TD_RP_COPY)
			continue;
		g->fl[k] |= TD_RPF_COPY;
		if (op != TD_NONE && end_of(g, op) >= e->ts &&
		    td_ev_end(e) + SLACK_NS >= end_of(g, op)) {
			g->fl[k] |= TD_RPF_WAITS;
			g->blocking_copies++;
			push_i64(tails, td_ev_end(e) - end_of(g, op));
		} else {
			push_i64(plain_copy, td_ev_dur(e));
			g->src[k] = TD_NONE;
		}
	}
}

#define POST_MIN_NS 500000

static void link_waits(struct td_replay *g, const uint8_t *role, struct td_vec *tails,
		       struct td_vec *plain_copy)
{
	struct td_vec plain_wait;
	size_t k;

	td_vec_init(&plain_wait, sizeof(int64_t));
	for (k = 0; k < g->nhost; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		uint32_t op;
		if (role[e->name] != TD_RP_WAIT)
			continue;
		op = awaited(g, (uint32_t)k);
		if (op == TD_NONE)
			continue;
		g->src[k] = op;
		g->fl[k] |= TD_RPF_WAITS;
		g->waits++;
		if (end_of(g, op) > e->ts)
			push_i64(tails, td_ev_end(e) - end_of(g, op));
		else
			push_i64(&plain_wait, td_ev_dur(e));
	}
	{ /* the tail of a plain return: the median, again without the waits that worked on
	   * past it (below), where some did */
		size_t n = tails->len, m;
		int64_t *all = td_malloc((n + 1) * sizeof(*all)), med;
		if (n)
			memcpy(all, tails->data, n * sizeof(*all));
		med = median_vec(tails, 0); /* reorders and empties tails */
		for (m = 0; m < n; m++)
			if (all[m] <= med + POST_MIN_NS)
				push_i64(tails, all[m]);
		g->tail = tails->len < n ? median_vec(tails, med) : med;
		tails->len = 0;
		if (g->tail < 0)
			g->tail = 0;
		free(all);
	}
	g->wait_cost = median_vec(&plain_wait, 5000);
	g->copy_cost = median_vec(plain_copy, 5000);
	/* a call that waited costs what one that did not wait costs, plus the wait; a wait that
	 * ran on more than POST_MIN_NS past its op's end and the tail did its own work after it,
	 * kept (hipfree-mi300x: hipFree takes 1-70 ms once the device is idle, the caching
	 * allocator off) */
	for (k = 0; k < g->nhost; k++)
		if ((g->fl[k] & TD_RPF_WAITS) && end_of(g, g->src[k]) > ts_of(g, (uint32_t)k)) {
			int64_t post = end_of(g, (uint32_t)k) - end_of(g, g->src[k]) - g->tail;
			g->fl[k] |= TD_RPF_OWNCOST;
			if (role[td_rp_event(g, (uint32_t)k)->name] == TD_RP_WAIT &&
			    post > POST_MIN_NS) {
				g->fl[k] |= TD_RPF_POST;
				td_rp_add_side(&g->posts, (uint32_t)k, TD_NONE, post, 0);
			}
		}
	td_vec_free(&plain_wait);
}

uint32_t td_rp_node_of(const struct td_replay *g, uint32_t ev)
{
	const struct td_trace *t = g->t;
	uint32_t tr, f, n;
	int64_t ts;
	size_t lo;

	if (ev >= t->events.len)
		return TD_NONE;
	tr = td_trace_track_of(t, ev);
	if (g->track_first[tr] == TD_NONE)
		return TD_NONE;
	f = g->track_first[tr];
	n = g->track_count[tr];
	ts = td_trace_ev(t, ev)->ts;
	TD_LOWER_BOUND(lo, n, td_rp_event(g, f + (uint32_t)mid)->ts < ts);
	for (; lo < n && td_rp_event(g, f + (uint32_t)lo)->ts == ts; lo++)
		if (g->ev[f + lo] == ev)
			return f + (uint32_t)lo;
	return TD_NONE;
}

uint32_t td_rp_prior_other(const struct td_replay *g, uint32_t k)
{
	const struct td_event *e = td_rp_event(g, k);
	const uint32_t *trs;
	size_t ntr, i;
	uint32_t best = TD_NONE;
	int64_t best_end = INT64_MIN;

	uint32_t tr = td_rp_track(g, k);

	trs = td_trace_device_tracks(g->t, td_trace_track(g->t, tr)->device, &ntr);
	for (i = 0; i < ntr; i++) {
		uint32_t o;
		if (trs[i] == tr)
			continue;
		o = last_end_le(g, trs[i], e->ts);
		if (o != TD_NONE && end_of(g, o) > best_end) {
			best = o;
			best_end = end_of(g, o);
		}
	}
	return best;
}

/* Ops that started later than their launch and stream allow: after an op on another stream,
 * or behind a blocking copy's staging, or unexplained. */
static void link_streams(struct td_replay *g)
{
	struct td_vec cross;
	size_t k, d;

	td_vec_init(&cross, sizeof(int64_t));
	for (k = g->nhost; k < g->n; k++) {
		uint32_t node = (uint32_t)k, h = g->src[k], p = td_rp_prev(g, node);
		const struct td_event *e = td_rp_event(g, node);
		int32_t dv = td_rp_dev_of(g, node);
		int64_t lag, gate, delay, tol;
		int found = 0;

		if (h == TD_NONE)
			continue;
		lag = g->dev[dv].lag[kind_slot(e->kind)];
		gate = ts_of(g, h) + lag;
		if (p != TD_NONE && end_of(g, p) + td_rp_gap(g, node) > gate) {
			gate = end_of(g, p) + td_rp_gap(g, node);
			g->fl[k] |= TD_RPF_STREAM;
		}
		if (g->fl[k] & TD_RPF_ENGINE) { /* its engine was busy */
			const struct td_rp_side *en = td_rp_side_of(&g->engine, node);
			if (end_of(g, en->ref) > gate)
				gate = end_of(g, en->ref);
		}
		delay = e->ts - gate;
		tol = lag > TOL_MIN_NS ? lag : TOL_MIN_NS;
		if (delay <= tol)
			continue;
		{ /* the op on another stream of the device that ended last before it started (a
		   * copy too: the item of a loss waits for the all-reduce on its stream) */
			uint32_t best = td_rp_prior_other(g, node);
			int64_t best_end = best != TD_NONE ? end_of(g, best) : INT64_MIN;
			if (best != TD_NONE && best_end > gate && e->ts - best_end <= CROSS_MAX_NS) {
				td_rp_add_side(&g->xs, node, best, e->ts - best_end, TD_RP_NOGAP);
				g->fl[k] |= TD_RPF_X;
				push_i64(&cross, e->ts - best_end);
				g->cross_edges++;
				found = 1;
			}
		}
		if (!found && (g->fl[h] & TD_RPF_COPY)) {
			/* the host stages a pageable copy before it starts (a pinned one has none) */
			td_rp_add_side(&g->extras, node, TD_NONE, delay, TD_RP_NOGAP);
			g->fl[k] |= TD_RPF_EXTRA | TD_RPF_STAGING;
			g->fl[k] &= (uint16_t)~TD_RPF_STREAM;
			g->staging_ns += delay;
		} else if (!found) {
			td_rp_add_side(&g->extras, node, TD_NONE, delay, TD_RP_NOGAP);
			g->fl[k] |= TD_RPF_EXTRA;
			g->unexplained_ns += delay;
			keep_delay(g, node, delay);
		}
	}
	/* the model's lag after an op on another stream, per device */
	for (d = 0; d < g->ndev; d++) {
		struct td_rp_side *s = g->xs.data;
		size_t i;
		cross.len = 0;
		for (i = 0; i < g->xs.len; i++)
			if (s[i].node >= g->nhost && td_rp_dev_of(g, s[i].node) == (int32_t)d)
				push_i64(&cross, s[i].v);
		g->dev[d].cross = median_vec(&cross, g->dev[d].queued);
		for (i = 0; i < g->xs.len; i++)
			if (s[i].node >= g->nhost && td_rp_dev_of(g, s[i].node) == (int32_t)d)
				s[i].v = g->dev[d].cross;
	}
	td_vec_free(&cross);
	sort_delays(g->delays, g->ndelays);
}

/* Joins, by the main thread's node: the burst that ends last holds it. */
static void add_joins(struct td_replay *g, struct td_vec *joins)
{
	struct td_rp_side *j = joins->data;
	size_t i, k;

	td_rp_sort_side(joins);
	for (i = 0; i < joins->len; i = k) {
		size_t best = i;
		for (k = i; k < joins->len && j[k].node == j[i].node; k++)
			if (end_of(g, j[k].ref) > end_of(g, j[best].ref))
				best = k;
		td_rp_add_side(&g->xs, j[best].node, j[best].ref, j[best].v, j[best].w);
		g->fl[j[best].node] |= TD_RPF_X;
		g->joins++;
	}
}

/* --- building ----------------------------------------------------------------------------- */

static void fill_nodes(struct td_replay *g)
{
	const struct td_trace *t = g->t;
	size_t ntr = t->tracks.len, i, k = 0;
	int gpu;

	for (gpu = 0; gpu < 2; gpu++) {
		if (gpu == 1)
			g->nhost = k;
		for (i = 0; i < ntr; i++) {
			const struct td_track *tr = td_trace_track(t, (uint32_t)i);
			uint32_t e;
			if (tr->is_gpu != gpu)
				continue;
			for (e = tr->first; e < tr->first + tr->count; e++) {
				if (gpu ? !td_kind_is_gpu_op(td_trace_ev(t, e)->kind) : !is_top_call(t, e))
					continue;
				if (g->ev) {
					g->fl[k] = (uint16_t)(gpu ? TD_RPF_GPU : 0);
					if (g->track_first[i] == TD_NONE) {
						g->track_first[i] = (uint32_t)k;
						g->fl[k] |= TD_RPF_FIRST;
					}
					g->track_count[i]++;
					g->ev[k] = e;
					g->src[k] = TD_NONE;
				}
				k++;
			}
		}
	}
	g->n = k;
}

int td_replay_build(struct td_replay *g, const struct td_trace *t, const uint8_t *role)
{
	size_t ntr = t->tracks.len, i, k;
	uint32_t *steps_on, *near;
	struct td_vec tails, plain_copy, joins;

	memset(g, 0, sizeof(*g));
	g->t = t;
	g->ndev = t->devices.len;
	g->dev = td_calloc(g->ndev + 1, sizeof(*g->dev));
	g->track_first = td_malloc((ntr + 1) * sizeof(uint32_t));
	g->track_count = td_calloc(ntr + 1, sizeof(uint32_t));
	g->primary = td_malloc((ntr + 1) * sizeof(uint32_t));
	g->track_dev = td_malloc((ntr + 1) * sizeof(int32_t));
	g->delays = td_calloc(DELAYS_KEEP, sizeof(*g->delays));
	td_vec_init(&g->xs, sizeof(struct td_rp_side));
	td_vec_init(&g->extras, sizeof(struct td_rp_side));
	td_vec_init(&g->posts, sizeof(struct td_rp_side));
	td_vec_init(&g->engine, sizeof(struct td_rp_side));
	td_vec_init(&g->gates, sizeof(struct td_rp_side));
	for (i = 0; i < ntr; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		const struct td_device *d = tr->is_gpu ? td_trace_find_device(t, tr->device) : NULL;
		g->track_first[i] = TD_NONE;
		g->primary[i] = TD_NONE;
		g->track_dev[i] = d ? (int32_t)(d - (const struct td_device *)t->devices.data) : 0;
	}
	if (!g->ndev) { /* GPU tracks with no device entry: one model for all */
		g->ndev = 1;
	}
	/* count, then fill: host calls track by track, then GPU ops */
	fill_nodes(g);
	g->ev = td_malloc((g->n + 1) * sizeof(uint32_t));
	g->src = td_malloc((g->n + 1) * sizeof(uint32_t));
	g->fl = td_calloc(g->n + 1, sizeof(uint16_t));
	fill_nodes(g);
	g->ts = td_malloc((g->n + 1) * sizeof(int64_t));
	g->end = td_malloc((g->n + 1) * sizeof(int64_t));
	for (k = 0; k < g->n; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		g->ts[k] = e->ts;
		g->end[k] = td_ev_end(e);
	}
	/* launches; a copy call's src: its op that ended last */
	near = td_calloc(ntr + 1, sizeof(*near));
	for (k = g->nhost; k < g->n; k++) {
		uint32_t l = td_trace_launch(t, g->ev[k]), h;
		if (l == TD_NONE)
			continue;
		h = host_node_of(g, l, near);
		g->src[k] = h;
		if (h != TD_NONE && role && role[td_rp_event(g, h)->name] == TD_RP_COPY &&
		    (g->src[h] == TD_NONE || end_of(g, g->src[h]) < end_of(g, (uint32_t)k)))
			g->src[h] = (uint32_t)k;
	}
	free(near);
	td_vec_init(&tails, sizeof(int64_t));
	td_vec_init(&plain_copy, sizeof(int64_t));
	if (role) {
		mark_copies(g, role, &tails, &plain_copy);
		td_rp_link_copies(g, role);
	}
	steps_on = td_calloc(ntr + 1, sizeof(uint32_t));
	for (i = 0; i < t->steps.len; i++)
		steps_on[td_trace_track_of(t, TD_VEC_AT(&t->steps, struct td_step, i).event)]++;
	find_primaries(g, steps_on);
	free(steps_on);
	td_vec_init(&joins, sizeof(struct td_rp_side));
	for (i = 0; i < ntr; i++)
		if (g->track_first[i] != TD_NONE && !td_trace_track(t, (uint32_t)i)->is_gpu)
			link_bursts(g, (uint32_t)i, &joins);
	add_joins(g, &joins);
	td_vec_free(&joins);
	td_rp_sort_side(&g->xs); /* the gaps below look the joins up */
	fit_model(g);
	if (role)
		link_waits(g, role, &tails, &plain_copy);
	td_rp_link_queue(g);
	td_vec_free(&tails);
	td_vec_free(&plain_copy);
	link_streams(g);
	td_rp_sort_side(&g->xs);
	td_rp_sort_side(&g->extras);
	g->launch_ts = td_malloc((g->n - g->nhost + 1) * sizeof(int64_t));
	for (k = g->nhost; k < g->n; k++)
		g->launch_ts[k - g->nhost] = g->src[k] == TD_NONE ? INT64_MIN
					     : td_rp_event(g, g->src[k])->ts;
	return 0;
}

void td_replay_free(struct td_replay *g)
{
	free(g->ev);
	free(g->fl);
	free(g->src);
	free(g->ts);
	free(g->end);
	free(g->launch_ts);
	free(g->track_first);
	free(g->track_count);
	free(g->primary);
	free(g->track_dev);
	free(g->dev);
	free(g->delays);
	td_vec_free(&g->xs);
	td_vec_free(&g->extras);
	td_vec_free(&g->posts);
	td_vec_free(&g->engine);
	td_vec_free(&g->gates);
	memset(g, 0, sizeof(*g));
}
