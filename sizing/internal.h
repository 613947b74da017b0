/* SPDX-License-Identifier: MIT */
/* Inside sizing/: the replay's graph and windows (graph.c), the second thread that replays
 * fixes while the rules run (thread.c), and the sizing that asks them (whatif.c). Not for
 * rules. */
#ifndef TD_RULES_WHATIF_INT_H
#define TD_RULES_WHATIF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "sizing/whatif.h"

/* What a sizing replay applies: a fix's edits alone, after the DataLoader's fix, or its
 * mechanism removed (the bound). */
enum { T_ALONE, T_BOTH, T_BOUND };

/* The graph of a's trace into w, from the names' classes alone; w->built when it can be
 * replayed. */
void td_whatif_build(const struct td_analysis *a, struct td_whatif *w);
/* The thread the steps are measured on: the one with the ProfilerStep# spans when the graph
 * has its calls, else the one that launches most of device index d's work. */
uint32_t td_whatif_step_track(const struct td_analysis *a, size_t d);
/* How long device index d is busy in its steady-state window in the replay r (NULL: as
 * recorded). */
int64_t td_whatif_busy(struct td_analysis *a, size_t d, const struct td_rp_times *r);
/* Device index d's steady-state window in the replay r (NULL: as recorded). */
int64_t td_whatif_win(struct td_analysis *a, size_t d, const struct td_rp_times *r);
/* The window of device index d replayed with pre's edits, then edits', into r (reused as
 * td_replay_again does); -1 when nothing can be replayed (whatif.c). *busy (NULL: not asked)
 * gets how long the device is busy in it. */
typedef int64_t td_whatif_replay_fn(struct td_analysis *a, size_t d, const struct td_rp_edit *pre,
				    size_t npre, const struct td_rp_edit *edits, size_t nedits,
				    struct td_rp_times *r, int64_t *busy);
td_whatif_replay_fn td_whatif_window_in;
/* How many of `tasks` replays may run at once on `jobs` threads within the memory budget. */
int td_whatif_replays_at_once(const struct td_analysis *a, int jobs, size_t tasks);

/* A device whose GPU runs behind its host (lag.c): queued work from before the window keeps it
 * busy at the start, its steps take longer than the host's, and the host does not wait on it. */
struct td_lag {
	int on;
	int64_t gpu_step;   /* the GPU's period: its steps' spans after the first (the backlog's) */
	int64_t host_step;  /* the host's median step */
	int64_t backlog;    /* how long the work queued before the window holds the GPU */
	double behind;      /* the backlog in the GPU's steps */
};
/* Fills l for device index d; 1 when its GPU runs behind the host. */
int td_whatif_lag(struct td_analysis *a, size_t d, struct td_lag *l);
/* A saving on a lagging device, capped at what the steady-state step wins: the GPU's period
 * less the `removed` GPU time (over the window's steps) down to the host's step; a where line
 * on f says so where it caps. */
int64_t td_whatif_lag_cap(struct td_analysis *a, const struct td_lag *l, struct td_finding *f,
			  int64_t saving, int64_t removed);

/* The second thread: 0 when it started (it builds w's graph and replays the trace as
 * recorded, then replays what td_wq_submit() hands it through `replay`: the sizing's
 * td_whatif_window_in(), handed down so that the thread needs nothing above it). */
int td_wq_start(struct td_analysis *a, td_whatif_replay_fn *replay);
/* Waits until the thread has built the graph and its baseline. */
void td_wq_built(struct td_whatif *w);
/* A replay for the thread: a copy of the edits is kept. */
void td_wq_submit(struct td_analysis *a, int kind, int device, const struct td_rp_edit *edits,
		  size_t nedits);
/* The DataLoader's fix, where the loop waits for its workers (the first one only): each fix
 * on its device, stated before or after, is also replayed after it (T_BOTH). */
void td_wq_loader(struct td_analysis *a, int device, const struct td_rp_edit *edits,
		  size_t nedits);
/* No more replays for the thread's queue. Returns 1 when the thread keeps going beside the
 * caller's (the memory budget holds two replays): the caller then states what else it replays
 * (td_wq_share(), NULL: nothing), may help with the queue (td_wq_help()), and joins it
 * (td_wq_join()); 0 when the thread has ended. */
int td_wq_close(struct td_analysis *a);
/* Whether the queue holds a replay with this kind, device and edits (done or not: every one
 * is done once the thread is joined). */
int td_wq_pending(struct td_whatif *w, int kind, int device, const struct td_rp_edit *pre,
		  size_t npre, const struct td_rp_edit *edits, size_t nedits);
/* What the thread runs once its queue is empty: pool(arg, its replay buffers). */
void td_wq_share(struct td_analysis *a, void (*pool)(void *arg, struct td_rp_times *r),
		 void *arg);
/* Runs the queue's replays not yet begun on the caller's thread, into r. */
void td_wq_help(struct td_analysis *a, struct td_rp_times *r);
/* Waits for the thread to end. */
void td_wq_join(struct td_analysis *a);
/* The window a replay with this kind, device and edits (pre's, then edits': T_BOTH's loader
 * fix first, as the thread joins them) gave (closed first), 1; else 0. */
int td_wq_result(const struct td_whatif *w, int kind, int device, const struct td_rp_edit *pre,
		 size_t npre, const struct td_rp_edit *edits, size_t nedits, int64_t *win,
		 int64_t *busy);
/* Ends the thread if it runs and frees what it holds. */
void td_wq_free(struct td_whatif *w);

#endif
