/* SPDX-License-Identifier: MIT */
#include "rules/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "rules/config.h"

const char *td_cause_id(enum td_cause c)
{
	static const char *const ids[CAUSE_COUNT] = {
		"dataloader", "sync", "transfer", "allocator", "launch", "dependency", "host",
		"nothing",
	};
	return (unsigned)c < CAUSE_COUNT ? ids[c] : "?";
}

const char *td_cause_title(enum td_cause c)
{
	static const char *const t[CAUSE_COUNT] = {
		"data loading", "synchronizing call", "blocking transfer", "allocator",
		"kernel-launch overhead", "waiting on another stream or event", "CPU op / Python",
		"nothing recorded on the host",
	};
	return (unsigned)c < CAUSE_COUNT ? t[c] : "?";
}

void td_params_default(struct td_params *p)
{
	p->small_kernel_ns = 10000;
	p->small_run_min = 3;
	p->small_run_gap_ns = 20000;
	p->dataloader_share = 0.05;
	p->sev_high = 0.10;
	p->sev_medium = 0.03;
	p->sev_low = 0.01;
	p->launch_delay_ns = 100000;
	p->gap_report_ns = 50000;
	p->evidence_max = 5;
	p->low_util = 0.5;
	p->util_chunks = 30;
}

/* --- the idle map: (cause, what) -> ns ------------------------------------------------- */

struct idle_slot {
	struct td_idle_item item;
	int used;
};

struct idle_map {
	struct idle_slot *slots;
	size_t n, cap; /* cap is a power of two */
};

static struct td_idle_item *idle_slot(struct idle_map *m, uint8_t cause, uint32_t what)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, i;
		struct idle_slot *old = m->slots;
		size_t oldcap = m->cap;

		m->slots = td_calloc(cap, sizeof(*m->slots));
		m->cap = cap;
		m->n = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].used)
				*idle_slot(m, old[i].item.cause, old[i].item.what) = old[i].item;
		free(old);
	}
	j = (((size_t)what * 2654435761u) ^ cause) & (m->cap - 1);
	while (m->slots[j].used &&
	       (m->slots[j].item.cause != cause || m->slots[j].item.what != what))
		j = (j + 1) & (m->cap - 1);
	if (!m->slots[j].used) {
		m->slots[j].used = 1;
		m->slots[j].item.cause = cause;
		m->slots[j].item.what = what;
		m->n++;
	}
	return &m->slots[j].item;
}

/* --- labels ------------------------------------------------------------------------------ */

uint32_t td_an_site(struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	char buf[1024];
	const char *ops[2] = {NULL, NULL};
	int nops = 0;
	uint32_t e, py = TD_NONE;

	for (e = ev; e != TD_NONE; e = td_trace_parent(t, e)) {
		const struct td_event *x = td_trace_ev(t, e);
		unsigned c = a->name_class[x->name];
		if (x->kind == TD_K_PYTHON && (c & NC_PY_USER) && py == TD_NONE)
			py = e;
		if ((x->kind == TD_K_CPU_OP || x->kind == TD_K_USER_ANNOTATION) && nops < 2 &&
		    !(c & (NC_INTERNAL_OP | NC_STEP | NC_DATALOADER)))
			ops[nops++] = td_trace_name(t, x->name);
	}
	if (py != TD_NONE) {
		char fr[512];
		td_frame_label(td_trace_name(t, td_trace_ev(t, py)->name), fr, sizeof(fr));
		if (nops)
			snprintf(buf, sizeof(buf), "%s (%s)", fr, ops[0]);
		else
			snprintf(buf, sizeof(buf), "%s", fr);
	} else if (nops == 2) {
		snprintf(buf, sizeof(buf), "%s <- %s", ops[0], ops[1]);
	} else if (nops == 1) {
		snprintf(buf, sizeof(buf), "%s", ops[0]);
	} else {
		snprintf(buf, sizeof(buf), "%s", td_trace_name(t, td_trace_ev(t, ev)->name));
	}
	return td_strtab_intern(&a->labels, buf, strlen(buf));
}

/* What the host was doing inside span `cur` (TD_NONE: nothing recorded). */
static void classify(struct td_analysis *a, uint32_t cur, uint8_t *cause, uint32_t *what)
{
	const struct td_trace *t = a->t;
	uint32_t e, dl = TD_NONE, sync = TD_NONE, xfer = TD_NONE, alloc = TD_NONE, rt = TD_NONE;
	uint32_t op = TD_NONE, py = TD_NONE;

	if (cur == TD_NONE) {
		*cause = CAUSE_NOTHING;
		*what = 0;
		return;
	}
	for (e = cur; e != TD_NONE; e = td_trace_parent(t, e)) {
		const struct td_event *x = td_trace_ev(t, e);
		unsigned c = a->name_class[x->name];
		if (c & NC_IGNORE)
			continue;
		if (c & NC_DATALOADER)
			dl = e;
		if ((c & NC_USER_SYNC) && sync == TD_NONE)
			sync = e;
		if (x->kind == TD_K_RUNTIME) {
			if (c & NC_SYNC_CALL)
				sync = e;
			else if (c & NC_MEMCPY_CALL)
				xfer = e;
			else if (c & NC_ALLOC)
				alloc = e;
			else if (rt == TD_NONE)
				rt = e;
		} else if ((x->kind == TD_K_CPU_OP || x->kind == TD_K_USER_ANNOTATION) &&
			   op == TD_NONE && !(c & (NC_INTERNAL_OP | NC_STEP))) {
			op = e;
		} else if (x->kind == TD_K_PYTHON && (c & NC_PY_USER) && py == TD_NONE) {
			py = e;
		}
	}
	if (dl != TD_NONE) {
		*cause = CAUSE_DATALOADER;
		*what = td_strtab_intern(&a->labels, td_trace_name(t, td_trace_ev(t, dl)->name),
					 td_strtab_len(&t->names, td_trace_ev(t, dl)->name));
	} else if (sync != TD_NONE) {
		*cause = CAUSE_SYNC;
		*what = td_an_site(a, sync);
	} else if (xfer != TD_NONE) {
		*cause = CAUSE_TRANSFER;
		*what = td_an_site(a, xfer);
	} else if (alloc != TD_NONE || rt != TD_NONE) {
		uint32_t r = alloc != TD_NONE ? alloc : rt;
		*cause = alloc != TD_NONE ? CAUSE_ALLOC : CAUSE_LAUNCH;
		*what = td_strtab_intern(&a->labels, td_trace_name(t, td_trace_ev(t, r)->name),
					 td_strtab_len(&t->names, td_trace_ev(t, r)->name));
	} else if (py != TD_NONE || op != TD_NONE) {
		char buf[512];
		*cause = CAUSE_HOST;
		if (py != TD_NONE)
			td_frame_label(td_trace_name(t, td_trace_ev(t, py)->name), buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%s", td_trace_name(t, td_trace_ev(t, op)->name));
		*what = td_strtab_intern(&a->labels, buf, strlen(buf));
	} else {
		static const char untraced[] = "untraced host time between ops";
		*cause = CAUSE_HOST;
		*what = td_strtab_intern(&a->labels, untraced, sizeof(untraced) - 1);
	}
}

/* --- attribution of one gap -------------------------------------------------------------- */

struct gap_acc {
	int64_t by_cause[CAUSE_COUNT];
	uint32_t what_of[CAUSE_COUNT];
	int64_t what_ns[CAUSE_COUNT];
};

static void credit(struct idle_map *m, struct gap_acc *g, uint8_t cause, uint32_t what,
		   int64_t ns)
{
	struct td_idle_item *it;

	if (ns <= 0)
		return;
	it = idle_slot(m, cause, what);
	it->ns += ns;
	it->segments++;
	g->by_cause[cause] += ns;
	if (ns > g->what_ns[cause]) {
		g->what_ns[cause] = ns;
		g->what_of[cause] = what;
	}
}

/* Index of the last event of track tr with ts <= at, or TD_NONE. */
static uint32_t last_before(const struct td_trace *t, const struct td_track *tr, int64_t at)
{
	uint32_t lo = tr->first, hi = tr->first + tr->count;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (td_trace_ev(t, mid)->ts <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == tr->first ? TD_NONE : lo - 1;
}

/* Walks the host thread's span tree over [from, to) crediting each piece. */
static void walk_host(struct td_analysis *a, struct idle_map *m, struct gap_acc *g,
		      uint32_t track, int64_t from, int64_t to)
{
	const struct td_trace *t = a->t;
	const struct td_track *tr = td_trace_track(t, track);
	uint32_t end = tr->first + tr->count, k, cur;
	int64_t pos = from;

	cur = last_before(t, tr, from);
	k = cur == TD_NONE ? tr->first : cur + 1;
	while (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) <= from)
		cur = td_trace_parent(t, cur);
	while (pos < to) {
		int64_t seg = to;
		uint8_t cause;
		uint32_t what;

		if (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) < seg)
			seg = td_ev_end(td_trace_ev(t, cur));
		if (k < end && td_trace_ev(t, k)->ts < seg)
			seg = td_trace_ev(t, k)->ts;
		if (seg > pos) {
			classify(a, cur, &cause, &what);
			credit(m, g, cause, what, seg - pos);
			pos = seg;
		}
		while (cur != TD_NONE && td_ev_end(td_trace_ev(t, cur)) <= pos)
			cur = td_trace_parent(t, cur);
		for (; k < end && td_trace_ev(t, k)->ts <= pos; k++) {
			const struct td_event *x = td_trace_ev(t, k);
			if (td_ev_end(x) > pos && x->kind != TD_K_OTHER_SPAN &&
			    !(a->name_class[x->name] & NC_IGNORE))
				cur = k;
		}
	}
}

/* --- per device ---------------------------------------------------------------------------- */

struct op_at {
	int64_t ts;
	uint32_t ev;
};
#define OP_LESS(x, y) ((x)->ts < (y)->ts || ((x)->ts == (y)->ts && (x)->ev < (y)->ev))
TD_DEFINE_SORT(sort_ops, struct op_at, OP_LESS)

#define ITEM_LESS(x, y)                                                                        \
	((x)->ns > (y)->ns || ((x)->ns == (y)->ns && ((x)->cause < (y)->cause ||                 \
						       ((x)->cause == (y)->cause && (x)->what < (y)->what))))
TD_DEFINE_SORT(sort_items, struct td_idle_item, ITEM_LESS)

static void analyse_device(struct td_analysis *a, struct td_dev_analysis *d)
{
	const struct td_trace *t = a->t;
	struct idle_map m = {NULL, 0, 0};
	struct op_at *ops;
	size_t nops = 0, i, cap = 0, oi = 0;
	uint64_t *launches;
	struct td_vec gaps;
	int64_t prev;

	/* the device's GPU ops by start time, and the thread that launches most of them */
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (tr->is_gpu && tr->device == d->device)
			cap += tr->count;
	}
	ops = td_malloc((cap ? cap : 1) * sizeof(*ops));
	launches = td_calloc(t->tracks.len ? t->tracks.len : 1, sizeof(uint64_t));
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		uint32_t k;
		if (!tr->is_gpu || tr->device != d->device)
			continue;
		for (k = tr->first; k < tr->first + tr->count; k++) {
			const struct td_event *e = td_trace_ev(t, k);
			uint32_t l;
			if (!td_kind_is_gpu_op(e->kind) || (a->name_class[e->name] & NC_IGNORE))
				continue;
			ops[nops].ts = e->ts;
			ops[nops].ev = k;
			nops++;
			if ((l = td_trace_launch(t, k)) != TD_NONE)
				launches[td_trace_ev(t, l)->track]++;
		}
	}
	sort_ops(ops, nops);
	d->host_track = TD_NONE;
	for (i = 0; i < t->tracks.len; i++)
		if (launches[i] && (d->host_track == TD_NONE || launches[i] > launches[d->host_track]))
			d->host_track = (uint32_t)i;
	free(launches);

	if (a->has_steps) {
		d->win_start = a->steps_start;
		d->win_end = a->steps_end;
	} else {
		struct td_device *dv = NULL;
		for (i = 0; i < t->devices.len; i++)
			if (TD_VEC_AT(&t->devices, struct td_device, i).id == d->device)
				dv = &TD_VEC_AT(&t->devices, struct td_device, i);
		d->win_start = dv ? dv->first_ts : 0;
		d->win_end = dv ? dv->last_end : 0;
	}
	d->nbusy = td_trace_busy_skip(t, d->device, d->win_start, d->win_end, a->skip_name, &d->busy);
	d->busy_ns = td_intervals_total(d->busy, d->nbusy);
	d->idle_ns = (d->win_end - d->win_start) - d->busy_ns;
	for (i = 0; i < nops; i++) {
		if (ops[i].ts < d->win_start || ops[i].ts >= d->win_end)
			continue;
		d->ops_in_window++;
		if (td_trace_ev(t, ops[i].ev)->kind == TD_K_KERNEL) {
			d->kernels++;
			d->small_kernels += td_an_is_small(a, ops[i].ev) != 0;
		}
	}

	/* the gaps, and who is to blame for each */
	td_vec_init(&gaps, sizeof(struct td_gap));
	prev = d->win_start;
	for (i = 0; i <= d->nbusy; i++) {
		int64_t gs = prev, ge = i < d->nbusy ? d->busy[i].start : d->win_end;
		struct gap_acc acc;
		struct td_gap *g;
		uint32_t next = TD_NONE, launch = TD_NONE, host;
		int64_t host_until = ge;
		int c, best = -1;

		if (i < d->nbusy)
			prev = d->busy[i].end;
		if (ge <= gs)
			continue;
		memset(&acc, 0, sizeof(acc));
		while (oi < nops && ops[oi].ts < ge)
			oi++;
		if (i < d->nbusy && oi < nops)
			next = ops[oi].ev;
		if (next != TD_NONE)
			launch = td_trace_launch(t, next);
		host = launch != TD_NONE ? td_trace_ev(t, launch)->track : d->host_track;
		if (launch != TD_NONE) {
			/* after the launch call returned, the host is not holding the GPU back */
			int64_t lend = td_ev_end(td_trace_ev(t, launch));
			int64_t from = lend > gs ? lend : gs;
			if (from < ge) {
				static const char lat[] = "launch latency";
				static const char dep[] = "op queued, waiting on another stream or event";
				static const char queued[] = TD_LABEL_QUEUED_GAP;
				const char *why = lat;
				uint8_t cause = CAUSE_LAUNCH;

				if (ge - lend > a->params.launch_delay_ns) {
					/* queued long before. Behind its own stream's previous op, which ended
					 * as the gap began: GPU-side launch overhead; else a wait on
					 * something else (another stream, an event, a collective) */
					const struct td_event *pe = next > 0 ? td_trace_ev(t, next - 1) : NULL;
					if (pe && pe->track == td_trace_ev(t, next)->track &&
					    td_kind_is_gpu_op(pe->kind) && td_ev_end(pe) >= gs) {
						why = queued;
					} else {
						why = dep;
						cause = CAUSE_DEPENDENCY;
					}
				}
				credit(&m, &acc, cause, td_strtab_intern(&a->labels, why, strlen(why)),
				       ge - from);
				host_until = from;
			}
		}
		if (host_until > gs) {
			if (host != TD_NONE)
				walk_host(a, &m, &acc, host, gs, host_until);
			else
				credit(&m, &acc, CAUSE_NOTHING, 0, host_until - gs);
		}
		g = td_vec_push(&gaps);
		g->start = gs;
		g->end = ge;
		g->next_op = next;
		for (c = 0; c < CAUSE_COUNT; c++)
			if (acc.by_cause[c] && (best < 0 || acc.by_cause[c] > acc.by_cause[best]))
				best = c;
		g->cause = (uint8_t)(best < 0 ? CAUSE_NOTHING : best);
		g->what = best < 0 ? 0 : acc.what_of[best];
	}
	d->gaps = gaps.data;
	d->ngaps = gaps.len;
	free(ops);

	td_vec_init(&d->idle, sizeof(struct td_idle_item));
	for (i = 0; i < m.cap; i++) {
		if (m.slots[i].used) {
			struct td_idle_item *it = td_vec_push(&d->idle);
			*it = m.slots[i].item;
			d->idle_by_cause[it->cause] += it->ns;
		}
	}
	free(m.slots);
	sort_items(d->idle.data, d->idle.len);
}

int td_an_is_small(const struct td_analysis *a, uint32_t k)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, k);
	uint32_t l = td_trace_launch(t, k);

	if (e->kind != TD_K_KERNEL || (a->name_class[e->name] & NC_IGNORE))
		return 0;
	return td_ev_dur(e) < a->params.small_kernel_ns ||
	       (l != TD_NONE && td_ev_dur(e) < td_ev_dur(td_trace_ev(t, l)));
}

void td_an_small_runs(const struct td_analysis *a, size_t d, td_run_fn fn, void *ctx)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t i;

	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		struct td_small_run run;
		int64_t prev_end = 0;
		uint32_t k;
		int open = 0;

		if (!tr->is_gpu || tr->device != dv->device)
			continue;
		for (k = tr->first; k <= tr->first + tr->count; k++) {
			const struct td_event *e = k < tr->first + tr->count ? td_trace_ev(t, k) : NULL;
			int small;

			if (e && (e->kind != TD_K_KERNEL || e->ts < dv->win_start || e->ts >= dv->win_end))
				continue;
			small = e && td_an_is_small(a, k);
			if (open && small && e->ts - prev_end <= a->params.small_run_gap_ns) {
				int64_t gap = e->ts > prev_end ? e->ts - prev_end : 0;
				if (gap)
					run.idle_ns += gap - td_an_busy_between(a, d, prev_end, e->ts);
				run.last = k;
				run.n++;
				run.end = td_ev_end(e);
			} else {
				if (open && run.n >= (uint32_t)a->params.small_run_min)
					fn(ctx, &run);
				open = small;
				if (small) {
					run.first = run.last = k;
					run.n = 1;
					run.start = e->ts;
					run.end = td_ev_end(e);
					run.idle_ns = 0;
				}
			}
			if (e)
				prev_end = td_ev_end(e);
		}
	}
}

static void sum_run(void *ctx, const struct td_small_run *run)
{
	*(int64_t *)ctx += run->idle_ns;
}

#define STEP_LESS(x, y) ((x)->start < (y)->start || ((x)->start == (y)->start && (x)->end > (y)->end))
TD_DEFINE_SORT(sort_steps, struct td_interval, STEP_LESS)

/* Steps: spans named ProfilerStep#N or matching the configured step markers, on the host, one
 * per start time. */
static void find_steps(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	struct td_vec v;
	uint32_t i;
	size_t k, j;

	td_vec_init(&v, sizeof(struct td_interval));
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		struct td_interval *s;
		if ((e->kind != TD_K_CPU_OP && e->kind != TD_K_USER_ANNOTATION) ||
		    !(a->name_class[e->name] & NC_STEP))
			continue;
		s = td_vec_push(&v);
		s->start = e->ts;
		s->end = td_ev_end(e);
	}
	sort_steps(v.data, v.len);
	for (k = 0, j = 0; k < v.len; k++) { /* the same step recorded twice */
		struct td_interval *s = &TD_VEC_AT(&v, struct td_interval, k);
		if (j && TD_VEC_AT(&v, struct td_interval, j - 1).start == s->start)
			continue;
		TD_VEC_AT(&v, struct td_interval, j++) = *s;
	}
	a->steps = v.data;
	a->nsteps = j;
	if (j) {
		a->has_steps = 1;
		a->steps_start = a->steps[0].start;
		a->steps_end = a->steps[0].end;
		for (k = 0; k < j; k++)
			if (a->steps[k].end > a->steps_end)
				a->steps_end = a->steps[k].end;
	}
}

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

int64_t td_an_median_step(const struct td_analysis *a)
{
	int64_t *d, med;
	size_t i;

	if (!a->nsteps)
		return 0;
	d = td_malloc(a->nsteps * sizeof(*d));
	for (i = 0; i < a->nsteps; i++)
		d[i] = a->steps[i].end - a->steps[i].start;
	sort_i64(d, a->nsteps);
	med = d[(a->nsteps - 1) / 2];
	free(d);
	return med;
}

void td_analysis_run(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg)
{
	size_t i, k = 0;

	memset(a, 0, sizeof(*a));
	a->t = t;
	a->cfg = cfg;
	if (cfg)
		a->params = cfg->params;
	else
		td_params_default(&a->params);
	td_strtab_init(&a->labels);
	a->name_class = td_malloc((t->names.count + 1) * sizeof(uint32_t));
	for (i = 0; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		size_t len = td_strtab_len(&t->names, (uint32_t)i);
		uint32_t c = td_name_class(n);
		if (cfg && i) {
			if (td_config_match(cfg, PAT_SYNC_OPS, n, len))
				c |= NC_USER_SYNC;
			if (td_config_match(cfg, PAT_STEP_MARKERS, n, len))
				c |= NC_STEP;
			if (td_config_match(cfg, PAT_DATALOADER, n, len))
				c |= NC_DATALOADER;
			if (td_config_match(cfg, PAT_COMMUNICATION, n, len))
				c |= NC_COMM;
			if (td_config_match(cfg, PAT_IGNORE, n, len)) {
				c |= NC_IGNORE;
				if (!a->skip_name)
					a->skip_name = td_calloc(t->names.count + 1, 1);
				a->skip_name[i] = 1;
			}
		}
		a->name_class[i] = c;
	}
	a->has_python = t->by_kind[TD_K_PYTHON] > 0;
	find_steps(a);
	for (i = 0; i < t->devices.len; i++)
		if (TD_VEC_AT(&t->devices, struct td_device, i).ops)
			a->ndev++;
	a->dev = td_calloc(a->ndev ? a->ndev : 1, sizeof(*a->dev));
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *dv = &TD_VEC_AT(&t->devices, struct td_device, i);
		if (!dv->ops)
			continue;
		a->dev[k].device = dv->id;
		analyse_device(a, &a->dev[k]);
		td_an_small_runs(a, k, sum_run, &a->dev[k].run_gap_ns);
		k++;
	}
}

void td_analysis_free(struct td_analysis *a)
{
	size_t i;

	for (i = 0; i < a->ndev; i++) {
		free(a->dev[i].busy);
		free(a->dev[i].gaps);
		td_vec_free(&a->dev[i].idle);
	}
	free(a->dev);
	free(a->name_class);
	free(a->skip_name);
	free(a->steps);
	td_strtab_free(&a->labels);
	memset(a, 0, sizeof(*a));
}

int td_an_outer_dataloader(const struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	uint32_t p;

	if (!(a->name_class[td_trace_ev(t, ev)->name] & NC_DATALOADER) ||
	    td_kind_on_gpu_track(td_trace_ev(t, ev)->kind))
		return 0;
	for (p = td_trace_parent(t, ev); p != TD_NONE; p = td_trace_parent(t, p))
		if (a->name_class[td_trace_ev(t, p)->name] & NC_DATALOADER)
			return 0;
	return 1;
}

int64_t td_an_idle_of(const struct td_analysis *a, size_t d, enum td_cause c, uint32_t what)
{
	size_t i;

	for (i = 0; i < a->dev[d].idle.len; i++) {
		const struct td_idle_item *it = &TD_VEC_AT(&a->dev[d].idle, struct td_idle_item, i);
		if (it->cause == c && it->what == what)
			return it->ns;
	}
	return 0;
}

int64_t td_an_busy_between(const struct td_analysis *a, size_t d, int64_t from, int64_t to)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t sum = 0;
	size_t lo = 0, hi = dv->nbusy;

	while (lo < hi) { /* first interval ending after from */
		size_t mid = (lo + hi) / 2;
		if (dv->busy[mid].end <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < dv->nbusy && dv->busy[lo].start < to; lo++) {
		int64_t s = dv->busy[lo].start > from ? dv->busy[lo].start : from;
		int64_t e = dv->busy[lo].end < to ? dv->busy[lo].end : to;
		if (e > s)
			sum += e - s;
	}
	return sum;
}
