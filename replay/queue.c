/* SPDX-License-Identifier: MIT */
/* The replay's graph (replay/replay.h): the launch queue. A device holds so many launched ops
 * not yet started; past that, a launch call blocks until one completes (a GPU-bound loop with
 * no sync: its launches then take as long as the kernels). Where the trace shows it - launch
 * calls far slower than the device's median launch, with hundreds of ops pending when they
 * return - a blocked call ends no earlier than the op whose end freed its slot (the last to end
 * before it returned, of those launched just before the pending ones) plus the measured lag,
 * and costs a launch besides; any other launch ends no earlier than the op launched as many
 * launches before it as the queue ever held pending, plus one (it had ended: a slot was free).
 * Edges are kept only where the trace holds them. A fix that shortens the GPU work frees a
 * blocked launch sooner; one that speeds the host up blocks launches that did not block. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/internal.h"
#include "replay/links.h"
#include "replay/replay.h"

#define BLOCKED_MIN_NS 50000 /* a launch this long, and QUEUE_SLOW times a short one's median,
			      * blocked */
#define QUEUE_SLOW 10
#define QUEUE_MIN 16         /* fewer pending ops is no queue: something else held the call */

struct launch {
	int64_t ts;              /* its call's start */
	uint32_t dev, call, op;
};
#define LAUNCH_LESS(x, y) ((x)->dev != (y)->dev ? (x)->dev < (y)->dev                     \
			   : (x)->ts != (y)->ts ? (x)->ts < (y)->ts : (x)->call < (y)->call)
TD_DEFINE_SORT(sort_launches, struct launch, LAUNCH_LESS)

/* The plain launch calls (not a copy, not a wait) of one op each, by device and start. */
static struct launch *launches(const struct td_replay *g, size_t *n)
{
	uint8_t *ops = td_calloc(g->nhost + 1, 1); /* ops per call: 0, 1, 2 for more */
	struct launch *v;
	size_t k, m = 0;

	for (k = g->nhost; k < g->n; k++)
		if (g->src[k] != TD_NONE && ops[g->src[k]] < 2)
			ops[g->src[k]]++;
	v = td_malloc((g->n - g->nhost + 1) * sizeof(*v));
	for (k = g->nhost; k < g->n; k++) {
		uint32_t h = g->src[k];
		if (h == TD_NONE || ops[h] != 1 || (g->fl[h] & (TD_RPF_COPY | TD_RPF_WAITS)))
			continue;
		v[m++] = (struct launch){ts_of(g, h), (uint32_t)td_rp_dev_of(g, (uint32_t)k), h,
					 (uint32_t)k};
	}
	free(ops);
	sort_launches(v, m);
	*n = m;
	return v;
}

/* For each of one device's launches v[0..n), how many launched before it had not started when
 * its call returned: those after the last whose op started by then, in launch order (a queue
 * starts its ops in order; across streams nearly so). One pass: the calls return in order. */
static uint32_t *pending(const struct td_replay *g, const struct launch *v, size_t n)
{
	uint32_t *p = td_malloc((n + 1) * sizeof(*p));
	size_t k, q = 0;

	for (k = 0; k < n; k++) {
		int64_t end = end_of(g, v[k].call);
		while (q < k && ts_of(g, v[q].op) <= end)
			q++;
		p[k] = (uint32_t)(k - q);
	}
	return p;
}

/* Of the QUEUE_NEAR launches up to v[lim], the op that ended last no later than v[i]'s call
 * returned: the one whose end freed its slot (TD_NONE: none). */
#define QUEUE_NEAR 32
static uint32_t freed_by(const struct td_replay *g, const struct launch *v, size_t i, size_t lim)
{
	int64_t end = end_of(g, v[i].call) + SLACK_NS, best_end = INT64_MIN;
	uint32_t best = TD_NONE;
	size_t j;

	for (j = lim + 1; j-- > 0 && lim - j < QUEUE_NEAR;) {
		int64_t e = end_of(g, v[j].op);
		if (e <= end && e > best_end && e > v[i].ts) {
			best = v[j].op;
			best_end = e;
		}
	}
	return best;
}

/* One device's launches v[0..n): its depth (0: no full queue shown), the most ops pending at
 * a blocked call's return in *most; *med the median launch of those under BLOCKED_MIN_NS (in a
 * loop whose queue stays full most launches block), *thr the duration that says a call
 * blocked. A call blocked on the queue returns just after an op ended (QUEUE_LAG_MAX), with
 * QUEUE_MIN ops pending at least - three such calls, and half of the long calls with ops
 * pending, say the queue filled (a first launch loading its module is long too, and returns
 * when the module is loaded). */
#define QUEUE_LAG_MAX 50000
static size_t depth_of(const struct td_replay *g, const struct launch *v, size_t n,
		       const uint32_t *pend, int64_t *med, int64_t *thr, size_t *most,
		       struct td_vec *tmp)
{
	size_t i, longs = 0;

	tmp->len = 0;
	for (i = 0; i < n; i++) /* the launches that cannot have blocked long: what one costs */
		if (td_ev_dur(td_rp_event(g, v[i].call)) < BLOCKED_MIN_NS)
			*(int64_t *)td_vec_push(tmp) = td_ev_dur(td_rp_event(g, v[i].call));
	*med = tmp->len ? td_median_i64(tmp->data, tmp->len) : BLOCKED_MIN_NS / QUEUE_SLOW;
	*thr = QUEUE_SLOW * *med > BLOCKED_MIN_NS ? QUEUE_SLOW * *med : BLOCKED_MIN_NS;
	tmp->len = 0;
	*most = 0;
	for (i = 0; i < n; i++) {
		size_t pending;
		uint32_t o;
		if (end_of(g, v[i].call) - v[i].ts < *thr || (pending = pend[i]) < QUEUE_MIN)
			continue;
		longs++;
		if (pending >= i) /* nothing launched before the pending ones */
			continue;
		o = freed_by(g, v, i, i - pending - 1);
		if (o == TD_NONE || end_of(g, v[i].call) - end_of(g, o) > QUEUE_LAG_MAX)
			continue;
		*(int64_t *)td_vec_push(tmp) = (int64_t)pending;
		if (pending > *most)
			*most = pending;
	}
	if (tmp->len < 3 || 2 * tmp->len < longs)
		return 0;
	return (size_t)td_median_i64(tmp->data, tmp->len);
}

void td_rp_link_queue(struct td_replay *g)
{
	struct td_vec tmp;
	struct launch *v;
	size_t n, i, j, slow = 0;

	for (i = 0; i < g->nhost && slow < 3; i++) /* most traces: no launch that long, no queue */
		slow += !(g->fl[i] & (TD_RPF_COPY | TD_RPF_WAITS)) &&
			td_ev_dur(td_rp_event(g, (uint32_t)i)) >= BLOCKED_MIN_NS;
	if (slow < 3)
		return;
	td_vec_init(&tmp, sizeof(int64_t));
	v = launches(g, &n);
	for (i = 0; i < n; i = j) {
		struct td_rp_dev *dv = &g->dev[v[i].dev];
		size_t depth, most, k;
		int64_t thr, med;
		uint32_t *pend;
		for (j = i; j < n && v[j].dev == v[i].dev; j++)
			;
		pend = pending(g, v + i, j - i);
		depth = depth_of(g, v + i, j - i, pend, &med, &thr, &most, &tmp);
		if (!depth) {
			free(pend);
			continue;
		}
		dv->queue_depth = (int64_t)depth;
		dv->launch = med;
		tmp.len = 0;
		for (k = i + most + 1; k < j; k++) {
			/* a blocked call: the op whose end freed it, before those still pending; any
			 * other: the op as far back as the queue ever held (it ended before) */
			uint32_t h = v[k].call, o;
			int blocked = end_of(g, h) - v[k].ts >= thr;
			size_t p = blocked ? pend[k - i] : most;
			if (blocked && (p < QUEUE_MIN || p >= k - i))
				continue;
			o = blocked ? freed_by(g, v + i, k - i, k - i - p - 1) : v[k - most - 1].op;
			if (o == TD_NONE || end_of(g, o) > end_of(g, h) + SLACK_NS ||
			    (blocked && end_of(g, h) - end_of(g, o) > QUEUE_LAG_MAX))
				continue; /* the trace says otherwise: no edge */
			g->src[h] = o;
			g->fl[h] |= TD_RPF_WAITS | TD_RPF_QUEUE;
			g->queue_edges++;
			if (blocked) {
				g->fl[h] |= TD_RPF_OWNCOST; /* it waited: alone, a launch */
				g->blocked_launches++;
				*(int64_t *)td_vec_push(&tmp) = end_of(g, h) - end_of(g, o);
			}
		}
		free(pend);
		/* the blocked calls' lag after the op that freed them */
		dv->queue_tail = tmp.len ? td_median_i64(tmp.data, tmp.len) : 0;
		if (dv->queue_tail < 0)
			dv->queue_tail = 0;
	}
	free(v);
	td_vec_free(&tmp);
}
