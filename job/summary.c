/* SPDX-License-Identifier: MIT */
/* A rank's summary (job/summary.h): made from an analysed trace and its report (steps, GPU
 * time by cause, its collectives and their shifts, top kernels, findings), and freed. Its
 * JSON, written and read back, is job/summary_json.c. */
#include "job/summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "common/utf8.h"
#include "analysis/intervals.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

void td_summary_init(struct td_summary *s)
{
	memset(s, 0, sizeof(*s));
	s->rank = s->world_size = -1;
	s->device = -1;
	s->top_cause = -1;
	td_vec_init(&s->step_compute, sizeof(int64_t));
	td_vec_init(&s->kernels, sizeof(struct td_sum_kernel));
	td_strtab_init(&s->keys);
	td_vec_init(&s->colls, sizeof(struct td_sum_coll));
	td_vec_init(&s->findings, sizeof(struct td_sum_finding));
}

void td_summary_free(struct td_summary *s)
{
	size_t i;

	for (i = 0; i < s->kernels.len; i++)
		free(TD_VEC_AT(&s->kernels, struct td_sum_kernel, i).name);
	for (i = 0; i < s->findings.len; i++) {
		free(TD_VEC_AT(&s->findings, struct td_sum_finding, i).title);
		free(TD_VEC_AT(&s->findings, struct td_sum_finding, i).fix);
		free(TD_VEC_AT(&s->findings, struct td_sum_finding, i).shifts);
	}
	td_vec_free(&s->step_compute);
	td_vec_free(&s->kernels);
	td_strtab_free(&s->keys);
	td_vec_free(&s->colls);
	free(s->input);
	td_vec_free(&s->findings);
	free(s->path);
	free(s->device_name);
	free(s->top_what);
	memset(s, 0, sizeof(*s));
}

/* --- from an analysis -------------------------------------------------------------------- */


struct cstart {
	int64_t ts;
	uint32_t ev;
};
#define CSTART_LESS(x, y) ((x)->ts < (y)->ts || ((x)->ts == (y)->ts && (x)->ev < (y)->ev))
TD_DEFINE_SORT(sort_cstart, struct cstart, CSTART_LESS)

/* How far into its step the host launched GPU op ev (*launch) and the GPU started it (*start):
 * -1 both without a launch or outside steps. */
static void in_step(const struct td_analysis *a, uint32_t ev, int64_t *launch, int64_t *start)
{
	uint32_t l = td_trace_launch(a->t, ev);
	size_t lo = 0, hi = a->nsteps;
	int64_t ts;

	*launch = *start = -1;
	if (l == TD_NONE)
		return;
	ts = td_trace_ev(a->t, l)->ts;
	while (lo < hi) { /* the last step starting at or before ts */
		size_t mid = lo + (hi - lo) / 2;
		if (a->steps[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || ts >= a->steps[lo - 1].end)
		return;
	*launch = ts - a->steps[lo - 1].start;
	*start = td_trace_ev(a->t, ev)->ts - a->steps[lo - 1].start;
	if (*start < *launch) /* clocks that disagree: the GPU cannot start before the launch */
		*start = *launch;
}

/* The key that matches a collective across ranks: its process group, collective and message
 * size when the trace records them, else its kernel's name. */
static uint32_t coll_key(struct td_summary *s, const struct td_trace *t, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(t, ev);
	const struct td_coll *c = td_trace_coll(t, ev);
	char buf[1024];
	char *fixed;
	uint32_t id;

	if (c && c->name)
		snprintf(buf, sizeof(buf), "pg %s: %s %lld x %s", c->pg ? td_trace_name(t, c->pg) : "?",
			 td_trace_name(t, c->name),
			 (long long)(c->in_nelems > c->out_nelems ? c->in_nelems : c->out_nelems),
			 c->dtype ? td_trace_name(t, c->dtype) : "?");
	else
		snprintf(buf, sizeof(buf), "%s", td_trace_name(t, e->name));
	fixed = td_utf8_fix(buf);
	id = td_strtab_intern(&s->keys, fixed, strlen(fixed));
	free(fixed);
	return id;
}

/* The device's compute kernels and its collectives in the window; *evs: the collectives'
 * events, in s->colls' order (malloc'd). */
static void kernels_and_collectives(struct td_analysis *a, size_t d, struct td_summary *s,
				    uint32_t **evs)
{
	struct td_dev_events it;
	uint32_t ev;
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_kernel_total *kt;
	struct cstart *cs;
	uint32_t *seq;
	size_t nc = 0, cap = 0, i, m;

	cap = td_dev_events_count(t, dv->device);
	cs = td_malloc((cap ? cap : 1) * sizeof(*cs));
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &ev);) {
		const struct td_event *e = td_trace_ev(t, ev);
		unsigned cl = td_an_class(a, e->name);
		if (e->kind != TD_K_KERNEL || (cl & NC_IGNORE) || e->ts < dv->win_start ||
		    e->ts >= dv->win_end || !(cl & NC_COMM))
			continue;
		cs[nc].ts = e->ts;
		cs[nc++].ev = ev;
	}
	/* compute kernels: totals per name, the top ones kept */
	m = td_an_kernel_totals(a, d, &kt);
	for (i = 0; i < m && i < TD_SUMMARY_KERNELS; i++) {
		struct td_sum_kernel *k = td_vec_push(&s->kernels);
		char mk[1100];
		k->name = td_utf8_fix(td_mark(mk, sizeof(mk), td_trace_name(t, kt[i].name)));
		k->ns = kt[i].ns;
		k->calls = kt[i].calls;
	}
	free(kt);
	/* collectives in start order, each numbered within its key */
	sort_cstart(cs, nc);
	*evs = td_malloc((nc ? nc : 1) * sizeof(**evs));
	for (i = 0; i < nc; i++) {
		struct td_sum_coll *c = td_vec_push(&s->colls);
		const struct td_event *e = td_trace_ev(t, cs[i].ev);
		(*evs)[i] = cs[i].ev;
		c->key = coll_key(s, t, cs[i].ev);
		c->start = e->ts;
		c->dur = td_ev_dur(e);
		in_step(a, cs[i].ev, &c->in_step, &c->gpu_in_step);
	}
	seq = td_calloc(s->keys.count + 1, sizeof(*seq));
	for (i = 0; i < s->colls.len; i++) {
		struct td_sum_coll *c = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
		c->seq = seq[c->key]++;
	}
	free(seq);
	free(cs);
}

/* The edits f's saving was replayed with, when the job view may replay them across the ranks:
 * its fix's, or its bound's where that frees no collective (the ranks' replay takes a
 * collective's own time as measured). */
static const struct td_vec *shift_edits(const struct td_finding *f, int sz)
{
	size_t i;

	if (sz == TD_SIZING_REPLAY)
		return f->edits.len ? &f->edits : NULL;
	if (sz != TD_SIZING_BOUND || !f->bound.len)
		return NULL;
	for (i = 0; i < f->bound.len; i++)
		if (TD_VEC_AT(&f->bound, struct td_rp_edit, i).kind == TD_RP_FREE)
			return NULL;
	return &f->bound;
}

/* Each replayed (or host-bound) finding's collective shifts (td_sum_finding.shifts): its
 * replay against the replay without it - with the fix that must come first in both (as its
 * saving was had), else alone - for the job view, which replays the ranks' collectives
 * together. */
static void coll_shifts(struct td_analysis *a, const struct td_report *r, size_t d,
			struct td_summary *s, const uint32_t *evs)
{
	size_t n = s->colls.len, i, k;
	int64_t *base = NULL, *base_pre = NULL, *fixed = td_malloc((n ? n : 1) * sizeof(*fixed));
	const struct td_finding *base_of = NULL; /* the fix base_pre was replayed with */

	for (i = 0; n && i < r->findings.len && i < s->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i), *pre = NULL;
		struct td_sum_finding *sf = &TD_VEC_AT(&s->findings, struct td_sum_finding, i);
		const struct td_vec *ed = shift_edits(f, sf->sizing);
		const int64_t *b;
		if (!ed || f->device != a->dev[d].device)
			continue;
		for (k = 0; f->after && k < r->findings.len && !pre; k++)
			if (!strcmp(TD_VEC_AT(&r->findings, struct td_finding, k).rule, f->after))
				pre = &TD_VEC_AT(&r->findings, struct td_finding, k);
		if (f->after && !pre)
			continue;
		if (!pre && !base) { /* the replays without the fix, once each */
			base = td_malloc(n * sizeof(*base));
			if (td_whatif_starts(a, d, NULL, 0, NULL, 0, evs, n, base) != 0)
				break;
		}
		if (pre && base_of != pre) {
			base_pre = base_pre ? base_pre : td_malloc(n * sizeof(*base_pre));
			base_of = NULL;
			if (td_whatif_starts(a, d, NULL, 0, pre->edits.data, pre->edits.len, evs, n,
					     base_pre) != 0)
				continue;
			base_of = pre;
		}
		b = pre ? base_pre : base;
		if (td_whatif_starts(a, d, pre ? pre->edits.data : NULL, pre ? pre->edits.len : 0,
				     ed->data, ed->len, evs, n, fixed) != 0)
			continue;
		sf->shifts = td_malloc(n * sizeof(*sf->shifts));
		for (k = 0; k < n; k++)
			sf->shifts[k] = fixed[k] == TD_SHIFT_NONE || b[k] == TD_SHIFT_NONE
				? TD_SHIFT_NONE : fixed[k] - b[k];
	}
	free(base);
	free(base_pre);
	free(fixed);
}

void td_summary_make(struct td_analysis *a, const struct td_report *r, const char *path,
		     struct td_summary *s)
{
	const struct td_trace *t = a->t;
	size_t d = 0, i;
	uint32_t *evs;
	int c;

	td_summary_init(s);
	s->path = td_utf8_fix(path);
	s->rank = t->rank;
	s->world_size = t->world_size;
	s->partial = t->partial;
	s->steps = a->nsteps;
	s->step_median_ns = td_an_median_step(a);
	td_metrics_compute(a, r, &s->metrics);
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		struct td_sum_finding *sf = td_vec_push(&s->findings);
		snprintf(sf->rule, sizeof(sf->rule), "%s", f->rule);
		sf->severity = (int)f->severity;
		sf->title = td_utf8_fix(f->title ? f->title : "");
		sf->fix = td_utf8_fix(f->fix ? f->fix : "");
		sf->savings_ns = f->savings_ns;
		sf->per_step_ns = f->per_step_ns;
		sf->idle_ns = f->idle_ns;
		sf->busy_ns = f->busy_ns;
		sf->host_ns = f->host_ns;
		sf->fraction = f->savings_fraction;
		sf->count = f->count;
		sf->risk = f->risk;
		sf->offpath = f->offpath;
		sf->max_severity = (int)f->max_severity;
		sf->sizing = f->bounded ? TD_SIZING_BOUND : f->replayed ? TD_SIZING_REPLAY
			     : TD_SIZING_IDLE;
		if (!strcmp(f->rule, "dataloader"))
			s->dataloader_ns = td_finding_get(f, "dataloader_ns");
	}
	{
		const struct td_metric *m = td_metrics_get(&s->metrics, "sync_calls_per_step");
		s->syncs_per_step = m && m->present ? m->value : 0;
		m = td_metrics_get(&s->metrics, "dataloader_ns_per_step");
		if (!s->dataloader_ns && m && m->present)
			s->dataloader_ns = (int64_t)(m->value * (double)(a->nsteps ? a->nsteps : 1));
	}
	s->vendor = (int)a->ctx.vendor;
	s->run = (int)a->ctx.run;
	if (!a->ndev)
		return;
	for (i = 1; i < a->ndev; i++) /* the busiest device speaks for the rank */
		if (a->dev[i].busy_ns > a->dev[d].busy_ns)
			d = i;
	s->device = a->dev[d].device;
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *dev = &TD_VEC_AT(&t->devices, struct td_device, i);
		if (dev->id == s->device && dev->name)
			s->device_name = td_utf8_fix(td_trace_name(t, dev->name));
	}
	s->window_ns = a->dev[d].win_end - a->dev[d].win_start;
	s->busy_ns = a->dev[d].busy_ns;
	s->idle_ns = a->dev[d].idle_ns;
	for (c = 0; c < CAUSE_COUNT; c++) {
		s->idle_by_cause[c] = a->dev[d].idle_by_cause[c];
		if (s->idle_by_cause[c] && (s->top_cause < 0 || s->idle_by_cause[c] >
					    s->idle_by_cause[s->top_cause]))
			s->top_cause = c;
	}
	for (i = 0; s->top_cause >= 0 && i < a->dev[d].idle.len; i++) {
		const struct td_idle_item *it = &TD_VEC_AT(&a->dev[d].idle, struct td_idle_item, i);
		if (it->cause == s->top_cause) {
			s->top_what = td_utf8_fix(it->what ? td_an_label(a, it->what) : "");
			break;
		}
	}
	{
		struct td_interval *comp, *comm;
		size_t np, nc;
		td_an_kernel_sets(a, s->device, a->dev[d].win_start, a->dev[d].win_end, &comp, &np,
				  &comm, &nc);
		struct td_interval *ex = td_malloc((nc + np + 1) * sizeof(*ex));
		s->compute_ns = td_intervals_total(comp, np);
		s->comm_ns = td_intervals_total(comm, nc);
		/* not hidden by compute, whether or not a finding is left to say so (one whose
		 * collectives are off the critical path wins nothing and is not) */
		s->exposed_ns = td_intervals_total(ex, td_iv_minus(comm, nc, comp, np, ex));
		free(ex);
		for (i = 0; a->dev[d].gsteps && i < a->nsteps; i++) {
			int64_t *v = td_vec_push(&s->step_compute);
			*v = td_iv_total_in(comp, np, a->dev[d].gsteps[i].start, a->dev[d].gsteps[i].end);
		}
		free(comp);
		free(comm);
	}
	kernels_and_collectives(a, d, s, &evs);
	coll_shifts(a, r, d, s, evs);
	free(evs);
}
