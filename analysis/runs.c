/* SPDX-License-Identifier: MIT */
/* Small kernels and their runs: what is small, and the runs of small kernels back to back. */
#include "analysis/analysis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "config/config.h"
#include "analysis/internal.h"

/* A collective is not a small kernel, however short: its time is the link's and its peers',
 * and fewer, larger collectives are communication's fix, not fusing or graphs. */
int td_an_is_small(const struct td_analysis *a, uint32_t k)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, k);
	uint32_t l;

	if (e->kind != TD_K_KERNEL || (a->name_class[e->name] & (NC_IGNORE | NC_COMM)))
		return 0;
	if (td_ev_dur(e) < a->params.small_kernel_ns)
		return 1;
	/* a longer kernel is small beside its launch call: read only then (it is far off) */
	l = td_trace_launch(t, k);
	return l != TD_NONE && td_ev_dur(e) < td_ev_dur(td_trace_ev(t, l));
}

void td_an_small_runs(const struct td_analysis *a, size_t d, td_run_fn fn, void *ctx)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	size_t i, ndtr;
	const uint32_t *dtr = td_trace_device_tracks(t, dv->device, &ndtr);

	for (i = 0; i < ndtr; i++) {
		const struct td_track *tr = td_trace_track(t, dtr[i]);
		struct td_small_run run;
		int64_t prev_end = 0;
		uint32_t k;
		int open = 0;

		memset(&run, 0, sizeof(run));
		for (k = tr->first; k <= tr->first + tr->count; k++) {
			const struct td_event *e = k < tr->first + tr->count ? td_trace_ev(t, k) : NULL;
			int small;

			if (e && (e->kind != TD_K_KERNEL || e->ts < dv->win_start || e->ts >= dv->win_end))
				continue;
			small = e && (a->small[k >> 3] & (1u << (k & 7))); /* td_an_is_small() */
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
