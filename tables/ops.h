/* SPDX-License-Identifier: MIT */
/* The operator table of a trace, as prof.key_averages() prints it, from the saved file: a row
 * per CPU op and user annotation name (or name and input shapes, or name and call site).
 *   children: the ops nested in an op on its thread (Python frames between them skipped);
 *   self CPU: an op's duration minus its direct children's;
 *   a runtime call belongs to its innermost enclosing op, a GPU op (kernel, memcpy, memset) to
 *   the runtime call that launched it (correlation);
 *   CUDA total: the GPU ops launched anywhere inside an op; self CUDA: those it launched
 *   directly. Percentages are of the sum over all rows of the self column (so they sum to 100%).
 * ProfilerStep#N annotations are one row, "ProfilerStep*", as key_averages shows them.
 * Library code: never prints. */
#ifndef TD_TABLES_OPS_H
#define TD_TABLES_OPS_H

#include "rules/analysis.h"
#include "tables/table.h"

enum td_group_by { TD_GROUP_NAME, TD_GROUP_SHAPE, TD_GROUP_STACK };

struct td_ops_opts {
	int window_all;            /* 0: the steady-state steps when the trace has them */
	enum td_group_by group;
};

/* The columns, key_averages' names and order; "name" first. */
extern const struct td_col td_ops_cols[];
extern const size_t td_ops_ncols;

/* Fills out (td_table_init'ed here) with one row per group, unsorted. */
void td_ops_table(const struct td_analysis *a, const struct td_ops_opts *o, struct td_table *out);
/* The innermost CPU op or user annotation enclosing host event ev (not ev itself), or
 * TD_NONE. */
uint32_t td_op_parent(const struct td_trace *t, uint32_t ev);
/* The window an ops or kernels table covers: [*from, *to) and its name ("steps" or "all"). */
const char *td_table_window(const struct td_analysis *a, int window_all, int64_t *from,
			    int64_t *to);

#endif
