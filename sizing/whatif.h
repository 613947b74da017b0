/* SPDX-License-Identifier: MIT */
/* What a fix wins, replayed (replay/replay.h): the analysis's replay graph, built on first use
 * with the runtime calls' roles from their name classes, and the steady-state window of a
 * device replayed as recorded and with a fix's edits. Rules ask it; it knows no rule. */
#ifndef TD_RULES_WHATIF_H
#define TD_RULES_WHATIF_H

#include <stddef.h>
#include <stdint.h>

#include "replay/replay.h"
#include "analysis/analysis.h"

struct td_wq;
struct td_finding;

struct td_whatif {
	struct td_replay g;
	int64_t *base_win;          /* per device index: its window replayed as recorded, the
				     * unexplained delays kept (sizing) */
	int64_t *base_busy;         /* ... and how long the device is busy in it */
	int64_t *base_steps;        /* the steady-state steps' starts and ends replayed so, on
				     * the main device's thread */
	int base_done;              /* base_win and base_steps are there */
	int ok;                     /* built: a graph with host calls and GPU ops */
	int64_t launch_cost;        /* median duration of a kernel launch call: what a fix that
				     * replaces host work with one launch costs */
	uint8_t *copy_on_compute;   /* bit per host node: a copy call whose copy runs on a stream
				     * that runs kernels (it waits for the compute queued there) */
	uint8_t *on_device;         /* bit per host node: a copy or memset call that does not wait
				     * and moves nothing over the host link (device to device): a
				     * CUDA graph captures it as it does a launch */
	/* made while the analysis runs (td_whatif_start) */
	struct td_wq *wq;           /* the second thread (rules/whatif_thread.c), when it runs */
	int built;                  /* g has host calls and GPU ops to replay */
	int finished;               /* td_an_whatif() has completed it (ok says how) */
	int base_rc;                /* 1: base_r holds the builder's replay as recorded, -1: failed */
	struct td_rp_times base_r;
};

/* The graph's index (g.dev) of device index d in a->dev. */
size_t td_whatif_dev_index(const struct td_analysis *a, size_t d);
/* The graph and its baseline replay (NULL when the trace has nothing to replay). */
const struct td_whatif *td_an_whatif(struct td_analysis *a);
/* td_analysis_run() (analysis/analysis.h) for a caller that sizes findings by replaying them
 * (td_diagnose()) on `jobs` threads: with more than one, the replay's graph is built, and the
 * trace replayed as recorded, on a thread of its own while the analysis runs. */
void td_analysis_run_jobs(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg,
			  int jobs);
/* Starts the analysis's second thread: it builds the graph and replays the trace as recorded
 * from what the analysis knows once the names are classified (td_an_whatif() waits for it),
 * then replays each fix td_whatif_early() hands it while the rules go on. */
void td_whatif_start(struct td_analysis *a);
/* A finding its rule has just stated: with the second thread, its fix's replay (or its
 * bound's) begins there; td_whatif_size() takes the result if the edits are still the same. */
void td_whatif_early(struct td_analysis *a, const struct td_finding *f);
/* The steady-state window of device index d (its host thread, from host_start to host_end, and
 * the GPU work launched in it), replayed with the edits; -1 when nothing can be replayed. */
int64_t td_whatif_window(struct td_analysis *a, size_t d, const struct td_rp_edit *edits,
			 size_t nedits);
/* Where the GPU events evs[0..n) start (collectives, for the job view's replay across ranks)
 * when device index d's trace is replayed with pre's edits, then edits' (a fix that comes
 * first, then the fix; NULL, 0 for none): out[i], less where the start of d's steady-state
 * window on its host thread lands (the difference of two such is how far a fix moves the event
 * into the window); TD_SHIFT_NONE for an event outside that window or not in the graph.
 * Returns 0, or -1 when nothing can be replayed. */
#define TD_SHIFT_NONE INT64_MIN
int td_whatif_starts(struct td_analysis *a, size_t d, const struct td_rp_edit *pre, size_t npre,
		     const struct td_rp_edit *edits, size_t nedits, const uint32_t *evs, size_t n,
		     int64_t *out);
/* The window as recorded, replayed (no edits), and as measured. */
int64_t td_whatif_base(struct td_analysis *a, size_t d);
int64_t td_whatif_measured(struct td_analysis *a, size_t d);
/* The fix of each unit in us[0..n) (rules/blocking.h) as f's edits: an upload on a compute
 * stream is also moved to a side stream (TD_RP_SIDE). */
struct td_block_unit;
struct td_finding;
void td_whatif_units(struct td_analysis *a, struct td_finding *f,
		     const struct td_block_unit *const *us, size_t n);
/* Whether host node k of w's graph is a copy or memset a graph captures (w->on_device). */
static inline int td_whatif_capturable(const struct td_whatif *w, uint32_t k)
{
	return (w->on_device[k >> 3] >> (k & 7)) & 1;
}
/* Whether f's fix moves copies to a side stream (its text should say so). */
int td_whatif_side_stream(const struct td_finding *f);
/* The replay of the trace as recorded against the trace: per steady-state step (its host
 * span) and over device index d's window, with the error and what the replay cannot explain. */
struct td_rp_step {
	int64_t number;             /* ProfilerStep#N, or the step's index without one */
	int64_t measured_ns, replayed_ns;
};
struct td_rp_report {
	size_t device;              /* index in a->dev */
	struct td_rp_step *steps;
	size_t nsteps;
	int64_t window_measured_ns, window_replayed_ns;
	double median_step_error;   /* median |replayed - measured| / measured over the steps */
	double window_error;        /* (replayed - measured) / measured */
	int64_t unexplained_ns;     /* the start delays the replay cannot explain */
};
/* Fills r (zeroed, nsteps 0, when nothing can be replayed); returns 0, or -1 when there is no
 * device or nothing to replay. td_rp_report_free() frees it. */
int td_whatif_report(struct td_analysis *a, struct td_rp_report *r);
void td_rp_report_free(struct td_rp_report *r);
/* The device index whose window the report and the trace's figures use: the one with the most
 * GPU ops in its window. */
size_t td_whatif_main_device(const struct td_analysis *a);

/* Sizes the findings fs[0..n) that state their fix as edits (td_finding.edits): replay_ns
 * and replayed set where the trace can be replayed, the replays run on up to `jobs` threads
 * (each holds its own replay: 10 bytes a node). */
void td_whatif_size(struct td_analysis *a, struct td_finding **fs, size_t n, int jobs);

/* Frees what td_an_whatif() built (td_analysis_free() calls it through a->detach). */
void td_whatif_free(struct td_analysis *a);

#endif
