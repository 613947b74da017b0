/* SPDX-License-Identifier: MIT */
/* A fix's edits (struct td_rp_edit, replay/replay.h) made into the overrides a replay reads
 * (struct td_rp_times): each node's flags, its lane gap and own cost where an edit sets them,
 * the anchors of ops made to overlap, the copies moved to a side stream and their links, the
 * pinned buffers a pinned copy needs. replay/sim.c then replays the graph with them. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/edits.h"
#include "replay/internal.h"
#include "replay/links.h"
#include "replay/replay.h"

/* Where the last search of the edits ended (a fix's edits come a step at a time, in order). */
struct near {
	uint32_t track, at;
};

/* The first node of track tr starting after ts; searched from *nr's node when it is on tr. */
static uint32_t first_after(const struct td_replay *g, uint32_t tr, int64_t ts, struct near *nr)
{
	uint32_t f = g->track_first[tr], n = g->track_count[tr];
	size_t lo, hint = nr && nr->track == tr ? nr->at - f : n / 2;

	TD_LOWER_BOUND_NEAR(lo, n, hint, td_rp_event(g, f + (uint32_t)mid)->ts <= ts);
	if (nr) {
		nr->track = tr;
		nr->at = f + (uint32_t)lo;
	}
	return f + (uint32_t)lo;
}

static size_t over_slot(uint32_t k, size_t mask)
{
	return (size_t)((k * 2654435761u) & mask);
}

/* Files over entry i by its node; the table grows to keep it at most three quarters full
 * (a host-bound trace's bound edits half its calls: 4 MB of table on 1 GB, not 8). */
static void over_index(struct td_rp_times *r, size_t i)
{
	const struct td_rp_side *o = r->over.data;
	size_t h, j;

	if (4 * r->over.len > 3 * r->over_slots) {
		r->over_slots = r->over_slots ? 2 * r->over_slots : 1024;
		free(r->over_ix);
		r->over_ix = td_calloc(r->over_slots, sizeof(uint32_t));
		for (j = 0; j < r->over.len; j++) {
			for (h = over_slot(o[j].node, r->over_slots - 1); r->over_ix[h];
			     h = (h + 1) & (r->over_slots - 1))
				;
			r->over_ix[h] = (uint32_t)j + 1;
		}
		return;
	}
	for (h = over_slot(o[i].node, r->over_slots - 1); r->over_ix[h];
	     h = (h + 1) & (r->over_slots - 1))
		;
	r->over_ix[h] = (uint32_t)i + 1;
}

/* The over entry of k, made (its lane gap and own cost start as the graph's). */
static struct td_rp_side *over_make(const struct td_replay *g, struct td_rp_times *r, uint32_t k)
{
	struct td_rp_side *o;
	size_t h;

	if (r->flag[k] & (F_COST | F_GAP)) { /* it has one */
		o = r->over.data;
		for (h = over_slot(k, r->over_slots - 1); o[r->over_ix[h] - 1].node != k;
		     h = (h + 1) & (r->over_slots - 1))
			;
		return &o[r->over_ix[h] - 1];
	}
	o = td_vec_push(&r->over);
	o->node = k;
	o->ref = TD_NONE;
	o->w = td_rp_prev(g, k) == TD_NONE ? 0 : td_rp_gap(g, k);
	o->v = 0;
	over_index(r, r->over.len - 1);
	return &TD_VEC_AT(&r->over, struct td_rp_side, r->over.len - 1);
}

static void set_gap(const struct td_replay *g, struct td_rp_times *r, uint32_t k, int64_t gap)
{
	over_make(g, r, k)->w = gap;
	r->flag[k] |= F_GAP;
}

static int64_t cur_gap(const struct td_replay *g, struct td_rp_times *r, uint32_t k)
{
	if (r->flag[k] & F_GAP)
		return over_make(g, r, k)->w;
	return td_rp_prev(g, k) == TD_NONE ? 0 : td_rp_gap(g, k);
}

static void set_cost(const struct td_replay *g, struct td_rp_times *r, uint32_t k, int64_t c)
{
	over_make(g, r, k)->v = c;
	r->flag[k] |= F_COST;
}

/* An op made to overlap the compute before it (TD_RP_OVERLAP). */
static void overlap_op(const struct td_replay *g, struct td_rp_times *r, uint32_t k,
		       const struct td_rp_edit *ed)
{
	uint32_t a = td_rp_prior_other(g, k), tr, f;
	int64_t d = td_ev_dur(td_rp_event(g, k)), res = ed->residual < d ? ed->residual : d;
	struct td_rp_anchor *an;

	if (!(g->fl[k] & TD_RPF_GPU) || a == TD_NONE || (r->flag[k] & F_ANCHOR))
		return;
	an = td_vec_push(&r->anchors);
	an->node = k;
	an->compute = a;
	an->lag = res - d;
	an->lo = TD_NONE;
	an->lo_lag = 0;
	tr = td_rp_track(g, a);
	f = first_after(g, tr, ed->since - 1, NULL);
	if (f < g->track_first[tr] + g->track_count[tr] && f <= a && d > 0) {
		/* the region's share that makes the first bucket, as measured */
		an->lo = f;
		an->lo_lag = (int64_t)((double)(td_ev_end(td_rp_event(g, a)) - td_rp_event(g, f)->ts) *
				       (double)res / (double)d);
	}
	r->flag[k] |= F_ANCHOR;
}

static void apply(const struct td_replay *g, const struct td_rp_edit *ed, struct td_rp_times *r,
		  struct near *nr)
{
	uint32_t f, end, k, lo;
	int resid = 0;

	if (ed->track >= g->t->tracks.len || g->track_first[ed->track] == TD_NONE ||
	    ed->to <= ed->from)
		return;
	f = g->track_first[ed->track];
	end = f + g->track_count[ed->track];
	lo = first_after(g, ed->track, ed->from - 1, nr);
	switch (ed->kind) {
	case TD_RP_FUSE:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++) {
			uint32_t h = g->src[k];
			if (k == lo)
				continue; /* the fused op's launch */
			r->flag[k] |= F_FUSED;
			if (h != TD_NONE && !(r->flag[h] & F_COST))
				r->flag[h] |= F_FREE;
		}
		return;
	case TD_RP_COST:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++) {
			set_cost(g, r, k, ed->residual);
			r->flag[k] |= F_PINNED;
		}
		return;
	case TD_RP_WARM:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++) {
			set_cost(g, r, k, ed->residual);
			r->flag[k] |= F_WARM;
		}
		return;
	case TD_RP_FREE:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++)
			if ((g->fl[k] & TD_RPF_GPU) && td_ev_dur(td_rp_event(g, k)) > ed->residual)
				set_cost(g, r, k, ed->residual);
		return;
	case TD_RP_UNWAIT:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++)
			r->flag[k] |= F_UNWAIT;
		return;
	case TD_RP_REMOVE:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++)
			r->flag[k] |= F_REMOVED;
		break;
	case TD_RP_OVERLAP:
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++)
			overlap_op(g, r, k, ed);
		return;
	case TD_RP_UNJOIN: { /* the joins whose burst is this thread's: by node, all of them */
		const struct td_rp_side *x = g->xs.data;
		size_t i;
		for (i = 0; i < g->xs.len; i++) {
			int64_t xe;
			if ((g->fl[x[i].node] & TD_RPF_GPU) || x[i].ref == TD_NONE ||
			    td_rp_track(g, x[i].ref) != ed->track ||
			    td_rp_track(g, x[i].node) == ed->track)
				continue;
			xe = td_ev_end(td_rp_event(g, x[i].ref));
			if (xe >= ed->from && xe < ed->to)
				r->flag[x[i].node] |= F_NOJOIN;
		}
		return;
	}
	case TD_RP_SIDE: /* the calls' nodes; their copies are marked once, after the edits */
		for (k = lo; k < end && td_rp_event(g, k)->ts < ed->to; k++)
			;
		if (k > lo) {
			struct td_rp_side *sd = td_vec_push(&r->sides);
			*sd = (struct td_rp_side){lo, k, 0, 0};
		}
		return;
	default: { /* TD_RP_DROP_HOST: the waits it drops gate nothing more */
		const struct td_rp_side *gt = g->gates.data;
		size_t i;
		TD_LOWER_BOUND(i, g->gates.len, gt[mid].node < lo);
		/* by node, so by the wait's start on this thread: none past `to` */
		for (; i < g->gates.len && gt[i].node < end && gt[i].w < ed->to; i++)
			if (gt[i].w >= ed->from)
				r->gate_off[i] = 1;
		break;
	}
	}
	/* the gaps that end after `from`, while they begin before `to` */
	for (k = first_after(g, ed->track, ed->from, nr); k < end; k++) {
		uint32_t p = td_rp_prev(g, k);
		int64_t ge = td_rp_event(g, k)->ts, gs, ov, gap;
		if (p == TD_NONE) { /* the thread's first call: it moves earlier */
			ov = overlap(INT64_MIN, ge, ed->from, ed->to);
			set_gap(g, r, k, cur_gap(g, r, k) - ov +
					 (resid ? 0 : ed->residual > ov ? ov : ed->residual));
			resid = 1;
			continue;
		}
		gs = td_ev_end(td_rp_event(g, p));
		if (gs >= ed->to)
			break;
		ov = overlap(gs, ge, ed->from, ed->to);
		if (!ov)
			continue;
		gap = cur_gap(g, r, k);
		gap = gap > ov ? gap - ov : 0;
		if (!resid) {
			gap += ed->residual;
			resid = 1;
		}
		set_gap(g, r, k, gap);
	}
	/* after the thread's last call: no gap holds it (the window's end maps through it) */
	if (ed->kind == TD_RP_DROP_HOST && k == end) {
		int64_t le = td_ev_end(td_rp_event(g, end - 1)), from = ed->from > le ? ed->from : le;
		if (!resid)
			from = ed->to - from > ed->residual ? from + ed->residual : ed->to;
		if (ed->to > from) {
			struct td_rp_side *tl = td_vec_push(&r->tails);
			*tl = (struct td_rp_side){end - 1, TD_NONE, from, ed->to};
		}
	}
}

/* The pinned buffers the copies made pinned need: before the first TD_RP_PIN_BUFFERS calls of
 * each size class, in the order they began, the host allocates one (their copies start after
 * it, as pin_memory() comes before the copy), when the trace holds the run's start. */
static void pin_allocs(const struct td_replay *g, struct td_rp_times *r)
{
	uint32_t first[64][TD_RP_PIN_BUFFERS];
	size_t k, c, i;

	if (!g->pin_alloc)
		return;
	for (c = 0; c < 64; c++)
		for (i = 0; i < TD_RP_PIN_BUFFERS; i++)
			first[c][i] = TD_NONE;
	for (k = g->nhost; k < g->n; k++) {
		uint32_t h = g->src[k], x;
		uint64_t b = td_rp_copy_bytes(g, (uint32_t)k);
		if (h == TD_NONE || !(r->flag[h] & F_PINNED) || !(g->fl[k] & TD_RPF_PAGEABLE) || !b)
			continue;
		for (c = 0; c < 63 && (UINT64_C(1) << c) < b; c++)
			;
		for (i = 0, x = h; i < TD_RP_PIN_BUFFERS && x != TD_NONE; i++) {
			uint32_t y = first[c][i]; /* kept by the call's start, then node */
			if (y == TD_NONE || ts_of(g, x) < ts_of(g, y) ||
			    (ts_of(g, x) == ts_of(g, y) && x < y)) {
				first[c][i] = x;
				x = y;
			}
		}
	}
	for (c = 0; c < 64; c++)
		for (i = 0; i < TD_RP_PIN_BUFFERS && first[c][i] != TD_NONE; i++)
			set_gap(g, r, first[c][i], cur_gap(g, r, first[c][i]) +
						       td_rp_pin_alloc_ns(UINT64_C(1) << c));
}

#define OVER_LESS(x, y) ((x)->node < (y)->node)
TD_DEFINE_SORT(sort_over, struct td_rp_side, OVER_LESS)

/* The copies TD_RP_SIDE moves - those launched by copy calls in the ranges of host nodes
 * apply() left in r->sides ([node, ref)) - then their links, stream by stream in order
 * (r->sides, by node, in their place). */
static void side_links(const struct td_replay *g, struct td_rp_times *r)
{
	const struct td_rp_side *rg;
	size_t i, nr = r->sides.len;

	if (!nr)
		return;
	sort_over(r->sides.data, nr);
	rg = r->sides.data;
	for (i = g->nhost; i < g->n; i++) {
		uint32_t h = g->src[i];
		size_t j;
		if (h == TD_NONE || !(g->fl[h] & TD_RPF_COPY) ||
		    td_rp_event(g, (uint32_t)i)->kind != TD_K_MEMCPY)
			continue;
		TD_LOWER_BOUND(j, nr, rg[mid].node <= h); /* the last range starting at or before h */
		if (j && h < rg[j - 1].ref)
			r->flag[i] |= F_SIDE;
	}
	r->sides.len = 0;

	for (i = 0; i < g->t->tracks.len; i++) {
		uint32_t f = g->track_first[i], k, moved = TD_NONE, main_op = TD_NONE;
		int pending = 0;
		if (f == TD_NONE || !td_trace_track(g->t, (uint32_t)i)->is_gpu)
			continue;
		for (k = f; k < f + g->track_count[i]; k++) {
			struct td_rp_side *sd;
			if (r->flag[k] & F_SIDE) {
				sd = td_vec_push(&r->sides);
				*sd = (struct td_rp_side){k, moved, -1, 0};
				moved = k;
				pending = 1;
				continue;
			}
			if (pending) {
				sd = td_vec_push(&r->sides);
				*sd = (struct td_rp_side){k, moved, main_op == TD_NONE ? -1
								     : (int64_t)main_op, 0};
				r->flag[k] |= F_AFTER_SIDE;
				pending = 0;
			}
			main_op = k;
		}
	}
}

TD_DEFINE_SORT(sort_anchors, struct td_rp_anchor, OVER_LESS)

/* The times' overrides for a replay of g with the edits pre, then edits (replay/edits.h). */
void td_rp_edit_times(const struct td_replay *g, const struct td_rp_edit *pre, size_t npre,
		      const struct td_rp_edit *edits, size_t nedits, struct td_rp_times *out)
{
	struct near nr = {TD_NONE, 0};
	size_t k;
	int calls = 0; /* an edit removed calls or made them pinned */

	for (k = 0; k < npre + nedits; k++) {
		const struct td_rp_edit *ed = k < npre ? &pre[k] : &edits[k - npre];
		apply(g, ed, out, &nr);
		calls |= ed->kind == TD_RP_REMOVE || ed->kind == TD_RP_COST;
	}
	/* a removed call's GPU ops go with it; a pageable copy made pinned runs at the link's
	 * pinned bandwidth (a pass over the GPU ops, only for the edits that need it) */
	for (k = calls ? g->nhost : g->n; k < g->n; k++) {
		uint32_t h = g->src[k];
		if (h == TD_NONE)
			continue;
		if (out->flag[h] & F_REMOVED)
			out->flag[k] |= F_REMOVED;
		else if ((out->flag[h] & F_PINNED) && (g->fl[k] & TD_RPF_PAGEABLE))
			set_cost(g, out, (uint32_t)k, td_rp_pinned_dur(g, (uint32_t)k));
	}
	if (calls)
		pin_allocs(g, out);
	side_links(g, out);
	sort_over(out->sides.data, out->sides.len);
	sort_over(out->over.data, out->over.len);
	sort_anchors(out->anchors.data, out->anchors.len);
}
