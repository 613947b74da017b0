/* SPDX-License-Identifier: MIT */
#include "config/params.h"

void td_params_default(struct td_params *p)
{
	p->small_kernel_ns = 10000;
	p->small_run_min = 3;
	p->element_loop_min = 64;
	p->small_run_gap_ns = 20000;
	p->dataloader_share = 0.05;
	p->dataloader_residual_ns = 50000;
	p->sev_high = 0.10;
	p->sev_medium = 0.03;
	p->sev_low = 0.01;
	p->launch_delay_ns = 100000;
	p->queued_gap_ns = 30000;
	p->gap_report_ns = 50000;
	p->evidence_max = 5;
	p->low_util = 0.5;
	p->util_chunks = 30;
	p->warmup_step_ratio = 3.0;
	p->memory_high_fraction = 0.9;
	p->gpu_bound_busy = 0.85;
	p->precision_share = 0.25;
}
