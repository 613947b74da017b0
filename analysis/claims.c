/* SPDX-License-Identifier: MIT */
/* Claims: which finding owns which idle nanoseconds. Each device keeps its claimed pieces
 * sorted and disjoint; a rule collects candidate spans (optionally of one cause), commits them
 * at once, and gets back only what no finding claimed before it. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"

struct cand {
	int64_t from, to;
	uint32_t tag;
	int cause;
};

struct piece {
	int64_t s, e;
	uint32_t tag, order;
};
#define PIECE_LESS(x, y) ((x)->s < (y)->s || ((x)->s == (y)->s && (x)->order < (y)->order))
TD_DEFINE_SORT(sort_pieces, struct piece, PIECE_LESS)

void td_claims_init(struct td_claims *c)
{
	td_vec_init(&c->cand, sizeof(struct cand));
}

void td_claims_free(struct td_claims *c)
{
	td_vec_free(&c->cand);
}

void td_claims_add(struct td_claims *c, int64_t from, int64_t to, int cause, uint32_t tag)
{
	if (to <= from)
		return;
	*(struct cand *)td_vec_push(&c->cand) = (struct cand){from, to, tag, cause};
}

/* First segment of dv ending after ts. */
static size_t seg_after(const struct td_dev_analysis *dv, int64_t ts)
{
	size_t lo;

	TD_LOWER_BOUND(lo, dv->nsegs, dv->segs[mid].end <= ts);
	return lo;
}

/* First claim of dv ending after ts. */
static size_t claim_after(const struct td_vec *claims, int64_t ts)
{
	size_t lo;

	TD_LOWER_BOUND(lo, claims->len, TD_VEC_AT(claims, struct td_claim, mid).end <= ts);
	return lo;
}

static void add_new(struct td_vec *out, int64_t s, int64_t e, uint32_t owner)
{
	struct td_claim *last = out->len ? &TD_VEC_AT(out, struct td_claim, out->len - 1) : NULL;

	if (last && last->end == s && last->owner == owner) {
		last->end = e;
		return;
	}
	last = td_vec_push(out);
	last->start = s;
	last->end = e;
	last->owner = owner;
}

/* What is left of piece p after the pieces before it (covered: how far they reach) and the
 * claims: into fresh, and counted. */
static void take_piece(const struct td_dev_analysis *dv, const struct piece *p, int64_t *covered,
		       struct td_vec *fresh, uint32_t owner, int64_t *total, int64_t *per_tag,
		       size_t ntags)
{
	int64_t s = p->s > *covered ? p->s : *covered, e = p->e, got = 0;
	size_t j;

	if (s >= e)
		return;
	*covered = e;
	for (j = claim_after(&dv->claims, s); s < e; j++) {
		const struct td_claim *cl = j < dv->claims.len
			? &TD_VEC_AT(&dv->claims, struct td_claim, j) : NULL;
		int64_t stop = cl && cl->start < e ? cl->start : e;
		if (stop > s) {
			add_new(fresh, s, stop, owner);
			got += stop - s;
		}
		if (!cl || cl->start >= e)
			break;
		s = cl->end;
	}
	*total += got;
	if (per_tag && p->tag < ntags)
		per_tag[p->tag] += got;
}

/* Merges the fresh pieces into dv's claims, both sorted and disjoint, in place (from the end of
 * the claims made longer), then joins the neighbours of one owner that touch. */
static void merge_fresh(struct td_dev_analysis *dv, const struct td_vec *fresh)
{
	size_t n = dv->claims.len, m = fresh->len, i = n, j = m, k = n + m, w;
	struct td_claim *c;
	const struct td_claim *f = fresh->data;

	td_vec_reserve(&dv->claims, n + m);
	c = dv->claims.data;
	while (j > 0) {
		if (i > 0 && c[i - 1].start >= f[j - 1].start) /* a fresh one first, as before */
			c[--k] = c[--i];
		else
			c[--k] = f[--j];
	}
	for (i = 0, w = 0; i < n + m; i++) {
		if (w && c[w - 1].end == c[i].start && c[w - 1].owner == c[i].owner)
			c[w - 1].end = c[i].end;
		else
			c[w++] = c[i];
	}
	dv->claims.len = w;
}

int64_t td_claims_commit(struct td_analysis *a, size_t d, struct td_claims *c, uint32_t owner,
			 int64_t *per_tag, size_t ntags)
{
	struct td_dev_analysis *dv = &a->dev[d];
	struct td_vec pieces, fresh;
	int64_t covered = INT64_MIN, total = 0, reach = INT64_MIN;
	size_t i, k;
	int in_order = 1;

	/* candidates in order and apart give their pieces in order: taken as they come (the
	 * whole window, a piece per segment, would be tens of MB on a host-bound trace) */
	for (i = 0; i < c->cand.len && in_order; i++) {
		const struct cand *x = &TD_VEC_AT(&c->cand, struct cand, i);
		in_order = x->from >= reach;
		reach = x->to;
	}
	td_vec_init(&pieces, sizeof(struct piece));
	td_vec_init(&fresh, sizeof(struct td_claim));
	/* candidates into pieces of idle segments (of the wanted cause) */
	for (i = 0; i < c->cand.len; i++) {
		const struct cand *x = &TD_VEC_AT(&c->cand, struct cand, i);
		for (k = seg_after(dv, x->from); k < dv->nsegs && dv->segs[k].start < x->to; k++) {
			const struct td_seg *g = &dv->segs[k];
			struct piece pc, *p = in_order ? &pc : NULL;
			if (x->cause < CAUSE_COUNT && g->cause != x->cause)
				continue;
			if (!p)
				p = td_vec_push(&pieces);
			p->s = g->start > x->from ? g->start : x->from;
			p->e = g->end < x->to ? g->end : x->to;
			p->tag = x->tag;
			p->order = (uint32_t)i;
			if (in_order)
				take_piece(dv, p, &covered, &fresh, owner, &total, per_tag, ntags);
		}
	}
	c->cand.len = 0;
	/* else sorted, then what is left of each after earlier pieces and earlier claims */
	sort_pieces(pieces.data, pieces.len);
	for (i = 0; i < pieces.len; i++)
		take_piece(dv, &TD_VEC_AT(&pieces, struct piece, i), &covered, &fresh, owner, &total,
			   per_tag, ntags);
	td_vec_free(&pieces);
	if (fresh.len)
		merge_fresh(dv, &fresh);
	td_vec_free(&fresh);
	return total;
}

int64_t td_claim_cause(struct td_analysis *a, size_t d, enum td_cause cause, uint32_t owner)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_claims c;
	int64_t got;
	size_t i;

	td_claims_init(&c);
	for (i = 0; i < dv->nsegs; i++)
		if (dv->segs[i].cause == cause)
			td_claims_add(&c, dv->segs[i].start, dv->segs[i].end, (int)cause, 0);
	got = td_claims_commit(a, d, &c, owner, NULL, 0);
	td_claims_free(&c);
	return got;
}

int64_t td_an_idle_in(const struct td_analysis *a, size_t d, int64_t from, int64_t to,
		      unsigned cause_mask)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t idle = 0;
	size_t k;

	for (k = seg_after(dv, from); k < dv->nsegs && dv->segs[k].start < to; k++) {
		int64_t s = dv->segs[k].start > from ? dv->segs[k].start : from;
		int64_t e = dv->segs[k].end < to ? dv->segs[k].end : to;
		if (cause_mask & (1u << dv->segs[k].cause))
			idle += e - s;
	}
	return idle;
}

const struct td_claim *td_an_claim_at(const struct td_analysis *a, size_t d, int64_t t)
{
	const struct td_vec *c = &a->dev[d].claims;
	size_t k = claim_after(c, t);

	return k < c->len && TD_VEC_AT(c, struct td_claim, k).start <= t
		? &TD_VEC_AT(c, struct td_claim, k) : NULL;
}

int64_t td_an_unclaimed(const struct td_analysis *a, size_t d, int64_t from, int64_t to)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t idle = 0, claimed = 0;
	size_t k;

	for (k = seg_after(dv, from); k < dv->nsegs && dv->segs[k].start < to; k++) {
		int64_t s = dv->segs[k].start > from ? dv->segs[k].start : from;
		int64_t e = dv->segs[k].end < to ? dv->segs[k].end : to;
		idle += e - s;
	}
	for (k = claim_after(&dv->claims, from); k < dv->claims.len; k++) {
		const struct td_claim *cl = &TD_VEC_AT(&dv->claims, struct td_claim, k);
		int64_t s = cl->start > from ? cl->start : from, e = cl->end < to ? cl->end : to;
		if (cl->start >= to)
			break;
		claimed += e - s;
	}
	return idle - claimed;
}

void td_an_unclaimed_pieces(const struct td_analysis *a, size_t d, td_piece_fn fn, void *ctx)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t g, k, j = 0;

	for (g = 0; g < dv->ngaps; g++) {
		size_t end = g + 1 < dv->ngaps ? dv->gaps[g + 1].seg : dv->nsegs;
		for (k = dv->gaps[g].seg; k < end; k++) {
			struct td_seg p = dv->segs[k];
			int64_t s = p.start;
			while (j < dv->claims.len && TD_VEC_AT(&dv->claims, struct td_claim, j).end <= s)
				j++;
			while (s < dv->segs[k].end) {
				const struct td_claim *cl = j < dv->claims.len
					? &TD_VEC_AT(&dv->claims, struct td_claim, j) : NULL;
				int64_t stop = cl && cl->start < dv->segs[k].end ? cl->start : dv->segs[k].end;
				if (stop > s) {
					p.start = s;
					p.end = stop;
					fn(ctx, &p, g);
				}
				if (!cl || cl->start >= dv->segs[k].end)
					break;
				s = cl->end;
				if (cl->end <= dv->segs[k].end)
					j++;
			}
		}
	}
}

void td_an_claimed_by_cause(const struct td_analysis *a, size_t d, uint32_t owner, int64_t *by)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t j, k;

	for (j = 0; j < dv->claims.len; j++) {
		const struct td_claim *cl = &TD_VEC_AT(&dv->claims, struct td_claim, j);
		if (cl->owner != owner)
			continue;
		for (k = seg_after(dv, cl->start); k < dv->nsegs && dv->segs[k].start < cl->end; k++) {
			int64_t s = dv->segs[k].start > cl->start ? dv->segs[k].start : cl->start;
			int64_t e = dv->segs[k].end < cl->end ? dv->segs[k].end : cl->end;
			if (e > s)
				by[dv->segs[k].cause] += e - s;
		}
	}
}

void td_an_oneoff_in(const struct td_analysis *a, size_t d, int64_t from, int64_t to,
		     int64_t *startup_ns, int64_t *row_ns, const char **row)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t k, j;

	*startup_ns = *row_ns = 0;
	for (k = claim_after(&dv->claims, from); a->noneoffs && k < dv->claims.len; k++) {
		const struct td_claim *cl = &TD_VEC_AT(&dv->claims, struct td_claim, k);
		int64_t s = cl->start > from ? cl->start : from, e = cl->end < to ? cl->end : to;
		if (cl->start >= to)
			break;
		for (j = 0; j < a->noneoffs && e > s; j++) {
			const struct td_oneoff *o = &a->oneoffs[j];
			if (o->serial != cl->owner || o->device != dv->device)
				continue;
			if (o->row) {
				*row_ns += e - s;
				*row = o->row;
			} else {
				*startup_ns += e - s;
			}
			break;
		}
	}
}

void td_an_idle_by_cause_told(const struct td_analysis *a, size_t d, int64_t *by,
			      const char **title)
{
	size_t i;
	int c;

	for (c = 0; c < CAUSE_COUNT; c++)
		by[c] += a->dev[d].idle_by_cause[c];
	for (i = 0; i < a->noneoffs; i++) {
		const struct td_oneoff *o = &a->oneoffs[i];
		int64_t mine[CAUSE_COUNT] = {0};
		int to = o->row ? CAUSE_COUNT : CAUSE_WARMUP;
		if (o->device != a->dev[d].device)
			continue;
		td_an_claimed_by_cause(a, d, o->serial, mine);
		for (c = 0; c < CAUSE_COUNT; c++) {
			if (c == to || !mine[c])
				continue;
			by[c] -= mine[c];
			by[to] += mine[c];
		}
		if (o->row && title)
			*title = o->row;
	}
}

uint32_t td_an_owner_at(const struct td_analysis *a, size_t d, int64_t ts)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t k = claim_after(&dv->claims, ts);

	if (k < dv->claims.len && TD_VEC_AT(&dv->claims, struct td_claim, k).start <= ts)
		return TD_VEC_AT(&dv->claims, struct td_claim, k).owner;
	return UINT32_MAX;
}
