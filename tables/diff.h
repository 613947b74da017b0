/* SPDX-License-Identifier: MIT */
/* Two traces of one program, before (BASE) and after (CURRENT) a change, per step: the step
 * time and GPU busy time, every op (self CPU) and GPU op name (total time) with its time and
 * calls on each side, the change, and the names only one side has; the idle causes side by
 * side; and the few rows that make up most of the step-time change. Library code: never
 * prints. */
#ifndef TD_TABLES_DIFF_H
#define TD_TABLES_DIFF_H

#include "analysis/analysis.h"
#include "tables/table.h"

#define TD_DIFF_WHY 5

/* one phase of a serving run on one device: its iterations, their median, the device's busy
 * time and exposed collective time per iteration */
struct td_diff_phase {
	int32_t device;
	enum td_phase phase;
	size_t iters;
	int64_t median_ns, busy_ns_per_iter, comm_exposed_ns_per_iter;
};

struct td_diff_side {
	size_t steps;              /* steady-state steps; 0: the window is the unit */
	int64_t step_median_ns, window_ns, busy_ns_per_step;
	int64_t idle_ns_per_step[CAUSE_COUNT];
	struct td_diff_phase *phases; /* a serving run's phases on every device with work in
				       * them (the first device always), by (device, phase) */
	size_t nphases;
};

struct td_diff {
	struct td_diff_side base, cur;
	struct td_table rows;      /* kind, name, base/current per step, change, calls, status;
				    * by the size of the change */
	size_t why[TD_DIFF_WHY];   /* rows that make up most of the step-time change */
	size_t nwhy;
	int64_t why_ns;            /* what they add up to */
};

extern const struct td_col td_diff_cols[];
extern const size_t td_diff_ncols;

void td_diff_build(struct td_analysis *base, struct td_analysis *cur, struct td_diff *out);
void td_diff_free(struct td_diff *d);

#endif
