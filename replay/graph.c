/* SPDX-License-Identifier: MIT */
/* Builds the replay's dependency graph (replay/replay.h): its nodes, the edges each node's
 * start and end follow, and the model's constants from the trace's own statistics. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/replay.h"

#define SLACK_NS 2000       /* a wait ends this soon after the op it waited for, at most */
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

/* The node of host event ev (a runtime call, or one nested in it), TD_NONE when none. */
static uint32_t host_node_of(const struct td_replay *g, uint32_t ev)
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
	tr = td_trace_ev(t, ev)->track;
	first = g->track_first[tr];
	n = g->track_count[tr];
	if (first == TD_NONE)
		return TD_NONE;
	TD_LOWER_BOUND(lo, n, g->nodes[first + mid].ev < ev);
	return lo < n && g->nodes[first + lo].ev == ev ? first + (uint32_t)lo : TD_NONE;
}

static int64_t ts_of(const struct td_replay *g, uint32_t k)
{
	return td_trace_ev(g->t, g->nodes[k].ev)->ts;
}

static int64_t end_of(const struct td_replay *g, uint32_t k)
{
	return td_ev_end(td_trace_ev(g->t, g->nodes[k].ev));
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

static void find_primaries(struct td_replay *g, uint32_t *steps_on)
{
	const struct td_trace *t = g->t;
	struct track_key *keys = td_calloc(t->tracks.len + 1, sizeof(*keys));
	size_t nk = 0, i, j;

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
			/* the thread of the steps, else the one with the most calls */
			if (steps_on[k] != steps_on[best] ? steps_on[k] > steps_on[best]
			    : g->track_count[k] > g->track_count[best])
				best = k;
		}
		for (size_t m = i; m < j; m++)
			g->primary[keys[m].track] = best;
	}
	free(keys);
}

/* A burst of calls on another thread inside one gap of the main thread (or overlapping one of
 * its calls: then it keeps its measured place on its own thread). */
static void link_bursts(struct td_replay *g, uint32_t tr)
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
		/* the burst: this thread's calls up to the main thread's next call */
		while (b0 < end && (lo >= pn || ts_of(g, b0) < ts_of(g, pf + (uint32_t)lo)))
			b0++;
		last = b0 - 1;
		g->nodes[k].gap = 0;
		g->nodes[k].x = p;
		g->nodes[k].xlag = ts - end_of(g, p);
		g->forks++;
		if (lo < pn && end_of(g, last) <= ts_of(g, pf + (uint32_t)lo)) {
			struct td_rp_node *q = &g->nodes[pf + lo];
			int64_t join = ts_of(g, pf + (uint32_t)lo) - end_of(g, last);
			if (q->x == TD_NONE || end_of(g, q->x) < end_of(g, last)) {
				if (q->x == TD_NONE)
					g->joins++;
				q->x = last;
				q->xlag = join;
				/* the main thread's own work: before the fork and after the join */
				q->gap = (ts - end_of(g, p)) + join;
			}
		}
	}
}

/* --- the model's constants --------------------------------------------------------------- */

struct dev_model {
	int64_t lag[3];   /* launch latency by kind: kernel, memcpy, memset */
	int64_t queued;   /* mean gap between ops already queued */
	int64_t cross;    /* median lag after an op on another stream */
};

static int kind_slot(int k)
{
	return k == TD_K_MEMCPY ? 1 : k == TD_K_MEMSET ? 2 : 0;
}

static size_t dev_index(const struct td_trace *t, int32_t dev)
{
	const struct td_device *d = td_trace_find_device(t, dev);
	return d ? (size_t)(d - (const struct td_device *)t->devices.data) : 0;
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

/* The launch latency of ops launched onto an idle stream, then the gaps of queued ops. */
static void fit_model(struct td_replay *g, struct dev_model *dm, size_t ndev)
{
	const struct td_trace *t = g->t;
	struct td_vec v;
	size_t d, k;
	int s;

	td_vec_init(&v, sizeof(int64_t));
	for (d = 0; d < ndev; d++) {
		int32_t id = TD_VEC_AT(&t->devices, struct td_device, d).id;
		int64_t sum = 0, cnt = 0;
		for (s = 0; s < 3; s++) {
			for (k = g->nhost; k < g->n; k++) {
				const struct td_rp_node *n = &g->nodes[k];
				const struct td_event *e = td_trace_ev(t, n->ev);
				int64_t lts;
				if (n->src == TD_NONE || kind_slot(e->kind) != s ||
				    td_trace_track(t, e->track)->device != id)
					continue;
				lts = ts_of(g, n->src);
				if (e->ts < lts || (n->prev != TD_NONE && end_of(g, n->prev) > lts) ||
				    g->nodes[n->src].waits)
					continue; /* queued, or staged by a blocking copy */
				push_i64(&v, e->ts - lts);
			}
			dm[d].lag[s] = median_vec(&v, 0);
		}
		for (k = g->nhost; k < g->n; k++) {
			const struct td_rp_node *n = &g->nodes[k];
			const struct td_event *e = td_trace_ev(t, n->ev);
			int64_t pe, gap;
			if (n->src == TD_NONE || n->prev == TD_NONE ||
			    td_trace_track(t, e->track)->device != id)
				continue;
			pe = end_of(g, n->prev);
			if (pe <= ts_of(g, n->src) + dm[d].lag[kind_slot(e->kind)])
				continue;
			gap = e->ts - pe;
			if (gap < TOL_MIN_NS) {
				sum += gap > 0 ? gap : 0;
				cnt++;
			}
		}
		dm[d].queued = cnt ? sum / cnt : 0;
	}
	td_vec_free(&v);
}

/* --- waits -------------------------------------------------------------------------------- */

struct by_end {
	int64_t end;
	uint32_t node;
	int32_t dev;
};
#define END_LESS(x, y)                                                                       \
	((x)->dev != (y)->dev ? (x)->dev < (y)->dev                                          \
	 : (x)->end != (y)->end ? (x)->end < (y)->end : (x)->node < (y)->node)
TD_DEFINE_SORT(sort_by_end, struct by_end, END_LESS)

/* The op a wait call waited for: of those launched before it by its process, the one that
 * ended last, no later than the call's end (plus the slack). */
static uint32_t awaited(const struct td_replay *g, const struct by_end *be, const size_t *dev_lo,
			size_t ndev, uint32_t call)
{
	const struct td_trace *t = g->t;
	const struct td_track *ct = td_trace_track(t, td_trace_ev(t, g->nodes[call].ev)->track);
	int64_t cts = ts_of(g, call), lim = end_of(g, call) + SLACK_NS, best_end = INT64_MIN;
	uint32_t best = TD_NONE;
	size_t d;

	for (d = 0; d < ndev; d++) {
		const struct by_end *b = be + dev_lo[d];
		size_t n = dev_lo[d + 1] - dev_lo[d], lo, m;
		TD_LOWER_BOUND(lo, n, b[mid].end <= lim);
		for (m = 0; lo > 0 && m < SCAN_MAX; m++, lo--) {
			const struct td_rp_node *op = &g->nodes[b[lo - 1].node];
			const struct td_track *lt;
			if (b[lo - 1].end <= best_end)
				break;
			if (op->src == TD_NONE || ts_of(g, op->src) >= cts)
				continue;
			lt = td_trace_track(t, td_trace_ev(t, g->nodes[op->src].ev)->track);
			if (!same_pid(lt, ct))
				continue;
			best = b[lo - 1].node;
			best_end = b[lo - 1].end;
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
 * model is fitted, so the host's staging stays out of the launch latency. */
static void mark_copies(struct td_replay *g, const uint8_t *role, struct td_vec *tails,
			struct td_vec *plain_copy)
{
	const struct td_trace *t = g->t;
	size_t k;

	for (k = 0; k < g->nhost; k++) {
		struct td_rp_node *n = &g->nodes[k];
		const struct td_event *e = td_trace_ev(t, n->ev);
		if (role[e->name] != TD_RP_COPY)
			continue;
		/* n->src: its own op that ended last (set with the GPU nodes) */
		if (n->src != TD_NONE && end_of(g, n->src) >= e->ts &&
		    td_ev_end(e) + SLACK_NS >= end_of(g, n->src)) {
			n->waits = 1;
			g->blocking_copies++;
			push_i64(tails, td_ev_end(e) - end_of(g, n->src));
		} else {
			push_i64(plain_copy, td_ev_dur(e));
			n->src = TD_NONE;
		}
	}
}

static void link_waits(struct td_replay *g, const uint8_t *role, struct by_end *be,
		       const size_t *dev_lo, size_t ndev, struct td_vec *tails,
		       struct td_vec *plain_copy)
{
	const struct td_trace *t = g->t;
	struct td_vec plain_wait;
	int64_t wait_cost, copy_cost;
	size_t k;

	td_vec_init(&plain_wait, sizeof(int64_t));
	for (k = 0; k < g->nhost; k++) {
		struct td_rp_node *n = &g->nodes[k];
		const struct td_event *e = td_trace_ev(t, n->ev);
		if (role[e->name] != TD_RP_WAIT)
			continue;
		n->src = awaited(g, be, dev_lo, ndev, (uint32_t)k);
		if (n->src == TD_NONE)
			continue;
		n->waits = 1;
		g->waits++;
		if (end_of(g, n->src) > e->ts)
			push_i64(tails, td_ev_end(e) - end_of(g, n->src));
		else
			push_i64(&plain_wait, td_ev_dur(e));
	}
	g->tail = median_vec(tails, 0);
	if (g->tail < 0)
		g->tail = 0;
	wait_cost = median_vec(&plain_wait, 5000);
	copy_cost = median_vec(plain_copy, 5000);
	/* a call that waited costs what one that did not wait costs, plus the wait */
	for (k = 0; k < g->nhost; k++) {
		struct td_rp_node *n = &g->nodes[k];
		const struct td_event *e = td_trace_ev(t, n->ev);
		int64_t own;
		if (!n->waits || end_of(g, n->src) <= e->ts)
			continue;
		own = (role[e->name] == TD_RP_COPY) ? copy_cost : wait_cost;
		n->cost = own < td_ev_dur(e) ? own : td_ev_dur(e);
	}
	td_vec_free(&plain_wait);
}

/* Ops that started later than their launch and stream allow: after an op on another stream,
 * or behind a blocking copy's staging, or unexplained. */
static void link_streams(struct td_replay *g, const struct dev_model *dm, const struct by_end *be,
			 const size_t *dev_lo)
{
	const struct td_trace *t = g->t;
	struct td_vec cross;
	size_t k, ndev = g->t->devices.len;

	td_vec_init(&cross, sizeof(int64_t));
	for (k = g->nhost; k < g->n; k++) {
		struct td_rp_node *n = &g->nodes[k];
		const struct td_event *e = td_trace_ev(t, n->ev);
		const struct td_track *tr = td_trace_track(t, e->track);
		size_t d = dev_index(t, tr->device), lo, m, cnt;
		int64_t gate = INT64_MIN, delay, tol;
		const struct by_end *b;

		if (n->src == TD_NONE)
			continue;
		gate = ts_of(g, n->src) + n->lag;
		n->waits = 0; /* for an op: 1 when its stream, not its launch, gates it */
		if (n->prev != TD_NONE && end_of(g, n->prev) + n->gap > gate) {
			gate = end_of(g, n->prev) + n->gap;
			n->waits = 1;
		}
		delay = e->ts - gate;
		tol = n->lag > TOL_MIN_NS ? n->lag : TOL_MIN_NS;
		if (delay <= tol)
			continue;
		if (g->nodes[n->src].waits && g->nodes[n->src].src == k) {
			n->lag += delay; /* the host stages a pageable copy before it starts */
			n->staging = delay;
			g->staging_ns += delay;
			continue;
		}
		b = be + dev_lo[d];
		cnt = dev_lo[d + 1] - dev_lo[d];
		TD_LOWER_BOUND(lo, cnt, b[mid].end <= e->ts);
		for (m = 0; lo > 0 && m < SCAN_MAX; m++, lo--) {
			const struct td_rp_node *o = &g->nodes[b[lo - 1].node];
			if (b[lo - 1].end <= gate || e->ts - b[lo - 1].end > CROSS_MAX_NS)
				break;
			if (td_trace_ev(t, o->ev)->track == e->track)
				continue;
			n->x = b[lo - 1].node;
			n->xlag = e->ts - b[lo - 1].end;
			push_i64(&cross, n->xlag);
			g->cross_edges++;
			break;
		}
		if (n->x == TD_NONE) {
			n->unexpl = delay;
			g->unexplained_ns += delay;
			keep_delay(g, (uint32_t)k, delay);
		}
	}
	/* the model's lag after an op on another stream, per device */
	for (size_t d = 0; d < ndev; d++) {
		int32_t id = TD_VEC_AT(&t->devices, struct td_device, d).id;
		int64_t med;
		cross.len = 0;
		for (k = g->nhost; k < g->n; k++) {
			const struct td_rp_node *n = &g->nodes[k];
			if (n->x != TD_NONE &&
			    td_trace_track(t, td_trace_ev(t, n->ev)->track)->device == id)
				push_i64(&cross, n->xlag);
		}
		med = median_vec(&cross, dm[d].queued);
		for (k = g->nhost; k < g->n; k++) {
			struct td_rp_node *n = &g->nodes[k];
			if (n->x != TD_NONE &&
			    td_trace_track(t, td_trace_ev(t, n->ev)->track)->device == id)
				n->xlag = med;
		}
	}
	td_vec_free(&cross);
	sort_delays(g->delays, g->ndelays);
}

/* --- building ----------------------------------------------------------------------------- */

int td_replay_build(struct td_replay *g, const struct td_trace *t, const uint8_t *role)
{
	size_t ntr = t->tracks.len, ndev = t->devices.len, i, k, nb = 0;
	uint32_t *steps_on;
	struct dev_model *dm;
	struct by_end *be;
	size_t *dev_lo;
	uint32_t pass;
	struct td_vec tails, plain_copy;

	memset(g, 0, sizeof(*g));
	g->t = t;
	g->track_first = td_malloc((ntr + 1) * sizeof(uint32_t));
	g->track_count = td_calloc(ntr + 1, sizeof(uint32_t));
	g->primary = td_malloc((ntr + 1) * sizeof(uint32_t));
	steps_on = td_calloc(ntr + 1, sizeof(uint32_t));
	g->delays = td_calloc(DELAYS_KEEP, sizeof(*g->delays));
	for (i = 0; i < ntr; i++) {
		g->track_first[i] = TD_NONE;
		g->primary[i] = TD_NONE;
	}
	for (i = 0; i < t->steps.len; i++) {
		const struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		steps_on[td_trace_ev(t, s->event)->track]++;
	}
	/* count, then fill: host calls track by track, then GPU ops */
	for (pass = 0; pass < 2; pass++) {
		k = 0;
		for (int gpu = 0; gpu < 2; gpu++) {
			if (gpu == 1 && pass == 1)
				g->nhost = k;
			for (i = 0; i < ntr; i++) {
				const struct td_track *tr = td_trace_track(t, (uint32_t)i);
				uint32_t e, prev = TD_NONE;
				if (tr->is_gpu != gpu)
					continue;
				for (e = tr->first; e < tr->first + tr->count; e++) {
					const struct td_event *ev = td_trace_ev(t, e);
					struct td_rp_node *n;
					if (gpu ? !td_kind_is_gpu_op(ev->kind) : !is_top_call(t, e)) {
						continue;
					}
					if (pass == 0) {
						k++;
						continue;
					}
					if (g->track_first[i] == TD_NONE)
						g->track_first[i] = (uint32_t)k;
					g->track_count[i]++;
					n = &g->nodes[k];
					n->ev = e;
					n->prev = prev;
					n->src = n->x = TD_NONE;
					n->cost = td_ev_dur(ev);
					n->gpu = (uint8_t)gpu;
					if (prev != TD_NONE) {
						int64_t gap = ev->ts - end_of(g, prev);
						n->gap = gpu ? 0 : gap > 0 ? gap : 0;
						if (gpu && gap < 0)
							n->gap = gap; /* overlapping: kept */
					}
					prev = (uint32_t)k++;
				}
			}
		}
		if (pass == 0) {
			g->n = k;
			g->nodes = td_calloc(k + 1, sizeof(*g->nodes));
		}
	}
	/* launches */
	for (k = g->nhost; k < g->n; k++) {
		struct td_rp_node *n = &g->nodes[k];
		uint32_t l = td_trace_launch(t, n->ev);
		if (l == TD_NONE)
			continue;
		n->src = host_node_of(g, l);
		if (n->src == TD_NONE)
			continue;
		if (role && role[td_trace_ev(t, g->nodes[n->src].ev)->name] == TD_RP_COPY) {
			struct td_rp_node *h = &g->nodes[n->src];
			if (h->src == TD_NONE || end_of(g, h->src) < end_of(g, (uint32_t)k))
				h->src = (uint32_t)k;
		}
	}
	td_vec_init(&tails, sizeof(int64_t));
	td_vec_init(&plain_copy, sizeof(int64_t));
	if (role)
		mark_copies(g, role, &tails, &plain_copy);
	find_primaries(g, steps_on);
	free(steps_on);
	for (i = 0; i < ntr; i++)
		if (g->track_first[i] != TD_NONE && !td_trace_track(t, (uint32_t)i)->is_gpu)
			link_bursts(g, (uint32_t)i);

	dm = td_calloc(ndev + 1, sizeof(*dm));
	fit_model(g, dm, ndev);
	for (k = g->nhost; k < g->n; k++) {
		struct td_rp_node *n = &g->nodes[k];
		const struct td_event *e = td_trace_ev(t, n->ev);
		const struct dev_model *m = &dm[dev_index(t, td_trace_track(t, e->track)->device)];
		if (n->src != TD_NONE)
			n->lag = m->lag[kind_slot(e->kind)];
		if (n->prev == TD_NONE)
			continue;
		if (n->src == TD_NONE) /* no launch: its measured gap on the stream */
			n->gap = e->ts - end_of(g, n->prev);
		else if (n->gap >= 0)
			n->gap = m->queued;
	}
	/* the ops by (device, end), for the waits and the other streams */
	be = td_malloc((g->n - g->nhost + 1) * sizeof(*be));
	for (k = g->nhost; k < g->n; k++) {
		const struct td_event *e = td_trace_ev(t, g->nodes[k].ev);
		be[nb].end = td_ev_end(e);
		be[nb].node = (uint32_t)k;
		be[nb].dev = (int32_t)dev_index(t, td_trace_track(t, e->track)->device);
		nb++;
	}
	sort_by_end(be, nb);
	dev_lo = td_calloc(ndev + 2, sizeof(size_t));
	for (i = 0, k = 0; i <= ndev; i++) {
		while (k < nb && (size_t)be[k].dev < i)
			k++;
		dev_lo[i] = k;
	}
	dev_lo[ndev] = nb;
	if (role)
		link_waits(g, role, be, dev_lo, ndev, &tails, &plain_copy);
	td_vec_free(&tails);
	td_vec_free(&plain_copy);
	link_streams(g, dm, be, dev_lo);
	free(dev_lo);
	free(be);
	free(dm);
	return 0;
}

void td_replay_free(struct td_replay *g)
{
	free(g->nodes);
	free(g->track_first);
	free(g->track_count);
	free(g->primary);
	free(g->delays);
	memset(g, 0, sizeof(*g));
}
