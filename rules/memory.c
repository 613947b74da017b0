/* SPDX-License-Identifier: MIT */
/* memory: the risks the [memory] samples show, not time: a device close to out of memory
 * (peak reserved above rules.memory_high_fraction of its capacity, 90% as the TensorBoard
 * plugin warned), allocated memory that grows every steady-state step (a leak: tensors kept
 * alive across steps), and reserved far above allocated at the peak of allocated memory on a
 * device more than half full (fragmentation: 30% and 1 GiB or more cached and unused). Each is a
 * risk finding: kept without savings, graded by how close the device is to its capacity. */
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "analysis/internal.h"
#include "analysis/memcurve.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"

#define GROWTH_MIN (16ll << 20) /* a leak must add at least this much over the steps */

static void where_peak(struct td_analysis *a, struct td_finding *f, const struct td_mem_dev *d)
{
	const struct td_trace *t = a->t;
	char b1[32], fr[1100], m[1100];
	int64_t step = td_trace_step_at(t, d->peak_alloc_ts);

	if (d->peak_alloc_op != TD_NONE) {
		const char *frame = td_an_user_frame(a, d->peak_alloc_op, fr, sizeof(fr));
		td_finding_where(f, "at the peak of allocated memory (%s): %s%s%s%s", td_fmt_bytes(b1,
				 sizeof(b1), (double)d->peak_alloc),
				 td_mark(m, sizeof(m), td_trace_name(t, td_trace_ev(t, d->peak_alloc_op)->name)),
				 *frame ? " in " : "", frame, "");
	}
	if (step >= 0)
		td_finding_where(f, "the peak is in step %lld", (long long)step);
	td_finding_evidence(f, d->peak_alloc_ts, 0, "allocated %s (peak)",
			    td_fmt_bytes(b1, sizeof(b1), (double)d->peak_alloc));
}

static enum td_severity near_oom(double frac)
{
	return frac >= 0.97 ? SEV_HIGH : frac >= 0.93 ? SEV_MEDIUM : SEV_LOW;
}

static void run(struct td_analysis *a, struct td_report *r)
{
	struct td_mem_dev *d;
	size_t n = td_mem_devs(a, &d, 0), k, i;
	char b1[32], b2[32], b3[32], fix[1200];

	for (k = 0; k < n; k++) {
		const struct td_mem_dev *x = &d[k];
		double frac = x->capacity > 0 && x->peak_res > 0
			? (double)x->peak_res / (double)x->capacity : 0;
		if (x->device < 0)
			continue;
		if (frac > a->params.memory_high_fraction) {
			struct td_finding *f = td_report_add(r, "memory", x->device);
			f->risk = 1;
			f->severity = near_oom(frac);
			f->count = 1;
			td_finding_value(f, "peak_reserved_bytes", x->peak_res);
			td_finding_value(f, "peak_allocated_bytes", x->peak_alloc);
			td_finding_value(f, "capacity_bytes", x->capacity);
			td_finding_title(f, "GPU %d reserves %s of its %s at the peak (%.0f%%): close to "
					 "out of memory", x->device,
					 td_fmt_bytes(b1, sizeof(b1), (double)x->peak_res),
					 td_fmt_bytes(b2, sizeof(b2), (double)x->capacity), 100 * frac);
			where_peak(a, f, x);
			td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_MEM_PEAK, -1, NULL, fix,
							    sizeof(fix)));
		}
		/* a leak: allocated at every step boundary above the one before */
		if (x->nstep >= 3) {
			size_t grow = 0, known = 0, f0 = 0;
			while (f0 < x->nstep && x->step_alloc[f0] < 0) /* the first boundary known */
				f0++;
			for (i = f0 + 1; i <= x->nstep; i++) {
				known++;
				grow += x->step_alloc[i] > x->step_alloc[i - 1];
			}
			if (known >= 3 && grow == known &&
			    x->step_alloc[x->nstep] - x->step_alloc[f0] >= GROWTH_MIN) {
				int64_t total = x->step_alloc[x->nstep] - x->step_alloc[f0];
				struct td_finding *f = td_report_add(r, "memory", x->device);
				double left = x->capacity > 0 && total > 0
					? (double)(x->capacity - x->peak_alloc) / ((double)total / (double)known)
					: 0;
				f->risk = 1;
				f->severity = x->capacity > 0 && left < 1000 ? SEV_HIGH : SEV_MEDIUM;
				f->count = known;
				td_finding_value(f, "growth_bytes", total);
				td_finding_value(f, "growth_bytes_per_step", total / (int64_t)known);
				td_finding_title(f, "Allocated memory on GPU %d grows every step: +%s per step "
						 "over %zu steps (%s to %s)%s", x->device,
						 td_fmt_bytes(b1, sizeof(b1), (double)total / (double)known),
						 known, td_fmt_bytes(b2, sizeof(b2), (double)x->step_alloc[f0]),
						 td_fmt_bytes(b3, sizeof(b3), (double)x->step_alloc[x->nstep]),
						 x->summed ? " (summed from the allocations' sizes)" : "");
				if (left > 0)
					td_finding_where(f, "at this rate the device is full in about %.0f more "
							 "steps", left);
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_MEM_LEAK, -1, NULL,
								    fix, sizeof(fix)));
			}
		}
		/* fragmentation: at the peak of allocated memory, on a device more than half full,
		 * reserved far above it: cached blocks the allocator could not reuse */
		if (x->res_at_peak_alloc > 0 && x->capacity > 0 &&
		    x->res_at_peak_alloc * 2 > x->capacity &&
		    x->res_at_peak_alloc - x->peak_alloc > x->res_at_peak_alloc * 3 / 10 &&
		    x->res_at_peak_alloc - x->peak_alloc >= (1ll << 30)) {
			struct td_finding *f = td_report_add(r, "memory", x->device);
			int64_t gap = x->res_at_peak_alloc - x->peak_alloc;
			f->risk = 1;
			f->severity = SEV_LOW;
			f->count = 1;
			td_finding_value(f, "reserved_bytes", x->res_at_peak_alloc);
			td_finding_value(f, "allocated_bytes", x->peak_alloc);
			td_finding_title(f, "GPU %d reserves %s at the peak of allocated memory, %s (%s "
					 "cached and unused): fragmentation", x->device,
					 td_fmt_bytes(b1, sizeof(b1), (double)x->res_at_peak_alloc),
					 td_fmt_bytes(b2, sizeof(b2), (double)x->peak_alloc),
					 td_fmt_bytes(b3, sizeof(b3), (double)gap));
			td_finding_evidence(f, x->peak_alloc_ts, 0, "allocated %s, reserved %s",
					    td_fmt_bytes(b1, sizeof(b1), (double)x->peak_alloc),
					    td_fmt_bytes(b2, sizeof(b2), (double)x->res_at_peak_alloc));
			td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_MEM_FRAG, -1, NULL, fix,
							    sizeof(fix)));
		}
	}
	td_mem_devs_free(d, n);
}

const struct td_rule rule_memory = {
	.id = "memory",
	.title = "Memory close to the device's capacity, growing every step, or fragmented",
	.run = run,
};
