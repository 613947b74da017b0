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
