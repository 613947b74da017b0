/* SPDX-License-Identifier: MIT */
/* The critical path of each steady-state step (sizing/critpath.h). */
#include "sizing/critpath.h"

#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "analysis/names.h"
#include "common/alloc.h"
#include "common/sort.h"
#include "sizing/internal.h"

const char *td_cp_cat_name(enum td_cp_cat c)
{
	static const char *const n[TD_CP_NCAT] = {"cpu", "launch", "data_loading", "gpu_compute",
						   "communication", "copies", "waits",
						   "kernel_delay"};
	return c < TD_CP_NCAT ? n[c] : "?";
}

struct walk {
	struct td_analysis *a;
	const struct td_replay *g;
	struct td_critpath *cp;
	struct td_cp_step *st;
	size_t step;
	int64_t s;                 /* the step's start: the walk ends there */
	int64_t cur;               /* the time the path has reached, going back */
	struct td_interval *dl;    /* the step thread's DataLoader spans, merged */
	size_t ndl;
};

static int64_t nstart(const struct walk *w, uint32_t k)
{
	return td_rp_start(w->g, NULL, k);
}

static int64_t nend(const struct walk *w, uint32_t k)
{
	return td_rp_end(w->g, NULL, k);
}

/* [from, w->cur) charged to cat (what: its event), clipped to the step; the path reaches from. */
static void charge(struct walk *w, int64_t from, enum td_cp_cat cat, uint32_t what)
{
	struct td_cp_seg *sg;

	if (from < w->s)
		from = w->s;
	if (from >= w->cur)
		return;
	w->st->by[cat] += w->cur - from;
	sg = td_vec_push(&w->cp->segs);
	sg->start = from;
	sg->dur = w->cur - from;
	sg->ev = what;
	sg->cat = cat;
	sg->step = (uint32_t)w->step;
	sg->pad = 0;
	w->cur = from;
}

/* Host work in [from, w->cur) before call k (TD_NONE: the step's end): what of it lies in a
 * DataLoader's span is data loading, the rest the host's own. */
static void host_gap(struct walk *w, int64_t from, uint32_t k, int loader)
{
	uint32_t what = k == TD_NONE ? TD_NONE : td_an_user_op(w->a, w->g->ev[k]);
	size_t i;

	if (from < w->s)
		from = w->s;
	if (loader) {
		charge(w, from, TD_CP_DATA, what);
		return;
	}
	/* from the end back: the loader spans (by start) that reach into [from, cur), the
	 * first starting before cur found by a search (a scan from the last was quadratic in
	 * the steps) */
	TD_LOWER_BOUND(i, w->ndl, w->dl[mid].start < w->cur);
	while (i-- > 0 && w->cur > from) {
		const struct td_interval *d = &w->dl[i];
		if (d->end <= from)
			break;
		if (d->end < w->cur)
			charge(w, d->end, TD_CP_CPU, what);
		charge(w, d->start > from ? d->start : from, TD_CP_DATA, what);
	}
	charge(w, from, TD_CP_CPU, what);
}

static enum td_cp_cat op_cat(const struct walk *w, uint32_t k)
{
	const struct td_event *e = td_rp_event(w->g, k);

	if (e->kind == TD_K_MEMCPY || e->kind == TD_K_MEMSET)
		return TD_CP_COPY;
	if ((e->flags & TD_EF_COLL) || (td_an_class(w->a, e->name) & NC_COMM))
		return TD_CP_COMM;
	return TD_CP_COMPUTE;
}

/* A call that waits for nothing: a launch, a copy's or a sync's call, else the host's own
 * work (an allocation, an event record). */
static enum td_cp_cat call_cat(const struct walk *w, uint32_t k)
{
	uint32_t c = td_an_class(w->a, td_rp_event(w->g, k)->name);

	return c & NC_LAUNCH ? TD_CP_LAUNCH : c & (NC_MEMCPY_CALL | NC_MEMSET_CALL) ? TD_CP_COPY
		: c & (NC_SYNC_CALL | NC_USER_SYNC) ? TD_CP_WAIT : TD_CP_CPU;
}

/* The later of cand's ready time and *best: the predecessor that let k start last. */
static void consider(uint32_t cand, int64_t ready, enum td_cp_cat cat, uint32_t *best,
		    int64_t *best_t, enum td_cp_cat *best_cat)
{
	if (cand != TD_NONE && (*best == TD_NONE || ready > *best_t)) {
		*best = cand;
		*best_t = ready;
		*best_cat = cat;
	}
}

/* From node k, which the path reaches at w->cur (its end, or a time inside it), back to the
 * step's start. */
static void walk_back(struct walk *w, uint32_t k)
{
	const struct td_replay *g = w->g;
	size_t guard = 4 * g->n + 64;

	while (w->cur > w->s && k != TD_NONE && guard--) {
		int64_t ks = nstart(w, k), ke = nend(w, k);
		if (ke < w->cur) /* a gap after it: a host's own work, or the stream idle */
			(g->fl[k] & TD_RPF_GPU) ? charge(w, ke, TD_CP_DELAY, g->ev[k])
						 : host_gap(w, ke, TD_NONE, 0);
		if (g->fl[k] & TD_RPF_GPU) {
			uint32_t best = TD_NONE, p = td_rp_prev(g, k);
			int64_t bt = 0;
			enum td_cp_cat bc = TD_CP_DELAY;
			charge(w, ks, op_cat(w, k), g->ev[k]);
			if (p != TD_NONE)
				consider(p, nend(w, p), TD_CP_DELAY, &best, &bt, &bc);
			if (g->src[k] != TD_NONE)
				consider(g->src[k], nstart(w, g->src[k]), TD_CP_LAUNCH, &best, &bt, &bc);
			if (g->fl[k] & TD_RPF_X) {
				const struct td_rp_side *x = td_rp_side_of(&g->xs, k);
				if (x)
					consider(x->ref, nend(w, x->ref), TD_CP_DELAY, &best, &bt, &bc);
			}
			if (g->fl[k] & TD_RPF_ENGINE)
				consider(td_rp_side_of(&g->engine, k)->ref,
					 nend(w, td_rp_side_of(&g->engine, k)->ref), TD_CP_COPY, &best,
					 &bt, &bc);
			if (best == TD_NONE) { /* nothing before it in the trace: the GPU idle */
				charge(w, w->s, TD_CP_DELAY, g->ev[k]);
				return;
			}
			charge(w, bt, bc, g->ev[k]);
			k = best; /* a launch is reached at its start: its own time is off the path */
			continue;
		}
		/* a host call */
		if (w->cur <= ks) {
			/* reached at its start (an op's launch): on to the call before it */
		} else if (g->fl[k] & TD_RPF_WAITS && g->src[k] != TD_NONE) {
			uint32_t op = g->src[k];
			int64_t oe = nend(w, op);
			enum td_cp_cat cat = (g->fl[k] & TD_RPF_QUEUE) ? TD_CP_LAUNCH
				: (g->fl[k] & TD_RPF_COPY) ? TD_CP_COPY : TD_CP_WAIT;
			if (oe > ks && oe < w->cur) { /* it waited for op: the path goes there */
				charge(w, oe, cat, g->ev[k]);
				k = op;
				continue;
			}
			if (oe >= w->cur) { /* still waiting at cur: the op runs on the path */
				k = op;
				continue;
			}
			charge(w, ks, cat, g->ev[k]);
		} else {
			charge(w, ks, call_cat(w, k), g->ev[k]);
		}
		{
			uint32_t p = td_rp_prev(g, k), best = p;
			int64_t bt = p != TD_NONE ? nend(w, p) : w->s;
			if (g->fl[k] & TD_RPF_X) { /* a thread joined: its burst's end */
				const struct td_rp_side *x = td_rp_side_of(&g->xs, k);
				if (x && nend(w, x->ref) > bt) {
					best = x->ref;
					bt = nend(w, x->ref);
				}
			}
			host_gap(w, bt, k, (g->fl[k] & TD_RPF_GATE) != 0);
			k = best;
		}
	}
	if (w->cur > w->s) /* the lane's first call, or the guard: the rest is the host's */
		host_gap(w, w->s, TD_NONE, 0);
}

#define IV_LESS(x, y) ((x)->start < (y)->start || ((x)->start == (y)->start && (x)->end < (y)->end))

static size_t loader_spans(struct td_analysis *a, uint32_t tr, struct td_interval **out)
{
	const struct td_trace *t = a->t;
	const struct td_track *trk = td_trace_track(t, tr);
	size_t n = 0, cap = 0;
	uint32_t i;

	*out = NULL;
	for (i = trk->first; i < trk->first + trk->count; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_RUNTIME || !(td_an_class(a, e->name) & NC_DATALOADER))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			*out = td_realloc(*out, cap * sizeof(**out));
		}
		(*out)[n].start = e->ts;
		(*out)[n++].end = td_ev_end(e);
	}
	return n ? td_iv_merge(*out, n) : 0;
}

static int seg_longer(const struct td_critpath *cp, uint32_t x, uint32_t y)
{
	const struct td_cp_seg *a = &TD_VEC_AT(&cp->segs, struct td_cp_seg, x);
	const struct td_cp_seg *b = &TD_VEC_AT(&cp->segs, struct td_cp_seg, y);
	return a->dur > b->dur || (a->dur == b->dur && x < y);
}

static void pick_top(struct td_critpath *cp)
{
	size_t i, j, n = cp->segs.len;

	cp->top = td_malloc((TD_CP_TOP + 1) * sizeof(*cp->top));
	for (i = 0; i < n; i++) { /* insertion into the top few */
		uint32_t x = (uint32_t)i;
		if (cp->ntop == TD_CP_TOP && !seg_longer(cp, x, cp->top[cp->ntop - 1]))
			continue;
		j = cp->ntop < TD_CP_TOP ? cp->ntop++ : cp->ntop - 1;
		while (j > 0 && seg_longer(cp, x, cp->top[j - 1])) {
			cp->top[j] = cp->top[j - 1];
			j--;
		}
		cp->top[j] = x;
	}
}

int td_critpath(struct td_analysis *a, struct td_critpath *cp)
{
	const struct td_whatif *wi;
	const struct td_dev_analysis *dv;
	struct walk w;
	uint32_t tr;
	size_t k, nsteps;
	int c;

	memset(cp, 0, sizeof(*cp));
	td_vec_init(&cp->segs, sizeof(struct td_cp_seg));
	if (!a->ndev || !(wi = td_an_whatif(a)) || !wi->ok)
		return -1;
	cp->device = td_whatif_main_device(a);
	dv = &a->dev[cp->device];
	if (dv->host_track == TD_NONE)
		return -1;
	tr = td_whatif_step_track(a, cp->device);
	memset(&w, 0, sizeof(w));
	w.a = a;
	w.g = &wi->g;
	w.cp = cp;
	w.ndl = loader_spans(a, tr, &w.dl);
	nsteps = a->has_steps && a->nsteps ? a->nsteps : 1;
	cp->steps = td_calloc(nsteps, sizeof(*cp->steps));
	for (k = 0; k < nsteps; k++) {
		struct td_cp_step *st = &cp->steps[cp->nsteps++];
		uint32_t first = tr < w.g->t->tracks.len ? w.g->track_first[tr] : TD_NONE, node = TD_NONE;
		int64_t e;
		size_t j;
		if (a->has_steps && a->nsteps) {
			st->start = a->steps[k].start;
			st->end = a->steps[k].end;
			st->number = (int64_t)(a->warm_steps + k);
			/* the trace's steps are by start: the first starting there, by a search */
			TD_LOWER_BOUND(j, a->t->steps.len,
				       TD_VEC_AT(&a->t->steps, struct td_step, mid).ts < st->start);
			if (j < a->t->steps.len &&
			    TD_VEC_AT(&a->t->steps, struct td_step, j).ts == st->start)
				st->number = TD_VEC_AT(&a->t->steps, struct td_step, j).number;
		} else {
			st->start = dv->host_start;
			st->end = dv->host_end;
			st->number = -1;
		}
		w.st = st;
		w.step = k;
		w.s = st->start;
		w.cur = e = st->end;
		if (first != TD_NONE) { /* the step thread's last call starting before the end */
			size_t lo = 0, hi = w.g->track_count[tr];
			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;
				if (nstart(&w, first + (uint32_t)mid) < e)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo > 0)
				node = first + (uint32_t)lo - 1;
		}
		if (node != TD_NONE && nend(&w, node) > w.s)
			walk_back(&w, node);
		else
			host_gap(&w, w.s, TD_NONE, 0);
		for (c = 0; c < TD_CP_NCAT; c++)
			cp->total[c] += st->by[c];
	}
	free(w.dl);
	for (c = 1; c < TD_CP_NCAT; c++)
		if (cp->total[c] > cp->total[cp->dominant])
			cp->dominant = (enum td_cp_cat)c;
	pick_top(cp);
	return 0;
}

int64_t td_critpath_within(const struct td_critpath *cp, struct td_interval *iv, size_t n,
			   int64_t *by)
{
	int64_t tot = 0;
	size_t i, m = n ? td_iv_merge(iv, n) : 0;

	for (i = 0; i < cp->segs.len && m; i++) { /* a few pieces a step: a search each */
		const struct td_cp_seg *sg = &TD_VEC_AT(&cp->segs, struct td_cp_seg, i);
		int64_t a = sg->start, b = sg->start + sg->dur;
		size_t lo = 0, hi = m;
		while (lo < hi) { /* the first interval ending after a */
			size_t mid = lo + (hi - lo) / 2;
			if (iv[mid].end <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < m && iv[lo].start < b; lo++) {
			int64_t x = iv[lo].start > a ? iv[lo].start : a;
			int64_t y = iv[lo].end < b ? iv[lo].end : b;
			if (y > x) {
				tot += y - x;
				if (by)
					by[sg->cat] += y - x;
			}
		}
	}
	return tot;
}

void td_critpath_free(struct td_critpath *cp)
{
	free(cp->steps);
	free(cp->top);
	td_vec_free(&cp->segs);
	memset(cp, 0, sizeof(*cp));
}
