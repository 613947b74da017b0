/* SPDX-License-Identifier: MIT */
/* gpu-idle: the residual. How busy each device is over the window and per step, and the idle
 * time no more specific finding claimed, named by its top causes and activities, with its
 * largest gaps and sustained low-utilization stretches. When it tops a report, the specific
 * rules did not recognise the mechanism; its fix follows the cause that holds most of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

struct top_gap {
	size_t gap;
	int64_t ns;                    /* unclaimed ns in it */
	int64_t by_cause[CAUSE_COUNT];
	uint32_t what_of[CAUSE_COUNT];
	int64_t what_ns[CAUSE_COUNT];
};

struct resid {
	struct td_vec items;           /* struct td_idle_item: (cause, what) of unclaimed time */
	int64_t by_cause[CAUSE_COUNT];
	struct top_gap cur, *top;      /* the current gap, and the largest ones */
	size_t ntop, maxtop;
	const struct td_analysis *a;
	size_t d;
	struct td_vec drop;            /* struct td_rp_edit: the host's own work in the unclaimed
					* idle (CPU ops, Python, untraced), on each gap's host
					* thread (bound_drop) */
	struct td_vec launch_gaps;     /* size_t: the gaps with unclaimed launch overhead in them
					* (bound_launch) */
	struct td_vec blocked;         /* struct held: the unclaimed pieces a blocking call held
					* (a sync, a copy, an allocation) - bound_calls */
};

/* A piece of idle a blocking call held: its cause, the thread and its span. */
struct held {
	uint32_t track;
	uint8_t cause;
	int64_t from, to;
};

#define KEY_LESS(x, y) ((x)->cause < (y)->cause || ((x)->cause == (y)->cause && (x)->what < (y)->what))
TD_DEFINE_SORT(sort_keys, struct td_idle_item, KEY_LESS)

/* sums the items of one (cause, what) */
static void reduce_items(struct td_vec *v)
{
	struct td_idle_item *it = v->data;
	size_t i, m = 0;

	sort_keys(it, v->len);
	for (i = 0; i < v->len; i++) {
		if (m && it[m - 1].cause == it[i].cause && it[m - 1].what == it[i].what)
			it[m - 1].ns += it[i].ns;
		else
			it[m++] = it[i];
	}
	v->len = m;
}

/* An item; reduced as they pile up (a piece per gap: a host-bound trace has one or two for each
 * of its ops), so that they take the room of their keys, not of the pieces. */
#define ITEMS_REDUCE 65536
static void item_add(struct td_vec *v, uint8_t cause, uint32_t what, int64_t ns)
{
	struct td_idle_item *it;

	if (v->len >= ITEMS_REDUCE && !(v->len % ITEMS_REDUCE))
		reduce_items(v);
	it = td_vec_push(v);
	it->cause = cause;
	it->what = what;
	it->ns = ns;
}

static void flush_gap(struct resid *rs)
{
	size_t i, pos;

	if (!rs->cur.ns)
		return;
	if (rs->ntop == rs->maxtop && (!rs->ntop || rs->top[rs->ntop - 1].ns >= rs->cur.ns))
		goto out;
	pos = rs->ntop < rs->maxtop ? rs->ntop++ : rs->ntop - 1;
	for (i = pos; i > 0 && rs->top[i - 1].ns < rs->cur.ns; i--)
		rs->top[i] = rs->top[i - 1];
	rs->top[i] = rs->cur;
out:
	memset(&rs->cur, 0, sizeof(rs->cur));
}

/* The bound of a host-bound fix: the host's work in each unclaimed piece the host held (CPU
 * op / Python, nothing recorded) dropped on the thread the attribution read it on, pieces that
 * touch on one thread merged. */
static void drop_piece(struct resid *rs, const struct td_seg *p, size_t gap)
{
	uint32_t host = rs->a->dev[rs->d].gaps[gap].host;
	struct td_rp_edit *last = rs->drop.len ? &TD_VEC_AT(&rs->drop, struct td_rp_edit,
							    rs->drop.len - 1) : NULL;

	if ((p->cause != CAUSE_HOST && p->cause != CAUSE_NOTHING) || host == TD_NONE)
		return;
	if (last && last->track == host && last->to == p->start) {
		last->to = p->end;
		return;
	}
	last = td_vec_push(&rs->drop);
	*last = (struct td_rp_edit){TD_RP_DROP_HOST, host, p->start, p->end, 0, 0};
}

static void on_piece(void *vc, const struct td_seg *p, size_t gap)
{
	struct resid *rs = vc;
	int64_t ns = p->end - p->start;

	drop_piece(rs, p, gap);
	if ((p->cause == CAUSE_SYNC || p->cause == CAUSE_TRANSFER || p->cause == CAUSE_ALLOC) &&
	    rs->a->dev[rs->d].gaps[gap].host != TD_NONE)
		*(struct held *)td_vec_push(&rs->blocked) = (struct held){
			rs->a->dev[rs->d].gaps[gap].host, p->cause, p->start, p->end};
	if (p->cause == CAUSE_LAUNCH && (!rs->launch_gaps.len ||
					 TD_VEC_AT(&rs->launch_gaps, size_t, rs->launch_gaps.len - 1) != gap))
		*(size_t *)td_vec_push(&rs->launch_gaps) = gap;

	if (rs->cur.ns && rs->cur.gap != gap)
		flush_gap(rs);
	rs->cur.gap = gap;
	rs->cur.ns += ns;
	rs->cur.by_cause[p->cause] += ns;
	if (ns > rs->cur.what_ns[p->cause]) {
		rs->cur.what_ns[p->cause] = ns;
		rs->cur.what_of[p->cause] = p->what;
	}
	rs->by_cause[p->cause] += ns;
	item_add(&rs->items, p->cause, p->what, ns);
}

#define EDIT_LESS(x, y) ((x)->track < (y)->track || ((x)->track == (y)->track && (x)->from < (y)->from))
TD_DEFINE_SORT(sort_edits, struct td_rp_edit, EDIT_LESS)

/* A bound's edits into f (sorted by thread and time, as the replay applies them; an edit once,
 * however many pieces gave it), handed over whole where f has none yet (one per piece, they run
 * to megabytes on a host-bound trace); what says how it is replayed. */
/* The replay's graph for a bound's edits (NULL: none to replay), ed made empty. */
static const struct td_whatif *bound_begin(struct td_analysis *a, struct td_vec *ed)
{
	const struct td_whatif *w = td_an_whatif(a);

	td_vec_init(ed, sizeof(struct td_rp_edit));
	return w && w->ok ? w : NULL;
}

static void take_bound(struct td_finding *f, struct td_vec *ed, const char *what)
{
	struct td_rp_edit *e = ed->data;
	size_t i, m = 0;

	sort_edits(e, ed->len);
	for (i = 0; i < ed->len; i++)
		if (!m || e[i].track != e[m - 1].track || e[i].from != e[m - 1].from)
			e[m++] = e[i];
	ed->len = m;
	if (!m)
		return;
	if (!f->bound.len) {
		struct td_vec v = f->bound;
		f->bound = *ed;
		*ed = v;
	} else {
		for (i = 0; i < m; i++)
			td_finding_bound_edit(f, &e[i]);
	}
	f->bound_what = what;
}

/* Where the fix is the host's (its work moved off the step, its Python loops cut) and cannot be
 * replayed as such, the host's work in the unclaimed idle removed outright bounds what it wins
 * (the replay then holds the step where the GPU's work, a wait or another thread does). */
static void bound_drop(struct td_finding *f, struct resid *rs)
{
	take_bound(f, &rs->drop, "with the host's work in its gaps removed");
}

/* Where the fix is fewer launches and no graph replays it, the launch overhead removed bounds
 * what it wins: in each gap that holds unclaimed launch overhead, the op that ends it follows
 * the op before it on its stream with no gap and its launch call costs nothing (TD_RP_FUSE of
 * the two) - where that op ended the GPU's work before the gap (else another stream's did, and
 * closing the gap on this one is no bound of it). */
static void bound_launch(struct td_analysis *a, struct td_finding *f, struct resid *rs)
{
	const struct td_dev_analysis *dv = &a->dev[rs->d];
	struct td_vec ed;
	const struct td_whatif *w = bound_begin(a, &ed);
	size_t i;

	for (i = 0; w && i < rs->launch_gaps.len; i++) {
		const struct td_gap *gp = &dv->gaps[TD_VEC_AT(&rs->launch_gaps, size_t, i)];
		uint32_t k = gp->next_op != TD_NONE ? td_rp_node_of(&w->g, gp->next_op) : TD_NONE, p;
		if (k == TD_NONE || (p = td_rp_prev(&w->g, k)) == TD_NONE ||
		    td_ev_end(td_rp_event(&w->g, p)) < gp->start)
			continue;
		*(struct td_rp_edit *)td_vec_push(&ed) = (struct td_rp_edit){
			TD_RP_FUSE, td_rp_track(&w->g, k), td_rp_event(&w->g, p)->ts,
			td_rp_event(&w->g, k)->ts + 1, 0, 0};
	}
	take_bound(f, &ed, "with its launch gaps closed");
	td_vec_free(&ed);
}

/* Where the residual is mostly a blocking call below its own rule's thresholds (a sync, a
 * copy, an allocation), its waits removed outright bound what any fix of them wins: each call
 * of that cause that held unclaimed idle (the host's top-level call the piece falls in, a
 * call that waits for the GPU) costs what such a call costs when it does not wait, and waits
 * for nothing (TD_RP_COST, as a copy made pinned and non-blocking). */
static void bound_calls(struct td_analysis *a, struct td_finding *f, struct resid *rs,
			enum td_cause top)
{
	struct td_vec ed;
	const struct td_whatif *w = bound_begin(a, &ed);
	size_t i;

	for (i = 0; w && i < rs->blocked.len; i++) {
		const struct held *b = &TD_VEC_AT(&rs->blocked, struct held, i);
		uint32_t fst = w->g.track_first[b->track], k;
		size_t lo;
		if (b->cause != top || fst == TD_NONE)
			continue;
		/* the last call on the thread starting at or before the piece */
		TD_LOWER_BOUND(lo, w->g.track_count[b->track],
			       td_rp_event(&w->g, fst + (uint32_t)mid)->ts <= b->from);
		if (!lo)
			continue;
		k = fst + (uint32_t)lo - 1;
		if (td_ev_end(td_rp_event(&w->g, k)) < b->to || !td_rp_syncs(&w->g, k))
			continue;
		*(struct td_rp_edit *)td_vec_push(&ed) = (struct td_rp_edit){
			TD_RP_COST, b->track, td_rp_event(&w->g, k)->ts, td_rp_event(&w->g, k)->ts + 1,
			(w->g.fl[k] & TD_RPF_COPY) ? w->g.copy_cost : w->g.wait_cost, 0};
	}
	take_bound(f, &ed, "with those calls' waits removed");
	td_vec_free(&ed);
}

#define ITEM_LESS(x, y) ((x)->ns > (y)->ns || ((x)->ns == (y)->ns && ((x)->cause < (y)->cause || \
	((x)->cause == (y)->cause && (x)->what < (y)->what))))
TD_DEFINE_SORT(sort_items, struct td_idle_item, ITEM_LESS)

static void step_busy(struct td_analysis *a, size_t d, struct td_finding *f)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t n = a->nsteps, i;
	int64_t *pm;

	if (n < 2 || !dv->gsteps)
		return;
	pm = td_malloc(n * sizeof(*pm));
	for (i = 0; i < n; i++) {
		const struct td_interval *s = &dv->gsteps[i];
		int64_t len = s->end - s->start;
		pm[i] = len > 0 ? td_an_busy_between(a, d, s->start, s->end) * 1000 / len : 0;
	}
	sort_i64(pm, n);
	td_finding_where(f, "busy per step: min %.1f%%, median %.1f%%, max %.1f%% over %zu steps",
			 (double)pm[0] / 10, (double)td_median_i64(pm, n) / 10, (double)pm[n - 1] / 10, n);
	free(pm);
}

static void low_util(struct td_analysis *a, size_t d, struct td_finding *f)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int chunks = a->params.util_chunks, i, run = 0, listed = 0;
	int64_t w = dv->win_end - dv->win_start, run_start = 0, run_busy = 0;
	char b1[32];

	if (chunks < 2 || w < chunks)
		return;
	for (i = 0; i <= chunks && listed < 2; i++) {
		int64_t s = dv->win_start + w * i / chunks, e = dv->win_start + w * (i + 1) / chunks;
		int64_t busy = i < chunks ? td_an_busy_between(a, d, s, e) : 0;
		int low = i < chunks && (double)busy < a->params.low_util * (double)(e - s);
		if (low) {
			if (!run)
				run_start = s, run_busy = 0;
			run++;
			run_busy += busy;
		} else if (run >= 3) {
			int64_t len = s - run_start;
			td_finding_evidence(f, run_start, len, "low utilization for %s: %.0f%% busy",
					    td_fmt_dur(b1, sizeof(b1), len),
					    100.0 * (double)run_busy / (double)len);
			listed++;
			run = 0;
		} else {
			run = 0;
		}
	}
}

/* "gap of 2.8 ms: CPU op / Python, aten::empty" or, when no cause holds 90% of what is left of
 * it, "gap of 2.8 ms: 60% CPU op / Python (aten::empty), 40% kernel-launch overhead" */
static void gap_evidence(struct td_analysis *a, size_t d, struct td_finding *f,
			 const struct top_gap *g)
{
	const struct td_gap *gp = &a->dev[d].gaps[g->gap];
	int order[CAUSE_COUNT], n = 0, c, i;
	char text[1024], b1[32], b2[32];
	size_t len;

	for (c = 0; c < CAUSE_COUNT; c++) /* causes holding 1% of it or more */
		if (g->by_cause[c] && g->by_cause[c] * 100 >= g->ns)
			order[n++] = c;
	for (i = 1; i < n; i++) /* largest share first */
		for (c = i; c > 0 && g->by_cause[order[c]] > g->by_cause[order[c - 1]]; c--) {
			int tmp = order[c];
			order[c] = order[c - 1];
			order[c - 1] = tmp;
		}
	snprintf(text, sizeof(text), "gap of %s", td_fmt_dur(b1, sizeof(b1), gp->end - gp->start));
	len = strlen(text);
	if (g->ns < gp->end - gp->start)
		len += (size_t)snprintf(text + len, sizeof(text) - len, " (%s not claimed by other "
					"findings)", td_fmt_dur(b2, sizeof(b2), g->ns));
	if (n == 1 || g->by_cause[order[0]] * 10 >= g->ns * 9) {
		snprintf(text + len, sizeof(text) - len, ": %s%s%s", td_cause_title(order[0]),
			 g->what_of[order[0]] ? ", " : "",
			 g->what_of[order[0]] ? td_an_label(a, g->what_of[order[0]]) : "");
	} else {
		for (i = 0; i < n && i < 3 && len < sizeof(text); i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%.0f%% %s%s%s%s",
						i ? ", " : ": ", 100.0 * (double)g->by_cause[order[i]] /
						(double)g->ns, td_cause_title(order[i]),
						g->what_of[order[i]] ? " (" : "",
						g->what_of[order[i]] ? td_an_label(a, g->what_of[order[i]]) : "",
						g->what_of[order[i]] ? ")" : "");
	}
	td_finding_evidence(f, gp->start, gp->end - gp->start, "%s", text);
}

/* The fix replayed when it is a graph (fixes/catalogue.h): each run of launches (and
 * device-to-device copies and memsets that do not wait, which a graph captures as it does a
 * kernel) on the device's launching thread in the window, up to a call that waits, copies over
 * the host link or allocates (no graph holds those) or the end of its step (a graph replays one step: what the host does
 * between steps - a server's scheduling and sampling - stays), is captured - its host time
 * goes but one launch, the graph's, and on each stream the kernels it launched run back to
 * back. */
static void graph_region(const struct td_replay *g, struct td_finding *f, uint32_t *region,
			 uint32_t r0, uint32_t last, uint32_t id, int64_t launch)
{
	struct td_rp_edit ed = {TD_RP_DROP_HOST, td_rp_track(g, r0), td_rp_event(g, r0)->ts,
				td_ev_end(td_rp_event(g, last)), launch, 0};
	uint32_t k;

	for (k = r0; k <= last; k++)
		region[k - g->track_first[ed.track]] = id;
	td_finding_edit(f, &ed);
	if (ed.to - ed.from > launch) /* the host time the graph takes off the step */
		f->host_ns += ed.to - ed.from - launch;
}

/* The start-up spans of host thread tr (warm calls, graph captures), sorted and merged, into
 * *out; their count. */
static size_t warm_spans(const struct td_analysis *a, uint32_t tr, struct td_interval **out)
{
	const struct td_trace *t = a->t;
	struct td_interval *v = td_malloc((a->nwarm_ev + 1) * sizeof(*v));
	size_t i, n = 0;

	for (i = 0; i < a->nwarm_ev; i++)
		if (td_trace_track_of(t, a->warm_ev[i]) == tr) {
			const struct td_event *e = td_trace_ev(t, a->warm_ev[i]);
			v[n++] = (struct td_interval){e->ts, td_ev_end(e)};
		}
	*out = v;
	return td_iv_merge(v, n);
}

static void graph_edits(struct td_analysis *a, struct td_finding *f, size_t d)
{
	const struct td_whatif *w = td_an_whatif(a);
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_trace *t = a->t;
	const struct td_replay *g;
	uint32_t tr, k, first, n, r0 = TD_NONE, last = 0, nl = 0, id = 0, *region;
	size_t i, step0 = 0, nwarm, iw = 0;
	struct td_interval *warm;

	if (!w || dv->host_track == TD_NONE || w->g.track_first[dv->host_track] == TD_NONE)
		return;
	g = &w->g;
	tr = dv->host_track;
	first = g->track_first[tr];
	n = g->track_count[tr];
	region = td_malloc((n + 1) * sizeof(*region));
	for (k = 0; k < n; k++)
		region[k] = TD_NONE;
	nwarm = warm_spans(a, tr, &warm);
	for (k = first; k <= first + n; k++) {
		const struct td_event *e = k < first + n ? td_rp_event(g, k) : NULL;
		unsigned c = e ? td_an_class(a, e->name) : 0;
		int in = e && e->ts >= dv->host_start && e->ts < dv->host_end;
		/* start-up (a graph being captured, a first call) is no loop to capture */
		while (e && iw < nwarm && warm[iw].end <= e->ts)
			iw++;
		in = in && !(iw < nwarm && warm[iw].start <= e->ts);
		size_t step = e ? td_an_step_of(a, e->ts) : SIZE_MAX;
		/* a device-to-device copy or a memset that does not wait is captured too */
		int dev_copy = e && td_whatif_capturable(w, k);
		int breaks = !in || (c & NC_ALLOC) || (c & NC_SYNC_CALL) ||
			     (!dev_copy && (td_rp_syncs(g, k) || (g->fl[k] & TD_RPF_COPY) ||
					    (c & (NC_MEMCPY_CALL | NC_MEMSET_CALL))));
		if (r0 != TD_NONE && e && step != step0) { /* a graph holds one step */
			if (nl >= 2)
				graph_region(g, f, region, r0, last, id++, w->launch_cost);
			r0 = TD_NONE;
		}
		if (!breaks && ((c & NC_LAUNCH) || dev_copy)) {
			if (r0 == TD_NONE) {
				r0 = k;
				nl = 0;
				step0 = step;
			}
			nl++;
			last = k;
			continue;
		}
		if (breaks && r0 != TD_NONE) {
			if (nl >= 2)
				graph_region(g, f, region, r0, last, id++, w->launch_cost);
			r0 = TD_NONE;
		}
	}
	/* on each stream of the device, the ops of one region fused */
	for (i = 0; id && i < t->tracks.len; i++) {
		uint32_t f0 = g->track_first[i], cur = TD_NONE, m;
		int64_t lo = 0, hi = 0;
		if (f0 == TD_NONE || !td_trace_track(t, (uint32_t)i)->is_gpu ||
		    td_trace_track(t, (uint32_t)i)->device != dv->device)
			continue;
		for (m = f0; m <= f0 + g->track_count[i]; m++) {
			uint32_t h = m < f0 + g->track_count[i] ? g->src[m] : TD_NONE;
			uint32_t rid = h != TD_NONE && h >= first && h < first + n ? region[h - first]
										  : TD_NONE;
			if (rid != cur && cur != TD_NONE && hi > lo) {
				struct td_rp_edit ed = {TD_RP_FUSE, (uint32_t)i, lo, hi, 0, 0};
				td_finding_edit(f, &ed);
			}
			if (rid != cur && rid != TD_NONE)
				lo = td_rp_event(g, m)->ts;
			if (rid != TD_NONE)
				hi = td_rp_event(g, m)->ts + 1;
			cur = rid;
		}
	}
	free(region);
	free(warm);
}

/* The host time of the data-parallel wrapper's buffer broadcast in device index d's host
 * window: its flatten and unflatten of the buffers (nccl-a100-rank0: 28.6 ms a step, 13% of
 * its host-bound steps) */
static int64_t buffer_broadcast_ns(struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	uint32_t e;
	size_t j;
	int64_t sum = 0;
	uint32_t fl = td_strtab_find(&t->names, "aten::flatten_dense_tensors", 27);
	uint32_t un = td_strtab_find(&t->names, "aten::unflatten_dense_tensors", 29);

	if (!fl && !un)
		return 0;
	TD_FOR_KIND(t, TD_K_CPU_OP, j, e) {
		const struct td_event *x = td_trace_ev(t, e);
		if (x->kind == TD_K_CPU_OP && ((fl && x->name == fl) || (un && x->name == un)) &&
		    x->ts >= dv->host_start && x->ts < dv->host_end)
			sum += td_ev_dur(x);
	}
	return sum;
}

/* The median host time of the cheapest ops there are, views (aten::view, aten::as_strided:
 * metadata, no allocation, no kernel) in device d's host window; 0 with fewer than SLOW_MIN.
 * With the profiler on, a recent PyTorch on a free core records them in about a microsecond
 * (0.2-1 us in the shared traces of 2023 and later); SLOW_VIEW_NS and more is a host whose
 * every op costs several times what it should. Not read on PyTorch 1.8/1.9 traces, whose
 * profiler itself cost that much an op. */
#define SLOW_MIN 100
#define SLOW_VIEW_NS 8000
static int64_t view_median_ns(struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	uint32_t v = td_strtab_find(&t->names, "aten::view", 10), e;
	uint32_t s = td_strtab_find(&t->names, "aten::as_strided", 16);
	struct td_vec durs;
	int64_t med = 0;
	size_t j;

	if ((!v && !s) || t->legacy)
		return 0;
	td_vec_init(&durs, sizeof(int64_t));
	TD_FOR_KIND(t, TD_K_CPU_OP, j, e) {
		const struct td_event *x = td_trace_ev(t, e);
		if (x->kind == TD_K_CPU_OP && ((v && x->name == v) || (s && x->name == s)) &&
		    x->ts >= dv->host_start && x->ts < dv->host_end)
			*(int64_t *)td_vec_push(&durs) = td_ev_dur(x);
	}
	if (durs.len >= SLOW_MIN)
		med = td_median_i64(durs.data, durs.len);
	td_vec_free(&durs);
	return med;
}

/* Writes f's fix; returns the catalogue's mechanism it took the fix from, or -1. */
static int fix_for(struct td_analysis *a, struct td_finding *f, enum td_cause top,
		   const struct resid *rs, uint32_t top_what, int64_t top_ns)
{
	uint32_t queued = td_strtab_find(&a->labels, TD_LABEL_QUEUED_GAP,
					 sizeof(TD_LABEL_QUEUED_GAP) - 1);
	int64_t queued_ns = 0;
	char fix[1200], share[900], batch[200], b1[32], b2[32];
	size_t i;

	for (i = 0; i < rs->items.len; i++) {
		const struct td_idle_item *it = &TD_VEC_AT(&rs->items, struct td_idle_item, i);
		if (it->cause == CAUSE_LAUNCH && it->what == queued)
			queued_ns += it->ns;
	}
	/* the largest share by name, and how large it is: "most of it" only when it is */
	if (top_what && top_ns >= rs->by_cause[top])
		snprintf(share, sizeof(share), "all of it in %s", td_an_label(a, top_what));
	else if (top_what && top_ns * 2 > rs->by_cause[top])
		snprintf(share, sizeof(share), "most of it, %s of %s, in %s",
			 td_fmt_dur(b1, sizeof(b1), top_ns), td_fmt_dur(b2, sizeof(b2),
								    rs->by_cause[top]),
			 td_an_label(a, top_what));
	else if (top_what)
		snprintf(share, sizeof(share), "the largest share, %s of %s, in %s",
			 td_fmt_dur(b1, sizeof(b1), top_ns), td_fmt_dur(b2, sizeof(b2),
								    rs->by_cause[top]),
			 td_an_label(a, top_what));
	else
		snprintf(share, sizeof(share), "in untraced code");
	if (a->serving && (top == CAUSE_LAUNCH || top == CAUSE_HOST)) {
		td_finding_fix(f, "The GPU waits for the serving loop's Python and launch calls between "
			       "kernels (%s). %s", share, td_fix_text(&a->ctx, TD_FIX_SERVING_HOST, -1,
								       NULL, fix, sizeof(fix)));
		return TD_FIX_SERVING_HOST;
	}
	switch (top) {
	case CAUSE_NOTHING:
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_IDLE_UNTRACED, -1, NULL, fix,
						    sizeof(fix)));
		break;
	case CAUSE_DEPENDENCY:
		if (top_what && !strcmp(td_an_label(a, top_what), TD_LABEL_GRAPH_WAIT))
			td_finding_fix(f, "The work that waited was launched as a CUDA graph "
				       "(cudaGraphLaunch), queued long before the device went idle: "
				       "the graph waited on something captured in it (an event wait, a "
				       "host node) or outside it, which the profiler does not record "
				       "inside a graph. Profile once with nsys --cuda-graph-trace=node "
				       "to see the graph's nodes and what the first one waits on, or "
				       "run one step with the graph off (torch.compile without "
				       "mode=\"reduce-overhead\") to see the wait as separate calls. %s",
				       td_fix_text(&a->ctx, TD_FIX_IDLE_DEPENDENCY, -1, NULL, fix,
						   sizeof(fix)));
		else
			td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_IDLE_DEPENDENCY, -1, NULL,
							    fix, sizeof(fix)));
		break;
	case CAUSE_LAUNCH:
		td_fix_text(&a->ctx, TD_FIX_FEWER_LAUNCHES, -1,
			    td_context_batch(&a->ctx, batch, sizeof(batch)), fix, sizeof(fix));
		if (2 * queued_ns > rs->by_cause[CAUSE_LAUNCH])
			td_finding_fix(f, "The host is ahead: the ops were already queued and the GPU "
				       "idles a few microseconds between them (per-kernel launch "
				       "overhead on the device). %s", fix);
		else
			td_finding_fix(f, "The GPU waits for the host's launch calls: each kernel costs "
				       "a few microseconds to launch and the kernels are shorter than "
				       "that. %s", fix);
		return TD_FIX_FEWER_LAUNCHES;
	case CAUSE_HOST: {
		char buffers[700] = "", ev[96];
		int64_t bb = buffer_broadcast_ns(a, rs->d);
		const struct td_dev_analysis *dv = &a->dev[rs->d];
		/* a twentieth of the window or more in the wrapper's buffer broadcast: named */
		if (20 * bb >= dv->host_end - dv->host_start && bb > 0) {
			snprintf(ev, sizeof(ev), "%s%s in aten::flatten_dense_tensors and "
				 "unflatten_dense_tensors", td_fmt_dur(b1, sizeof(b1), a->nsteps ?
									 bb / (int64_t)a->nsteps : bb),
				 a->nsteps ? " a step" : "");
			td_fix_text(&a->ctx, TD_FIX_DDP_BUFFERS, -1, ev, buffers, sizeof(buffers));
		}
		int64_t vm = view_median_ns(a, rs->d);
		char slow[600] = "";
		if (vm >= SLOW_VIEW_NS) {
			td_finding_where(f, "the host is slow at every op: aten::view and "
					 "aten::as_strided (no allocation, no kernel) take a median "
					 "%s, about %lldx the ~1 us they take with the profiler on a "
					 "free core", td_fmt_dur(b1, sizeof(b1), vm),
					 (long long)(vm / 1000));
			snprintf(slow, sizeof(slow), "Every op costs the host %lldx what it should "
				 "(aten::view takes %s): find what slows the CPU before the code - "
				 "other processes or ranks sharing its cores (taskset, one rank per "
				 "NUMA node), too many threads (OMP_NUM_THREADS, the DataLoader's "
				 "workers), a power-saving CPU governor, or a crowded virtual machine.",
				 (long long)(vm / 1000), td_fmt_dur(b1, sizeof(b1), vm));
		}
		td_finding_fix(f, "The GPU waits while the host runs Python and CPU ops (%s): the "
			       "step is CPU-bound there. %s%s%s%s%s", share, slow, *slow ? " " : "",
			       buffers, *buffers ? " " : "",
			       td_fix_text(&a->ctx, TD_FIX_HOST_BOUND, -1, NULL, fix, sizeof(fix)));
		return TD_FIX_HOST_BOUND;
	}
	default:
		td_finding_fix(f, "The remaining idle is %s below the thresholds of its own rule; see "
			       "the breakdown above.", td_cause_title(top));
		break;
	}
	return -1;
}

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t d, i;
	char b1[32], b2[32], b3[32];

	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		int64_t w = dv->win_end - dv->win_start;
		struct td_finding *f;
		struct td_claims cl;
		struct resid rs;
		enum td_cause top = CAUSE_HOST;
		uint32_t top_what = 0;
		int64_t top_ns = 0;
		int c;

		if (w <= 0 || dv->idle_ns <= 0)
			continue;
		memset(&rs, 0, sizeof(rs));
		td_vec_init(&rs.items, sizeof(struct td_idle_item));
		td_vec_init(&rs.drop, sizeof(struct td_rp_edit));
		td_vec_init(&rs.launch_gaps, sizeof(size_t));
		td_vec_init(&rs.blocked, sizeof(struct held));
		rs.a = a;
		rs.d = d;
		rs.maxtop = a->params.evidence_max > 0 ? (size_t)a->params.evidence_max : 0;
		rs.top = td_calloc(rs.maxtop ? rs.maxtop : 1, sizeof(*rs.top));
		td_an_unclaimed_pieces(a, d, on_piece, &rs);
		flush_gap(&rs);
		reduce_items(&rs.items);
		sort_items(rs.items.data, rs.items.len);
		for (c = 0; c < CAUSE_COUNT; c++)
			if (rs.by_cause[c] > rs.by_cause[top])
				top = (enum td_cause)c;
		for (i = 0; i < rs.items.len; i++)
			if (TD_VEC_AT(&rs.items, struct td_idle_item, i).cause == top) {
				top_what = TD_VEC_AT(&rs.items, struct td_idle_item, i).what;
				top_ns = TD_VEC_AT(&rs.items, struct td_idle_item, i).ns;
				break;
			}
		f = td_report_add(r, "gpu-idle", dv->device);
		td_claims_init(&cl);
		td_claims_add(&cl, dv->win_start, dv->win_end, CAUSE_COUNT, 0);
		td_finding_claim(a, f, d, &cl, NULL, 0);
		td_claims_free(&cl);
		f->count = rs.ntop;
		td_finding_title(f, "GPU %d is idle %.0f%% of the window (%s of %s); %s of it no other "
				 "finding explains, mostly %s%s%s%s", dv->device,
				 100.0 * (double)dv->idle_ns / (double)w,
				 td_fmt_dur(b1, sizeof(b1), dv->idle_ns), td_fmt_dur(b2, sizeof(b2), w),
				 td_fmt_dur(b3, sizeof(b3), f->idle_ns), td_cause_title(top),
				 top_what ? " (" : "", top_what ? td_an_label(a, top_what) : "",
				 top_what ? ")" : "");
		for (i = 0; i < rs.items.len && i < 5; i++) {
			const struct td_idle_item *it = &TD_VEC_AT(&rs.items, struct td_idle_item, i);
			td_finding_where(f, "%s: %s (%s idle)", td_cause_title((enum td_cause)it->cause),
					 it->what ? td_an_label(a, it->what) : "-",
					 td_fmt_dur(b1, sizeof(b1), it->ns));
		}
		step_busy(a, d, f);
		for (i = 0; i < rs.ntop; i++)
			if (a->dev[d].gaps[rs.top[i].gap].end - a->dev[d].gaps[rs.top[i].gap].start >=
			    a->params.gap_report_ns)
				gap_evidence(a, d, f, &rs.top[i]);
		low_util(a, d, f);
		for (c = 0; c < CAUSE_COUNT; c++)
			if (rs.by_cause[c]) {
				static const char *const keys[CAUSE_COUNT] = {
					"dataloader_ns", "warmup_ns", "sync_ns", "transfer_ns", "allocator_ns",
					"communication_ns", "launch_ns", "dependency_ns", "host_ns", "nothing_ns",
				};
				td_finding_value(f, keys[c], rs.by_cause[c]);
			}
		if (a->waits_dropped && top == CAUSE_DEPENDENCY) {
			/* what the queued work waited for is what the filter dropped: no fix named,
			 * no time to promise - advice to record it again */
			char *fix;
			fix_for(a, f, top, &rs, top_what, top_ns);
			fix = f->fix;
			f->fix = NULL;
			f->risk = 2;
			f->severity = SEV_MEDIUM;
			td_finding_where(f, "not sized: this trace keeps only launch and copy calls (a "
					 "filter left out its event records, stream waits and "
					 "synchronizations), so what the %s of queued work waited for, "
					 "and whether the host's unrecorded time was itself a wait, "
					 "cannot be read or replayed",
					 td_fmt_dur(b1, sizeof(b1), rs.by_cause[CAUSE_DEPENDENCY]));
			td_finding_fix(f, "Record the trace again without filtering its runtime calls "
				       "(keep cudaEventRecord, cudaStreamWaitEvent and the "
				       "synchronizations), then diagnose it: the waits name what the "
				       "GPU waited for. %s", fix ? fix : "");
			free(fix);
		} else {
			int m = fix_for(a, f, top, &rs, top_what, top_ns);
			const struct td_fix_entry *fe = m >= 0 ? td_fix_pick(&a->ctx, (enum td_mech)m, -1)
							       : NULL;
			if (fe && fe->graph)
				graph_edits(a, f, d);
			if (!f->edits.len && (top == CAUSE_HOST || top == CAUSE_NOTHING))
				bound_drop(f, &rs);
			else if (!f->edits.len && top == CAUSE_LAUNCH)
				bound_launch(a, f, &rs);
			else if (!f->edits.len && (top == CAUSE_SYNC || top == CAUSE_TRANSFER ||
						   top == CAUSE_ALLOC))
				bound_calls(a, f, &rs, top);
			/* most of it waits on what the trace does not hold: no fix is known to win
			 * it, so what it claims is an upper bound, said so */
			if (!f->edits.len && top == CAUSE_DEPENDENCY && top_what &&
			    (!strcmp(td_an_label(a, top_what), TD_LABEL_UNSEEN_WAIT) ||
			     !strcmp(td_an_label(a, top_what), TD_LABEL_UNSEEN_WAIT_ONE) ||
			     !strcmp(td_an_label(a, top_what), TD_LABEL_GRAPH_WAIT)) &&
			    2 * top_ns >= f->idle_ns)
				f->upper = 1;
		}
		td_vec_free(&rs.items);
		td_vec_free(&rs.drop);
		td_vec_free(&rs.launch_gaps);
		td_vec_free(&rs.blocked);
		free(rs.top);
	}
}

const struct td_rule rule_gpu_idle = {
	.id = "gpu-idle",
	.title = "Idle time no other finding explains: per step, largest gaps, low utilization",
	.run = run,
	.bound_what = "with its cause removed", /* the job's: the host's work, or launch gaps */
};
