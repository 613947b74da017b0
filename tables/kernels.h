/* SPDX-License-Identifier: MIT */
/* The kernel table of a trace: a row per GPU op name (kernels, copies, memsets) with its
 * category (compute, communication, memcpy and its direction, memset), calls, total, average,
 * shortest and longest, its share of the GPU busy time, and the op that launched most of them.
 * Library code: never prints. */
#ifndef TD_TABLES_KERNELS_H
#define TD_TABLES_KERNELS_H

#include "analysis/analysis.h"
#include "tables/table.h"

extern const struct td_col td_kernel_cols[];
extern const size_t td_kernel_ncols;

/* Fills out (td_table_init'ed here), unsorted; window_all as for td_ops_table. */
void td_kernels_table(const struct td_analysis *a, int window_all, struct td_table *out);

#endif
