/* SPDX-License-Identifier: MIT */
/* The operator table of a trace, as prof.key_averages() prints it, from the saved file: a row
 * per name (or name and input shapes, or name and call site) of the events key_averages has
 * rows for: CPU ops and user annotations (kind "op"), runtime calls (cudaLaunchKernel, ...:
 * "runtime") and GPU activities (kernels, memcpy, memset: "gpu").
 *   children: the row events nested in one on its thread (Python frames between them skipped,
 *   and the names key_averages leaves out: aten::is_leaf, aten::output_nr, ...);
 *   self CPU: an event's duration minus its direct children's, so a runtime call's time leaves
 *   the op that made it, as in PyTorch (with fold_runtime, runtime calls are no rows and their
 *   time stays in the op: tracedoc's earlier table);
 *   a GPU op belongs to the innermost op around the runtime call that launched it
 *   (correlation); CUDA total: the GPU ops launched anywhere inside an op; self CUDA: those it
 *   launched directly; a GPU row's self and total CUDA are its own time;
 *   memory (profile_memory=True): the [memory] samples of any thread from an event's start to
 *   its end, both included, as key_averages counts them (memory_own_thread: only those of its
 *   own thread); self: minus its children's;
 *   FLOPs: analysis/flops.h, from record_shapes' Input Dims; absent (TD_CELL_NONE) without.
 * Self CPU % is of the sum of every row's self CPU; Self CUDA % of the GPU rows' time (of the
 * ops' self CUDA when folded). Columns a trace cannot fill (CUDA without GPU ops, memory
 * without samples, FLOPs without shapes) are left out.
 * ProfilerStep#N annotations are one row, "ProfilerStep*", as key_averages shows them.
 * Library code: never prints. */
#ifndef TD_TABLES_OPS_H
#define TD_TABLES_OPS_H

#include "analysis/analysis.h"
#include "tables/table.h"

enum td_group_by { TD_GROUP_NAME, TD_GROUP_SHAPE, TD_GROUP_STACK };

struct td_ops_opts {
	int window_all;            /* 0: the steady-state steps when the trace has them */
	enum td_group_by group;
	int fold_runtime;          /* runtime calls no rows: their time in the op that made them */
	int memory_own_thread;     /* an event's memory: the samples of its thread only */
};

/* Fills out (td_table_init'ed here) with one row per group, unsorted. */
void td_ops_table(const struct td_analysis *a, const struct td_ops_opts *o, struct td_table *out);
/* The innermost CPU op or user annotation enclosing host event ev (not ev itself), or
 * TD_NONE. */
uint32_t td_op_parent(const struct td_trace *t, uint32_t ev);
/* The window an ops or kernels table covers: [*from, *to) and its name ("steps" or "all"). */
const char *td_table_window(const struct td_analysis *a, int window_all, int64_t *from,
			    int64_t *to);

#endif
