/* SPDX-License-Identifier: MIT */
/* The critical path of each steady-state step: from the step's end on its host thread, back
 * through the replay graph's edges (replay/replay.h) to its start, each piece of time charged
 * to what held it - the host's own work (CPU/Python), a runtime call or launch latency, data
 * loading, GPU compute, communication, copies, waits, the delay between GPU ops. The pieces
 * are contiguous, so a step's shares add up to the step exactly. On the measured timeline (the
 * graph's edges pick the predecessor that let each piece start last). Library code: no
 * printing. */
#ifndef TD_SIZING_CRITPATH_H
#define TD_SIZING_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

#include "common/vec.h"

struct td_analysis;

enum td_cp_cat {
	TD_CP_CPU,     /* the host's own work: between runtime calls (CPU ops, Python), and in
			* calls that neither launch, copy nor wait (allocations, event records) */
	TD_CP_LAUNCH,  /* a kernel or graph launch call, or an op's lag after its launch */
	TD_CP_DATA,    /* host work inside a DataLoader's __next__ */
	TD_CP_COMPUTE, /* a GPU kernel */
	TD_CP_COMM,    /* a collective kernel */
	TD_CP_COPY,    /* a GPU memcpy / memset, or the host waiting for its own copy */
	TD_CP_WAIT,    /* the host waiting on the GPU: a sync's tail after the op it waited for
			* ended (the op itself is on the path), or a sync that waited for nothing */
	TD_CP_DELAY,   /* the gap between GPU ops: after the op before on its stream or another */
	TD_CP_NCAT
};
const char *td_cp_cat_name(enum td_cp_cat c); /* "cpu", "launch", "data_loading", ... */

/* One piece of a path: [start, start + dur) charged to cat; ev: the event that holds it (a
 * GPU op, a runtime call) or, for host work between calls, the user op around the call after
 * it; TD_NONE when none. */
struct td_cp_seg {
	int64_t start, dur;
	uint32_t ev, cat, step, pad;
};

struct td_cp_step {
	int64_t number;            /* ProfilerStep#N, or the step's index (the window: -1) */
	int64_t start, end;        /* its host span */
	int64_t by[TD_CP_NCAT];    /* the path's time by category: they add up to end - start */
};

struct td_critpath {
	size_t device;             /* index in a->dev whose window the steps are */
	struct td_cp_step *steps;
	size_t nsteps;
	int64_t total[TD_CP_NCAT]; /* over the steps */
	enum td_cp_cat dominant;   /* the category with the most time */
	struct td_vec segs;        /* struct td_cp_seg: every piece, step by step, in time order */
	uint32_t *top;             /* indices in segs, longest first */
	size_t ntop;
};

/* The path of a's steady-state steps (the window when the trace has no steps) on its main
 * device. Returns 0, or -1 when there is nothing to replay (cp zeroed). */
#define TD_CP_TOP 10
int td_critpath(struct td_analysis *a, struct td_critpath *cp);
void td_critpath_free(struct td_critpath *cp);
/* The time of cp's path (its pieces, per category into by[TD_CP_NCAT] when by is not NULL)
 * inside the union of iv[0..n) (reordered and merged here): how much of the path a finding's
 * evidence covers - what its fix can shorten. */
struct td_interval;
int64_t td_critpath_within(const struct td_critpath *cp, struct td_interval *iv, size_t n,
			   int64_t *by);

#endif
