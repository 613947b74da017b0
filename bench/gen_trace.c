/* SPDX-License-Identifier: MIT */
/* Writes a realistic Kineto trace.json of a training loop, deterministic for a seed: per step a
 * DataLoader __next__, an input copy (pageable or pinned), forward / backward / optimizer ops
 * with python_function frames, cudaLaunchKernel calls with correlation ids, kernels with the
 * usual args, ac2g flows, [memory] instants, and a loss.item() that syncs. Events carry the
 * args PyTorch 2.x writes, so the bytes per event match real traces (~300).
 *
 * usage: gen_trace [--size MB | --steps N] [--ops N] [--loader-us N] [--pageable]
 *                  [--seed S] [-o FILE] */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gen {
	FILE *f;
	uint64_t rng;
	int64_t now_ns;  /* host clock */
	int64_t gpu_ns;  /* when the GPU stream is free */
	uint64_t ext, corr, ev_idx, py_id, bytes;
	int first;
	int pid, tid;
};

static uint64_t rnd(struct gen *g)
{
	g->rng ^= g->rng << 13;
	g->rng ^= g->rng >> 7;
	g->rng ^= g->rng << 17;
	return g->rng;
}

static int64_t jitter(struct gen *g, int64_t ns, int pct)
{
	return ns + (int64_t)(rnd(g) % (uint64_t)(ns * pct / 100 + 1));
}

/* microseconds with ns digits, as Kineto writes them */
static void us(char *buf, int64_t ns)
{
	sprintf(buf, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void begin_event(struct gen *g)
{
	if (!g->first)
		fputs(",\n", g->f);
	g->first = 0;
}

static void span(struct gen *g, const char *cat, const char *name, int pid, int tid, int64_t ts,
		 int64_t dur, const char *args)
{
	char a[32], b[32];
	int n;

	us(a, ts);
	us(b, dur);
	begin_event(g);
	n = fprintf(g->f, "  {\n    \"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": %d, "
		    "\"tid\": %d,\n    \"ts\": %s, \"dur\": %s,\n    \"args\": {\n      %s\n    }\n  }",
		    cat, name, pid, tid, a, b, args);
	g->bytes += (uint64_t)n + 2;
}

static void flow(struct gen *g, char ph, uint64_t id, int pid, int tid, int64_t ts)
{
	char a[32];
	int n;

	us(a, ts);
	begin_event(g);
	n = fprintf(g->f, "  {\n    \"ph\": \"%c\", \"id\": %" PRIu64 ", \"pid\": %d, \"tid\": %d, "
		    "\"ts\": %s,\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"%s\n  }",
		    ph, id, pid, tid, a, ph == 'f' ? ", \"bp\": \"e\"" : "");
	g->bytes += (uint64_t)n + 2;
}

static void memory(struct gen *g, int64_t bytes)
{
	char a[32];
	int n;

	us(a, g->now_ns);
	begin_event(g);
	n = fprintf(g->f, "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
		    "\"name\": \"[memory]\",\n    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    "
		    "\"args\": {\n      \"Total Reserved\": 2097152000, \"Total Allocated\": %" PRId64
		    ", \"Bytes\": %" PRId64 ", \"Addr\": 139926520725504, \"Device Id\": 0, "
		    "\"Device Type\": 1, \"Ev Idx\": %" PRIu64 "\n    }\n  }",
		    g->pid, g->tid, a, (int64_t)(1 << 30) + bytes, bytes, g->ev_idx++);
	g->bytes += (uint64_t)n + 2;
}

/* a cpu_op that launches one kernel: op, runtime call, flow, kernel */
static void op_with_kernel(struct gen *g, const char *op, const char *kernel, int64_t host_ns,
			   int64_t kernel_ns, const char *dims)
{
	char args[512];
	int64_t op_ts = g->now_ns, launch_ts, k_ts;
	uint64_t ext = ++g->ext, corr = ++g->corr;

	snprintf(args, sizeof(args),
		 "\"External id\": %" PRIu64 ",\"Record function id\": 0, \"Ev Idx\": %" PRIu64 ", "
		 "\"Sequence number\": %" PRIu64 ", \"Fwd thread id\": 0, \"Input Dims\": %s, "
		 "\"Input type\": [\"float\", \"float\", \"float\"], \"Input Strides\": [[4096, 1], "
		 "[4096, 1], [1]], \"Concrete Inputs\": [\"\", \"\", \"\"]",
		 ext, g->ev_idx++, ext / 3, dims);
	span(g, "cpu_op", op, g->pid, g->tid, op_ts, host_ns, args);
	launch_ts = op_ts + host_ns / 3;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 211, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaLaunchKernel", g->pid, g->tid, launch_ts, host_ns / 3, args);
	flow(g, 's', corr, g->pid, g->tid, launch_ts);
	k_ts = launch_ts + 4000 > g->gpu_ns ? launch_ts + 4000 : g->gpu_ns;
	snprintf(args, sizeof(args),
		 "\"External id\": %" PRIu64 ", \"queued\": 0, \"device\": 0, \"context\": 1, "
		 "\"stream\": 7, \"correlation\": %" PRIu64 ", \"registers per thread\": 72, "
		 "\"shared memory\": 16384, \"blocks per SM\": 1.2, \"warps per SM\": 4.8, \"grid\": "
		 "[160, 1, 1], \"block\": [128, 1, 1], \"est. achieved occupancy %%\": 12",
		 ext, corr);
	span(g, "kernel", kernel, 0, 7, k_ts, kernel_ns, args);
	flow(g, 'f', corr, 0, 7, k_ts);
	g->gpu_ns = k_ts + kernel_ns;
	g->now_ns = op_ts + host_ns + 1500;
}

static void copy(struct gen *g, const char *dir, const char *kinds, int64_t bytes, int sync)
{
	char args[256], name[96];
	int64_t op_ts = g->now_ns, call_ts = op_ts + 3000, c_ts, c_dur = bytes / 10 + 1500;
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int64_t call_dur = sync ? 0 : 6000;

	c_ts = call_ts + 2000 > g->gpu_ns ? call_ts + 2000 : g->gpu_ns;
	if (sync)
		call_dur = c_ts + c_dur - call_ts + 2000;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ext, g->ev_idx++);
	if (sync) /* loss.item(): aten::item > aten::_local_scalar_dense > the copy */
		span(g, "cpu_op", "aten::item", g->pid, g->tid, op_ts - 1000, call_dur + 10000, args);
	span(g, "cpu_op", sync ? "aten::_local_scalar_dense" : "aten::copy_", g->pid, g->tid, op_ts,
	     call_dur + 8000, args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 41, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaMemcpyAsync", g->pid, g->tid, call_ts, call_dur, args);
	snprintf(name, sizeof(name), "Memcpy %s (%s)", dir, kinds);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, "
		 "\"stream\": 7, \"correlation\": %" PRIu64 ", \"bytes\": %" PRId64 ", \"memory "
		 "bandwidth (GB/s)\": %.3f", ext, corr, bytes, (double)bytes / (double)c_dur);
	span(g, "gpu_memcpy", name, 0, 7, c_ts, c_dur, args);
	g->gpu_ns = c_ts + c_dur;
	if (sync) {
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cuda_sync_kind\": \"Stream "
			 "Sync\", \"stream\": 7, \"correlation\": %" PRIu64 ", \"device\": 0, "
			 "\"context\": 1", ext, corr);
		span(g, "cuda_sync", "Stream Sync", 0, 7, g->gpu_ns, 1000, args);
	}
	g->now_ns = op_ts + call_dur + 9000;
}

static const char *const layer_ops[][2] = {
	{"aten::addmm", "ampere_sgemm_128x64_tn"},
	{"aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)"},
	{"aten::add_", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"},
	{"aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)"},
};

static void python_frame(struct gen *g, const char *name, int64_t ts, int64_t dur)
{
	char args[160];
	snprintf(args, sizeof(args), "\"Python parent id\": %" PRIu64 ", \"Python id\": %" PRIu64
		 ", \"Ev Idx\": %" PRIu64, g->py_id, g->py_id + 1, g->ev_idx++);
	g->py_id++;
	span(g, "python_function", name, g->pid, g->tid, ts, dur, args);
}

static void step(struct gen *g, int n, int ops, int64_t loader_ns, int pageable)
{
	char name[64], args[128];
	int64_t step_ts = g->now_ns, loader_ts, fwd_ts;
	int i;

	/* DataLoader */
	loader_ts = g->now_ns + 2000;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
	{
		int64_t d = jitter(g, loader_ns, 20);
		span(g, "user_annotation",
		     "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", g->pid, g->tid,
		     loader_ts, d, args);
		g->now_ns = loader_ts + d + 3000;
	}
	copy(g, "HtoD", pageable ? "Pageable -> Device" : "Pinned -> Device", 3 * 224 * 224 * 4 * 8,
	     0);
	memory(g, 4 << 20);
	fwd_ts = g->now_ns;
	for (i = 0; i < ops; i++) {
		int k = (int)(rnd(g) % 4);
		int64_t host = jitter(g, 9000, 50), dev = k == 0 ? jitter(g, 60000, 40) : jitter(g, 3000, 80);
		op_with_kernel(g, layer_ops[k][0], layer_ops[k][1], host, dev,
			       "[[64, 4096], [64, 4096], [4096]]");
		if (i % 16 == 15)
			memory(g, -(2 << 20));
	}
	python_frame(g, "train.py(57): train_step", fwd_ts - 1000, g->now_ns - fwd_ts + 2000);
	copy(g, "DtoH", "Device -> Pageable", 4, 1); /* loss.item() */
	g->now_ns += 5000;
	snprintf(name, sizeof(name), "ProfilerStep#%d", n);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
	span(g, "user_annotation", name, g->pid, g->tid, step_ts, g->now_ns - step_ts, args);
	g->now_ns += 1000;
}

int main(int argc, char **argv)
{
	struct gen g;
	double size_mb = 0;
	int steps = 0, ops = 200, pageable = 0, i;
	int64_t loader_ns = 2000000;
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
		else if (!strcmp(argv[i], "--pageable"))
			pageable = 1;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			g.rng = strtoull(argv[++i], NULL, 10) | 1;
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			out = argv[++i];
		else {
			fprintf(stderr, "usage: gen_trace [--size MB | --steps N] [--ops N] [--loader-us N] "
					"[--pageable] [--seed S] [-o FILE]\n");
			return 2;
		}
	}
	if (!steps && size_mb <= 0)
		steps = 4;
	g.f = out ? fopen(out, "w") : stdout;
	if (!g.f) {
		perror(out);
		return 1;
	}
	g.pid = 4242;
	g.tid = 4242;
	g.first = 1;
	g.now_ns = 1700000000000000000LL / 1000; /* ts in us since some epoch, as Kineto does */
	g.gpu_ns = g.now_ns;
	fprintf(g.f, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [\n    {\n      \"id\": 0, "
		"\"name\": \"NVIDIA H100 80GB HBM3\", \"totalGlobalMem\": 85031714816,\n      "
		"\"computeMajor\": 9, \"computeMinor\": 0,\n      \"maxThreadsPerBlock\": 1024, "
		"\"maxThreadsPerMultiprocessor\": 2048,\n      \"regsPerBlock\": 65536, \"warpSize\": "
		"32,\n      \"sharedMemPerBlock\": 49152, \"numSms\": 132\n    }\n  ],\n  "
		"\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": 0, \"world_size\": 1},\n  "
		"\"with_stack\": 1,\n  \"displayTimeUnit\": \"ns\",\n  \"baseTimeNanoseconds\": "
		"1700000000000000000,\n  \"traceEvents\": [\n");
	for (i = 1; steps ? i <= steps : (double)g.bytes < size_mb * 1e6; i++)
		step(&g, i, ops, loader_ns, pageable);
	fprintf(g.f, "\n  ],\n  \"traceName\": \"generated by tracedoc bench/gen_trace\"\n}\n");
	if (out && fclose(g.f) != 0) {
		perror(out);
		return 1;
	}
	return 0;
}
