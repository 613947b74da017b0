/* SPDX-License-Identifier: MIT */
#include "fixes/precision.h"

#include <stddef.h>
#include <string.h>


const char *td_gemm_dtype_label(int d)
{
	static const char *const names[TD_GEMM_NDT] = {"fp64", "fp32", "tf32", "bf16", "fp16",
						       "fp8", "fp4"};

	return d >= 0 && d < TD_GEMM_NDT ? names[d] : "";
}

static int has(const char *s, const char *p)
{
	return strstr(s, p) != NULL;
}

/* p in s, not right after a letter in not_after ("f16" in "bf16" is bf16's) */
static int has_not_after(const char *s, const char *p, const char *not_after)
{
	const char *x;

	for (x = strstr(s, p); x; x = strstr(x + 1, p))
		if (x == s || !strchr(not_after, x[-1]))
			return 1;
	return 0;
}

static int is_gemm(const char *n)
{
	if (has(n, "fmha") || has(n, "flash") || has(n, "ttention") || has(n, "attn") ||
	    has(n, "cudnn::bn_") || has(n, "elementwise") || has(n, "reduce_kernel"))
		return 0;
	return has(n, "gemm") || has(n, "GEMM") || has(n, "Gemm") || has(n, "scudnn") ||
	       has(n, "hcudnn") || has(n, "884cudnn") || has(n, "1688cudnn") ||
	       has(n, "16816cudnn") || has(n, "dgrad") || has(n, "wgrad") || has(n, "convolve") ||
	       has(n, "fprop") || !strncmp(n, "Cijk_", 5) || has(n, "cutlass") || has(n, "xmma") ||
	       has(n, "nvjet") || !strncmp(n, "bmm_", 4) || has(n, "cublasLt") ||
	       has(n, "matmul") || has(n, "wmma");
}

/* Tensile's data type: the token after Cijk_'s two operand layouts (Cijk_Ailk_Bljk_HHS_...):
 * S single, H half, B bf16, D double, F8 / B8 fp8; -1 none */
static int tensile(const char *n)
{
	const char *p = n;
	int k;

	if (strncmp(n, "Cijk_", 5))
		return -1;
	for (k = 0; k < 3 && p; k++) /* past "Cijk_", "A..._", "B..._" */
		if ((p = strchr(p, '_')))
			p++;
	if (!p)
		return -1;
	if (!strncmp(p, "F8", 2) || !strncmp(p, "B8", 2))
		return TD_GEMM_FP8;
	switch (*p) {
	case 'S': return TD_GEMM_FP32;
	case 'H': return TD_GEMM_FP16;
	case 'B': return TD_GEMM_BF16;
	case 'D': return TD_GEMM_FP64;
	default: return -1;
	}
}

/* The part of a name that holds its operands' types, copied to buf: TensorRT-LLM's
 * bmm_<C>_<A><B>_<accumulator>_... its third token (C, the output, is often the next GEMM's
 * input type); a CUTLASS template's mainloop, before its epilogue (whose bfloat16_t is the
 * output); else the name */
static const char *operands(const char *n, char *buf, size_t cap)
{
	const char *b = n, *e = n + strlen(n), *x;
	size_t len;

	if (!strncmp(n, "bmm_", 4) && (x = strchr(n + 4, '_'))) {
		b = x + 1;
		e = strchr(b, '_') ? strchr(b, '_') : e;
	} else if (has(n, "cutlass") && (x = strstr(n, "pilogue"))) {
		e = x;
	}
	len = (size_t)(e - b) < cap - 1 ? (size_t)(e - b) : cap - 1;
	memcpy(buf, b, len);
	buf[len] = '\0';
	return buf;
}

int td_gemm_kernel_dtype(const char *name, int *mma, int *low)
{
	int seen[TD_GEMM_NDT] = {0}, d;
	char buf[2048];
	const char *n;

	*mma = *low = -1;
	if (!name || !is_gemm(name))
		return 0;
	n = operands(name, buf, sizeof(buf));
	seen[TD_GEMM_FP4] = has(n, "e2m1") || has(n, "E2m1") || has(n, "E2M1") ||
			  has(n, "fp4") || has(n, "Fp4") || has(n, "FP4");
	seen[TD_GEMM_FP8] = has_not_after(n, "e4m3", "u") || has(n, "E4m3") || has(n, "E4M3") ||
			  has(n, "e5m2") || has(n, "E5m2") || has(n, "E5M2") || has(n, "fp8") ||
			  has(n, "Fp8") || has(n, "FP8");
	seen[TD_GEMM_BF16] = has(n, "bf16") || has(n, "Bf16") || has(n, "BF16") ||
			   has(n, "bfloat16") || has(n, "Bfloat16") || has(n, "BFloat16");
	seen[TD_GEMM_FP16] = has_not_after(n, "f16", "bB") || has_not_after(n, "F16", "bB") ||
			   has(n, "half") || has(n, "Half") || has(n, "hgemm") ||
			   has(n, "h884") || has(n, "h1688") || has(n, "h16816") ||
			   has(n, "hcudnn");
	/* CUTLASS's "tensorop_s1688gemm" names no type but its m16n8k8 shape on fp32 operands:
	 * TF32 (its fp16 kernels say "f16": "tensorop_s1688gemm_f16") */
	seen[TD_GEMM_TF32] = has(n, "tf32") || has(n, "TF32") ||
			   ((has(n, "tensorop_s1688gemm") || has(n, "tensorop_s16816gemm")) &&
			    !seen[TD_GEMM_FP16] && !seen[TD_GEMM_BF16]);
	if ((d = tensile(n)) >= 0)
		seen[d] = 1;
	/* cuBLAS / cuDNN / CUTLASS tensor-core shapes with no type named: fp16 in (s884 is fp16
	 * in, fp32 accumulate; "s1688gemm" of fp32 data is spelt tf32) */
	if (!seen[TD_GEMM_FP4] && !seen[TD_GEMM_FP8] && !seen[TD_GEMM_BF16] && !seen[TD_GEMM_FP16] &&
	    !seen[TD_GEMM_TF32] && (has(n, "s884") || has(n, "s1688") || has(n, "s16816") ||
				  has(n, "hmma") || has(n, "wmma")))
		seen[TD_GEMM_FP16] = 1;
	for (d = TD_GEMM_FP64 + 1; d < TD_GEMM_NDT && !seen[d]; d++)
		;
	if (d == TD_GEMM_NDT && (has(n, "sgemm") || has(n, "scudnn") || has(n, "<float,") ||
				 has(n, "<float>") || has(n, "f32") || has(n, "F32") ||
				 has(n, "fp32") || has(n, "FP32") || has(n, "float")))
		seen[TD_GEMM_FP32] = 1;
	if (d == TD_GEMM_NDT && !seen[TD_GEMM_FP32] && (has(n, "dgemm") || has(n, "double")))
		seen[TD_GEMM_FP64] = 1;
	for (d = 0; d < TD_GEMM_NDT; d++)
		if (seen[d]) {
			if (*mma < 0)
				*mma = d;
			*low = d;
		}
	return 1;
}
