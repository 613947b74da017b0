/* SPDX-License-Identifier: MIT */
/* The floating-point operations of one op call, from its name and its record_shapes input dims,
 * by the formulas PyTorch's profiler uses for with_flops=True (torch/csrc/profiler/util.cpp):
 *   aten::mm [n,k]x[k,m], aten::addmm (mat1, mat2 = inputs 1, 2): 2nkm;
 *   aten::bmm [b,n,k]x[b,k,m], aten::baddbmm (batch1, batch2 = inputs 1, 2): 2bnkm;
 *   aten::mul, aten::add: the elements of input 0 (as PyTorch counts them: no broadcast).
 * aten::conv2d needs its stride, padding and dilation, which Input Dims do not hold: unknown.
 * Library code: never prints. */
#ifndef TD_TABLES_FLOPS_H
#define TD_TABLES_FLOPS_H

#include <stdint.h>

/* The FLOPs of op `name` called with dims ("[[32, 64], [64, 128]]"), or -1 when PyTorch has no
 * formula for it or the dims do not fit one. */
int64_t td_op_flops(const char *name, const char *dims);
/* Whether PyTorch has a FLOPs formula for op `name`. */
int td_op_has_flops(const char *name);

#endif
