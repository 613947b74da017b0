/* SPDX-License-Identifier: MIT */
/* Memory over time from a trace's [memory] samples (profile_memory=True), per device: the
 * allocated curve ("Total Allocated"; a legacy trace that carries only each allocation's
 * "Bytes" gets it summed from them), the reserved curve ("Total Reserved"), their peaks and
 * what ran at the peak (op, Python frame, step), the capacity (deviceProperties'
 * totalGlobalMem) and the allocated memory at each steady-state step boundary. Shared by the
 * memory rule and `tracedoc memory`. Library code: never prints. */
#ifndef TD_RULES_MEMCURVE_H
#define TD_RULES_MEMCURVE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/analysis.h"

struct td_mem_dev {
	int32_t device;            /* -1: host memory */
	size_t nsamples;
	int summed;                /* allocated summed from Bytes (no Total Allocated) */
	int has_reserved;
	int64_t capacity;          /* bytes, 0 when the trace does not say */
	int64_t peak_alloc, peak_alloc_ts, res_at_peak_alloc; /* -1: not recorded */
	uint32_t peak_alloc_op;    /* the op running at the peak (event index), TD_NONE */
	int64_t peak_res, peak_res_ts, alloc_at_peak_res;
	int64_t first_alloc, last_alloc;
	int64_t *step_alloc;       /* allocated at the start of each steady step, then at the
				    * end of the last: nsteps + 1 values, -1 where unknown */
	size_t nstep;              /* steady steps (step_alloc has nstep + 1) */
	uint32_t *sample;          /* with the curve: indices into t->mem of this device's
				    * samples, in order; else NULL */
	int64_t *alloc;            /* with the curve: the allocated curve at each of them */
};

/* The devices with [memory] samples (GPU devices by id, then the host), into *out (free with
 * td_mem_devs_free), with each one's curve (sample, alloc) when `curve` is set: 12 bytes a
 * sample, which a peak and the step boundaries do without. Returns how many. */
size_t td_mem_devs(const struct td_analysis *a, struct td_mem_dev **out, int curve);
void td_mem_devs_free(struct td_mem_dev *d, size_t n);
/* The innermost CPU op or annotation running on CPU track `track` at ts, or TD_NONE. */
uint32_t td_an_op_at(const struct td_trace *t, uint32_t track, int64_t ts);
/* The ProfilerStep#N number whose span holds ts, or -1. */
int64_t td_trace_step_at(const struct td_trace *t, int64_t ts);

#endif
