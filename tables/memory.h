/* SPDX-License-Identifier: MIT */
/* `tracedoc memory`: device memory from a trace's [memory] samples (rules/memcurve.h: peaks,
 * what ran at the peak, capacity and headroom, allocated at each step boundary, the curve
 * downsampled for a picture), or from a CUDA caching-allocator snapshot
 * (torch.cuda.memory._snapshot() saved as JSON: tables/snapshot.h). Library code: never
 * prints. */
#ifndef TD_TABLES_MEMORY_H
#define TD_TABLES_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"
#include "analysis/memcurve.h"

#define TD_MEM_POINTS 120 /* points of the downsampled curve */

struct td_mem_point {
	int64_t ts, allocated, reserved; /* the largest in its slice of time; -1 unknown */
};

struct td_mem_view {
	struct td_mem_dev d;
	char *peak_op, *peak_frame;  /* marked name, frame label ("" when unknown) */
	int64_t peak_step;           /* ProfilerStep# number, -1 */
	struct td_mem_point pts[TD_MEM_POINTS];
	size_t npts;
	int64_t *step_number;        /* the ProfilerStep# number of each steady step */
};

struct td_mem_report {
	struct td_mem_view *dev;
	size_t n;
	int64_t start, end;          /* the samples' span */
	size_t samples;
};

void td_mem_report(const struct td_analysis *a, struct td_mem_report *out);
void td_mem_report_free(struct td_mem_report *r);

#endif
