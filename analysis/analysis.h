/* SPDX-License-Identifier: MIT */
/* One accounting of where each device's idle time went, computed once and shared by every rule.
 *
 * The steady state: the ProfilerStep# steps when the trace has them, without leading warm-up
 * steps (a first step 3x the median or longer), else first to last GPU op. On the host it is
 * the steps' span; on each device it runs on to the end of the GPU work launched inside it.
 * Idle time is window time with no kernel, memcpy or memset running on the device. Each idle
 * nanosecond gets one cause, from what held back the op that ends the gap: what the thread
 * that launched it was doing (or the process's other threads, when that one recorded nothing),
 * or, once the op was queued, what it waited for. So the breakdown sums exactly to the idle
 * total, and the pieces (segments) say which cause holds which nanoseconds.
 *
 * Findings claim idle nanoseconds (td_claims_*): a nanosecond claimed by one finding cannot be
 * claimed by another, so the findings' GPU savings never add up to more than the idle time.
 * Ownership: everything here belongs to the td_analysis; td_analysis_free() frees it. */
#ifndef TD_RULES_ANALYSIS_H
#define TD_RULES_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/vec.h"
#include "fixes/context.h"
#include "parser/trace.h"
#include "analysis/check.h"
#include "analysis/names.h"
#include "config/params.h"
#include "config/peaks.h"

enum td_cause {
	CAUSE_DATALOADER, /* inside enumerate(DataLoader)#... */
	CAUSE_WARMUP,     /* one-off start-up work: context, lazy loading, compilation */
	CAUSE_SYNC,       /* blocked in a synchronizing call */
	CAUSE_TRANSFER,   /* blocked in a memcpy call */
	CAUSE_ALLOC,      /* in cudaMalloc / cudaFree / hipFree ... */
	CAUSE_COMM,       /* a queued op waits on a collective on another stream */
	CAUSE_LAUNCH,     /* in a launch or other runtime call, launch latency, short queued gaps */
	CAUSE_DEPENDENCY, /* a queued op waited longer: another stream, an event, something untraced */
	CAUSE_HOST,       /* a CPU op or Python frame, or untraced host time inside a step */
	CAUSE_NOTHING,    /* the host recorded nothing */
	CAUSE_COUNT
};
/* The CAUSE_LAUNCH label of short gaps between ops already queued: device-side launch
 * overhead, with the host ahead of the GPU. */
#define TD_LABEL_QUEUED_GAP "gap between ops already queued (device-side launch overhead)"
/* what a queued op waited for when the trace holds no cause (analysis/attribution.c) */
#define TD_LABEL_UNSEEN_WAIT                                                                   \
	"queued op waited while the device was idle: a wait the trace does not show (another "  \
	"rank, a host callback, another process)"
/* the same in a run of one rank with no collective: no other rank to wait for */
#define TD_LABEL_UNSEEN_WAIT_ONE                                                               \
	"queued op waited while the device was idle: a wait the trace does not show (a host "   \
	"callback, the driver, another process on the GPU)"
#define TD_LABEL_GRAPH_WAIT                                                                    \
	"queued CUDA-graph work waited while the device was idle: the graph waits on something "  \
	"the trace does not show (an event or host node captured in it, or work outside it)"
const char *td_cause_id(enum td_cause c);    /* "dataloader", "sync", ... */
const char *td_cause_title(enum td_cause c); /* "data loading", ... */


struct td_analysis;

struct td_idle_item {
	uint8_t cause;
	uint32_t what;     /* label id in td_analysis.labels, 0 = none */
	int64_t ns;
	uint64_t segments;
};

/* A piece of idle time with one cause; a device's segments partition its idle time. */
struct td_seg {
	int64_t start, end;
	uint32_t what;
	uint8_t cause;
};

struct td_gap {
	int64_t start, end;
	uint8_t cause;     /* the cause with the largest share of this gap */
	int64_t cause_ns;  /* ... and its share */
	uint32_t what;
	uint32_t next_op;  /* GPU op that ends the gap, TD_NONE at the window end */
	uint32_t seg;      /* its first segment */
	uint32_t host;     /* the thread its host causes were read on: next_op's launcher, else
			    * the device's host_track (TD_NONE: none) */
};

/* A claimed piece of idle time and the finding (serial) that claimed it. */
struct td_claim {
	int64_t start, end;
	uint32_t owner;
};

struct td_dev_analysis {
	int32_t device;
	int64_t win_start, win_end;   /* the device's window (steady state) */
	int64_t host_start, host_end; /* the host side of it: steps as the host sees them */
	struct td_interval *busy;
	size_t nbusy;
	int64_t busy_ns, idle_ns;
	struct td_gap *gaps;
	size_t ngaps;
	struct td_seg *segs;
	size_t nsegs;
	struct td_vec claims;       /* struct td_claim, sorted and disjoint */
	struct td_vec idle;         /* struct td_idle_item, largest first */
	int64_t idle_by_cause[CAUSE_COUNT];
	uint32_t host_track;        /* the thread that launches most of this device's work */
	uint64_t ops_in_window;
	uint64_t small_kernels, kernels;
	uint64_t comm_kernels;      /* collective kernels that overlap the window */
	struct td_interval *gsteps; /* per step, the span of the GPU work it launched */
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
int td_an_is_small(const struct td_analysis *a, uint32_t kernel); /* never a collective */

struct td_config;
struct td_block_unit;
struct td_elem_loop;

/* Where the steps come from when the trace has no ProfilerStep# (analysis/iterations.c): a
 * serving engine's own iterations. */
enum td_iter_src { TD_ITER_NONE, TD_ITER_VLLM, TD_ITER_SGLANG, TD_ITER_TRTLLM, TD_ITER_TGI,
		   TD_ITER_HF, TD_ITER_ANNOTATION, TD_ITER_OPTIMIZER };
/* What a serving iteration runs: new prompts (prefill), one token for each running request
 * (decode), or both in one batch. */
enum td_phase { TD_PHASE_NONE, TD_PHASE_PREFILL, TD_PHASE_DECODE, TD_PHASE_MIXED,
		TD_PHASE_COUNT };
const char *td_phase_name(enum td_phase p); /* "prefill", "decode", "mixed", "" */
const char *td_iter_src_name(enum td_iter_src s); /* "vLLM execute_model", ... */

/* A one-off finding (start-up, a wait on work from before the trace): its claims' owner, its
 * device, and the row its idle is told under (NULL: start-up work, CAUSE_WARMUP). */
struct td_oneoff {
	uint32_t serial;
	int32_t device;
	const char *row;
};

struct td_analysis {
	const struct td_trace *t;
	struct td_params params;
	struct td_config *cfg;      /* patterns and suppressions */
	struct td_config *own_cfg;  /* the defaults, when the caller gave none */
	struct td_strtab labels;    /* strings the analysis composes ("aten::item <- ...") */
	/* graph-replayed kernels to the ops that captured them (analysis/graphmap.h), set by the
	 * caller after td_analysis_run (--capture); NULL: none */
	const struct td_graph_map *gmap;
	uint32_t *name_class;       /* NC_* per trace name id */
	uint8_t *skip_name;         /* per name id: ignored by the config (NULL when none) */
	uint8_t *small;             /* a bit per event: a kernel in its device's window that
				     * td_an_is_small() (set by the attribution, read by the runs) */
	int has_python;             /* python_function events exist (with_stack) */
	int has_comm;               /* some name is a collective's (NC_COMM) */
	struct td_waits_dropped waits; /* what waits_dropped was read from (check.h), for
				     * tracedoc check's rule of it: read once */
	int waits_dropped;          /* the trace keeps only launch, copy and memset calls (100 or
				     * more, none else: a filter left the rest out): its event
				     * records, stream waits and synchronizations are gone, so what
				     * queued work and the host waited for cannot be read or replayed */
	int training;               /* backward or optimizer names: a training step */
	int serving;                /* an inference server (vLLM, SGLang frames), no training */
	struct td_context ctx;      /* what the run is (fixes/context.h) */
	struct td_peaks peaks;      /* the roof of the device with the most GPU ops
				     * (config/peaks.h), the config's --peaks over it */
	int has_steps;
	int steps_after_startup;    /* the steps are the ranges after those that name start-up
				     * (an NVTX trace with no range repeated at its top) */
	struct td_interval *steps;  /* steady-state steps (ProfilerStep# or configured), by start */
	size_t nsteps;
	int64_t steps_start, steps_end;
	enum td_iter_src iter_src;  /* the steps are an engine's iterations (TD_ITER_NONE: not) */
	uint32_t *iter_ev;          /* the engine's iteration frames, the steps' source */
	size_t niter_ev;
	uint8_t *step_phase;        /* per steady step its enum td_phase (NULL: none known) */
	int phase_by_shape;         /* the phases were read from batch sizes, not the engine */
	size_t warm_steps;          /* leading steps left out as warm-up */
	int64_t warm_start, warm_end; /* their span */
	uint32_t *warm_ev;          /* runtime calls doing one-off start-up work, and the spans
				     * that hold a graph capture, sorted */
	size_t nwarm_ev;
	uint32_t *capture_ev;       /* those spans: from a Begin- to an EndCapture, sorted */
	size_t ncapture;
	uint32_t *proc_tracks;      /* CPU tracks grouped by process (for other-thread lookups) */
	uint32_t *proc_of;          /* per track: index of its group's first entry in proc_tracks */
	uint32_t *proc_len;         /* per track: size of its group */
	struct td_dev_analysis *dev; /* devices with GPU ops, by id */
	size_t ndev;
	struct td_block_unit *block_units; /* rules/blocking.h, found on first use */
	size_t nblock;
	int block_done;
	struct td_elem_loop *loops; /* analysis/loops.h, found on first use */
	size_t nloops;
	int loops_done;
	struct td_oneoff *oneoffs;  /* the report's one-off findings, set by td_diagnose(): the
				     * idle they claim is told under them (td_an_oneoff_in) */
	size_t noneoffs;
	struct td_mfu *mfu;         /* analysis/roofline.h: td_an_mfu()'s, made on first use
				     * (the metrics and the report both ask) */
	struct td_whatif *whatif;   /* sizing/whatif.h: the replay, built on first use (or while
				     * the analysis runs: td_analysis_run_jobs) */
	void (*detach)(struct td_analysis *a); /* what frees whatif: the floor above that made
				     * it (sizing) sets it; td_analysis_free() calls it first, while
				     * what that floor's thread may read is still there */
	int jobs;                   /* threads the replays may run on (0, 1: the caller's only) */
	struct td_site_slot *site_cache; /* td_an_site()'s labels by the names they are made of */
	size_t site_cap, site_n;
};

/* Analyses a finalized trace with cfg's thresholds and patterns (NULL: the defaults); cfg
 * must outlive the analysis. */
void td_analysis_run(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg);
/* The same in two halves, for a caller that starts work once the names are classified
 * (sizing/whatif.h: td_analysis_run_jobs() builds the replay's graph on a thread of its own
 * meanwhile): td_analysis_begin() classifies the names and finds NVTX steps, recording that
 * the replays may run on `jobs` threads; td_analysis_finish() does the rest. */
void td_analysis_begin(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg,
		       int jobs);
void td_analysis_finish(struct td_analysis *a);
/* The steps diagnose would find in a trace by its names alone (the default configuration):
 * ProfilerStep#, else a serving engine's iterations (src says whose) or the outermost repeated
 * NVTX range of a trace the collector or nsys wrote; start-up ones included, the last
 * running to the end of its GPU work. Runs no attribution: what tracedoc stats reports. */
struct td_iter_summary {
	size_t count;
	int64_t median_ns;          /* 0 without steps */
	enum td_iter_src src;       /* TD_ITER_NONE: ProfilerStep# or an NVTX range */
};
void td_analysis_iterations(const struct td_trace *t, struct td_iter_summary *out);
/* Median steady-state step duration as the host sees it (the mean of the two middle steps for
 * an even count), 0 without steps; td_an_mean_step() the mean. */
int64_t td_an_median_step(const struct td_analysis *a);
int64_t td_an_mean_step(const struct td_analysis *a);
/* The window of device `device` (-1: the first) that a finding is measured against; the
 * steady-state steps' count. */
int64_t td_an_window_ns(const struct td_analysis *a, int32_t device);
size_t td_an_steps(const struct td_analysis *a);
/* Orders events ev[0..n) longest first, ties by event index (time order): how a finding's
 * evidence is listed. */
void td_an_longest_first(const struct td_trace *t, uint32_t *ev, size_t n);
/* Keeps the cap longest events seen in ev[0..n): e added while there is room, else in place of
 * the shortest when longer. Returns the new count. */
size_t td_an_keep_longest(const struct td_trace *t, uint32_t *ev, size_t n, size_t cap,
			  uint32_t e);
/* Device index d's compute kernels (not collectives, not ignored) that start in its window,
 * totalled by name, most time first (ties by name); *out malloc'd. Returns the count. */
struct td_kernel_total {
	uint32_t name;
	int64_t ns;
	uint64_t calls;
};
size_t td_an_kernel_totals(const struct td_analysis *a, size_t d, struct td_kernel_total **out);
void td_analysis_free(struct td_analysis *a);

/* One phase of a serving run's steady steps on device index d: its steps, their host time
 * (median, p90), the GPU side of them (gpu_ns), busy time there and its idle time by cause,
 * what graphs replayed there. */
struct td_phase_stat {
	enum td_phase phase;
	size_t count;
	int64_t median_ns, p90_ns;
	int64_t gpu_ns, busy_ns;
	int64_t idle_by_cause[CAUSE_COUNT];
	int64_t graph_ns;           /* GPU time of ops a graph launch replayed */
	uint64_t graph_launches;    /* cudaGraphLaunch / hipGraphLaunch calls in its steps */
	int64_t between_ns;         /* host time between consecutive graph launches of a step */
	uint64_t gaps;              /* ... over this many gaps */
	int64_t comm_ns;            /* GPU time of collective kernels (patterns.communication:
				     * NCCL, RCCL, the engines' custom all-reduce) in its steps */
	int64_t comm_exposed_ns;    /* ... of it with no compute kernel running on the device */
	uint32_t top_what;          /* the label that holds most of its idle time (0: none) */
	uint8_t top_cause;          /* ... its cause */
	int64_t top_what_ns;        /* ... and how much */
	int64_t oneoff_ns;          /* idle a one-off finding with a row of its own claims (a
				     * wait on work from before the trace), not in idle_by_cause
				     * (start-up's is there under CAUSE_WARMUP) */
	const char *oneoff_row;     /* ... that row's title */
};
/* Fills out[0..TD_PHASE_COUNT-1) with the phases present, in enum order; returns how many
 * (0 when the steps have no phases). */
size_t td_an_phase_stats(const struct td_analysis *a, size_t d, struct td_phase_stat *out);

static inline uint32_t td_an_class(const struct td_analysis *a, uint32_t name)
{
	return a->name_class[name];
}
/* 1 when host event ev does one-off start-up work (warm-up). */
int td_an_is_warm(const struct td_analysis *a, uint32_t ev);
/* The call site of a host event: the innermost user Python frame when the trace has Python
 * frames, else the chain of public CPU ops above it ("aten::item <- aten::is_nonzero"), else
 * the event's own name. Returns a label id. */
uint32_t td_an_site(struct td_analysis *a, uint32_t ev);
/* The innermost user Python frame around host event ev, from the python_function spans,
 * else from its "Call stack" arg (record_shapes / with_stack in older traces), as a label
 * ("train.py:42 step") in buf; "" when there is none. Returns buf. */
const char *td_an_user_frame(const struct td_analysis *a, uint32_t ev, char *buf, size_t cap);
/* The innermost public CPU op enclosing host event ev (the user's call), or ev itself. */
uint32_t td_an_user_op(const struct td_analysis *a, uint32_t ev);
/* 1 when host event ev is a data-loading span not inside another one (so time is counted
 * once even when loaders nest, e.g. a DataPipe under a DataLoader). */
int td_an_outer_dataloader(const struct td_analysis *a, uint32_t ev);
/* Idle time (ns) attributed to (cause, what) on device index d. */
int64_t td_an_idle_of(const struct td_analysis *a, size_t d, enum td_cause c, uint32_t what);
/* Busy time of device index d within [from, to). */
int64_t td_an_busy_between(const struct td_analysis *a, size_t d, int64_t from, int64_t to);
/* Index in a->dev of device id dev, or -1. */
int td_an_dev_index(const struct td_analysis *a, int32_t dev);
/* Index in a->dev of the device a host event belongs to: the device of the GPU op it launched
 * (op, when known), else the one its thread feeds most; 0 when unknown. */
size_t td_an_dev_of_host(const struct td_analysis *a, uint32_t ev, uint32_t op);
/* The steady step (index in a->steps) whose host span holds ts, or SIZE_MAX. */
size_t td_an_step_of(const struct td_analysis *a, int64_t ts);
/* 1 when host event ev lies in the steady state of device index d (its host side). */
static inline int td_an_in_host_window(const struct td_analysis *a, size_t d, int64_t ts)
{
	return ts >= a->dev[d].host_start && ts < a->dev[d].host_end;
}
/* 1 when host span [ts, end) overlaps it: a call begun before the window that runs into it */
static inline int td_an_meets_host_window(const struct td_analysis *a, size_t d, int64_t ts,
					  int64_t end)
{
	return ts < a->dev[d].host_end && end > a->dev[d].host_start;
}
static inline const char *td_an_label(const struct td_analysis *a, uint32_t id)
{
	return td_strtab_str(&a->labels, id);
}
uint32_t td_an_intern(struct td_analysis *a, const char *s);
/* The label of a name from the trace, marked as a name (common/fmt.h: TD_NAME_OPEN). */
uint32_t td_an_mark(struct td_analysis *a, const char *name);
/* The trace's name `name`, marked, for a finding's text (valid as long as the analysis). */
const char *td_an_name(struct td_analysis *a, uint32_t name);

/* --- claims ------------------------------------------------------------------------------ */

/* Candidate pieces of idle time one finding claims, committed together. */
struct td_claims {
	struct td_vec cand;
};
void td_claims_init(struct td_claims *c);
/* Adds [from, to): only the idle in it of `cause` (CAUSE_COUNT: of any cause). tag groups
 * candidates for per-tag totals (0..ntags-1). */
void td_claims_add(struct td_claims *c, int64_t from, int64_t to, int cause, uint32_t tag);
/* Claims for `owner` the candidates' idle on device index d that no finding claimed before
 * (a nanosecond in two candidates counts once, for the first). Adds each tag's newly claimed
 * ns to per_tag[tag] when per_tag is given; returns the total. Empties c. */
int64_t td_claims_commit(struct td_analysis *a, size_t d, struct td_claims *c, uint32_t owner,
			 int64_t *per_tag, size_t ntags);
void td_claims_free(struct td_claims *c);
/* Claims every idle segment of `cause` on device index d; returns the ns newly claimed. */
int64_t td_claim_cause(struct td_analysis *a, size_t d, enum td_cause cause, uint32_t owner);
/* Idle in [from, to) on device index d of the causes in cause_mask (1 << cause). */
int64_t td_an_idle_in(const struct td_analysis *a, size_t d, int64_t from, int64_t to,
		      unsigned cause_mask);
/* The claim holding time t on device index d, or NULL when no finding claimed it. */
const struct td_claim *td_an_claim_at(const struct td_analysis *a, size_t d, int64_t t);
/* Unclaimed idle in [from, to) on device index d. */
int64_t td_an_unclaimed(const struct td_analysis *a, size_t d, int64_t from, int64_t to);
/* The idle of device index d that `owner` claimed, by the cause it was filed under: by[c] +=. */
void td_an_claimed_by_cause(const struct td_analysis *a, size_t d, uint32_t owner, int64_t *by);
/* Calls fn for each unclaimed piece of each segment of device index d, in time order. */
typedef void (*td_piece_fn)(void *ctx, const struct td_seg *piece, size_t gap);
void td_an_unclaimed_pieces(const struct td_analysis *a, size_t d, td_piece_fn fn, void *ctx);
/* The idle in [from, to) of device index d that one-off findings (a->oneoffs) claim: those
 * told under start-up work (*startup_ns), and those with a row of their own (*row_ns, that
 * row in *row, left as it was when none). */
void td_an_oneoff_in(const struct td_analysis *a, size_t d, int64_t from, int64_t to,
		     int64_t *startup_ns, int64_t *row_ns, const char **row);
/* Device index d's idle by cause as the report tells it (the breakdown table): the idle a
 * one-off finding (a->oneoffs: start-up, a wait on work from before the trace) claims is
 * moved from the cause the accounting filed it under to that one-off - start-up work
 * (CAUSE_WARMUP), or by[CAUSE_COUNT] titled *title where the finding names its own row - so
 * the table and the findings agree. by has CAUSE_COUNT + 1 slots, added to; *title is left as
 * it was when no finding names a row. */
void td_an_idle_by_cause_told(const struct td_analysis *a, size_t d, int64_t *by,
			      const char **title);
/* The serial of the finding that claimed time ts on device index d, or UINT32_MAX. */
uint32_t td_an_owner_at(const struct td_analysis *a, size_t d, int64_t ts);

#endif
