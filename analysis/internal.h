/* SPDX-License-Identifier: MIT */
/* Internal to rules/: pieces of the accounting that live in their own files. */
#ifndef TD_RULES_INTERNAL_H
#define TD_RULES_INTERNAL_H

#include <stdint.h>

struct td_analysis;
struct td_dev_analysis;
struct td_event;

/* Span chains deeper than this are cut when walking up (real traces nest < 100 levels). */
#define MAX_CHAIN 256

/* Per device (attribution.c): the window, busy time, and every idle gap credited to a cause. */
void td_an_analyse_device(struct td_analysis *a, struct td_dev_analysis *d);
/* naming.c: an event's name as a label; 1 when x is an op a user would recognise (not an
 * internal op, a step or a DataLoader span). */
uint32_t td_an_ev_label(struct td_analysis *a, uint32_t ev);
int td_an_public_op(const struct td_analysis *a, const struct td_event *x);
/* td_an_mark() of a python_function name's frame label (td_frame_label()), made once. */
uint32_t td_an_frame_mark(struct td_analysis *a, uint32_t name);

/* Finds the runtime calls that do one-off start-up work (startup.c): fills a->warm_ev. */
void td_an_detect_warmup(struct td_analysis *a);
/* 1 when ev is a span holding a graph capture (a->capture_ev). */
int td_an_is_capture(const struct td_analysis *a, uint32_t ev);
/* The label of warm-up event ev: what kind of start-up work it is. */
uint32_t td_an_warm_label(struct td_analysis *a, uint32_t ev);

/* An op whose FLOPs are known: its thread and span (what starts in it on its thread is its). */
struct td_costed {
	uint32_t track;
	int64_t start, end;
};
/* mfu.c, for td_an_mfu over [ws, we): per event, 1 on the launch calls of TF32 kernels and
 * their ancestors (NULL: no TF32 kernel; the caller frees it); and the compute kernels' time
 * (*kernel_ns), the part of it launched under an op with known FLOPs (costed[0..n), by track
 * then start, none inside another) (*known_ns), and the part a graph launch replayed, no op
 * known (*graph_ns). */
uint8_t *td_an_tf32_ops(const struct td_analysis *a, int64_t ws, int64_t we);
void td_an_flops_cover(const struct td_analysis *a, int64_t ws, int64_t we,
		       const struct td_costed *costed, size_t n, int64_t *known_ns,
		       int64_t *kernel_ns, int64_t *graph_ns);

/* iterations.c: a serving engine's iteration frames (a->iter_ev, their names NC_STEP) where no
 * name is a step yet; the steps they make, into v (struct td_interval), by start; each steady
 * step's phase (a->step_phase). */
void td_an_engine_iters(struct td_analysis *a);
struct td_vec;
void td_an_iter_intervals(const struct td_analysis *a, struct td_vec *v);
void td_an_step_phases(struct td_analysis *a);
/* 1 when a serving run's steady steps are all prefill (a->step_phase): decode's advice (graphs,
 * more sequences a step) does not fit it */
int td_an_prefill_only(const struct td_analysis *a);
/* The median of the steps of step k's phase, 0 when fewer than 3 */
int64_t td_an_phase_median(const struct td_analysis *a, size_t k);

#endif
