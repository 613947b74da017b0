/* SPDX-License-Identifier: MIT */
/* The floating-point operations of one op call, from its name and its record_shapes input dims,
 * by the formulas PyTorch's profiler uses for with_flops=True (torch/csrc/profiler/util.cpp):
 *   aten::mm [n,k]x[k,m], aten::addmm (mat1, mat2 = inputs 1, 2): 2nkm;
 *   aten::bmm [b,n,k]x[b,k,m], aten::baddbmm (batch1, batch2 = inputs 1, 2): 2bnkm;
 *   aten::mul, aten::add: the elements of input 0 (as PyTorch counts them: no broadcast);
 *   aten::conv2d (input [n,c,h,w], weight [k,c/g,r,s]; stride, padding, dilation, groups from
 *   "Concrete Inputs", which newer Kineto writes): 2 n oh ow r s c k / g; without them, unknown.
 * Library code: never prints. */
#ifndef TD_ANALYSIS_FLOPS_H
#define TD_ANALYSIS_FLOPS_H

#include <stdint.h>

#define TD_DIMS_MAX_IN 8   /* inputs looked at */
#define TD_DIMS_MAX_RANK 8 /* dimensions of one */

/* An op's Input Dims, read */
struct td_dims {
	int n;                       /* inputs read (at most TD_DIMS_MAX_IN) */
	int rank[TD_DIMS_MAX_IN];    /* -1: not a list of numbers (a scalar, a tensor list) */
	int64_t d[TD_DIMS_MAX_IN][TD_DIMS_MAX_RANK];
};
/* "[[32, 64], [], [[1], [2]]]": the first TD_DIMS_MAX_IN inputs' sizes; 0 when it is no such
 * list. */
int td_dims_parse(const char *s, struct td_dims *o);
/* The i-th string of concrete inputs ["", "", "", "[2, 2]", "1"] read as up to max integers:
 * the count read, 0 when it is none. */
int td_concrete_ints(const char *s, int i, int64_t *v, int max);

/* The FLOPs of op `name` called with dims ("[[32, 64], [64, 128]]") and concrete inputs
 * ("[\"\", \"\", \"\", \"[1, 1]\", ...]" or NULL), or -1 when PyTorch has no formula for it or they
 * do not fit one. */
int64_t td_op_flops(const char *name, const char *dims, const char *concrete);
/* Whether PyTorch has a FLOPs formula for op `name`. */
int td_op_has_flops(const char *name);

#endif
