/* SPDX-License-Identifier: MIT */
/* The profiler's own cost in a host-bound finding's saving: Python frames recorded with
 * stacks, at an assumed cost each (analysis/profcost.c). Library code: never prints. */
#ifndef TD_ANALYSIS_PROFCOST_H
#define TD_ANALYSIS_PROFCOST_H

#include "analysis/analysis.h"
#include "analysis/finding.h"

/* Each sized finding of r that claims host time, where the Python frames of the window at an
 * assumed 1 us each are 10% of its saving or more, gets a where line saying so. */
void td_an_profiler_caveats(const struct td_analysis *a, struct td_report *r);

#endif
