/* SPDX-License-Identifier: MIT */
/* One accounting of where each device's idle time went, computed once and shared by every rule.
 *
 * Per device, the steady-state window is the span of the ProfilerStep# steps when the trace
 * has them, else first to last GPU op. Idle time is window time with no kernel, memcpy or
 * memset running. Each idle gap is attributed to what the host thread that launched the op
 * ending the gap was doing at each moment of it, so the breakdown sums exactly to the idle
 * total. Ownership: everything here belongs to the td_analysis; td_analysis_free() frees it. */
#ifndef TD_RULES_ANALYSIS_H
#define TD_RULES_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/vec.h"
#include "parser/trace.h"
#include "rules/names.h"

enum td_cause {
	CAUSE_DATALOADER, /* inside enumerate(DataLoader)#... */
	CAUSE_SYNC,       /* blocked in a synchronizing call */
	CAUSE_TRANSFER,   /* blocked in a memcpy call */
	CAUSE_ALLOC,      /* in cudaMalloc / cudaFree / hipFree ... */
	CAUSE_LAUNCH,     /* in a launch or other runtime call, or launch latency */
	CAUSE_DEPENDENCY, /* the op was queued long before: waiting on another stream / event */
	CAUSE_HOST,       /* a CPU op or Python frame, or untraced host time inside a step */
	CAUSE_NOTHING,    /* the host recorded nothing */
	CAUSE_COUNT
};
/* The CAUSE_LAUNCH label of gaps between ops already queued on one stream: GPU-side launch
 * overhead, with the host ahead of the GPU. */
#define TD_LABEL_QUEUED_GAP "gap between ops queued on one stream"
const char *td_cause_id(enum td_cause c);    /* "dataloader", "sync", ... */
const char *td_cause_title(enum td_cause c); /* "data loading", ... */

/* Rule thresholds; td_params_default() documents the defaults. */
struct td_params {
	int64_t small_kernel_ns;     /* a kernel shorter than this is small (10 us) */
	int small_run_min;           /* back-to-back small kernels that make a run (3) */
	int64_t small_run_gap_ns;    /* max gap between kernels of a run (20 us) */
	double dataloader_share;     /* flag a DataLoader from this share of step time (0.05) */
	double sev_high, sev_medium, sev_low; /* savings fractions for severities (.10 .03 .01) */
	int64_t launch_delay_ns;     /* longer launch-to-start waits are dependencies (100 us) */
	int64_t gap_report_ns;       /* list gaps from this length as evidence (50 us) */
	int evidence_max;            /* evidence items per finding (5) */
	double low_util;             /* a low-utilization window is below this busy share (0.5) */
	int util_chunks;             /* the window is cut into this many chunks for it (30) */
};
void td_params_default(struct td_params *p);

struct td_analysis;

struct td_idle_item {
	uint8_t cause;
	uint32_t what;     /* label id in td_analysis.labels, 0 = none */
	int64_t ns;
	uint64_t segments;
};

struct td_gap {
	int64_t start, end;
	uint8_t cause;     /* the cause with the largest share of this gap */
	uint32_t what;
	uint32_t next_op;  /* GPU op that ends the gap, TD_NONE at the window end */
};

struct td_dev_analysis {
	int32_t device;
	int64_t win_start, win_end;
	struct td_interval *busy;
	size_t nbusy;
	int64_t busy_ns, idle_ns;
	struct td_gap *gaps;
	size_t ngaps;
	struct td_vec idle;         /* struct td_idle_item, largest first */
	int64_t idle_by_cause[CAUSE_COUNT];
	uint32_t host_track;        /* the thread that launches most of this device's work */
	uint64_t ops_in_window;
	int64_t run_gap_ns;         /* device idle inside runs of small kernels */
	uint64_t small_kernels, kernels;
};

/* A run of back-to-back small kernels on one stream. */
struct td_small_run {
	uint32_t first, last;       /* event indices (same track) */
	uint32_t n;                 /* small kernels in the run */
	int64_t start, end;
	int64_t idle_ns;            /* device idle between its kernels */
};
typedef void (*td_run_fn)(void *ctx, const struct td_small_run *run);
/* Calls fn for each run of at least params.small_run_min small kernels on device index d. A
 * kernel is small when shorter than params.small_kernel_ns or than its launch call. */
void td_an_small_runs(const struct td_analysis *a, size_t d, td_run_fn fn, void *ctx);
int td_an_is_small(const struct td_analysis *a, uint32_t kernel);

struct td_config;

struct td_analysis {
	const struct td_trace *t;
	struct td_params params;
	struct td_config *cfg;      /* patterns and suppressions (may be NULL) */
	struct td_strtab labels;    /* strings the analysis composes ("aten::item <- ...") */
	uint32_t *name_class;       /* NC_* per trace name id */
	uint8_t *skip_name;         /* per name id: ignored by the config (NULL when none) */
	int has_python;             /* python_function events exist (with_stack) */
	int has_steps;
	struct td_interval *steps;  /* ProfilerStep# (or configured marker) spans, by start */
	size_t nsteps;
	int64_t steps_start, steps_end;
	struct td_dev_analysis *dev; /* devices with GPU ops, by id */
	size_t ndev;
};

/* Analyses a finalized trace with cfg's thresholds and patterns (NULL: the defaults). */
void td_analysis_run(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg);
/* Median step duration (lower median), 0 without steps. */
int64_t td_an_median_step(const struct td_analysis *a);
void td_analysis_free(struct td_analysis *a);

static inline uint32_t td_an_class(const struct td_analysis *a, uint32_t name)
{
	return a->name_class[name];
}
/* The call site of a host event: the innermost user Python frame when the trace has Python
 * frames, else the chain of public CPU ops above it ("aten::item <- aten::is_nonzero"), else
 * the event's own name. Returns a label id. */
uint32_t td_an_site(struct td_analysis *a, uint32_t ev);
/* 1 when host event ev is a data-loading span not inside another one (so time is counted
 * once even when loaders nest, e.g. a DataPipe under a DataLoader). */
int td_an_outer_dataloader(const struct td_analysis *a, uint32_t ev);
/* Idle time (ns) attributed to (cause, what) on device index d. */
int64_t td_an_idle_of(const struct td_analysis *a, size_t d, enum td_cause c, uint32_t what);
/* Busy time of device index d within [from, to). */
int64_t td_an_busy_between(const struct td_analysis *a, size_t d, int64_t from, int64_t to);
static inline const char *td_an_label(const struct td_analysis *a, uint32_t id)
{
	return td_strtab_str(&a->labels, id);
}

#endif
