/* SPDX-License-Identifier: MIT */
/* What one op call costs - floating-point operations and bytes moved - from its record_shapes
 * args (Input Dims, Input type, Concrete Inputs), and how close a measured time comes to the
 * device's roof (config/peaks.h). docs/roofline.md writes the model down:
 *   GEMMs (mm, addmm, bmm, baddbmm, linear, matmul): 2 x the multiply-adds, as PyTorch counts;
 *   convolutions (conv1d/2d/3d, convolution, _convolution with their stride, padding and
 *   dilation from Concrete Inputs) 2 x n x k x (c/g) x the kernel's and the output's spatial
 *   sizes; convolution_backward the same once for each of grad_input and grad_weight its
 *   output_mask asks for (both when it does not say);
 *   scaled dot-product attention (flash, efficient, cuDNN, and their backward) as
 *   torch.utils.flop_counter counts it: 4 b h s_q s_kv d forward, 2 b h s_q s_kv (3 d + 2 d_v)
 *   backward (no discount for a causal mask);
 *   normalisations and softmax 5 FLOPs an element, elementwise ops 1 (add and mul as PyTorch
 *   counts them: the elements of input 0), reductions 1 an input element;
 *   bytes: every tensor input once and the output once, at their dtypes' sizes (an in-place
 *   op writes input 0 back; copy_ reads its source and writes its destination; a reduction's
 *   output is left out, it is small).
 * Library code: never prints. */
#ifndef TD_ANALYSIS_ROOFLINE_H
#define TD_ANALYSIS_ROOFLINE_H

#include <stdint.h>

#include "config/peaks.h"
#include "parser/trace.h"

enum td_op_class { TD_OPC_NONE, TD_OPC_GEMM, TD_OPC_CONV, TD_OPC_ATTENTION, TD_OPC_NORM,
		   TD_OPC_SOFTMAX, TD_OPC_ELEMENTWISE, TD_OPC_REDUCTION, TD_OPC_COPY,
		   TD_OPC_TRITON /* an Inductor Triton launch with its own kernel_flop /
				  * kernel_num_gb: already fused, no out_bytes to chain on */ };

struct td_op_cost {
	int64_t flops;             /* >= 0 */
	int64_t bytes;             /* >= 0 */
	int dtype;                 /* enum td_dtype it computes in (of its first tensor), -1 */
	enum td_op_class cls;
	int align;                 /* a GEMM's or convolution's: the largest of 64, 32, 16, 8, 4,
				    * 2, 1 dividing its m, k, n (channels); 0 for the others */
	/* a memory-bound op's (norm, softmax, elementwise, copy): its output's bytes and
	 * elements, and the elements of the input it reads first (what a fusion chains on) */
	int64_t out_bytes, out_elems, in_elems;
};

/* The cost of op `name` called with dims, types (Input type) and concrete (NULL when the
 * trace has none). Returns 1 with out set, 0 when the model has none for it or the args do
 * not fit one. */
int td_op_cost(const char *name, const char *dims, const char *types, const char *concrete,
	       struct td_op_cost *out);
/* The cost of host event e of t: a CPU op with record_shapes' args; as td_op_cost. An
 * Inductor Triton launch's record function that carries kernel_flop / kernel_num_gb costs
 * those (class triton, its dtype its first float tensor's where Input type says, else
 * unknown), whatever its name: Inductor's estimate over the model's. */
int td_event_cost(const struct td_trace *t, uint32_t e, struct td_op_cost *out);
/* "gemm", "conv", "attention", "norm", "softmax", "elementwise", "reduction", "copy", "" */
const char *td_op_class_name(enum td_op_class c);

enum td_bound { TD_BOUND_UNKNOWN, TD_BOUND_COMPUTE, TD_BOUND_MEMORY };

/* A measured time against the roof */
struct td_roof {
	double tflops, tbps;       /* achieved: flops / ns, bytes / ns */
	double intensity;          /* FLOPs per byte (0 without bytes) */
	enum td_bound bound;       /* which roof the op's intensity puts it under */
	double pct;                /* the roof's time over the measured: 1 = on the roof; NaN
				    * without a roof */
	int64_t roof_ns;           /* the time at the roof, -1 without one */
	double peak_tflops;        /* the compute roof used (0 none) */
};
/* flops and bytes done in ns on a device with peaks pk, computing in dtype (enum td_dtype, -1
 * unknown: fp32). The compute roof is the dtype's peak (bf16 and fp16 stand in for each
 * other; a dtype the part lists no rate for runs at its fp32 rate); the memory roof bytes at
 * the bandwidth; the bound is the larger of the two times. */
void td_roof_eval(const struct td_peaks *pk, int dtype, int64_t flops, int64_t bytes,
		  int64_t ns, struct td_roof *out);
const char *td_bound_name(enum td_bound b);  /* "compute", "memory", "" */
/* The compute roof td_roof_eval uses for dtype on pk, TFLOP/s (0: none known). */
double td_roof_peak(const struct td_peaks *pk, int dtype);

/* The op with a cost nearest around host events (themselves included), memoised: cost[i] of
 * event ev[i]. */
struct td_cost_finder {
	uint32_t *memo;            /* per event: 0 not looked at, UINT32_MAX none, else i + 1 */
	struct td_op_cost *cost;
	uint32_t *ev;
	size_t n, cap;
};
void td_cost_finder_init(struct td_cost_finder *f, const struct td_trace *t);
/* the index in f->cost of the op nearest around host event e with a cost, or UINT32_MAX */
uint32_t td_cost_find(struct td_cost_finder *f, const struct td_trace *t, uint32_t e);
void td_cost_finder_free(struct td_cost_finder *f);

/* An op name's kernels on one device against the roof: the calls the model has a cost for,
 * their cost, the time of the kernels launched in them. */
struct td_roof_op {
	uint32_t name;
	uint64_t calls, misaligned; /* calls; GEMMs / convolutions whose dims do not fill the
				     * tensor cores' tiles (align below 8 in 16 bits, 16 in fp8,
				     * 4 in fp32) */
	int64_t flops, bytes, ns;
	int dtype;
	enum td_op_class cls;
	struct td_roof roof;
	int64_t lost_ns;           /* ns beyond the time at the roof */
};
/* Device index d's ops in its window, by the time they lose against the roof, largest first
 * (those without a roof last); *out to free. Returns how many. */
struct td_analysis;
size_t td_an_roof_ops(const struct td_analysis *a, size_t d, struct td_roof_op **out);

/* Model FLOPs utilization: the FLOPs of the ops the model has a cost for (each call counted
 * once: one inside another with a cost is the outer one's), over the steady-state steps (else
 * the devices' windows), against the peak of the dtype that does most of them times the
 * devices with GPU work. */
struct td_mfu {
	int64_t flops;             /* in the window */
	int64_t window_ns;
	size_t steps;              /* 0: no steps: the window is the devices' */
	int dtype;                 /* enum td_dtype of most FLOPs, -1 none (an FP32 op whose
				    * kernels run TF32: TF32) */
	double peak_tflops;        /* that dtype's peak x the devices; 0 unknown */
	double achieved_tflops;    /* flops / window */
	double mfu;                /* achieved / peak; NaN without peaks or FLOPs */
	int64_t kernel_ns;         /* the compute kernels' time in the window (all devices) */
	int64_t known_ns;          /* ... the part launched under ops with known FLOPs */
	int64_t graph_ns;          /* ... the part graph launches replayed: no op, no FLOPs known,
				    * so the MFU is a floor that leaves it out (said when material) */
};
void td_an_mfu(const struct td_analysis *a, struct td_mfu *out);

#endif
