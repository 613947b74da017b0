/* SPDX-License-Identifier: MIT */
/* The element types of a GEMM or convolution kernel, read from its name: the vendor
 * libraries write them there (cuBLAS volta_sgemm / ampere_bf16_s16816gemm, cuDNN scudnn /
 * h884cudnn, CUTLASS float_e2m1 / bfloat16_t, xmma's f32f32_tf32f32, TensorRT-LLM's
 * bmm_MxE4m3_MxE2m1, Tensile's Cijk_Ailk_Bljk_HHS). fixes/context.c totals the GEMM time by
 * them (the run's precision), rules/precision.c finds FP32 GEMMs on tensor cores. Library
 * code: never prints. */
#ifndef TD_FIXES_PRECISION_H
#define TD_FIXES_PRECISION_H

/* config/peaks.h's enum td_dtype, in its order (a file of fixes' floor includes no config;
 * rules/precision.c asserts the two agree) */
enum td_gemm_dt { TD_GEMM_FP64, TD_GEMM_FP32, TD_GEMM_TF32, TD_GEMM_BF16, TD_GEMM_FP16,
		  TD_GEMM_FP8, TD_GEMM_FP4, TD_GEMM_NDT };

/* Whether name is a GEMM or convolution kernel (a matrix multiply, not attention, not a
 * batch norm), and its element types: *mma, the widest of its operands (what the tensor
 * cores run it at: fp8 x fp4 runs at fp8), *low the narrowest (fp4 weights); both enum
 * td_gemm_dt, -1 when the name says none. Returns 0 (not a GEMM), else 1. */
int td_gemm_kernel_dtype(const char *name, int *mma, int *low);

/* "fp64" ... "fp4" as config/peaks.h names them (a library of fixes' floor links no
 * config), "" for none */
const char *td_gemm_dtype_label(int dtype);

#endif
