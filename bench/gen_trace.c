/* SPDX-License-Identifier: MIT */
/* Writes a realistic Kineto trace.json of a training loop, deterministic for a seed: per step a
 * DataLoader __next__, an input copy (pageable or pinned), forward / backward / optimizer ops
 * with python_function frames, cudaLaunchKernel calls with correlation ids, kernels with the
 * usual args, ac2g flows, [memory] instants, and a loss.item() that syncs. Events carry the
 * args PyTorch 2.x writes, so the bytes per event match real traces (~300).
 *
 * With --ranks N it writes a job instead: one file per rank (DIR/rank-R.json), the ranks in
 * lock-step through an NCCL all-reduce at the end of each step's backward. --straggler R
 * makes rank R arrive late at it: --delay MS of host-only Python before it each step
 * (train.py(88): log_metrics), or --imbalance PCT more compute per kernel. Its all-reduce is
 * then launched MS later into each step; the others wait that, less what their GPU still had
 * queued, in the all-reduce - DIR/truth.txt says how long: a known answer for the job view.
 *
 * Bottlenecks for what-if pairs: --items N per-element .item() calls per step (--items-fixed:
 * each replaced by one kernel launch), --element-loop N a Python loop `total += t[i].cpu()` over
 * N elements per step (--element-fix gpu: `total += t[i]` on the GPU; cpu: one .cpu() before
 * the loop; vec: `t.sum().item()`, no loop), --allocs N cudaMalloc + cudaFree pairs per step,
 * --no-loss-item without the step's loss.item(), --launch-loop N a Python loop launching N
 * small kernels per step (--loop-fused: one launch of their fused kernel, the loop's own
 * Python work kept), --allreduce-mb M a gradient all-reduce of M MB per step after the ops
 * (their second half then the backward), exposed (--buckets: in 25 MB buckets during the
 * backward, each once its op ran, as DDP overlaps them), --side-copies N uploads of 4 MB per step onto
 * two side streams from pageable memory, blocking the host (--side-pinned: from pinned memory,
 * non-blocking, sharing the copy engine; --inline-copies: onto the compute stream, behind its
 * kernels; --consumer-wait: the compute stream waits for each before its next kernel, as
 * wait_stream before use does). --gather-mb M: FSDP's parameter all-gathers, M MB a
 * step in 4 (one per layer of the forward, the ops' first half), each issued as its layer
 * starts and waiting for the compute stream, exposed (--prefetch: the next layer's issued as
 * this one starts, running beside its compute, as forward_prefetch does). The DataLoader's
 * __next__ takes --loader-us on the loop's thread, named as a loader with workers; with
 * --single-loader it is the main process's (num_workers=0: the loading is the loop's own host
 * work); with --workers-us P the workers make a batch every P us at their own pace and
 * __next__ waits for it (--loader-us is then what receiving a ready batch costs), so a loop
 * made faster elsewhere waits longer there; with --workers K as well, P is what each of K
 * workers takes a batch, prefetch_factor 2 (2K batches asked for when the pool starts,
 * --pool-lead-us L before the first __next__, worker j j*P/K later with --pool-stagger; then
 * one each time one is consumed), and with
 * --pin-us U each batch is pinned on the pin thread (pin_memory=True) before __next__ gets it.
 * --profile-mix: the mix of a real profile with
 * with_stack and profile_memory on (11 python_function frames above each op, two [memory]
 * samples per op: ~400 per MB). --host-bound: each op's host time ten times as long (90 us),
 * so that the GPU waits while the host runs each op (gpu-idle's host-bound case: a piece of
 * idle per op, each a bound's edit).
 *
 * --bare: each step only its ProfilerStep# span, one cudaLaunchKernel and its kernel, an
 * event a line (~400 bytes a step): the shape of a run of millions of steps, for the cost of
 * passes that grow with them (tests/hostile_test.sh).
 *
 * --serve N writes a serving engine's loop instead (bench/gen_serve.c): N vLLM V1 iterations
 * (execute_model frames, no ProfilerStep#), mostly decode replayed from CUDA graphs, every
 * sixth from the first a prefill and every sixth from the fourth a mixed batch, each with a
 * blocking sampled-token copy and a scheduler bubble of --bubble-us (default 300);
 * --serve-engine sglang|trtllm|tgi|hf writes that engine's frames instead of vLLM's
 * (annotation: only a record_function("serve_step") around each iteration); --serve-tp N
 * puts each kernel on N devices, --serve-allreduce-us U a custom all-reduce of U after each
 * layer's GEMM on a second stream, a quarter of it (at most half the GEMM) beside the GEMM.
 *
 * usage: gen_trace [--size MB | --steps N] [--ops N] [--loader-us N] [--pageable]
 *                  [--single-loader | --workers-us P [--workers K [--pool-lead-us L]
 *                  [--pool-stagger] [--pin-us U]]]
 *                  [--items N [--items-fixed]] [--element-loop N [--element-fix gpu|cpu|vec]]
 *                  [--allocs N] [--no-loss-item]
 *                  [--launch-loop N [--loop-fused]] [--allreduce-mb M [--buckets]]
 *                  [--side-copies N [--side-pinned] [--inline-copies | --consumer-wait]]
 *                  [--gather-mb M [--prefetch]]
 *                  [--profile-mix] [--host-bound] [--seed S] [-o FILE]
 *        gen_trace --bare --steps N [-o FILE]
 *        gen_trace --serve N [--serve-engine E] [--bubble-us N] [--serve-tp N]
 *                  [--serve-allreduce-us U] [--serve-capture FILE] [-o FILE]
 * [--serve-capture-inline] [--serve-annotate] [--serve-kv-gib G]
 * (--serve-capture FILE: the capture of the decode graphs written to FILE, their kernels
 * named as it records them; --serve-capture-inline: into the trace itself, before the loop;
 * --serve-annotate: each graph kernel's module in its args' "name", as newer PyTorch's
 * mark_kernels annotations; --serve-kv-gib G: vLLM's memory profiling and a KV cache of G GiB
 * allocated first, as [memory] instants)
 *        gen_trace --ranks N [--straggler R (--delay MS | --imbalance PCT)] [--steps N]
 *                  [--ops N] [--seed S] -o DIR */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Each rank launches the all-reduce (record_param_comms, cudaLaunchKernel); its kernel starts
 * when its stream is free and ends, on every rank, when the last rank's has started plus the
 * transfer: the ranks that came early spend the difference waiting inside the kernel. */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Returns how long the median rank waits for the last one in it. */
static int64_t allreduce(struct gen *g, int nr, int64_t transfer_ns)
{
	int64_t *start = malloc((size_t)nr * sizeof(*start)), end = 0, wait;
	uint64_t *corr = malloc((size_t)nr * sizeof(*corr)), *ext = malloc((size_t)nr * sizeof(*ext));
	int r;

	for (r = 0; r < nr; r++) {
		struct gen *x = &g[r];
		int64_t ts = x->now_ns;
		ext[r] = ++x->ext;
		corr[r] = ++x->corr;
		comm_launch(x, ext[r], corr[r], ts);
		start[r] = ts + 14000 > x->gpu_ns ? ts + 14000 : x->gpu_ns;
		if (start[r] > end)
			end = start[r];
		x->now_ns = ts + 31000;
	}
	{
		int64_t *v = malloc((size_t)nr * sizeof(*v));
		memcpy(v, start, (size_t)nr * sizeof(*v));
		qsort(v, (size_t)nr, sizeof(*v), cmp_i64);
		wait = end - (nr % 2 ? v[nr / 2] : v[nr / 2 - 1] + (v[nr / 2] - v[nr / 2 - 1]) / 2);
		free(v);
	}
	end += transfer_ns;
	for (r = 0; r < nr; r++) {
		struct gen *x = &g[r];
		comm_kernel(x, ALLREDUCE_KERNEL, "allreduce", 13, ext[r], corr[r], 25557032, 25557032,
			    nr, start[r], end - start[r]);
		x->gpu_ns = end;
		x->comm_seq++;
	}
	free(start);
	free(corr);
	free(ext);
	return wait;
}

static void header(struct gen *g)
{
	fprintf(g->f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, "
		"\"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85031714816,\n      "
		"\"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, "
		"\"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": "
		"32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    }\n  ],\n  "
		"\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %d, \"world_size\": %d},\n  "
		"\"with_stack\": 1,\n  \"displayTimeUnit\": \"ns\",\n  \"baseTimeNanoseconds\": "
		"1700000000000000000,\n  \"traceEvents\": [\n", g->rank, g->world);
}

static int footer(struct gen *g)
{
	fprintf(g->f, "\n  ],\n  \"traceName\": \"generated by tracedoc bench/gen_trace\"\n}\n");
	return fclose(g->f);
}

/* A job of nr ranks into directory dir, in lock-step. */
static int job(const char *dir, int nr, int steps, int ops, int64_t loader_ns, uint64_t seed,
	       int straggler, int64_t delay_ns, int imbalance)
{
	struct gen *g = calloc((size_t)nr, sizeof(*g));
	int r, i, rc = 0;
	int64_t wait = 0;
	char p[4096];
	FILE *tf;

	for (r = 0; r < nr; r++) {
		snprintf(p, sizeof(p), "%s/rank-%d.json", dir, r);
		if (!(g[r].f = fopen(p, "w"))) {
			perror(p);
			return 1;
		}
		g[r].rng = seed; /* the same work on every rank: only the straggler differs */
		g[r].pid = g[r].tid = 4242 + r;
		g[r].first = 1;
		g[r].rank = r;
		g[r].world = nr;
		g[r].now_ns = 1700000000000000000LL / 1000;
		g[r].gpu_ns = g[r].now_ns;
		if (r == straggler) {
			g[r].extra_host_ns = delay_ns;
			g[r].kernel_pct = imbalance;
		}
		header(&g[r]);
	}
	for (i = 1; i <= steps; i++) {
		for (r = 0; r < nr; r++)
			step_compute(&g[r], ops, loader_ns, 0);
		wait += allreduce(g, nr, 1500000);
		for (r = 0; r < nr; r++)
			step_finish(&g[r], i);
		/* the next step starts together: the ranks leave loss.item() at once */
		{
			int64_t t = 0;
			for (r = 0; r < nr; r++)
				if (g[r].now_ns > t)
					t = g[r].now_ns;
			for (r = 0; r < nr; r++)
				g[r].now_ns = t;
		}
	}
	for (r = 0; r < nr; r++)
		if (footer(&g[r]) != 0)
			rc = 1;
	free(g);
	/* the answer, for tests: the others' wait for the straggler (the median rank's) */
	snprintf(p, sizeof(p), "%s/truth.txt", dir);
	if (!(tf = fopen(p, "w"))) {
		perror(p);
		return 1;
	}
	fprintf(tf, "straggler %d\nwait_ns %" PRId64 "\nsteps %d\ndelay_ns %" PRId64 "\n", straggler,
		wait, steps, delay_ns);
	return fclose(tf) != 0 || rc;
}

int main(int argc, char **argv)
{
	struct gen g;
	double size_mb = 0;
	int steps = 0, ops = 200, pageable = 0, i, ranks = 0, straggler = -1, imbalance = 0;
	int bare = 0;
	int serve = 0;
	const char *capture = NULL;
	int inline_capture = 0;
	int64_t kv_bytes = 0;
	int64_t loader_ns = 2000000, delay_ns = 0, bubble_ns = 300000;
	const char *out = NULL;

	memset(&g, 0, sizeof(g));
	g.rng = 88172645463325252ull;
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size_mb = atof(argv[++i]);
		else if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ops") && i + 1 < argc)
			ops = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--loader-us") && i + 1 < argc)
			loader_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--single-loader"))
			g.single_loader = 1;
		else if (!strcmp(argv[i], "--workers-us") && i + 1 < argc)
			g.workers_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			g.workers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pool-lead-us") && i + 1 < argc)
			g.lead_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--pool-stagger"))
			g.stagger = 1;
		else if (!strcmp(argv[i], "--pin-us") && i + 1 < argc)
			g.pin_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--pageable"))
			pageable = 1;
		else if (!strcmp(argv[i], "--items") && i + 1 < argc)
			g.items = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--items-fixed"))
			g.items_fixed = 1;
		else if (!strcmp(argv[i], "--element-loop") && i + 1 < argc)
			g.element_loop = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--element-fix") && i + 1 < argc)
			g.element_fix = argv[++i][0];
		else if (!strcmp(argv[i], "--allocs") && i + 1 < argc)
			g.allocs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-loss-item"))
			g.no_loss_item = 1;
		else if (!strcmp(argv[i], "--launch-loop") && i + 1 < argc)
			g.launch_loop = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--loop-fused"))
			g.loop_fused = 1;
		else if (!strcmp(argv[i], "--allreduce-mb") && i + 1 < argc)
			g.allreduce_bytes = (int64_t)atoi(argv[++i]) << 20;
		else if (!strcmp(argv[i], "--buckets"))
			g.buckets = -1;
		else if (!strcmp(argv[i], "--side-copies") && i + 1 < argc)
			g.side_copies = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--side-pinned"))
			g.side_pinned = 1;
		else if (!strcmp(argv[i], "--inline-copies"))
			g.inline_copies = 1;
		else if (!strcmp(argv[i], "--consumer-wait"))
			g.consumer_wait = 1;
		else if (!strcmp(argv[i], "--gather-mb") && i + 1 < argc)
			g.gather_bytes = (int64_t)atoi(argv[++i]) << 20;
		else if (!strcmp(argv[i], "--prefetch"))
			g.prefetch = 1;
		else if (!strcmp(argv[i], "--bare"))
			bare = 1;
		else if (!strcmp(argv[i], "--profile-mix"))
			g.profile_mix = 1;
		else if (!strcmp(argv[i], "--host-bound"))
			g.host_x = 10;
		else if (!strcmp(argv[i], "--serve") && i + 1 < argc)
			serve = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--serve-engine") && i + 1 < argc) {
			const char *e = argv[++i];
			g.serve_engine = !strcmp(e, "sglang") ? 1 : !strcmp(e, "trtllm") ? 2
					 : !strcmp(e, "tgi") ? 3 : !strcmp(e, "hf") ? 4
					 : !strcmp(e, "annotation") ? 5 : 0;
		} else if (!strcmp(argv[i], "--serve-capture") && i + 1 < argc) {
			capture = argv[++i];
			g.serve_capture = 1;
		} else if (!strcmp(argv[i], "--serve-capture-inline")) {
			inline_capture = 1;
			g.serve_capture = 1;
		} else if (!strcmp(argv[i], "--serve-kv-gib") && i + 1 < argc) {
			kv_bytes = (int64_t)(atof(argv[++i]) * (double)(INT64_C(1) << 30));
		} else if (!strcmp(argv[i], "--serve-annotate")) {
			g.serve_annotate = 1;
			g.serve_capture = 1;
		} else if (!strcmp(argv[i], "--serve-tp") && i + 1 < argc) {
			g.serve_tp = atoi(argv[++i]);
			g.serve_tp = g.serve_tp > 64 ? 64 : g.serve_tp;
		} else if (!strcmp(argv[i], "--serve-allreduce-us") && i + 1 < argc)
			g.serve_ar_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--bubble-us") && i + 1 < argc)
			bubble_ns = (int64_t)atoll(argv[++i]) * 1000;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			g.rng = strtoull(argv[++i], NULL, 10) | 1;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--ranks") && i + 1 < argc)
			ranks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--straggler") && i + 1 < argc)
			straggler = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--delay") && i + 1 < argc)
			delay_ns = (int64_t)(atof(argv[++i]) * 1e6 + 0.5);
		else if (!strcmp(argv[i], "--imbalance") && i + 1 < argc)
			imbalance = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: gen_trace [--size MB | --steps N] [--ops N] [--loader-us N] "
					"[--pageable] [--single-loader | --workers-us P [--workers K "
					"[--pool-lead-us L] [--pool-stagger] [--pin-us U]]] "
					"[--items N [--items-fixed]] [--element-loop N "
					"[--element-fix gpu|cpu|vec]] [--allocs N] "
					"[--no-loss-item] [--launch-loop N [--loop-fused]] "
					"[--allreduce-mb M [--buckets]] "
					"[--side-copies N [--side-pinned] [--inline-copies | "
					"--consumer-wait]] "
					"[--gather-mb M [--prefetch]] "
					"[--profile-mix] [--host-bound] [--seed S] [-o FILE]\n"
					"       gen_trace --bare --steps N [-o FILE]\n"
					"       gen_trace --serve N [--serve-engine vllm|sglang|trtllm|tgi|hf|annotation] "
					"[--bubble-us N] [--serve-tp N] [--serve-allreduce-us U] "
					"[--serve-capture FILE | --serve-capture-inline] "
					"[--serve-annotate] [--serve-kv-gib G] [-o FILE]\n"
					"       gen_trace --ranks N [--straggler R (--delay MS | "
					"--imbalance PCT)] [--steps N] [--ops N] [--seed S] -o DIR\n");
			return 2;
		}
	}
	if (g.workers < 0 || g.workers > 64 || (g.workers && g.workers_ns <= 0)) {
		fprintf(stderr, "gen_trace: --workers K needs --workers-us P, and 1 to 64 workers\n");
		return 2;
	}
	if (ranks > 0) {
		if (!out || ranks > 4096 || straggler >= ranks) {
			fprintf(stderr, "gen_trace: --ranks needs -o DIR, at most 4096 ranks, and a "
					"straggler among them\n");
			return 2;
		}
		return job(out, ranks, steps ? steps : 4, ops, loader_ns, g.rng, straggler, delay_ns,
			   imbalance);
	}
	if (!steps && size_mb <= 0)
		steps = 4;
	g.f = out ? fopen(out, "w") : stdout;
	if (!g.f) {
		perror(out);
		return 1;
	}
	if (g.buckets) /* 25 MB each, as DDP's bucket_cap_mb */
		g.buckets = g.allreduce_bytes ? (int)((g.allreduce_bytes + (25 << 20) - 1) >> 20) / 25
					      : 0;
	g.pid = 4242;
	g.tid = 4242;
	g.first = 1;
	g.now_ns = 1700000000000000000LL / 1000; /* ts in us since some epoch, as Kineto does */
	g.gpu_ns = g.now_ns;
	g.world = 1;
	if (capture) { /* the same server's capture, before it serves */
		struct gen c = g;
		c.f = fopen(capture, "w");
		if (!c.f) {
			perror(capture);
			return 1;
		}
		header(&c);
		serve_capture(&c);
		if (footer(&c) != 0) {
			perror(capture);
			return 1;
		}
	}
	header(&g);
	if (serve && kv_bytes > 0)
		serve_kv_cache(&g, kv_bytes);
	if (serve && inline_capture)
		serve_capture(&g);
	for (i = 0; i < serve; i++) /* a prefill, decode, a mixed batch, decode, ... */
		serve_iteration(&g, i % 6 == 0 ? 2048 : i % 6 == 3 ? 256 : 0, i % 6 == 0 ? 0 : 16,
				bubble_ns);
	for (i = 1; !serve && (steps ? i <= steps : (double)g.bytes < size_mb * 1e6); i++)
		if (bare)
			step_bare(&g, i);
		else
			step(&g, i, ops, loader_ns, pageable);
	if (!out) {
		fprintf(g.f, "\n  ],\n  \"traceName\": \"generated by tracedoc bench/gen_trace\"\n}\n");
		return fflush(g.f) != 0;
	}
	if (footer(&g) != 0) {
		perror(out);
		return 1;
	}
	return 0;
}
