/* SPDX-License-Identifier: MIT */
/* The rules' parameters in one place: the config reads them from a file, the analysis and the
 * rules read them from there; neither knows the other for it. */
#ifndef TD_RULES_PARAMS_H
#define TD_RULES_PARAMS_H

#include <stdint.h>

/* Rule thresholds; td_params_default() documents the defaults. */
struct td_params {
	int64_t small_kernel_ns;     /* a kernel shorter than this is small (10 us) */
	int small_run_min;           /* back-to-back small kernels that make a run (3) */
	int element_loop_min;        /* iterations of a per-element Python loop (64) */
	int64_t small_run_gap_ns;    /* max gap between kernels of a run (20 us) */
	double dataloader_share;     /* flag a DataLoader from this share of step time (0.05) */
	int64_t dataloader_residual_ns; /* fetching a batch from workers costs at least this (50 us) */
	double sev_high, sev_medium, sev_low; /* savings fractions for severities (.10 .03 .01) */
	int64_t launch_delay_ns;     /* longer launch-to-start waits are dependencies (100 us) */
	int64_t queued_gap_ns;       /* longer gaps behind an already queued op are waits (30 us) */
	int64_t gap_report_ns;       /* list gaps from this length as evidence (50 us) */
	int evidence_max;            /* evidence items per finding (5) */
	double low_util;             /* a low-utilization window is below this busy share (0.5) */
	int util_chunks;             /* the window is cut into this many chunks for it (30) */
	double warmup_step_ratio;    /* a leading step this many times the median is warm-up (3) */
	double memory_high_fraction; /* peak reserved above this share of the device is a risk (.9) */
	double gpu_bound_busy;       /* a GPU busy this share of the window is the bottleneck (.85) */
	double precision_share;      /* FP32 GEMMs this share of a GPU's compute or more (.25) */
};
void td_params_default(struct td_params *p);

#endif
