/* SPDX-License-Identifier: MIT */
/* What the run is, read once from the trace's names and devices: the vendor and runtime, the
 * device, training or inference, the framework and parallelism, a serving engine, what is
 * already on (torch.compile, CUDA graphs, a batched optimizer, mixed precision), the data
 * pipeline and the collectives by kind. The fix catalogue (fixes/catalogue.h) picks the advice
 * that fits it. Library code: never prints. */
#ifndef TD_FIXES_CONTEXT_H
#define TD_FIXES_CONTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "parser/trace.h"

enum td_vendor { TD_VENDOR_UNKNOWN, TD_VENDOR_NVIDIA, TD_VENDOR_AMD };
enum td_run { TD_RUN_UNKNOWN, TD_RUN_TRAINING, TD_RUN_INFERENCE };
enum td_engine { TD_ENGINE_NONE, TD_ENGINE_VLLM, TD_ENGINE_SGLANG, TD_ENGINE_TGI,
		 TD_ENGINE_TRTLLM };
enum td_opt_impl { TD_OPT_NONE, TD_OPT_SINGLE, TD_OPT_FOREACH, TD_OPT_FUSED };

/* what the trace shows in use (td_context.on) */
#define TD_ON_DDP 0x0001
#define TD_ON_FSDP 0x0002
#define TD_ON_TORCHREC 0x0004
#define TD_ON_DEEPSPEED 0x0008
#define TD_ON_MEGATRON 0x0010
#define TD_ON_COMPILED 0x0020      /* torch.compile / Inductor: CompiledFunction, triton_ kernels */
#define TD_ON_GRAPHS 0x0040        /* CUDA / HIP graphs replayed (cudaGraphLaunch) */
#define TD_ON_CAPTURE 0x0080       /* a graph captured in the trace (BeginCapture, Instantiate) */
#define TD_ON_AMP 0x0100           /* autocast ops */
#define TD_ON_BF16 0x0200          /* bf16 kernels */
#define TD_ON_FP16 0x0400          /* fp16 / half kernels */
#define TD_ON_LOADER_MAIN 0x0800   /* DataLoader in the training process (num_workers=0) */
#define TD_ON_LOADER_WORKERS 0x1000 /* DataLoader with worker processes */
#define TD_ON_MODULES 0x2000       /* nn.Module frames or module calls: there is a model */
#define TD_ON_NO_CACHING 0x4000    /* the caching allocator off: a malloc and free per tensor */
#define TD_ON_NO_MODULE 0x8000     /* Python frames recorded (with_stack), no nn.Module among
				    * them and no backward: no model, a loop over tensors */
#define TD_ON_SMALL_BATCH 0x10000  /* a batch of 64 or less in the layers' input shapes,
				    * their largest input 64K elements or less */
#define TD_ON_ELEM_LOOP 0x20000    /* a per-element loop: an op that reads one element
				    * (.item(), indexing, .cpu() of a scalar) 16 times a step or more */
#define TD_ON_STACKS 0x40000       /* Python frames recorded (with_stack=True) */
#define TD_ON_DIST 0x80000         /* collectives, or a world larger than one: many ranks */
#define TD_ON_HOST_OPS 0x100000    /* CPU ops recorded (ProfilerActivity.CPU), not only the
				    * runtime calls */
#define TD_ON_PIN_MEMORY 0x200000  /* the DataLoader pins its batches (pin_memory=True: its
				    * pin-memory thread's aten::pin_memory) */
#define TD_ON_LOADER 0x400000      /* a DataLoader, in the main process or with workers */
#define TD_ON_CUSTOM_AR 0x800000   /* a custom all-reduce kernel (vLLM's cross_device_reduce,
				    * symmetric memory's multimem / one- and two-shot) */
#define TD_ON_DEEPEP 0x1000000     /* DeepEP's dispatch / combine kernels exchange the MoE
				    * tokens (an all-to-all) */
#define TD_ON_COLLECTOR 0x2000000  /* recorded by tracedoc record: the CUDA calls, GPU ops and
				    * NVTX ranges of the whole process, no CPU ops or Python */
#define TD_ON_NSYS 0x4000000       /* an Nsight Systems export: the CUDA calls, GPU ops and NVTX
				    * ranges nsys recorded (parser/nsys.c) */
#define TD_ON_ONE_RANK 0x8000000   /* the trace says its world is one rank (distributedInfo
				    * world_size 1): a data-parallel wrapper has no peer */
#define TD_ON_SPARSE_PIPELINE 0x10000000 /* torchrec's train pipeline already runs the sparse
				    * data distribution a batch ahead (its "## sparse_data_dist ##"
				    * and "## wait_sparse_data_dist ##" ranges) */
#define TD_ON_PREFILL 0x40000000   /* a serving run whose steady iterations are all prefill (the
				    * engine's own markers, analysis/phases.c): CUDA graphs serve
				    * decode, so decode's advice does not fit (set by the analysis) */
#define TD_ON_QCOMMS_FP8 0x80000000u /* fbgemm's FP8 row-wise quantize / dequantize kernels:
				    * torchrec's qcomms already carry the collectives in FP8 */
#define TD_ON_TORCH1 0x20000000    /* written by PyTorch 1.8/1.9 (its Operator / Runtime / Kernel
				    * categories): no torch.compile there */

/* collectives by kind (td_context.coll[]) */
enum td_coll_kind { TD_COLL_ALL_REDUCE, TD_COLL_ALL_GATHER, TD_COLL_REDUCE_SCATTER,
		    TD_COLL_ALL_TO_ALL, TD_COLL_SEND_RECV, TD_COLL_BROADCAST, TD_COLL_CUSTOM,
		    TD_COLL_NKINDS };

/* The parallelism a process group serves, by its description (Megatron-LM's group names,
 * DeviceMesh's mesh_<dim>, short names like "tp"). */
enum td_par { TD_PAR_UNKNOWN, TD_PAR_DP, TD_PAR_TP, TD_PAR_PP, TD_PAR_EP, TD_PAR_CP,
	      TD_PAR_NKINDS };

struct td_context {
	enum td_vendor vendor;
	uint32_t device;           /* the first device's name (trace names id, 0: unknown) */
	enum td_run run;
	enum td_engine engine;
	uint32_t on;               /* TD_ON_* */
	char optimizer[32];        /* "Adam", "SGD" (from Optimizer.step#Adam.step), "" none */
	enum td_opt_impl opt_impl;
	uint64_t coll[TD_COLL_NKINDS]; /* collective kernel names seen, by kind */
	unsigned par;              /* bit TD_PAR_*: the parallelisms the collectives' groups name */
	unsigned par_inferred;     /* bit TD_PAR_*: ... that the collectives' pattern implies where
				    * no group names one: all-reduce with no backward, or in the
				    * forward pass of a training step, is tensor parallel, all-to-all
				    * beside MoE kernels expert parallel, send/recv with no all-to-all
				    * pipeline parallel */
	uint32_t fwd_ar, bwd_ar;   /* all-reduce kernels launched in the forward pass (under a
				    * module's forward, no autograd node nor optimizer above them),
				    * and in the backward (under an autograd node) */
	uint32_t tp_pg;            /* the process group (name id) of the forward all-reduces when
				    * they share one, else 0 */
	int64_t batch;             /* the most frequent leading input dim of linear / addmm /
				    * conv2d / bmm calls (record_shapes), 0: unknown */
	int32_t bpsm;              /* the median kernel's blocks per SM x 1000, -1: unknown */
	int8_t gemm_dtype;         /* enum td_dtype the most GEMM / convolution kernel time runs
				    * at (fixes/precision.h: the widest operand), -1: unknown */
	int8_t gemm_low;           /* ... its narrowest operand there (fp4 weights under fp8) */
	int64_t gemm_ns;           /* the GEMM / convolution kernels' time with a dtype named */
	int64_t gemm_dtype_ns;     /* ... of it at gemm_dtype */
};

void td_context_derive(const struct td_trace *t, struct td_context *c);
/* The collective kind a kernel or op name is, or -1 (not a collective). */
int td_coll_kind_of(const char *name);
const char *td_coll_kind_name(enum td_coll_kind k);
/* The parallelism of a process group by its description (NULL or unknown: TD_PAR_UNKNOWN). */
enum td_par td_pg_parallelism(const char *desc);
const char *td_par_name(enum td_par p);         /* "tensor parallel", ... "" for unknown */
/* The parallelism a process group serves, by its description or else (kind: the collective
 * kind it waits in most, or -1; pg: the group's name id, 0 unknown) what c infers for that
 * kind; *inferred set when it is the latter. In training an all-reduce group is tensor
 * parallel only when it is the forward all-reduces' group (or no all-reduce runs in the
 * backward): the backward's is the gradients' (data parallel). */
enum td_par td_par_of_group(const struct td_context *c, enum td_par described, int kind,
			    uint32_t pg, int *inferred);
/* why c infers parallelism p: "all-reduce in a run with no backward", or "" */
const char *td_par_evidence(const struct td_context *c, enum td_par p);
const char *td_vendor_name(enum td_vendor v);   /* "CUDA", "ROCm", "unknown" */
const char *td_run_name(enum td_run r);         /* "training", "inference", "unknown" */
const char *td_engine_name(enum td_engine e);   /* "vLLM", ... , "" for none */
const char *td_opt_impl_name(enum td_opt_impl i); /* "single-tensor", "foreach", "fused", "" */
/* The one line every report opens with: "CUDA, Tesla V100-SXM2-32GB, training, DDP,
 * torch.compile, AdamW (foreach)". */
void td_context_line(const struct td_trace *t, const struct td_context *c, char *buf,
		     size_t cap);
/* What a pinned copy achieves over a GPU's host link, bytes per us (MB/s), by the device's
 * name: NVLink-C2C on Grace, else the PCIe generation of the GPU (3 when unknown). */
int64_t td_host_link_mbps(const char *device_name);
/* The run's precision: the dtype of the bulk of its GEMM kernels' time ("fp8", "fp32"), else
 * what its names show ("bf16", "fp16", "autocast"), else "" */
const char *td_context_precision(const struct td_context *c);
/* "batch 16 in the layers' inputs; the median kernel fills 0.3 blocks per SM", or "" */
const char *td_context_batch(const struct td_context *c, char *buf, size_t cap);

#endif
