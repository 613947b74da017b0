/* SPDX-License-Identifier: MIT */
/* What bench/gen_trace.c (options, the document, a job's ranks) and bench/gen_events.c (the
 * events of a step) share: the generator's state, and the writers gen_trace.c calls. */
#ifndef TD_BENCH_GEN_H
#define TD_BENCH_GEN_H

#include <stdint.h>
#include <stdio.h>

struct gen {
	FILE *f;
	uint64_t rng;
	int64_t now_ns;  /* host clock */
	int64_t gpu_ns;  /* when the GPU stream is free */
	uint64_t ext, corr, ev_idx, py_id, bytes;
	int first;
	int pid, tid;
	int rank, world;
	int64_t extra_host_ns;    /* host-only work before the all-reduce, per step */
	int kernel_pct;           /* extra compute per kernel, percent */
	int host_x;               /* each op's host time this many times as long (0: once) */
	int64_t step_ts;
	uint64_t comm_seq;
	/* a bottleneck, or its fix, for what-if pairs (tests/whatif_pairs.py) */
	int items;                /* per-element .item() calls per step, after the forward */
	int items_fixed;          /* ... each replaced by one kernel launch (kept on the GPU) */
	int element_loop;         /* a Python loop over this many elements per step: t[i].cpu() */
	int element_fix;          /* ... fixed: 'g' adds on the GPU, 'c' one .cpu() before it, 'v'
				   * vectorised (no loop) */
	int allocs;               /* cudaMalloc + cudaFree pairs per step */
	int no_loss_item;         /* no loss.item() at the step's end */
	int single_loader;        /* _SingleProcessDataLoaderIter: the loop loads itself */
	int64_t workers_ns;       /* the workers make a batch every this long (0: __next__ takes
				   * --loader-us whatever the loop does) */
	int64_t ready_ns;         /* when the workers' next batch is ready */
	int workers;              /* --workers K: K worker processes, each taking workers_ns a
				   * batch, prefetch_factor 2 (gen_events.c pool_next) */
	int64_t lead_ns;          /* ... they started this long before the first __next__ */
	int stagger;              /* --pool-stagger: worker j starts j W/K later (workers drifted
				   * apart evenly: every batch comes alone, none ready early) */
	int64_t pin_ns;           /* --pin-us: pin_memory=True, each batch pinned on the pin
				   * thread, this long, before __next__ gets it */
	int64_t pool_t0, pin_free, wfree[64];
	uint64_t batch;           /* the next batch __next__ takes */
	int64_t pool_ready[512], pool_used[512]; /* by batch % 512: ready (pinned), consumed */
	int profile_mix;          /* with_stack + profile_memory: Python frames around each op,
				   * [memory] samples per op (b200-eager-decode, ddp-v100-rank1) */
	int launch_loop;          /* a Python loop launching this many 2 us kernels per step */
	int loop_fused;           /* ... one launch of their fused kernel instead, the loop's own
				   * Python work kept */
	int64_t allreduce_bytes;  /* a gradient all-reduce per step, after the ops */
	int buckets;              /* ... reduced instead in 25 MB buckets among the ops, each once
				   * the op that produced its gradients ran (DDP's overlap) */
	int64_t comm_free;        /* when the communication stream is free */
	int side_copies;          /* 4 MB uploads per step onto two side streams, among the ops */
	int side_pinned;          /* ... from pinned memory, non-blocking (else pageable, blocking) */
	int inline_copies;        /* ... onto the compute stream instead, behind its kernels */
	int consumer_wait;        /* ... the compute stream waits for each before its next op */
	int64_t side_free[2];     /* when each side stream is free */
	int64_t engine_free;      /* when the host-to-device copy engine is free */
	int64_t gather_bytes;     /* FSDP's parameter all-gathers per step, in GATHERS */
	int prefetch;             /* ... each issued a layer ahead, beside the compute */
	int64_t gathered[4];      /* when each layer's parameters are gathered */
	int serve_engine;         /* --serve's frames: 0 vLLM, 1 SGLang, 2 TensorRT-LLM, 3 TGI,
				   * 4 a Hugging Face pipeline, 5 an annotation of one's own */
	int serve_tp;             /* --serve-tp: each kernel on this many devices (0, 1: one) */
	int64_t serve_ar_ns;      /* --serve-allreduce-us: a custom all-reduce after each layer */
	int serve_capture;        /* --serve-capture FILE: the decode graphs' capture written there,
				   * their kernels named as it says (also --serve-capture-inline:
				   * written into the trace before the loop, and --serve-annotate) */
	int serve_annotate;       /* --serve-annotate: each graph kernel's module in its args'
				   * "name", as newer PyTorch's graph annotations write it */
};
#define GATHERS 4

/* one complete event ('X'), and one end of an ac2g flow (ph 's' or 'f') */
void span(struct gen *g, const char *cat, const char *name, int pid, int tid, int64_t ts,
	  int64_t dur, const char *args);
void flow(struct gen *g, char ph, uint64_t id, int pid, int tid, int64_t ts);
/* a [memory] instant on device 0 at ts: bytes allocated (+) or freed (-), the totals after */
void mem_event(struct gen *g, int64_t ts, int64_t bytes, int64_t allocated, int64_t reserved);
/* a collective: its launch on the host at ts (record_param_comms, cudaLaunchKernel, the
 * flow's start), and its NCCL kernel on a stream (with the flow's end) */
#define ALLREDUCE_KERNEL                                                                     \
	"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
void comm_launch(struct gen *g, uint64_t ext, uint64_t corr, int64_t ts);
void comm_kernel(struct gen *g, const char *kernel, const char *coll, int stream, uint64_t ext,
		 uint64_t corr, int64_t in_nelems, int64_t out_nelems, int group, int64_t ts,
		 int64_t dur);
/* a step: its work up to the end of the backward (a job's all-reduce comes after it), then
 * its end (the optimizer, loss.item(), the ProfilerStep span); step() is both */
void step_compute(struct gen *g, int ops, int64_t loader_ns, int pageable);
void step_finish(struct gen *g, int n);
void step(struct gen *g, int n, int ops, int64_t loader_ns, int pageable);
/* --bare: a step of one launch and its kernel inside its ProfilerStep#, one line an event */
void step_bare(struct gen *g, int n);
/* one iteration of a serving loop (bench/gen_serve.c): prefill_tokens of new prompts (0:
 * none) and decode_reqs running requests, then bubble_ns of the scheduler's Python */
void serve_iteration(struct gen *g, int prefill_tokens, int decode_reqs, int64_t bubble_ns);
/* the capture of the decode graphs serve_iteration replays (--serve-capture): each graph's
 * kernel launches between cudaStreamBeginCapture and cudaStreamEndCapture, under the ops and
 * module annotations that launch them, each naming its kernel ("kernel", as roctracer) */
void serve_capture(struct gen *g);
/* vLLM's start-up memory (--serve-kv-gib): determine_available_memory's profile_run (1 GiB
 * allocated and freed), then initialize_kv_cache allocating kv_bytes in 8 tensors, as
 * [memory] instants on top of 4 GiB of weights */
void serve_kv_cache(struct gen *g, int64_t kv_bytes);

#endif
