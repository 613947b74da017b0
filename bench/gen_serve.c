/* SPDX-License-Identifier: MIT */
/* A serving engine's loop for gen_trace --serve (bench/gen.h), as vLLM V1 records it (or, with
 * --serve-engine, SGLang, TensorRT-LLM, TGI or a Hugging Face pipeline: iteration_frames()): per
 * iteration the model runner's execute_model frame with vLLM's execute_context_C(T)_
 * generation_G(G) annotation, the embedding of the batch's tokens (its Input Dims), then the
 * forward: a prefill iteration eagerly (a launch per op, long GEMMs), a decode one replayed
 * from GRAPHS cudaGraphLaunch calls of GRAPH_KERNELS kernels each; then the sampled tokens
 * copied to pageable host memory (a blocking DtoH copy: it waits for the forward), and the
 * scheduler's Python before the next iteration with the GPU idle (the bubble).
 * --serve-tp N puts each kernel on N devices at once (tensor parallel, one process);
 * --serve-allreduce-us U follows each layer's GEMM with vLLM's custom all-reduce on a second
 * stream, U long, begun AR_OVERLAP(U, GEMM) before the GEMM ends, the next layer waiting for
 * it: U - AR_OVERLAP of each is exposed (no compute beside it). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gen.h"

#define GRAPHS 4
#define GRAPH_KERNELS 8
#define PREFILL_OPS 24

/* how long an all-reduce of ar_ns overlaps the end of the GEMM (gemm_ns) before it */
#define AR_OVERLAP(ar_ns, gemm_ns) ((ar_ns) / 4 < (gemm_ns) / 2 ? (ar_ns) / 4 : (gemm_ns) / 2)
#define AR_KERNEL "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 2>(vllm::RankData*, " \
		  "vllm::RankSignals, vllm::Signal*, __nv_bfloat16*, int, int)"
#define AR_STREAM 13

/* With --serve-capture, each decode graph's kernels by name, and the ops and modules that
 * launched each at capture: a layer is an RMSNorm, the QKV GEMM, attention and the output
 * GEMM (the GEMM kernel twice, under two modules); graph 0 starts with the embedding's
 * lookup and graph 3 ends with the lm_head's GEMM (graphs 1 and 2 capture the same). */
#define GEMM "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64"
static const char *const graph_names[GRAPHS][GRAPH_KERNELS] = {
	{"vocab_embedding_kernel", GEMM, "paged_attention_v2_kernel", GEMM, "rms_norm_kernel",
	 GEMM, "paged_attention_v2_kernel", GEMM},
	{"rms_norm_kernel", GEMM, "paged_attention_v2_kernel", GEMM, "rms_norm_kernel", GEMM,
	 "paged_attention_v2_kernel", GEMM},
	{"rms_norm_kernel", GEMM, "paged_attention_v2_kernel", GEMM, "rms_norm_kernel", GEMM,
	 "paged_attention_v2_kernel", GEMM},
	{"rms_norm_kernel", GEMM, "paged_attention_v2_kernel", GEMM, "rms_norm_kernel", GEMM,
	 "paged_attention_v2_kernel", "lm_head_gemm_kernel"},
};
/* the op and module of each kernel name (a GEMM: by its place in the layer) */
static void graph_op(const char *kernel, int j, const char **op, const char **module)
{
	*op = "aten::mm";
	*module = j % 4 == 1 ? "QKVParallelLinear" : "RowParallelLinear";
	if (!strcmp(kernel, "vocab_embedding_kernel"))
		*op = "aten::embedding", *module = "VocabParallelEmbedding";
	else if (!strcmp(kernel, "rms_norm_kernel"))
		*op = "vllm::rms_norm", *module = "RMSNorm";
	else if (!strcmp(kernel, "paged_attention_v2_kernel"))
		*op = "vllm::unified_attention", *module = "Attention";
	else if (!strcmp(kernel, "lm_head_gemm_kernel"))
		*module = "ParallelLMHead";
}

static void frame(struct gen *g, const char *cat, const char *name, int64_t ts, int64_t dur);

void serve_kv_cache(struct gen *g, int64_t kv_bytes)
{
	const int64_t gib = INT64_C(1) << 30, weights = 4 * gib, reserved = weights + gib / 2;
	int64_t t = g->now_ns, part = kv_bytes / 8;
	int k;

	frame(g, "python_function", "vllm/v1/worker/gpu_worker.py(310): determine_available_memory",
	      t, 300000);
	frame(g, "python_function", "vllm/v1/worker/gpu_model_runner.py(4950): profile_run",
	      t + 1000, 290000);
	mem_event(g, t + 10000, gib, weights + gib, reserved + gib);
	mem_event(g, t + 200000, -gib, weights, reserved + gib); /* freed, kept cached */
	t += 400000;
	frame(g, "python_function", "vllm/v1/worker/gpu_model_runner.py(5600): initialize_kv_cache",
	      t, 400000);
	frame(g, "python_function",
	      "vllm/v1/worker/gpu_model_runner.py(5500): _allocate_kv_cache_tensors", t + 1000,
	      300000);
	for (k = 1; k <= 8; k++)
		mem_event(g, t + 1000 + k * 30000, part, weights + k * part,
			  reserved + gib + k * part);
	g->now_ns = t + 500000;
}

void serve_capture(struct gen *g)
{
	char args[512];
	int64_t t = g->now_ns;
	int gi, j;

	frame(g, "user_annotation", "capture_32_DECODE", t, GRAPHS * 200000);
	for (gi = 0; gi < GRAPHS; gi++, t += 200000) {
		int64_t k = t + 5000;
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"correlation\": %" PRIu64,
			 ++g->ext, ++g->corr);
		span(g, "cuda_runtime", "cudaStreamBeginCapture", g->pid, g->tid, t + 1000, 2000, args);
		for (j = 0; j < GRAPH_KERNELS; j++, k += 20000) {
			const char *op, *module, *name = graph_names[gi][j];
			graph_op(name, j, &op, &module);
			if (j % 4 == 0)
				frame(g, "user_annotation", "LlamaDecoderLayer", k, 4 * 20000 - 1000);
			frame(g, "user_annotation", module, k + 500, 15000);
			frame(g, "cpu_op", op, k + 1000, 12000);
			snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"correlation\": %"
				 PRIu64 ", \"kernel\": \"%s\"", ++g->ext, ++g->corr, name);
			span(g, "cuda_runtime", "cudaLaunchKernel", g->pid, g->tid, k + 3000, 5000, args);
		}
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"correlation\": %" PRIu64,
			 ++g->ext, ++g->corr);
		span(g, "cuda_runtime", "cudaStreamEndCapture", g->pid, g->tid, k + 1000, 3000, args);
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"correlation\": %" PRIu64,
			 ++g->ext, ++g->corr);
		span(g, "cuda_runtime", "cudaGraphInstantiate", g->pid, g->tid, k + 5000, 20000, args);
	}
	g->now_ns = t;
}

/* kernel on stream at ts on every device (--serve-tp), its launch's correlation */
static void on_devices(struct gen *g, const char *kernel, int stream, uint64_t ext,
		       uint64_t corr, int64_t ts, int64_t dur, int first, const char *mark)
{
	char args[384];
	int d, n = g->serve_tp > 1 ? g->serve_tp : 1;

	for (d = 0; d < n; d++) {
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"device\": %d, "
			 "\"context\": 1, \"stream\": %d, \"correlation\": %" PRIu64 "%s%s%s", ext, d,
			 stream, corr, mark ? ", \"name\": \"" : "", mark ? mark : "", mark ? "\"" : "");
		span(g, "kernel", kernel, d, stream, ts, dur, args);
		if (first)
			flow(g, 'f', corr, d, stream, ts);
	}
}

/* a runtime call of name at ts launching n kernels of kernel_ns each (one correlation id),
 * each a layer's GEMM followed by its all-reduce when layer and --serve-allreduce-us; returns
 * when the last one ends */
static int64_t launch(struct gen *g, const char *call, int64_t ts, int64_t call_ns,
		      const char *kernel, int n, int64_t kernel_ns, int layer,
		      const char *const *names)
{
	char args[256];
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int64_t k_ts = ts + 4000 > g->gpu_ns ? ts + 4000 : g->gpu_ns;
	int i;

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 211, "
		 "\"correlation\": %" PRIu64, ext, corr);
	span(g, "cuda_runtime", call, g->pid, g->tid, ts, call_ns, args);
	flow(g, 's', corr, g->pid, g->tid, ts);
	for (i = 0; i < n; i++) {
		const char *op, *module = NULL;
		if (names && g->serve_annotate) /* mark_kernels: the module's name in its args */
			graph_op(names[i], i, &op, &module);
		on_devices(g, names ? names[i] : kernel, 7, ext, corr, k_ts, kernel_ns, i == 0,
			   module);
		k_ts += kernel_ns;
		if (layer && g->serve_ar_ns > 0) { /* the next layer waits for the reduced output */
			k_ts -= AR_OVERLAP(g->serve_ar_ns, kernel_ns);
			on_devices(g, AR_KERNEL, AR_STREAM, ext, corr, k_ts, g->serve_ar_ns, 0, NULL);
			k_ts += g->serve_ar_ns;
		}
		k_ts += 1000;
	}
	g->gpu_ns = k_ts - 1000;
	return g->gpu_ns;
}

static void frame(struct gen *g, const char *cat, const char *name, int64_t ts, int64_t dur)
{
	char args[128];

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"Ev Idx\": %" PRIu64,
		 ++g->ext, g->ev_idx++);
	span(g, cat, name, g->pid, g->tid, ts, dur, args);
}

/* The engine's own frames around the iteration [ts, end): vLLM's execute_model and its
 * execute_context annotation, SGLang's run_batch and its step[MODE ...] annotation, TGI's
 * generate_token under its Prefill / Decode call, TensorRT-LLM's _forward_step or a Hugging
 * Face pipeline's __call__ (these two without a phase mark: told from the batch's size), or
 * only an annotation of the user's own around each iteration. */
static void iteration_frames(struct gen *g, int prefill_tokens, int decode_reqs, int64_t ts,
			     int64_t end)
{
	char name[160];
	const char *mode = !prefill_tokens ? "DECODE" : decode_reqs ? "MIXED" : "EXTEND";

	switch (g->serve_engine) {
	case 1:
		snprintf(name, sizeof(name), "step[%s bs=%d toks=%d]", mode,
			 decode_reqs + (prefill_tokens > 0), prefill_tokens + decode_reqs);
		frame(g, "user_annotation", name, ts + 2000, end - ts - 3000);
		frame(g, "python_function", "sglang/srt/managers/scheduler.py(1802): run_batch", ts,
		      end - ts);
		break;
	case 2:
		frame(g, "python_function",
		      "tensorrt_llm/_torch/pyexecutor/py_executor.py(1410): _forward_step", ts, end - ts);
		break;
	case 3:
		frame(g, "python_function", prefill_tokens
		      ? "text_generation_server/server.py(160): Prefill"
		      : "text_generation_server/server.py(190): Decode", ts - 1000, end - ts + 2000);
		frame(g, "python_function",
		      "text_generation_server/models/flash_causal_lm.py(1700): generate_token", ts,
		      end - ts);
		break;
	case 4:
		frame(g, "python_function", "transformers/pipelines/base.py(1360): __call__", ts,
		      end - ts);
		break;
	case 5: /* a loop of one's own, marked with torch.profiler.record_function("serve_step") */
		frame(g, "user_annotation", "serve_step", ts, end - ts);
		break;
	default:
		snprintf(name, sizeof(name), "execute_context_%d(%d)_generation_%d(%d)",
			 prefill_tokens ? 1 : 0, prefill_tokens, decode_reqs, decode_reqs);
		frame(g, "user_annotation", name, ts + 2000, end - ts - 3000);
		frame(g, "python_function", "vllm/v1/worker/gpu_model_runner.py(3758): execute_model",
		      ts, end - ts);
	}
}

void serve_iteration(struct gen *g, int prefill_tokens, int decode_reqs, int64_t bubble_ns)
{
	char args[512];
	int64_t it_ts = g->now_ns, t, copy_ts, done;
	uint64_t ext = ++g->ext, corr;
	int i, tokens = prefill_tokens + decode_reqs;

	t = it_ts + 20000; /* _prepare_inputs */
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"Ev Idx\": %" PRIu64 ", "
		 "\"Input Dims\": [[151936, 4096], [%d]], \"Input type\": [\"c10::BFloat16\", "
		 "\"long int\"]", ext, g->ev_idx++, tokens);
	span(g, "cpu_op", "aten::embedding", g->pid, g->tid, t, 12000, args);
	launch(g, "cudaLaunchKernel", t + 4000, 5000, "void at::native::indexSelectLargeIndex", 1,
	       3000 + (int64_t)tokens * 2, 0, NULL);
	t += 13000;
	if (prefill_tokens) /* eager: a launch per op, each GEMM long with the prompt */
		for (i = 0; i < PREFILL_OPS; i++, t += 30000)
			launch(g, "cudaLaunchKernel", t + 22000, 5000,
			       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
			       1, 20000 + (int64_t)prefill_tokens * 100, 1, NULL);
	else /* decode: the captured forward replayed, a few launches */
		for (i = 0; i < GRAPHS; i++, t += 15000)
			launch(g, "cudaGraphLaunch", t + 8000, 6000,
			       "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64",
			       GRAPH_KERNELS, 9000, 1, g->serve_capture ? graph_names[i] : NULL);
	/* the sampled token ids to the host: blocks until the forward ends */
	copy_ts = t + 5000;
	corr = ++g->corr;
	done = (g->gpu_ns > copy_ts + 4000 ? g->gpu_ns : copy_ts + 4000) + 2000;
	frame(g, "python_function", "vllm/v1/worker/gpu_model_runner.py(2204): _to_list", copy_ts,
	      done - copy_ts + 3000);
	frame(g, "cpu_op", "aten::copy_", copy_ts + 500, done - copy_ts + 1000);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 41, "
		 "\"correlation\": %" PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaMemcpyAsync", g->pid, g->tid, copy_ts + 1000,
	     done - copy_ts, args);
	snprintf(args, sizeof(args), "\"device\": 0, \"context\": 1, \"stream\": 7, "
		 "\"correlation\": %" PRIu64 ", \"bytes\": %d, \"memory bandwidth (GB/s)\": 0.1",
		 corr, 8 * (decode_reqs + (prefill_tokens > 0)));
	span(g, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 0, 7, done - 2000, 1500, args);
	g->gpu_ns = done - 500;
	t = done + 5000;
	iteration_frames(g, prefill_tokens, decode_reqs, it_ts, t);
	/* the scheduler's turn: Python only, the GPU idle */
	frame(g, "python_function", "vllm/v1/core/sched/scheduler.py(217): schedule", t + 1000,
	      bubble_ns);
	g->now_ns = t + bubble_ns + 2000;
}
