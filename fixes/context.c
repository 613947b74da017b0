/* SPDX-License-Identifier: MIT */
#include "fixes/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/sort.h"
#include "fixes/precision.h"

static int has(const char *s, const char *sub)
{
	return strstr(s, sub) != NULL;
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

int td_coll_kind_of(const char *n)
{
	/* NCCL / RCCL kernels ("ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_AllGather_
	 * RING_LL"), c10d ops ("nccl:all_reduce", "c10d::allgather_"), and the custom all-reduce
	 * kernels that are communication though no NCCL is in their name */
	if (has(n, "cross_device_reduce") || has(n, "multimem_all_reduce") ||
	    has(n, "one_shot_all_reduce") || has(n, "two_shot_all_reduce"))
		return TD_COLL_CUSTOM;
	/* DeepEP's dispatch and combine are the MoE token exchange: an all-to-all */
	if (has(n, "deep_ep") && (has(n, "dispatch") || has(n, "combine")))
		return TD_COLL_ALL_TO_ALL;
	if (!has(n, "nccl") && !has(n, "rccl") && !has(n, "c10d::") && !has(n, "gloo:"))
		return -1;
	if (has(n, "AllReduce") || has(n, "all_reduce") || has(n, "allreduce"))
		return TD_COLL_ALL_REDUCE;
	if (has(n, "ReduceScatter") || has(n, "reduce_scatter"))
		return TD_COLL_REDUCE_SCATTER;
	if (has(n, "AllGather") || has(n, "all_gather") || has(n, "allgather"))
		return TD_COLL_ALL_GATHER;
	if (has(n, "AllToAll") || has(n, "all_to_all") || has(n, "alltoall"))
		return TD_COLL_ALL_TO_ALL;
	if (has(n, "SendRecv") || has(n, "Send") || has(n, "Recv") || has(n, "send") ||
	    has(n, "recv"))
		return TD_COLL_SEND_RECV;
	if (has(n, "Broadcast") || has(n, "broadcast"))
		return TD_COLL_BROADCAST;
	return -1;
}

/* s starts with the token tok, which ends there or at a non-letter ("tp", "tp:0", "tp_1") */
static int token_at(const char *s, const char *tok)
{
	size_t n = strlen(tok);
	return !strncmp(s, tok, n) && !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z'));
}

enum td_par td_pg_parallelism(const char *d)
{
	static const struct {
		const char *tok;
		enum td_par par;
	} shorts[] = {{"tp", TD_PAR_TP}, {"pp", TD_PAR_PP}, {"ep", TD_PAR_EP}, {"cp", TD_PAR_CP},
		      {"dp", TD_PAR_DP}, {"fsdp", TD_PAR_DP}, {"ddp", TD_PAR_DP}};
	const char *m;
	size_t i;

	if (!d || !*d)
		return TD_PAR_UNKNOWN;
	/* Megatron-LM: EXPERT_MODEL_PARALLEL_GROUP, CONTEXT_PARALLEL_GROUP, ... (the expert and
	 * context groups first: EXPERT_TENSOR_PARALLEL, DATA_PARALLEL_GROUP_WITH_CP) */
	if (has(d, "EXPERT"))
		return TD_PAR_EP;
	if (has(d, "CONTEXT_PARALLEL"))
		return TD_PAR_CP;
	if (has(d, "PIPELINE"))
		return TD_PAR_PP;
	if (has(d, "TENSOR_MODEL_PARALLEL") || has(d, "TENSOR_PARALLEL"))
		return TD_PAR_TP;
	if (has(d, "DATA_PARALLEL"))
		return TD_PAR_DP;
	/* DeviceMesh: mesh_tp, mesh_dp_shard, mesh_pp; or the short name itself */
	m = starts(d, "mesh_") ? d + 5 : d;
	for (i = 0; i < sizeof(shorts) / sizeof(shorts[0]); i++)
		if (token_at(m, shorts[i].tok))
			return shorts[i].par;
	return TD_PAR_UNKNOWN;
}

enum td_par td_par_of_group(const struct td_context *c, enum td_par described, int kind,
			    uint32_t pg, int *inferred)
{
	enum td_par p = TD_PAR_UNKNOWN;

	*inferred = 0;
	if (described != TD_PAR_UNKNOWN)
		return described;
	if (kind == TD_COLL_ALL_REDUCE || kind == TD_COLL_CUSTOM) {
		/* a training step's gradients are all-reduced in the backward: only the forward
		 * all-reduces' own group is the tensor-parallel one */
		if (c->run != TD_RUN_TRAINING || !c->bwd_ar || (pg && pg == c->tp_pg))
			p = TD_PAR_TP;
	}
	else if (kind == TD_COLL_ALL_TO_ALL)
		p = TD_PAR_EP;
	else if (kind == TD_COLL_SEND_RECV)
		p = TD_PAR_PP;
	if (p == TD_PAR_UNKNOWN || !(c->par_inferred & (1u << p)))
		return TD_PAR_UNKNOWN;
	*inferred = 1;
	return p;
}

const char *td_par_evidence(const struct td_context *c, enum td_par p)
{
	if (p == TD_PAR_TP && c->run == TD_RUN_TRAINING)
		return "all-reduce in the forward pass of a training step";
	return p == TD_PAR_TP ? "all-reduce in a run with no backward"
		: p == TD_PAR_EP ? "all-to-all beside mixture-of-experts kernels"
		: p == TD_PAR_PP ? "send/recv, and no all-to-all" : "";
}

const char *td_par_name(enum td_par p)
{
	static const char *const n[] = {"", "data parallel", "tensor parallel", "pipeline parallel",
					"expert parallel", "context parallel"};
	return p < TD_PAR_NKINDS ? n[p] : "";
}

const char *td_coll_kind_name(enum td_coll_kind k)
{
	static const char *const n[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
					"send/recv", "broadcast", "custom all-reduce"};
	return (unsigned)k < TD_COLL_NKINDS ? n[k] : "";
}

int64_t td_host_link_mbps(const char *n)
{
	/* achieved, not the link's peak: ~80% of it, as pinned copies of a few MB reach */
	static const char *const c2c[] = {"GH200", "GB200", "GB300", "Grace", NULL};
	static const char *const gen5[] = {"H100", "H200", "H800", "H20", "B200", "B100", "B300",
					   "RTX 50", "RTX PRO", "MI300", "MI325", "MI355", NULL};
	static const char *const gen4[] = {"A100", "A800", "A10", "A30", "A40", "A16", "A2 ",
					   "L4", "L20", "RTX 30", "RTX 40", "RTX A", "MI100",
					   "MI210", "MI250", "Radeon PRO W6", "Radeon PRO W7", NULL};
	const char *const *p;

	if (!n)
		return 12000;
	for (p = c2c; *p; p++)
		if (has(n, *p))
			return 350000;
	for (p = gen5; *p; p++)
		if (has(n, *p))
			return 50000;
	for (p = gen4; *p; p++)
		if (has(n, *p))
			return 25000;
	return 12000; /* PCIe 3: V100, T4, P100, Turing and older */
}

const char *td_vendor_name(enum td_vendor v)
{
	return v == TD_VENDOR_NVIDIA ? "CUDA" : v == TD_VENDOR_AMD ? "ROCm" : "unknown";
}

const char *td_run_name(enum td_run r)
{
	return r == TD_RUN_TRAINING ? "training" : r == TD_RUN_INFERENCE ? "inference" : "unknown";
}

const char *td_engine_name(enum td_engine e)
{
	static const char *const n[] = {"", "vLLM", "SGLang", "TGI", "TensorRT-LLM"};
	return (unsigned)e <= TD_ENGINE_TRTLLM ? n[e] : "";
}

const char *td_opt_impl_name(enum td_opt_impl i)
{
	static const char *const n[] = {"", "single-tensor", "foreach", "fused"};
	return (unsigned)i <= TD_OPT_FUSED ? n[i] : "";
}

static void optimizer_of(struct td_context *c, const char *n)
{
	if (starts(n, "Optimizer.step#")) { /* "Optimizer.step#AdamW.step" */
		const char *p = n + 15, *dot = strchr(p, '.');
		size_t len = dot ? (size_t)(dot - p) : strlen(p);
		if (!*c->optimizer && len && len < sizeof(c->optimizer))
			snprintf(c->optimizer, sizeof(c->optimizer), "%.*s", (int)len, p);
	}
	/* torch/optim: _single_tensor_adam, _multi_tensor_adam (foreach), _fused_adam; the
	 * kernels of the last two: multi_tensor_apply, FusedAdam... */
	if (has(n, "_fused_adam") || has(n, "_fused_sgd") || has(n, "_fused_adagrad") ||
	    has(n, "FusedAdam") || has(n, "fused_adam"))
		c->opt_impl = TD_OPT_FUSED;
	else if ((has(n, "_multi_tensor_") || starts(n, "aten::_foreach_")) &&
		 c->opt_impl != TD_OPT_FUSED)
		c->opt_impl = TD_OPT_FOREACH;
	else if (has(n, "_single_tensor_") && c->opt_impl == TD_OPT_NONE)
		c->opt_impl = TD_OPT_SINGLE;
}

/* input k of dims "[[16, 64], [64, 64]]": its leading dim in *lead, its elements returned
 * (0 when there is no such input) */
static int64_t input_dims(const char *d, int k, int64_t *lead)
{
	int64_t numel = 1, v;
	int n = 0;

	*lead = 0;
	if (*d++ != '[')
		return 0;
	for (; k > 0 && *d; d++) /* skip k inputs */
		if (*d == ']')
			k--;
	d = strchr(d, '[');
	if (!d)
		return 0;
	for (d++; *d && *d != ']'; d++) {
		if (*d < '0' || *d > '9')
			continue;
		for (v = 0; *d >= '0' && *d <= '9' && v < 1000000000; d++)
			v = v * 10 + (*d - '0');
		d--;
		if (!n++)
			*lead = v;
		numel = numel < (int64_t)1 << 40 ? numel * v : numel;
	}
	return n ? numel : 0;
}

struct bpsm_n {
	int32_t v;
	uint32_t n;
};
#define BPSM_LESS(x, y) ((x)->v < (y)->v)
TD_DEFINE_SORT(sort_bpsm, struct bpsm_n, BPSM_LESS)

/* A per-element loop: one op reading a single element (.item(), indexing one element, .cpu()
 * or .tolist() of a scalar, or any op on scalar inputs by record_shapes) 16 times a step or
 * more. */
#define ELEM_LOOP_PER_STEP 16
/* Where the all-reduce kernels were launched: in a module's forward (the host ops above the
 * launch hold a forward and no autograd node, optimizer or zero_grad), or in the backward.
 * A data-parallel step all-reduces its gradients in the backward (DDP's hooks run on the
 * autograd thread, under its nodes); an all-reduce in the forward reduces activations:
 * tensor parallelism (Megatron's row-parallel linear, a vocabulary-parallel embedding). */
static void allreduce_passes(const struct td_trace *t, struct td_context *c)
{
	uint8_t *mark;
	struct td_dev_events it;
	uint32_t k, pg = 0;
	size_t i;
	int mixed = 0;

	if (!c->coll[TD_COLL_ALL_REDUCE] || !t->by_kind[TD_K_CPU_OP])
		return;
	/* per name: 1 an all-reduce, 2 a backward marker, 4 a forward marker */
	mark = td_calloc(t->names.count + 1, 1);
	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		if (n[0] == '[' || n[0] == '"')
			continue;
		if (td_coll_kind_of(n) == TD_COLL_ALL_REDUCE)
			mark[i] |= 1;
		/* a loop's "forward_backward_step" is neither: under it run both passes */
		if (has(n, "autograd::engine") || starts(n, "Optimizer.") || has(n, "zero_grad") ||
		    ((has(n, "Backward") || has(n, "backward")) && !has(n, "orward")))
			mark[i] |= 2;
		else if (starts(n, "nn.Module:") ||
			 ((has(n, "forward") || has(n, "Forward")) && !has(n, "ackward")))
			mark[i] |= 4;
	}
	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t p, l;
		unsigned seen = 0;
		int depth;
		if (e->kind != TD_K_KERNEL || !(mark[e->name] & 1) ||
		    (l = td_trace_launch(t, k)) == TD_NONE)
			continue;
		for (p = td_trace_parent(t, l), depth = 0; p != TD_NONE && depth < 256;
		     p = td_trace_parent(t, p), depth++)
			seen |= mark[td_trace_ev(t, p)->name];
		if (seen & 2)
			c->bwd_ar++;
		else if (seen & 4) {
			const struct td_coll *co = td_trace_coll(t, k);
			uint32_t g = co ? co->pg : 0;
			c->fwd_ar++;
			if (c->fwd_ar == 1)
				pg = g;
			else if (g != pg)
				mixed = 1;
		}
	}
	c->tp_pg = mixed ? 0 : pg;
	free(mark);
}

/* Each name once (the events repeat a few): 1 a copy of one value to the host, 2 another
 * aten op (one element when its inputs are scalars), 0 neither; each dims list once: 1 scalar
 * inputs, 2 not. */
#define OP_ONE_VALUE 1
#define OP_ATEN 2
static void elem_loop_of(const struct td_trace *t, struct td_context *c)
{
	size_t sj;
	uint32_t *per = td_calloc(t->names.count + 2, sizeof(uint32_t)), i;
	uint8_t *op = td_calloc(t->names.count + 2, 1), *scalar = td_calloc(t->names.count + 2, 1);
	uint64_t steps = t->steps.len ? t->steps.len : 1;

	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, i);
		op[i] = !strcmp(n, "aten::item") || !strcmp(n, "aten::_local_scalar_dense") ||
			!strcmp(n, "aten::tolist") ? OP_ONE_VALUE : starts(n, "aten::") ? OP_ATEN : 0;
	}
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind != TD_K_CPU_OP || !op[e->name])
			continue;
		if (op[e->name] == OP_ATEN) {
			const struct td_op_args *oa = td_trace_op_args(t, i);
			uint32_t d = oa ? oa->dims : 0;
			if (!scalar[d]) {
				const char *dims = d ? td_trace_name(t, d) : "";
				scalar[d] = !strcmp(dims, "[[]]") || !strcmp(dims, "[[1]]") ||
					    !strcmp(dims, "[[], []]") ? 1 : 2;
			}
			if (scalar[d] != 1)
				continue;
		}
		if (++per[e->name] >= ELEM_LOOP_PER_STEP * steps) {
			c->on |= TD_ON_ELEM_LOOP;
			break;
		}
	}
	free(scalar);
	free(op);
	free(per);
}

/* The GEMM kernels' precision: their time by the dtypes their names give (fixes/precision.h),
 * the widest operand of the most time, and the narrowest operand within it */
static void gemm_of(const struct td_trace *t, struct td_context *c)
{
	int64_t ns[TD_GEMM_NDT][TD_GEMM_NDT] = {{0}}, best = 0, lowest = 0;
	int8_t *memo = td_malloc(t->names.count + 2);
	size_t sj, i;
	int d, l;

	memset(memo, 0x7f, t->names.count + 2); /* 0x7f: not read yet */
	c->gemm_dtype = c->gemm_low = -1;
	TD_FOR_KIND(t, TD_K_KERNEL, sj, i) {
		const struct td_event *ev = td_trace_ev(t, (uint32_t)i);
		int8_t *m = &memo[ev->name <= t->names.count ? ev->name : t->names.count + 1];
		if (ev->kind != TD_K_KERNEL)
			continue;
		if (*m == 0x7f) {
			int mma, low;
			*m = td_gemm_kernel_dtype(td_trace_name(t, ev->name), &mma, &low) && mma >= 0
			     ? (int8_t)(mma * TD_GEMM_NDT + low) : -1;
		}
		if (*m >= 0 && td_ev_dur(ev) > 0)
			ns[*m / TD_GEMM_NDT][*m % TD_GEMM_NDT] =
				td_sat_add(ns[*m / TD_GEMM_NDT][*m % TD_GEMM_NDT], td_ev_dur(ev));
	}
	free(memo);
	for (d = 0; d < TD_GEMM_NDT; d++) {
		int64_t sum = 0;
		for (l = 0; l < TD_GEMM_NDT; l++)
			sum = td_sat_add(sum, ns[d][l]);
		c->gemm_ns = td_sat_add(c->gemm_ns, sum);
		if (sum > best)
			best = sum, c->gemm_dtype = (int8_t)d;
	}
	c->gemm_dtype_ns = best;
	for (l = 0; c->gemm_dtype >= 0 && l < TD_GEMM_NDT; l++)
		if (ns[c->gemm_dtype][l] > lowest)
			lowest = ns[c->gemm_dtype][l], c->gemm_low = (int8_t)l;
}

/* the batch by the layers' inputs, the median kernel's blocks per SM */
static void batch_of(const struct td_trace *t, struct td_context *c)
{
	size_t sj;
	int64_t vals[16], numels[16], best = 0, best_numel = 0;
	uint64_t cnt[16], bestn = 0;
	size_t nv = 0, i, k, n = 0;
	/* per name: 1 + the input whose first dim is the batch (a layer's), 0 not a layer */
	uint8_t *layer = td_calloc(t->names.count + 2, 1);

	for (i = 1; i <= t->names.count; i++) {
		const char *nm = td_strtab_str(&t->names, (uint32_t)i);
		layer[i] = !strcmp(nm, "aten::linear") || !strcmp(nm, "aten::conv2d") ||
			   !strcmp(nm, "aten::bmm") ? 1 : !strcmp(nm, "aten::addmm") ? 2 : 0;
	}
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		const struct td_op_args *oa;
		int64_t v, numel;
		if (e->kind != TD_K_CPU_OP || !layer[e->name] || !e->args ||
		    !(oa = td_trace_op_args(t, (uint32_t)i)) || !oa->dims)
			continue;
		numel = input_dims(td_trace_name(t, oa->dims), layer[e->name] - 1, &v);
		if (v <= 0)
			continue;
		for (k = 0; k < nv && vals[k] != v; k++)
			;
		if (k == nv && nv < 16) {
			vals[nv] = v;
			numels[nv] = numel;
			cnt[nv++] = 0;
		}
		if (k < nv && numel > numels[k])
			numels[k] = numel; /* the largest input at this batch */
		if (k < nv)
			cnt[k]++;
	}
	free(layer);
	for (k = 0; k < nv; k++)
		if (cnt[k] > bestn) {
			bestn = cnt[k];
			best = vals[k];
			best_numel = numels[k];
		}
	c->batch = best;
	c->bpsm = -1;
	{ /* the median kernel's blocks per SM: configurations by bpsm, weighted by their kernels */
		struct bpsm_n *b = td_malloc((t->launches.len ? t->launches.len : 1) * sizeof(*b));
		uint64_t total = 0, acc = 0;
		for (i = 0; i < t->launches.len; i++) {
			const struct td_launch *l = &TD_VEC_AT(&t->launches, struct td_launch, i);
			if (l->bpsm >= 0) {
				b[n].v = l->bpsm, b[n++].n = l->n;
				total += l->n;
			}
		}
		sort_bpsm(b, n);
		for (i = 0; i < n && total; i++)
			if ((acc += b[i].n) > total / 2) {
				c->bpsm = b[i].v;
				break;
			}
		free(b);
	}
	/* small: a batch of 64 or less whose layers' largest input is 64K elements or less (an
	 * MLP at batch 16, not a ResNet at batch 32 with its 224x224 images) */
	if (c->batch > 0 && c->batch <= 64 && best_numel <= 65536)
		c->on |= TD_ON_SMALL_BATCH;
}

const char *td_context_batch(const struct td_context *c, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = '\0';
	if (c->batch > 0) /* a serving engine flattens its requests into tokens */
		o += (size_t)snprintf(buf, cap, c->engine != TD_ENGINE_NONE
				      ? "%lld tokens in the layers' inputs"
				      : "batch %lld in the layers' inputs", (long long)c->batch);
	if (c->bpsm >= 0 && o < cap)
		snprintf(buf + o, cap - o, "%sthe median kernel fills %.1f blocks per SM", o ? "; " : "",
			 (double)c->bpsm / 1000.0);
	return buf;
}

void td_context_derive(const struct td_trace *t, struct td_context *c)
{
	struct td_strtab stems;
	size_t i;
	int backward = 0, bwd_kernels = 0, inference = 0, nvidia = 0, amd = t->rocm, moe = 0;

	memset(c, 0, sizeof(*c));
	if (t->dropped_records >= 0)
		c->on |= TD_ON_COLLECTOR;
	if (t->nsys)
		c->on |= TD_ON_NSYS;
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *d = &TD_VEC_AT(&t->devices, struct td_device, i);
		const char *n = td_trace_name(t, d->name);
		if (!d->name)
			continue;
		if (!c->device)
			c->device = d->name;
		if (has(n, "AMD") || has(n, "Instinct") || has(n, "Radeon"))
			amd = 1;
		else if (has(n, "NVIDIA") || has(n, "Tesla") || has(n, "GeForce") || has(n, "RTX") ||
			 has(n, "A100") || has(n, "H100") || has(n, "H200") || has(n, "B200"))
			nvidia = 1;
	}
	td_strtab_init(&stems);
	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		size_t len = td_strtab_len(&t->names, (uint32_t)i), sl = td_name_stem_len(n, len);
		int k;
		if (n[0] == '[' || n[0] == '"') /* Input Dims, types, call stacks: no names */
			continue;
		if ((k = td_coll_kind_of(n)) >= 0)
			c->coll[k]++;
		/* a name numbered once per iteration ("ProfilerStep#41") says what its stem says,
		 * read once: no word below ends in a digit after a '#' */
		if (sl < len) {
			uint32_t before = stems.count;
			if (td_strtab_intern(&stems, n, sl) <= before)
				continue;
		}
		if (has(n, "Backward") || has(n, "autograd::engine") || starts(n, "Optimizer.step#") ||
		    starts(n, "Optimizer.zero_grad#") || has(n, "_single_tensor_"))
			backward = 1;
		else if (has(n, "_backward") || has(n, "backward_kernel") || has(n, "bwd_kernel"))
			bwd_kernels = 1; /* a GPU-only trace: the backward pass by its kernels */
		if (has(n, "inference_mode") || has(n, "InferenceMode"))
			inference = 1;
		if (starts(n, "cuda") || starts(n, "cuLaunch") || starts(n, "volta_") ||
		    starts(n, "ampere_") || starts(n, "sm80_") || starts(n, "sm90_") ||
		    starts(n, "ncclKernel") || starts(n, "ncclDevKernel"))
			nvidia = 1;
		if (starts(n, "hip") || starts(n, "Cijk_") || has(n, "rccl"))
			amd = 1;
		if (has(n, "vllm/") || has(n, "vllm::"))
			c->engine = TD_ENGINE_VLLM;
		else if ((has(n, "sglang/") || has(n, "sglang::")) && !c->engine)
			c->engine = TD_ENGINE_SGLANG;
		else if (has(n, "text_generation_server") && !c->engine)
			c->engine = TD_ENGINE_TGI;
		else if (has(n, "tensorrt_llm") && !c->engine)
			c->engine = TD_ENGINE_TRTLLM;
		if (has(n, "DistributedDataParallel") || has(n, "distributed::reducer") ||
		    has(n, "torch/nn/parallel/distributed.py"))
			c->on |= TD_ON_DDP;
		if (has(n, "FullyShardedDataParallel") || has(n, "FSDP::") || has(n, "fully_shard") ||
		    has(n, "torch/distributed/fsdp/"))
			c->on |= TD_ON_FSDP;
		/* torchrec by its own names: fbgemm's embedding ops run under plain DLRM too */
		if (has(n, "torchrec") || has(n, "KJTAllToAll") || has(n, "ShardedEmbedding"))
			c->on |= TD_ON_TORCHREC;
		if (has(n, "deepspeed"))
			c->on |= TD_ON_DEEPSPEED;
		/* TrainPipelineSparseDist's ranges, and StagedTrainPipeline's SparseDataDistUtil
		 * ("## sdd_preprocess_splits ##", "## sdd_wait_tensors ##") */
		if (has(n, "## sparse_data_dist ##") || has(n, "## wait_sparse_data_dist ##") ||
		    starts(n, "## sdd_"))
			c->on |= TD_ON_SPARSE_PIPELINE | TD_ON_TORCHREC;
		/* fbgemm's FP8 row-wise codecs, which torchrec's qcomms run on each side of an
		 * FP8-quantized collective */
		if (has(n, "FP8rowwise") || has(n, "_compute_FP8_quantize") ||
		    has(n, "float_to_hfp8") || has(n, "hfp8_to_float"))
			c->on |= TD_ON_QCOMMS_FP8;
		if (has(n, "megatron"))
			c->on |= TD_ON_MEGATRON;
		if (has(n, "CompiledFunction") || has(n, "Torch-Compiled Region") ||
		    has(n, "CompiledFxGraph") || starts(n, "triton_") || has(n, "torch/_inductor/") ||
		    (has(n, "torch/_dynamo/eval_frame.py") && !has(n, "_callback_from_stance") &&
		     !has(n, "): _fn") && !has(n, "_maybe_set_eval_frame") &&
		     !has(n, "_is_skip_guard_eval_unsafe_stance")))
			c->on |= TD_ON_COMPILED; /* eval_frame's _fn, and the frames that set and check
						   * the eval frame, also wrap what dynamo must skip (an
						   * optimizer's step, a checkpoint wrapper's
						   * torch._disable_dynamo): not a compile alone */
		if (starts(n, "cudaGraphLaunch") || starts(n, "hipGraphLaunch") ||
		    starts(n, "cuGraphLaunch"))
			c->on |= TD_ON_GRAPHS;
		if (has(n, "StreamBeginCapture") || has(n, "StreamEndCapture") ||
		    has(n, "GraphInstantiate"))
			c->on |= TD_ON_CAPTURE;
		if (has(n, "autocast"))
			c->on |= TD_ON_AMP;
		if (has(n, "bf16") || has(n, "BFloat16") || has(n, "bfloat16"))
			c->on |= TD_ON_BF16;
		if (has(n, "fp16") || has(n, "f16f16") || has(n, "c10::Half") || has(n, "h884") ||
		    has(n, "h1688") || has(n, "s16816"))
			c->on |= TD_ON_FP16;
		if (has(n, "_SingleProcessDataLoaderIter"))
			c->on |= TD_ON_LOADER_MAIN;
		if (has(n, "_MultiProcessingDataLoaderIter"))
			c->on |= TD_ON_LOADER_WORKERS;
		if (!strcmp(n, "aten::pin_memory") || !strcmp(n, "aten::_pin_memory") ||
		    has(n, "torch/utils/data/_utils/pin_memory.py"))
			c->on |= TD_ON_PIN_MEMORY;
		if (starts(n, "nn.Module:") || has(n, "torch/nn/modules/module.py"))
			c->on |= TD_ON_MODULES;
		/* mixture of experts: vLLM's fused_moe, Megatron's MoELayer, DeepEP, experts */
		if (has(n, "moe") || has(n, "MoE") || has(n, "deep_ep") || has(n, "expert"))
			moe = 1;
		if (has(n, "deep_ep") && (has(n, "dispatch") || has(n, "combine")))
			c->on |= TD_ON_DEEPEP;
		optimizer_of(c, n);
	}
	td_strtab_free(&stems);
	for (i = 0; i < t->colls.len; i++) { /* the groups' parallelisms */
		const struct td_coll *co = &TD_VEC_AT(&t->colls, struct td_coll, i);
		enum td_par p = co->pg_desc ? td_pg_parallelism(td_trace_name(t, co->pg_desc))
					    : TD_PAR_UNKNOWN;
		if (p != TD_PAR_UNKNOWN)
			c->par |= 1u << p;
	}
	c->vendor = amd ? TD_VENDOR_AMD : nvidia ? TD_VENDOR_NVIDIA : TD_VENDOR_UNKNOWN;
	/* training by its backward pass; inference by a serving engine or inference_mode; a
	 * forward pass alone could be either (a partial window of a training step) */
	if (backward || (bwd_kernels && !t->by_kind[TD_K_CPU_OP]))
		c->run = TD_RUN_TRAINING;
	else if (c->engine || inference)
		c->run = TD_RUN_INFERENCE;
	if (c->run == TD_RUN_TRAINING)
		c->engine = TD_ENGINE_NONE; /* a training step that imports vllm is training */
	if (c->on & (TD_ON_LOADER_MAIN | TD_ON_LOADER_WORKERS))
		c->on |= TD_ON_LOADER;
	if (t->by_kind[TD_K_PYTHON])
		c->on |= TD_ON_STACKS;
	if (t->by_kind[TD_K_CPU_OP])
		c->on |= TD_ON_HOST_OPS;
	for (i = 0; i < TD_COLL_NKINDS; i++)
		if (c->coll[i])
			c->on |= TD_ON_DIST;
	if (c->coll[TD_COLL_CUSTOM])
		c->on |= TD_ON_CUSTOM_AR;
	if (t->legacy)
		c->on |= TD_ON_TORCH1;
	if (t->world_size > 1)
		c->on |= TD_ON_DIST;
	else if (t->world_size == 1)
		c->on |= TD_ON_ONE_RANK;
	if (t->by_kind[TD_K_PYTHON] && !(c->on & TD_ON_MODULES) && c->run != TD_RUN_TRAINING)
		c->on |= TD_ON_NO_MODULE;
	if (*c->optimizer && c->opt_impl == TD_OPT_NONE)
		c->opt_impl = TD_OPT_SINGLE;
	/* parallelism from the collectives' pattern, where no group's description names it */
	if (!(c->par & (1u << TD_PAR_TP)) && c->run == TD_RUN_INFERENCE &&
	    (c->coll[TD_COLL_ALL_REDUCE] || c->coll[TD_COLL_CUSTOM]))
		c->par_inferred |= 1u << TD_PAR_TP; /* serving has no gradients to all-reduce */
	if (c->run == TD_RUN_TRAINING)
		allreduce_passes(t, c);
	/* two at least: one all-reduce in a forward may be a metric's or the loss's */
	if (!(c->par & (1u << TD_PAR_TP)) && c->run == TD_RUN_TRAINING && c->fwd_ar >= 2)
		c->par_inferred |= 1u << TD_PAR_TP;
	if (!(c->par & (1u << TD_PAR_EP)) && moe && c->coll[TD_COLL_ALL_TO_ALL])
		c->par_inferred |= 1u << TD_PAR_EP;
	if (!(c->par & (1u << TD_PAR_PP)) && c->coll[TD_COLL_SEND_RECV] &&
	    !c->coll[TD_COLL_ALL_TO_ALL] && !moe && !(c->on & TD_ON_TORCHREC))
		c->par_inferred |= 1u << TD_PAR_PP; /* NCCL runs all-to-all as send/recv too */
	batch_of(t, c);
	elem_loop_of(t, c);
	gemm_of(t, c);
}

/* The frameworks the context line names, in its order. */
static const struct {
	uint32_t on;
	const char *name;
} frameworks[] = {
	{TD_ON_DDP, "DDP"}, {TD_ON_FSDP, "FSDP"}, {TD_ON_TORCHREC, "torchrec"},
	{TD_ON_DEEPSPEED, "DeepSpeed"}, {TD_ON_MEGATRON, "Megatron"}, {TD_ON_DEEPEP, "DeepEP"},
};

const char *td_context_precision(const struct td_context *c)
{
	if (c->gemm_dtype >= 0 && (double)c->gemm_dtype_ns * 2 > (double)c->gemm_ns) /* the bulk */
		return td_gemm_dtype_label(c->gemm_dtype);
	return c->on & TD_ON_BF16 ? "bf16" : c->on & TD_ON_FP16 ? "fp16"
	       : c->on & TD_ON_AMP ? "autocast" : "";
}

void td_context_line(const struct td_trace *t, const struct td_context *c, char *buf,
		     size_t cap)
{
	size_t o = 0;
	int k;

#define ADD(...) do { \
		if (o < cap) \
			o += (size_t)snprintf(buf + o, cap - o, __VA_ARGS__); \
	} while (0)
	ADD("%s", c->vendor == TD_VENDOR_UNKNOWN && !t->by_kind[TD_K_KERNEL] &&
	    !t->by_kind[TD_K_MEMCPY] && !t->by_kind[TD_K_RUNTIME] ? "CPU only"
	    : td_vendor_name(c->vendor));
	if (c->device)
		ADD(", %s", td_trace_name(t, c->device));
	if (c->run != TD_RUN_UNKNOWN)
		ADD(", %s", td_run_name(c->run));
	if (c->engine)
		ADD(", %s", td_engine_name(c->engine));
	for (k = 0; k < (int)(sizeof(frameworks) / sizeof(frameworks[0])); k++)
		if (c->on & frameworks[k].on)
			ADD(", %s", frameworks[k].name);
	for (k = 0; k < TD_COLL_NKINDS; k++)
		if (c->coll[k])
			ADD(", %s", td_coll_kind_name((enum td_coll_kind)k));
	for (k = TD_PAR_TP; k < TD_PAR_NKINDS; k++) /* data parallel says little: not named */
		if (c->par & (1u << k))
			ADD(", %s groups", td_par_name((enum td_par)k));
		else if (c->par_inferred & (1u << k))
			ADD(", %s (inferred)", td_par_name((enum td_par)k));
	if (c->on & TD_ON_COMPILED)
		ADD(", torch.compile");
	if (c->on & TD_ON_GRAPHS)
		ADD(", %s graphs replayed", c->vendor == TD_VENDOR_AMD ? "HIP" : "CUDA");
	if (c->on & TD_ON_CAPTURE)
		ADD(", graph capture");
	if (*c->optimizer)
		ADD(", %s (%s)", c->optimizer, td_opt_impl_name(c->opt_impl));
	if (c->gemm_dtype >= 0 && (double)c->gemm_dtype_ns * 2 > (double)c->gemm_ns)
		ADD(c->gemm_low != c->gemm_dtype ? ", %s GEMMs (%s weights)" : ", %s GEMMs",
		    td_context_precision(c), td_gemm_dtype_label(c->gemm_low));
	else if (*td_context_precision(c))
		ADD(", %s", td_context_precision(c));
	if (c->batch > 0 && c->engine != TD_ENGINE_NONE) /* requests flattened into tokens */
		ADD(", %lld tokens a forward", (long long)c->batch);
	else if (c->batch > 0)
		ADD(", batch %lld", (long long)c->batch);
	if (c->on & TD_ON_COLLECTOR)
		ADD(", tracedoc record");
	if (c->on & TD_ON_NSYS)
		ADD(", Nsight Systems");
	if (c->on & TD_ON_LOADER_MAIN)
		ADD(", DataLoader in the main process");
	else if (c->on & TD_ON_LOADER_WORKERS)
		ADD(", DataLoader workers");
#undef ADD
	if (o >= cap && cap)
		buf[cap - 1] = '\0';
}
