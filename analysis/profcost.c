/* SPDX-License-Identifier: MIT */
/* The profiler's own cost in the host time a finding claims. A trace recorded with stacks
 * (with_stack=True) holds a python_function event for every Python call the profiler traced:
 * PyTorch's Python tracer hooks each call and return (PyEval_SetProfile) and stamps both, and
 * its author measured a wall-clock read at ~600 ns (pytorch/pytorch#67407, "Python tracer for
 * profiler", profiler_python.cpp: "Empirically, it takes ~600 ns to call now()"; later
 * versions read a cheaper clock). Two stamps a frame, less what the cheaper clock saves: we
 * assume PROFCOST_FRAME_NS (1 us) a frame, stated in the text. Where that estimate is
 * PROFCOST_SHARE (10%) or more of the host time a host-bound finding claims (its fix frees
 * host time, or its bound removes the host's work), the finding says so in a where line: the
 * saving may be partly the profiler's, and a profile without stacks sizes it. Library code:
 * never prints. */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "common/sort.h"
#include "analysis/internal.h"
#include "analysis/profcost.h"

#define PROFCOST_FRAME_NS 1000
#define PROFCOST_SHARE 0.10

/* "maybe 23% of" */
static const char *pct_of(char *buf, size_t cap, double share)
{
	snprintf(buf, cap, "maybe %.0f%% of", 100.0 * share);
	return buf;
}

/* The events of positions [lo, hi) of TD_FOR_KIND's order (one track's: by time) that
 * start in [from, to). */
static size_t in_time(const struct td_trace *t, size_t lo, size_t hi, int64_t from, int64_t to)
{
	size_t a, b;

	TD_LOWER_BOUND(a, hi - lo, td_trace_ev(t, td_trace_scan_at(t, lo + mid))->ts < from);
	TD_LOWER_BOUND(b, hi - lo, td_trace_ev(t, td_trace_scan_at(t, lo + mid))->ts < to);
	return b - a;
}

/* Python frames that start in [from, to). Where the trace keeps its other events by kind (it
 * is mostly frames), each host track's count in the window less its other kinds', all by
 * search (a track's events are in time order): no pass over the frames. */
static uint64_t frames_in(const struct td_trace *t, int64_t from, int64_t to)
{
	uint64_t n = 0;
	size_t i;

	if (!t->scan) {
		for (i = 0; i < t->events.len; i++) {
			const struct td_event *ev = td_trace_ev(t, (uint32_t)i);
			n += ev->kind == TD_K_PYTHON && ev->ts >= from && ev->ts < to;
		}
		return n;
	}
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		size_t a, b, all;
		int k;
		if (tr->is_gpu || !tr->count)
			continue;
		TD_LOWER_BOUND(a, tr->count, td_trace_ev(t, tr->first + (uint32_t)mid)->ts < from);
		TD_LOWER_BOUND(b, tr->count, td_trace_ev(t, tr->first + (uint32_t)mid)->ts < to);
		all = b - a;
		for (k = 0; k < TD_K_NSTORED; k++) { /* the track's events of kind k: by index */
			size_t kb = td_trace_kind_begin(t, k), ke = td_trace_kind_end(t, k), lo, hi;
			if (k == TD_K_PYTHON || kb == ke)
				continue;
			TD_LOWER_BOUND(lo, ke - kb, td_trace_scan_at(t, kb + mid) < tr->first);
			TD_LOWER_BOUND(hi, ke - kb, td_trace_scan_at(t, kb + mid) <
						    tr->first + tr->count);
			all -= in_time(t, kb + lo, kb + hi, from, to);
		}
		n += all;
	}
	return n;
}

void td_an_profiler_caveats(const struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	int64_t from, to;
	uint64_t frames, steps;
	size_t i;

	if (!t->by_kind[TD_K_PYTHON] || !r->findings.len)
		return;
	if (a->has_steps && a->nsteps) {
		from = a->steps_start;
		to = a->steps_end;
		steps = a->nsteps;
	} else {
		from = INT64_MAX;
		to = INT64_MIN;
		for (i = 0; i < a->ndev; i++) {
			from = a->dev[i].win_start < from ? a->dev[i].win_start : from;
			to = a->dev[i].win_end > to ? a->dev[i].win_end : to;
		}
		steps = 1;
	}
	if (to <= from || !(frames = frames_in(t, from, to)))
		return;
	for (i = 0; i < r->findings.len; i++) {
		struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		int64_t cost = (int64_t)(frames * PROFCOST_FRAME_NS), claim = f->savings_ns;
		char b1[32], b2[48];
		int host = (f->host_ns > 0 && !f->frees_host) || /* host work, not a wait */
			   (f->bound_what && strstr(f->bound_what, "host"));
		int64_t w = td_an_window_ns(a, f->device);
		if (f->risk || claim <= 0 || !host || (double)claim * 100 < (double)w ||
		    (double)cost < PROFCOST_SHARE * (double)claim)
			continue; /* a saving under 1% of the window needs no caveat */
		td_finding_where(f, "recorded with stacks (with_stack=True): ~%llu Python frames %s; "
				 "at an assumed ~1 us a frame the profiler's own host time is ~%s %s, "
				 "%s this saving: profile again without with_stack to size it",
				 (unsigned long long)(frames / steps), steps > 1 ? "a step" : "in the window",
				 td_fmt_dur(b1, sizeof(b1), cost / (int64_t)steps),
				 steps > 1 ? "a step" : "there", cost >= claim ? "as much as all of"
				 : pct_of(b2, sizeof(b2), (double)cost / (double)claim));
	}
}
