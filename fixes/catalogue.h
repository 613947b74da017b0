/* SPDX-License-Identifier: MIT */
/* The fix catalogue: what to do about a mechanism, chosen for the run's context (fixes/
 * context.h). Rules name the mechanism and its evidence; the catalogue picks the fix: entries
 * keyed by mechanism, each with the context it needs (vendor, training or inference, what must
 * be on, what must be off), the first that fits wins, and the last of each mechanism needs
 * nothing (what to check first when the context is unknown). Nothing is advised that the trace
 * shows already on, or that does not exist for that device and framework. Knows no rule.
 * Library code: never prints. */
#ifndef TD_FIXES_CATALOGUE_H
#define TD_FIXES_CATALOGUE_H

#include <stddef.h>

#include "fixes/context.h"

enum td_mech {
	TD_FIX_KERNEL_PROFILE,  /* measure the top kernel (one %s: its name as a regex) */
	TD_FIX_LAZY_LOADING,    /* the first launch of each kernel loads its module */
	TD_FIX_FEWER_LAUNCHES,  /* launch-bound: kernels shorter than their launch */
	TD_FIX_HOST_BOUND,      /* the host's Python and CPU ops between launches */
	TD_FIX_SERVING_HOST,    /* a serving engine's loop between kernels */
	TD_FIX_SMALL_KERNELS,   /* many tiny kernels, not the optimizer's */
	TD_FIX_COMM,            /* exposed communication (the dominant kind picks) */
	TD_FIX_COMM_GROUP,      /* ... of a process group whose parallelism is known (coll: the
				 * td_par of the group that waits most) */
	TD_FIX_COMM_UNBUCKETED, /* gradients all-reduced one at a time, no data-parallel wrapper
				 * (%s: "40 per step, 1.2 ms each on average") */
	TD_FIX_ALLOC_NO_CACHE,  /* the caching allocator switched off (%s: the evidence) */
	TD_FIX_ALLOC_CHURN,     /* the cache bypassed or emptied every step (%s: a clause on the
				 * frees, or "") */
	TD_FIX_IDLE_UNTRACED,   /* the launching thread recorded nothing while the GPU waited */
	TD_FIX_IDLE_DEPENDENCY, /* queued ops waited for something outside their stream */
	TD_FIX_MEM_PEAK,        /* the reservation near the device's capacity */
	TD_FIX_MEM_LEAK,        /* allocated memory that grows every step */
	TD_FIX_MEM_FRAG,        /* reserved far above allocated at the peak */
	TD_FIX_ZERO_GRAD,       /* a fill kernel per parameter from zero_grad() */
	TD_FIX_BUCKET_COPY,     /* the data-parallel reducer's copy into its buckets */
	TD_FIX_DDP_BUFFERS,     /* the wrapper's buffers flattened and broadcast every forward (%s:
				 * the host time it takes) */
	TD_FIX_LOADER_MAIN,     /* the DataLoader runs in the main process (num_workers=0) */
	TD_FIX_LOADER_WORKERS,  /* the DataLoader's worker processes cannot keep up */
	TD_FIX_PAGEABLE_UPLOAD, /* host-to-device copies from pageable memory */
	TD_FIX_UPLOAD_SIDE_STREAM, /* ... queued on the compute stream behind its kernels */
	TD_FIX_CREATE_MOVE,     /* a tensor created on the CPU, then moved to the GPU */
	TD_FIX_ELEMENT_LOOP,    /* a Python loop over a tensor's elements (%s: its ops) */
	TD_FIX_SYNC_ITEM,       /* .item() / .cpu() / .tolist() of a value the GPU computes */
	TD_FIX_SYNC_NONZERO,    /* nonzero() and boolean-mask indexing */
	TD_FIX_SYNC_DTOH,       /* a copy into pageable host memory */
	TD_FIX_SYNC_MEMCPY,     /* a synchronous runtime memcpy */
	TD_FIX_SYNC_MEMCPY_IDLE, /* ... that waited with the GPU idle (%s: how long it blocked) */
	TD_FIX_SYNC_USER,       /* an op the configuration names as synchronizing */
	TD_FIX_SYNC_EXPLICIT,   /* torch.cuda.synchronize(), a stream or event synchronize */
	TD_FIX_SYNC_CHECK,      /* a check on tensor values read to the host (isnan().any(), an
				 * if or assert on a tensor) */
	TD_FIX_SYNC_LAST_READ,  /* the last read of the window: the host uses the data next */
	TD_FIX_WARMUP,          /* start-up caught in the window: profile the steady state */
	TD_FIX_WARMUP_COMPILE,  /* ... compilation (Inductor, Triton, the engine's compile) */
	TD_FIX_WARMUP_CALLS,    /* ... context and handle creation, first calls */
	TD_FIX_WARMUP_CAPTURE,  /* ... a graph capture: the trace is start-up, not the loop */
	TD_FIX_UNTRACED_WAIT,   /* the GPU waits on work from before the trace */
	TD_FIX_FP32_MM_BF16,    /* FP32 GEMMs on tensor cores that run bf16 and TF32 (%s: time) */
	TD_FIX_FP32_MM_FP16,    /* ... on tensor cores that run fp16 only (Volta, Turing) */
	TD_FIX_LAYOUT,          /* NCHW <-> NHWC transposes (%s: their time) */
	TD_FIX_ELEMENTWISE,     /* small elementwise kernels (%s: "158 ... take 809.6 us") */
	TD_FIX_SOFTMAX,         /* an eager softmax in attention (%s: its time) */
	TD_FIX_GEMM_ALIGN,      /* GEMMs / convolutions whose dims do not fill the tensor cores'
				 * tiles (%s: "aten::mm: 12 of 36 calls") */
	TD_FIX_OLD_ARCH,        /* kernels built for an older GPU architecture than the device's
				 * (%s: "99.5 ms, 13% of the compute, built for SM80 on this SM121") */
	/* a job's, across its ranks (many ranks always; %s: the rank, "rank 3") */
	TD_FIX_STRAGGLER_BEFORE, /* the straggler's step begins late: the cause comes before it */
	TD_FIX_STRAGGLER_COMPUTE, /* ... its GPU computes longer before the collectives */
	TD_FIX_STRAGGLER_ARRIVE, /* ... a finding of its own trace holds it up (its fix follows) */
	TD_FIX_STRAGGLER_UNKNOWN, /* ... the trace does not say why (%s: "rank 3 (its trace)") */
	TD_FIX_IMBALANCE,       /* compute differs across ranks */
	TD_FIX_NMECHS
};

/* a token that differs by vendor */
enum td_fix_token {
	TD_TOK_ALLOC_CONF,      /* PYTORCH_CUDA_ALLOC_CONF / PYTORCH_HIP_ALLOC_CONF */
	TD_TOK_NO_CACHING,      /* PYTORCH_NO_CUDA_MEMORY_CACHING / PYTORCH_NO_HIP_MEMORY_CACHING */
	TD_TOK_SMI,             /* nvidia-smi / rocm-smi */
	TD_TOK_GRAPHS,          /* CUDA graphs / HIP graphs */
	TD_TOK_DEVICE,          /* "cuda": torch's device string, the same on ROCm */
	TD_TOK_MALLOC,          /* cudaMalloc / hipMalloc */
	TD_TOK_FREE,            /* cudaFree / hipFree */
	TD_TOK_MEMCPY,          /* cudaMemcpy / hipMemcpy */
	TD_TOK_PIN_MEMORY,      /* "pin_memory=True, ", or "" where the loader pins already */
	TD_TOK_CMD,             /* the command a profiler wraps: "python train.py" in training */
	TD_TOK_GPU_CHECK,       /* how to check a slow GPU: nvidia-smi -q / rocm-smi (clocks,
				 * throttling, ECC) */
	TD_TOK_NTOKENS
};

struct td_fix_entry {
	enum td_mech mech;
	enum td_vendor vendor;     /* TD_VENDOR_UNKNOWN: any */
	enum td_run run;           /* TD_RUN_UNKNOWN: any */
	unsigned engines;          /* bits 1u << TD_ENGINE_*: the serving engines it is for, 0:
				    * any run */
	unsigned need;             /* TD_ON_* all of which must be on */
	unsigned none;             /* TD_ON_* none of which may be on */
	int coll;                  /* TD_FIX_COMM: the dominant collective kind; TD_FIX_COMM_GROUP:
				    * the group's td_par; -1 any */
	int graph;                 /* 1: the fix replays the step's launches as a graph (CUDA / HIP
				    * graphs, torch.compile's reduce-overhead, a serving engine's
				    * graph mode): what it wins can be replayed */
	const char *text;
};

/* The entries: fixes/entries.c's (one GPU's and one host's) and fixes/entries_comm.c's
 * (communication, a job's ranks); td_fix_entry_at() walks both, i < td_fix_count(). */
extern const struct td_fix_entry td_fix_entries[], td_fix_entries_comm[];
extern const size_t td_fix_nentries, td_fix_ncomm;
size_t td_fix_count(void);
const struct td_fix_entry *td_fix_entry_at(size_t i);

/* The fix for mechanism m in context c (coll: the dominant collective kind or -1), with one
 * %s of the text replaced by arg (or ""), in buf. A text names what differs by vendor as a
 * token between @s, expanded for c: @ALLOC_CONF@, @NO_CACHING@, @SMI@, @GRAPHS@, @MALLOC@
 * (cudaMalloc / hipMalloc), @FREE@ (cudaFree / hipFree), @MEMCPY@ (cudaMemcpy / hipMemcpy),
 * @PIN_MEMORY@ (a DataLoader argument, empty where the trace shows it on), @CMD@ (the
 * program a profiler wraps, by the run: train.py, serve.py), @GPU_CHECK@ (the vendor's
 * check of a slow GPU's clocks, throttling and ECC). */
const char *td_fix_text(const struct td_context *c, enum td_mech m, int coll, const char *arg,
			char *buf, size_t cap);
/* The entry td_fix_text() would use, or NULL. */
const struct td_fix_entry *td_fix_pick(const struct td_context *c, enum td_mech m, int coll);
const char *td_fix_token(const struct td_context *c, enum td_fix_token k);
/* A per-parameter optimizer loop's fix, for optimizer class opt ("Adam", "" unknown) in
 * context c: fused=True only where a fused kernel exists for the device (Adam, AdamW, SGD
 * on CUDA and ROCm; Adagrad's is CPU-only), nothing the trace shows on already. */
const char *td_fix_optimizer(const struct td_context *c, const char *opt, char *buf, size_t cap);

#endif
