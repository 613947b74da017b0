/* SPDX-License-Identifier: MIT */
/* What the replay's modules share (replay/graph.c, copies.c, queue.c, sim.c): not an interface.
 * Its inline helpers need only replay/side.c below them; what graph.c takes from copies.c and
 * queue.c is in replay/links.h. */
#ifndef TD_REPLAY_INTERNAL_H
#define TD_REPLAY_INTERNAL_H

#include <stdint.h>

#include "common/vec.h"
#include "replay/replay.h"

#define SLACK_NS 2000 /* a wait ends this soon after the op it waited for, at most */

static inline int64_t ts_of(const struct td_replay *g, uint32_t k)
{
	return g->ts[k];
}

static inline int64_t end_of(const struct td_replay *g, uint32_t k)
{
	return g->end[k];
}

/* How much of [a0, a1) lies in [b0, b1). */
static inline int64_t overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
	int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/* The device index of node k's track. */
static inline int32_t td_rp_dev_of(const struct td_replay *g, uint32_t k)
{
	return g->track_dev[td_rp_track(g, k)];
}

/* td_rp_gap() where the caller knows k's device index (dev; -1: it is looked up). */
static inline int64_t td_rp_gap_on(const struct td_replay *g, uint32_t k, int32_t dev)
{
	uint32_t p = td_rp_prev(g, k);
	int64_t gap;

	if (p == TD_NONE)
		return 0;
	if (g->fl[k] & TD_RPF_X) {
		const struct td_rp_side *s = td_rp_side_of(&g->xs, k);
		if (s && s->w != TD_RP_NOGAP)
			return s->w;
	}
	if ((g->fl[k] & TD_RPF_GPU) && !(g->fl[k] & TD_RPF_MEASGAP))
		return g->dev[dev >= 0 ? dev : td_rp_dev_of(g, k)].queued;
	gap = ts_of(g, k) - end_of(g, p);
	if (!(g->fl[k] & TD_RPF_GPU))
		return gap > 0 ? gap : 0;
	return gap; /* overlapping, or no launch: as measured */
}

/* Appends a side-table entry; td_rp_sort_side() orders a table by node, then ref
 * (replay/side.c). */
void td_rp_add_side(struct td_vec *v, uint32_t node, uint32_t ref, int64_t val, int64_t w);
void td_rp_sort_side(struct td_vec *v);

#endif
