/* SPDX-License-Identifier: MIT */
/* Python loops over a tensor's elements: `for i in range(n): total += t[i].cpu()`, `total +=
 * t[i]`, `for x in t: x.item()`. On the host they are one short sequence of top-level ops (no
 * CPU op above them) repeated many times in a row on one thread, each time touching one
 * element: an element access (select, item, _local_scalar_dense) or a wait for the GPU in
 * every iteration, and next to no GPU time per iteration. Their fix removes the loop (one
 * tensor op over the whole tensor), not the waits or the launches inside it one by one, so
 * sync-stall and small-kernels leave the waits and runs inside a loop to the element-loop rule.
 * Found once per analysis, which owns them. */
#ifndef TD_ANALYSIS_LOOPS_H
#define TD_ANALYSIS_LOOPS_H

#include <stddef.h>
#include <stdint.h>

struct td_analysis;
struct td_trace;

#define TD_LOOP_PERIOD_MAX 6 /* the most top-level ops one iteration may hold */

struct td_elem_loop {
	uint32_t track;          /* the host thread's track */
	uint32_t first, last;    /* its first and last top-level op (events) */
	int64_t start, end;      /* the first op's start to the last op's end */
	uint32_t iters, period;  /* iterations, top-level ops per iteration */
	uint32_t names[TD_LOOP_PERIOD_MAX]; /* one iteration's ops (trace name ids) */
	size_t dev;              /* device index */
	uint32_t site;           /* label: the user frame around it, else its first op's site */
	uint64_t syncs;          /* blocking units (analysis/blocking.h) inside it */
	uint64_t launches;       /* kernel launches inside it */
	int64_t blocked_ns;      /* time in those blocking units */
	int64_t gpu_busy_ns;     /* the device busy while it ran */
};

/* The element loops in each device's steady state (its host side), in trace order. Returns
 * the count. */
size_t td_an_elem_loops(struct td_analysis *a, const struct td_elem_loop **out);
/* 1 when event k is a top-level op: a CPU op with no CPU op above it (Python frames and
 * annotations may be). */
int td_an_top_op(const struct td_trace *t, uint32_t k);
/* 1 when op name n touches one element: an element's view or value read (aten::select,
 * aten::item, aten::_local_scalar_dense, aten::unbind). */
int td_an_element_op(const char *n);
/* 1 when host time ts on track lies inside an element loop. */
int td_an_in_elem_loop(struct td_analysis *a, uint32_t track, int64_t ts);

#endif
