/* SPDX-License-Identifier: MIT */
/* The events gen_trace writes (bench/gen.h): one event's text, a span and a flow, the ops of
 * a step with their launches, kernels, copies, collectives, Python frames and memory samples,
 * and the bottlenecks (and fixes) the what-if pairs ask for. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

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

void span(struct gen *g, const char *cat, const char *name, int pid, int tid, int64_t ts,
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

void flow(struct gen *g, char ph, uint64_t id, int pid, int tid, int64_t ts)
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

void mem_event(struct gen *g, int64_t ts, int64_t bytes, int64_t allocated, int64_t reserved)
{
	char a[32];
	int n;

	us(a, ts);
	begin_event(g);
	n = fprintf(g->f, "  {\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", "
		    "\"name\": \"[memory]\",\n    \"pid\": %d, \"tid\": %d,\n    \"ts\": %s,\n    "
		    "\"args\": {\n      \"Total Reserved\": %" PRId64 ", \"Total Allocated\": %" PRId64
		    ", \"Bytes\": %" PRId64 ", \"Addr\": %" PRIu64 ", \"Device Id\": 0, "
		    "\"Device Type\": 1, \"Ev Idx\": %" PRIu64 "\n    }\n  }",
		    g->pid, g->tid, a, reserved, allocated, bytes,
		    (uint64_t)139926520725504ull + g->ev_idx * 4096, g->ev_idx);
	g->ev_idx++;
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
	if (!strcmp(dir, "HtoD") && g->engine_free > c_ts) /* behind a side stream's upload */
		c_ts = g->engine_free;
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
	if (!strcmp(dir, "HtoD"))
		g->engine_free = g->gpu_ns;
	if (sync) {
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cuda_sync_kind\": \"Stream "
			 "Sync\", \"stream\": 7, \"correlation\": %" PRIu64 ", \"device\": 0, "
			 "\"context\": 1", ext, corr);
		span(g, "cuda_sync", "Stream Sync", 0, 7, g->gpu_ns, 1000, args);
	}
	g->now_ns = op_ts + call_dur + 9000;
}

/* An upload of 4 MB onto side stream 20 or 24 (aten::copy_ > cudaMemcpyAsync). Pageable: the
 * host stages it, the copy runs at 6 GB/s and the call returns after it, then syncs the stream.
 * Pinned: the call returns at once and the copy runs at 10 GB/s. Either way the copies share
 * the host-to-device engine: one waits for the one before it to end. */
static void side_copy(struct gen *g, int n)
{
	char args[256];
	int stream = g->inline_copies ? 7 : n % 2 ? 24 : 20;
	int64_t bytes = 4 << 20, op_ts = g->now_ns, call_ts = op_ts + 3000, c_ts, c_dur, call_dur;
	uint64_t ext = ++g->ext, corr = ++g->corr;

	c_ts = call_ts + 2000;
	if (g->side_free[n % 2] > c_ts)
		c_ts = g->side_free[n % 2];
	if (g->engine_free > c_ts)
		c_ts = g->engine_free;
	if (g->inline_copies && g->gpu_ns > c_ts) /* in stream order behind the compute */
		c_ts = g->gpu_ns;
	c_dur = bytes / (g->side_pinned ? 10 : 6) + 1500;
	call_dur = g->side_pinned ? 6000 : c_ts + c_dur - call_ts + 2000;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ext, g->ev_idx++);
	span(g, "cpu_op", "aten::copy_", g->pid, g->tid, op_ts, call_dur + (g->side_pinned ? 5000 : 9000),
	     args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 41, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaMemcpyAsync", g->pid, g->tid, call_ts, call_dur, args);
	flow(g, 's', corr, g->pid, g->tid, call_ts);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, "
		 "\"stream\": %d, \"correlation\": %" PRIu64 ", \"bytes\": %" PRId64 ", \"memory "
		 "bandwidth (GB/s)\": %.3f", ext, stream, corr, bytes, (double)bytes / (double)c_dur);
	span(g, "gpu_memcpy", g->side_pinned ? "Memcpy HtoD (Pinned -> Device)"
	     : "Memcpy HtoD (Pageable -> Device)", 0, stream, c_ts, c_dur, args);
	flow(g, 'f', corr, 0, stream, c_ts);
	g->side_free[n % 2] = g->engine_free = c_ts + c_dur;
	if ((g->inline_copies || g->consumer_wait) && g->gpu_ns < c_ts + c_dur)
		g->gpu_ns = c_ts + c_dur; /* the compute after it waits for it */
	if (!g->side_pinned) { /* PyTorch syncs the stream after a blocking copy */
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 131, "
			 "\"correlation\": %" PRIu64, ext, ++g->corr);
		span(g, "cuda_runtime", "cudaStreamSynchronize", g->pid, g->tid,
		     call_ts + call_dur + 1000, 3000, args);
	}
	g->now_ns = op_ts + call_dur + (g->side_pinned ? 5000 : 9000) + 1000;
}

/* A collective's launch on the host at ts: record_param_comms, its cudaLaunchKernel 10 us in,
 * and the flow's start there. */
void comm_launch(struct gen *g, uint64_t ext, uint64_t corr, int64_t ts)
{
	char args[256];

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ext, g->ev_idx++);
	span(g, "cpu_op", "record_param_comms", g->pid, g->tid, ts, 30000, args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 211, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaLaunchKernel", g->pid, g->tid, ts + 10000, 8000, args);
	flow(g, 's', corr, g->pid, g->tid, ts + 10000);
}

/* Its NCCL kernel on stream `stream` (device 0) from ts for dur, with the args PyTorch writes,
 * and the flow's end there. */
void comm_kernel(struct gen *g, const char *kernel, const char *coll, int stream, uint64_t ext,
		 uint64_t corr, int64_t in_nelems, int64_t out_nelems, int group, int64_t ts,
		 int64_t dur)
{
	char args[640];

	snprintf(args, sizeof(args),
		 "\"External id\": %" PRIu64 ", \"queued\": 0, \"device\": 0, \"context\": 1, "
		 "\"stream\": %d, \"correlation\": %" PRIu64 ", \"registers per thread\": 96, "
		 "\"shared memory\": 0, \"grid\": [2, 1, 1], \"block\": [640, 1, 1], "
		 "\"Collective name\": \"%s\", \"In msg nelems\": %" PRId64 ", "
		 "\"Out msg nelems\": %" PRId64 ", \"Group size\": %d, \"dtype\": \"Float\", "
		 "\"Process Group Name\": \"0\", \"Process Group Description\": \"default_pg\", "
		 "\"Process Group Ranks\": \"[all]\"", ext, stream, corr, coll, in_nelems, out_nelems,
		 group);
	span(g, "kernel", kernel, 0, stream, ts, dur, args);
	flow(g, 'f', corr, 0, stream, ts);
}

/* An all-reduce of bytes on stream 13, at 20 GB/s plus 10 us, launched now: it starts once its
 * gradients are ready (the compute stream ran to here) and the stream is free. */
static void grad_allreduce(struct gen *g, int64_t bytes)
{
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int64_t ts = g->now_ns, k_ts, dur = bytes / 20 + 10000;

	comm_launch(g, ext, corr, ts);
	k_ts = ts + 14000;
	if (g->gpu_ns > k_ts)
		k_ts = g->gpu_ns;
	if (g->comm_free > k_ts)
		k_ts = g->comm_free;
	comm_kernel(g, ALLREDUCE_KERNEL, "allreduce", 13, ext, corr, bytes / 4, bytes / 4, 8, k_ts,
		    dur);
	g->comm_free = k_ts + dur;
	g->now_ns = ts + 31000;
}

/* FSDP's all-gather of layer l's parameters, bytes on stream 14 at 20 GB/s plus 10 us,
 * launched now: it starts once the stream is free and, gated, once the compute stream ran to
 * here (exposed: the unshard waits for the compute); prefetched, the parameters are ready and
 * it runs beside the compute. */
static void param_allgather(struct gen *g, int l, int64_t bytes, int gated)
{
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int64_t ts = g->now_ns, k_ts = ts + 14000, dur = bytes / 20 + 10000;

	comm_launch(g, ext, corr, ts);
	if (gated && g->gpu_ns > k_ts)
		k_ts = g->gpu_ns;
	if (g->comm_free > k_ts)
		k_ts = g->comm_free;
	comm_kernel(g, "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
		    "_allgather_base", 14, ext, corr, bytes / 32, bytes / 4, 8, k_ts, dur);
	g->comm_free = g->gathered[l] = k_ts + dur;
	g->now_ns = ts + 31000;
}

/* Layer l's parameters gathered before its first op: issued now (and the next layer's, when
 * prefetching), then the compute stream waits for them. */
static void gather_layer(struct gen *g, int l)
{
	int64_t per = g->gather_bytes / GATHERS;

	if (!g->prefetch || l == 0)
		param_allgather(g, l, per, 1);
	if (g->prefetch && l + 1 < GATHERS)
		param_allgather(g, l + 1, per, 0);
	if (g->gathered[l] > g->gpu_ns)
		g->gpu_ns = g->gathered[l];
}

/* A bare kernel launch: call_ns on the host, a kernel of kernel_ns. */
static void launch_only(struct gen *g, int64_t call_ns, int64_t kernel_ns)
{
	char args[256];
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int64_t k_ts;

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 211, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaLaunchKernel", g->pid, g->tid, g->now_ns, call_ns, args);
	k_ts = g->now_ns + 4000 > g->gpu_ns ? g->now_ns + 4000 : g->gpu_ns;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, "
		 "\"stream\": 7, \"correlation\": %" PRIu64, ext, corr);
	span(g, "kernel", "void at::native::vectorized_elementwise_kernel<4, add>", 0, 7, k_ts,
	     kernel_ns, args);
	g->gpu_ns = k_ts + kernel_ns;
	g->now_ns += call_ns + 500;
}

/* cudaMalloc (200 us on the host), then cudaFree, which waits for the GPU to drain. */
static void alloc_pair(struct gen *g)
{
	char args[128];
	int64_t free_dur;

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 20, \"correlation\": %"
		 PRIu64, ++g->ext, ++g->corr);
	span(g, "cuda_runtime", "cudaMalloc", g->pid, g->tid, g->now_ns, 200000, args);
	g->now_ns += 201000;
	free_dur = g->gpu_ns > g->now_ns ? g->gpu_ns - g->now_ns + 20000 : 20000;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 21, \"correlation\": %"
		 PRIu64, ++g->ext, ++g->corr);
	span(g, "cuda_runtime", "cudaFree", g->pid, g->tid, g->now_ns, free_dur, args);
	g->now_ns += free_dur + 1000;
}

static const char *const layer_ops[][2] = {
	{"aten::addmm", "ampere_sgemm_128x64_tn"},
	{"aten::relu", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2>)"},
	{"aten::add_", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)"},
	{"aten::native_layer_norm", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, float, float const*, float const*, float const*, float*, float*, float*)"},
};

static const char *const backward_ops[] = {
	"autograd::engine::evaluate_function: AddmmBackward0",
	"autograd::engine::evaluate_function: ReluBackward0",
	"autograd::engine::evaluate_function: AddBackward0",
	"autograd::engine::evaluate_function: NativeLayerNormBackward0",
};

static void python_frame(struct gen *g, const char *name, int64_t ts, int64_t dur)
{
	char args[160];
	snprintf(args, sizeof(args), "\"Python parent id\": %" PRIu64 ", \"Python id\": %" PRIu64
		 ", \"Ev Idx\": %" PRIu64, g->py_id, g->py_id + 1, g->ev_idx++);
	g->py_id++;
	span(g, "python_function", name, g->pid, g->tid, ts, dur, args);
}

/* with_stack's frames above an op that takes host_ns: nested spans, outermost first. */
static void python_stack(struct gen *g, int64_t host_ns)
{
	static const char *const frames[] = {
		"train.py(57): train_step", "torch/nn/modules/module.py(1736): _wrapped_call_impl",
		"torch/nn/modules/module.py(1747): _call_impl", "model.py(120): forward",
		"torch/nn/modules/module.py(1736): _wrapped_call_impl",
		"torch/nn/modules/module.py(1747): _call_impl", "model.py(88): forward",
		"torch/nn/modules/container.py(250): forward",
		"torch/nn/modules/module.py(1736): _wrapped_call_impl",
		"torch/nn/modules/module.py(1747): _call_impl", "torch/nn/modules/linear.py(125): forward",
	};
	size_t i, n = sizeof(frames) / sizeof(frames[0]);

	for (i = 0; i < n; i++) /* each 100 ns inside the one above, all around the op */
		python_frame(g, frames[i], g->now_ns - (int64_t)(n - i) * 100,
			     host_ns + 2 * (int64_t)(n - i) * 100);
}

/* A host-only CPU op (no kernel): a CPU tensor's op, or a view (aten::select). */
static void cpu_op(struct gen *g, const char *name, int64_t host_ns)
{
	char args[128];

	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
	span(g, "cpu_op", name, g->pid, g->tid, g->now_ns, host_ns, args);
	g->now_ns += host_ns + 500;
}

/* x.cpu() of `bytes`: aten::to > aten::_to_copy > aten::copy_ > cudaMemcpyAsync into pageable
 * memory, which returns once the copy is done (a copy into pageable memory is synchronous),
 * then the stream sync PyTorch adds, which finds nothing left to wait for. */
static void to_cpu(struct gen *g, int64_t bytes)
{
	char args[256];
	int64_t op_ts = g->now_ns, call_ts = op_ts + 4000, c_ts, c_dur = bytes / 10 + 1500, end;
	uint64_t ext = ++g->ext, corr = ++g->corr, corr2 = ++g->corr;

	c_ts = call_ts + 2000 > g->gpu_ns ? call_ts + 2000 : g->gpu_ns;
	end = c_ts + c_dur + 2500; /* the copy's call returns, then the sync */
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ext, g->ev_idx++);
	span(g, "cpu_op", "aten::to", g->pid, g->tid, op_ts, end + 1000 - op_ts, args);
	span(g, "cpu_op", "aten::_to_copy", g->pid, g->tid, op_ts + 500, end + 400 - op_ts, args);
	span(g, "cpu_op", "aten::copy_", g->pid, g->tid, op_ts + 2500, end - op_ts - 2200, args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 41, \"correlation\": %"
		 PRIu64, ext, corr);
	span(g, "cuda_runtime", "cudaMemcpyAsync", g->pid, g->tid, call_ts, c_ts + c_dur + 1000 -
	     call_ts, args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 131, \"correlation\": %"
		 PRIu64, ext, corr2);
	span(g, "cuda_runtime", "cudaStreamSynchronize", g->pid, g->tid, c_ts + c_dur + 1300,
	     end - (c_ts + c_dur + 1300), args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"device\": 0, \"context\": 1, "
		 "\"stream\": 7, \"correlation\": %" PRIu64 ", \"bytes\": %" PRId64 ", \"memory "
		 "bandwidth (GB/s)\": %.3f", ext, corr, bytes, (double)bytes / (double)c_dur);
	span(g, "gpu_memcpy", "Memcpy DtoH (Device -> Pageable)", 0, 7, c_ts, c_dur, args);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cuda_sync_kind\": \"Stream "
		 "Sync\", \"stream\": 7, \"correlation\": %" PRIu64 ", \"device\": 0, "
		 "\"context\": 1", ext, corr2);
	span(g, "cuda_sync", "Stream Sync", 0, 7, c_ts + c_dur, 1000, args);
	g->gpu_ns = c_ts + c_dur;
	g->now_ns = end + 1500;
}

/* A Python loop over a tensor's elements, `total += t[i].cpu()` (--element-loop N), or its
 * fix: --element-fix gpu keeps the sum on the GPU (`total += t[i]`: a select and an add kernel
 * launched per element, no sync), cpu copies the tensor once before the loop (`t = t.cpu()`,
 * then the loop over CPU elements), vec drops the loop (`t.sum().item()`). Each element costs
 * ~8 us of the interpreter's own time between the ops; an op launched on the GPU costs the host
 * what the step's other ops do (9-13.5 us). */
static void element_loop(struct gen *g)
{
	int i, n = g->element_loop;
	int64_t t0 = g->now_ns;

	if (g->element_fix == 'v') { /* one reduction, one read */
		op_with_kernel(g, "aten::sum", "void at::native::reduce_kernel<512, 1>", 12000, 6000,
			       "[[4096]]");
		copy(g, "DtoH", "Device -> Pageable", 4, 1);
		python_frame(g, "train.py(70): total_of", t0 - 500, g->now_ns - t0 + 1000);
		return;
	}
	if (g->element_fix == 'c')
		to_cpu(g, 4 * (int64_t)n);
	for (i = 0; i < n; i++) {
		g->now_ns += 8000; /* the interpreter: the loop, t[i], += */
		cpu_op(g, "aten::select", 4000);
		if (g->element_fix == 'g') {
			op_with_kernel(g, "aten::add", "void at::native::vectorized_elementwise_kernel"
				       "<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
				       "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array"
				       "<char*, 3>)", jitter(g, 9000, 50), 2000, "[[], []]");
			continue;
		}
		if (!g->element_fix)
			to_cpu(g, 4);
		cpu_op(g, "aten::add", 3000);
	}
	python_frame(g, "train.py(70): total_of", t0 - 500, g->now_ns - t0 + 1000);
}

/* A DataLoader's worker pool (--workers K): batch b goes to worker b % K, which starts it once
 * it is free and the batch's index was sent - the first 2K (prefetch_factor 2) when the pool
 * starts, each later one when the batch 2K before it is consumed - and takes workers_ns (+-10%);
 * with --pin-us the pin thread then pins it (aten::pin_memory on its own thread, one batch at a
 * time, a cudaEventQuery in it as the caching host allocator makes). Returns when batch b is
 * there for __next__ at ts. */
static int64_t pool_next(struct gen *g, int64_t ts)
{
	uint64_t b = g->batch++, pf = 2 * (uint64_t)g->workers;
	int w = (int)(b % (uint64_t)g->workers), j;
	int64_t start, ready;

	if (!b) {
		g->pool_t0 = ts - g->lead_ns;
		for (j = 0; j < g->workers; j++)
			g->wfree[j] = g->pool_t0 + (g->stagger ? j * g->workers_ns / g->workers : 0);
		g->pin_free = g->pool_t0;
	}
	start = b < pf ? g->pool_t0 : g->pool_used[(b - pf) % 512];
	if (g->wfree[w] > start)
		start = g->wfree[w];
	ready = start + g->workers_ns - g->workers_ns / 10 +
		(int64_t)(rnd(g) % (uint64_t)(g->workers_ns / 5 + 1));
	g->wfree[w] = ready;
	if (g->pin_ns) {
		char args[128];
		int64_t p0 = ready > g->pin_free ? ready : g->pin_free;
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0,"
			 " \"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
		span(g, "cpu_op", "aten::pin_memory", g->pid, g->tid + 7, p0, g->pin_ns, args);
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0,"
			 " \"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
		span(g, "cpu_op", "aten::_pin_memory", g->pid, g->tid + 7, p0 + 200, g->pin_ns - 400,
		     args);
		/* the caching host allocator looks for a freed pinned block: its events queried */
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ", \"cbid\": 18, "
			 "\"correlation\": %" PRIu64, g->ext, ++g->corr);
		span(g, "cuda_runtime", "cudaEventQuery", g->pid, g->tid + 7, p0 + 300, 2000, args);
		ready = g->pin_free = p0 + g->pin_ns;
	}
	return ready;
}

/* The first part of a step: loader, input copy, forward and backward ops. */
void step_compute(struct gen *g, int ops, int64_t loader_ns, int pageable)
{
	char args[128];
	int64_t loader_ts, fwd_ts;
	int i;

	g->step_ts = g->now_ns;

	/* DataLoader */
	loader_ts = g->now_ns + 2000;
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
	{
		int64_t d = jitter(g, loader_ns, 20);
		if (g->workers) { /* a pool of workers: the batch comes when it is made */
			int64_t r = pool_next(g, loader_ts);
			if (r - loader_ts > d)
				d = r - loader_ts;
			g->pool_used[(g->batch - 1) % 512] = loader_ts + d;
		} else if (g->workers_ns) { /* the batch comes when the workers have made it */
			if (!g->ready_ns)
				g->ready_ns = loader_ts + g->workers_ns;
			if (g->ready_ns - loader_ts > d)
				d = g->ready_ns - loader_ts;
			g->ready_ns += g->workers_ns;
		}
		span(g, "user_annotation", g->single_loader
		     ? "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
		     : "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", g->pid, g->tid,
		     loader_ts, d, args);
		g->now_ns = loader_ts + d + 3000;
	}
	copy(g, "HtoD", pageable ? "Pageable -> Device" : "Pinned -> Device", 3 * 224 * 224 * 4 * 8,
	     0);
	memory(g, 4 << 20);
	fwd_ts = g->now_ns;
	for (i = 0; i < ops; i++) {
		int k = (int)(rnd(g) % 4);
		int64_t host = jitter(g, 9000 * (g->host_x ? g->host_x : 1), 50), dev = k == 0 ? jitter(g, 60000, 40) : jitter(g, 3000, 80);
		dev += dev * g->kernel_pct / 100;
		if (g->profile_mix) /* the Python stack above the op: 11 frames, as with_stack */
			python_stack(g, host);
		if (g->gather_bytes && i < ops / 2 &&
		    (i == 0 || (i * GATHERS) / (ops / 2) != ((i - 1) * GATHERS) / (ops / 2)))
			gather_layer(g, (i * GATHERS) / (ops / 2));
		/* with a gradient all-reduce or FSDP, the second half of the ops is the backward */
		op_with_kernel(g, (g->allreduce_bytes || g->gather_bytes) && i >= ops / 2
				  ? backward_ops[k] : layer_ops[k][0],
			       layer_ops[k][1], host, dev,
			       "[[64, 4096], [64, 4096], [4096]]");
		if (g->profile_mix) { /* its output allocated, its input freed */
			memory(g, 1 << 20);
			memory(g, -(1 << 20));
		}
		if (i % 16 == 15)
			memory(g, -(2 << 20));
		if (g->side_copies && (i * g->side_copies) / ops != ((i + 1) * g->side_copies) / ops)
			side_copy(g, ((i + 1) * g->side_copies) / ops);
		if (g->buckets && i >= ops / 2 &&
		    ((i - ops / 2) * g->buckets) / (ops - ops / 2) !=
		    ((i + 1 - ops / 2) * g->buckets) / (ops - ops / 2))
			grad_allreduce(g, g->allreduce_bytes / g->buckets);
	}
	if (g->gather_bytes) { /* the wrapper's forward, which names FSDP */
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
			 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
		span(g, "user_annotation", "FullyShardedDataParallel.forward", g->pid, g->tid,
		     fwd_ts, g->now_ns - fwd_ts, args);
	}
	if (g->allreduce_bytes && !g->buckets) /* after the last gradient, exposed */
		grad_allreduce(g, g->allreduce_bytes);
	if (g->allreduce_bytes) { /* the optimizer, which waits for it */
		if (g->comm_free > g->gpu_ns)
			g->gpu_ns = g->comm_free;
		snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
			 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
		span(g, "user_annotation", "Optimizer.step#SGD.step", g->pid, g->tid, g->now_ns, 20000,
		     args);
		g->now_ns += 21000;
	}
	for (i = 0; i < g->items; i++) { /* acc += x[i].item(), or its fix */
		if (g->items_fixed)
			launch_only(g, 3000, 2000);
		else
			copy(g, "DtoH", "Device -> Pageable", 4, 1);
	}
	if (g->element_loop)
		element_loop(g);
	for (i = 0; i < g->allocs; i++)
		alloc_pair(g);

	python_frame(g, "train.py(57): train_step", fwd_ts - 1000, g->now_ns - fwd_ts + 2000);
	if (g->extra_host_ns) { /* host-only work, the GPU idle meanwhile */
		python_frame(g, "train.py(88): log_metrics", g->now_ns, g->extra_host_ns);
		g->now_ns += g->extra_host_ns + 1000;
	}
}

/* The rest of a step: loss.item() and the step's span. */
void step_finish(struct gen *g, int n)
{
	char name[64], args[128];
	int64_t step_ts = g->step_ts;

	int i;

	if (!g->no_loss_item)
		copy(g, "DtoH", "Device -> Pageable", 4, 1); /* loss.item() */
	/* after it, the GPU drained: a loop over small tensors (metrics, an unfused update) */
	if (g->launch_loop && g->loop_fused) /* the fused kernel, then the loop's own work */
		launch_only(g, 5000, 2000 * (int64_t)g->launch_loop);
	for (i = 0; i < g->launch_loop; i++) { /* 3 us of Python, then a 5 us launch */
		g->now_ns += 3000;
		if (!g->loop_fused)
			launch_only(g, 5000, 2000);
		else
			g->now_ns += 500; /* the Python around the launch, which stays */
	}
	g->now_ns += 5000;
	snprintf(name, sizeof(name), "ProfilerStep#%d", n);
	snprintf(args, sizeof(args), "\"External id\": %" PRIu64 ",\"Record function id\": 0, "
		 "\"Ev Idx\": %" PRIu64, ++g->ext, g->ev_idx++);
	span(g, "user_annotation", name, g->pid, g->tid, step_ts, g->now_ns - step_ts, args);
	g->now_ns += 1000;
}

void step(struct gen *g, int n, int ops, int64_t loader_ns, int pageable)
{
	step_compute(g, ops, loader_ns, pageable);
	step_finish(g, n);
}

/* A bare step (--bare): its ProfilerStep# span around one launch and its kernel, one line each
 * and no more args than the replay links them by, for step counts in the millions. */
void step_bare(struct gen *g, int n)
{
	char ts[32], lts[32], kts[32];
	int64_t step_ts = g->now_ns, k_ts;
	uint64_t ext = ++g->ext, corr = ++g->corr;
	int w;

	us(ts, step_ts);
	us(lts, step_ts + 2000);
	k_ts = step_ts + 6000 > g->gpu_ns ? step_ts + 6000 : g->gpu_ns;
	us(kts, k_ts);
	begin_event(g);
	w = fprintf(g->f, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
		    "\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":10.000},\n"
		    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":%d,"
		    "\"tid\":%d,\"ts\":%s,\"dur\":3.000,\"args\":{\"External id\":%" PRIu64 ","
		    "\"correlation\":%" PRIu64 "}},\n"
		    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%s,"
		    "\"dur\":3.000,\"args\":{\"External id\":%" PRIu64 ",\"device\":0,\"stream\":7,"
		    "\"correlation\":%" PRIu64 "}}",
		    n, g->pid, g->tid, ts, g->pid, g->tid, lts, ext, corr, kts, ext, corr);
	g->bytes += (uint64_t)w + 2;
	g->gpu_ns = k_ts + 3000;
	g->now_ns = step_ts + 11000;
}
