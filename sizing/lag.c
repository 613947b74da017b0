/* SPDX-License-Identifier: MIT */
/* A GPU that runs steps behind its host: the steady-state step is the GPU's, and a fix that
 * takes GPU time off it wins only down to the host's own step (sizing/internal.h).
 *
 * In a short trace of such a run the replayed window is not the steady state: it opens on the
 * work queued before the trace (ops launched before the window, or with no launch in it) and
 * ends on the GPU draining what the host queued. A fix that removes GPU time lets that backlog
 * drain too, so the window shrinks by more than any step can: on ddp-resnet-mi300x (the GPU
 * ~1.7 steps behind; steps of 19 ms on the GPU, 16 ms on the host) removing the exposed
 * all-reduce shrank the 3-step window by 33.9 ms, 11.3 ms a step, where a step can only fall
 * to the host's 16 ms. Here the step is what each side needs: the GPU's period (its steps'
 * steps' spans after the first, which holds the backlog), the host's median step; the fix takes
 * the GPU time the
 * replay measures it removing per step off the GPU's period, and the step becomes the longer of
 * the two. Only where the host never waits on this GPU (no blocking call or blocked launch of
 * note: a host that waits is not ahead of it, and its own step is not known). */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "analysis/blocking.h"
#include "analysis/finding.h"
#include "common/alloc.h"
#include "common/fmt.h"
#include "parser/trace.h"
#include "replay/replay.h"
#include "sizing/internal.h"

int td_whatif_lag(struct td_analysis *a, size_t d, struct td_lag *l)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_block_unit *u;
	struct td_dev_events it;
	int64_t *v, first = INT64_MAX, queued = 0, blocked = 0, hsum = 0;
	size_t i, n = a->nsteps, nu;
	uint32_t k;

	l->on = 0;
	if (n < 2 || !dv->gsteps || !a->whatif || a->whatif->g.blocked_launches)
		return 0;
	/* the backlog: the GPU busy at the window's start with work queued before it */
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t h;
		if (!td_kind_is_gpu_op(e->kind) || td_ev_end(e) <= dv->win_start ||
		    e->ts >= dv->win_end)
			continue;
		h = td_trace_launch(t, k);
		if (h != TD_NONE && td_trace_ev(t, h)->ts >= dv->win_start && e->ts < first)
			first = e->ts;
	}
	if (first == INT64_MAX)
		return 0;
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		int64_t s = e->ts > dv->win_start ? e->ts : dv->win_start;
		int64_t en = td_ev_end(e) < first ? td_ev_end(e) : first;
		if (td_kind_is_gpu_op(e->kind) && en > s)
			queued += en - s; /* streams may overlap: at most the span, checked below */
	}
	v = td_malloc(n * sizeof(*v));
	for (i = 0; i < n; i++)
		hsum += v[i] = a->steps[i].end - a->steps[i].start;
	l->host_step = td_median_i64(v, n);
	for (i = 1; i < n; i++) /* the first step's span holds the backlog too */
		v[i - 1] = dv->gsteps[i].end - dv->gsteps[i].start;
	l->gpu_step = td_median_i64(v, n - 1);
	free(v);
	l->backlog = first - dv->win_start;
	nu = td_an_block_units(a, &u);
	for (i = 0; i < nu; i++)
		if (u[i].dev == d)
			blocked += u[i].blocked;
	/* behind by half a step or more at the start, busy through it, slower than the host,
	 * which waits on it for less than a twentieth of its steps */
	if (2 * l->backlog < l->host_step || 10 * queued < 9 * l->backlog ||
	    l->gpu_step <= l->host_step || 20 * blocked >= hsum)
		return 0;
	l->behind = (double)l->backlog / (double)l->gpu_step;
	l->on = 1;
	return 1;
}

int64_t td_whatif_lag_cap(struct td_analysis *a, const struct td_lag *l, struct td_finding *f,
			  int64_t saving, int64_t removed)
{
	int64_t n = (int64_t)a->nsteps, after, per, cap;
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	if (!l->on || saving <= 0 || n <= 0)
		return saving;
	after = l->gpu_step - (removed > 0 ? removed / n : 0);
	per = l->gpu_step - (after > l->host_step ? after : l->host_step);
	cap = per > 0 ? per * n : 0;
	if (cap >= saving)
		return saving;
	f->capped = 1;
	td_finding_where(f, "the GPU runs %.1f steps behind the host: a step takes the GPU's %s "
			 "(the host's own %s); with the fix the GPU's step would take %s, and %s "
			 "then holds the step: %s a step, not the %s the window shrinks by while the "
			 "work queued before the trace drains", l->behind,
			 td_fmt_dur(b1, sizeof(b1), l->gpu_step),
			 td_fmt_dur(b2, sizeof(b2), l->host_step),
			 td_fmt_dur(b3, sizeof(b3), after > 0 ? after : 0),
			 after > l->host_step ? "the GPU's own work" : "the host's",
			 td_fmt_dur(b4, sizeof(b4), per > 0 ? per : 0),
			 td_fmt_dur(b5, sizeof(b5), saving / n));
	return cap;
}
