/* SPDX-License-Identifier: MIT */
/* untraced-wait: GPU work that started long after its launch, its stream and the other streams
 * allowed, with nothing in the trace to hold it - it waited on work from before the trace (an
 * event recorded, a batch queued, before the profiler started). The replay finds these start
 * delays (replay/replay.h: g->delays) and keeps them when it sizes a fix, so no fix in the
 * trace moves them: the GPU idle they hold is what the trace cannot show (sglang-mi300x: a
 * 60-byte copy waits 493 ms behind a hipStreamWaitEvent, half of the window). Only a delay
 * of a stream told to wait on an event, at the window's start before the trace shows the
 * device busy (1 ms at most) and by a launch that is no cold start, is taken: elsewhere a delay is more likely a stream
 * or a queue the trace lost (a filtered trace, graph launches) than work before the trace.
 * Sized by that idle: the fix is to measure without it, and the rest of the report speaks of
 * what follows. It claims before the blocking calls do, which wait behind it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

#define UNTRACED_MIN_NS 1000000 /* a start delay this long (or 1% of the window) is a wait */
#define UNTRACED_BUSY_NS 1000000 /* the most GPU work the trace may show before it */

/* The stream wait issued on op k's launching thread last before its launch, or TD_NONE. */
static uint32_t stream_wait_before(const struct td_analysis *a, uint32_t op)
{
	const struct td_trace *t = a->t;
	uint32_t l = td_trace_launch(t, op), tr, i;

	if (l == TD_NONE)
		return TD_NONE;
	tr = td_trace_track_of(t, l);
	for (i = l; i-- > td_trace_track(t, tr)->first;) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_STREAM_WAIT))
			return i;
		if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_SYNC_CALL))
			return TD_NONE; /* a wait between them drained the queue */
	}
	return TD_NONE;
}

static void run_device(struct td_analysis *a, struct td_report *r, size_t d,
		       const struct td_whatif *w)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t window = dv->win_end - dv->win_start, held = 0, min;
	struct td_claims cl;
	struct td_finding *f = NULL;
	uint32_t top = TD_NONE, wait = TD_NONE;
	int64_t top_ns = 0;
	char b1[32], b2[32], m[600];
	size_t i, n = 0;

	min = window / 100 > UNTRACED_MIN_NS ? window / 100 : UNTRACED_MIN_NS;
	td_claims_init(&cl);
	for (i = 0; i < w->g.ndelays; i++) {
		const struct td_rp_delay *dl = &w->g.delays[i];
		const struct td_event *e = td_rp_event(&w->g, dl->node);
		uint32_t ev = w->g.ev[dl->node];
		uint32_t l = td_trace_launch(t, ev);
		if (dl->ns < min || td_trace_track(t, td_trace_track_of(t, ev))->device != dv->device ||
		    e->ts < dv->win_start || e->ts - dl->ns >= dv->win_end)
			continue;
		/* the stream was told to wait on an event, by a launch that is no cold start, at
		 * the window's start (its first 5%) while the trace shows the device doing next to
		 * nothing before: what it waited for ran before the trace (else a traced stream or
		 * the queue would hold it) */
		if (l == TD_NONE || (e->ts - dl->ns - dv->win_start) * 20 > window ||
		    td_an_busy_between(a, d, dv->win_start, e->ts - dl->ns) > UNTRACED_BUSY_NS ||
		    td_an_is_warm(a, l) || stream_wait_before(a, ev) == TD_NONE)
			continue;
		td_claims_add(&cl, e->ts - dl->ns, e->ts, CAUSE_COUNT, 0);
		held += dl->ns;
		n++;
		if (dl->ns > top_ns) {
			top_ns = dl->ns;
			top = ev;
		}
	}
	if (!n) {
		td_claims_free(&cl);
		return;
	}
	f = td_report_add(r, "untraced-wait", dv->device);
	td_finding_claim(a, f, d, &cl, NULL, 0);
	td_claims_free(&cl);
	f->count = n;
	/* nothing in the trace can win it back: a cost of measuring, told as one-off, first when
	 * it holds a quarter of the window (what is measured is then that much less the run's);
	 * what the window holds besides is the run's */
	f->risk = 3;
	f->outside = 1;
	f->oneoff_row = "one-off: wait on untraced work";
	f->severity = f->idle_ns * 4 >= window ? SEV_HIGH : f->idle_ns * 10 >= window ? SEV_MEDIUM
		      : SEV_LOW;
	wait = stream_wait_before(a, top);
	td_finding_title(f, "GPU %d waits %s (%.0f%% of the window) on work the trace did not "
			 "record: %s started %s later than its launch and its streams allowed",
			 (int)dv->device, td_fmt_dur(b1, sizeof(b1), f->idle_ns),
			 window ? 100.0 * (double)f->idle_ns / (double)window : 0.0,
			 td_mark(m, sizeof(m), td_trace_name(t, td_trace_ev(t, top)->name)),
			 td_fmt_dur(b2, sizeof(b2), top_ns));
	if (wait != TD_NONE)
		td_finding_where(f, "its stream waits on an event (%s) that no record in the trace "
				 "explains: recorded before the profiler started",
				 td_an_name(a, td_trace_ev(t, wait)->name));
	td_finding_where(f, "%zu GPU op%s started %s late in all; the replay keeps the delays, so "
			 "no fix the trace shows moves them", n, n == 1 ? "" : "s",
			 td_fmt_dur(b1, sizeof(b1), held));
	td_finding_evidence(f, td_trace_ev(t, top)->ts - top_ns, top_ns, "%s waited %s",
			    td_an_name(a, td_trace_ev(t, top)->name),
			    td_fmt_dur(b1, sizeof(b1), top_ns));
	td_finding_value(f, "untraced_wait_ns", held);
	{
		char fix[1200];
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_UNTRACED_WAIT, -1, NULL, fix,
						     sizeof(fix)));
	}
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	const struct td_whatif *w;
	size_t d, i;

	/* a stream told to wait is the mechanism: without one, no replay is asked for */
	for (i = 1; i <= t->names.count && !(a->name_class[i] & NC_STREAM_WAIT); i++)
		;
	if (i > t->names.count || !(w = td_an_whatif(a)) || !w->g.ndelays)
		return;
	for (d = 0; d < a->ndev; d++)
		run_device(a, r, d, w);
}

const struct td_rule rule_untraced_wait = {
	.id = "untraced-wait",
	.title = "GPU work that waited on work from before the trace",
	.run = run,
};
