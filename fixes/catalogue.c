/* SPDX-License-Identifier: MIT */
#include "fixes/catalogue.h"

#include <stdio.h>
#include <string.h>

#define NV TD_VENDOR_NVIDIA
#define AMD TD_VENDOR_AMD
#define ANY_V TD_VENDOR_UNKNOWN
#define TRAIN TD_RUN_TRAINING
#define INFER TD_RUN_INFERENCE
#define ANY_R TD_RUN_UNKNOWN
#define ANY_E TD_ENGINE_NONE

const struct td_fix_entry td_fix_entries[] = {
	/* the top kernel, measured by the vendor's kernel profiler */
	{TD_FIX_KERNEL_PROFILE, NV, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Then measure the top kernel itself with Nsight Compute: ncu --kernel-name regex:'%s' "
	 "--launch-count 5 --set full -o top_kernel python train.py."},
	{TD_FIX_KERNEL_PROFILE, AMD, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Then measure the top kernel itself on the AMD GPU: rocprofv3 --kernel-trace "
	 "--kernel-include-regex '%s' -- python train.py, and its hardware counters with "
	 "rocprof-compute profile -n top -- python train.py."},
	{TD_FIX_KERNEL_PROFILE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Then measure the top kernel ('%s') with the GPU vendor's kernel profiler (Nsight "
	 "Compute on NVIDIA, rocprof-compute on AMD): the trace does not say which GPU this is."},

	/* lazy module loading */
	{TD_FIX_LAZY_LOADING, NV, ANY_R, ANY_E, 0, 0, -1, 0,
	 " Lazy module loading costs the first launch of each kernel: in a latency-critical "
	 "service set CUDA_MODULE_LOADING=EAGER to load every module at start-up instead."},
	{TD_FIX_LAZY_LOADING, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 " The first launch of each kernel loads its code: run every shape once (a warm-up "
	 "iteration) before timing or serving."},

	/* launch-bound: a small batch first, then what is already on decides */
	{TD_FIX_FEWER_LAUNCHES, ANY_V, TRAIN, ANY_E, TD_ON_SMALL_BATCH, TD_ON_COMPILED | TD_ON_GRAPHS,
	 -1, 0,
	 "The kernels are too small to fill the GPU (%s): raise the batch size first - every launch "
	 "then does more work, which is what fills the device (DataLoader(batch_size=...)); if the "
	 "effective batch must stay, gradient accumulation keeps it while each step does more. "
	 "Then fuse what is left: torch.compile(model)."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, TD_ON_SMALL_BATCH, TD_ON_COMPILED | TD_ON_GRAPHS,
	 -1, 0,
	 "The kernels are too small to fill the GPU (%s): run larger batches first (more inputs or "
	 "requests per forward pass) - every launch then does more work, which is what fills the "
	 "device. Then fuse what is left: torch.compile(model)."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED | TD_ON_GRAPHS, 0, -1, 0,
	 "The step is compiled and replays graphs already: the launches left run outside the "
	 "graph. Find them between the graph launches in the trace and bring them inside the "
	 "compiled region (no .item(), .cpu() or Python branching on tensor values there), or give "
	 "each launch more work (a larger batch)."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 1,
	 "The model is compiled already but launched kernel by kernel: replay it as a graph - "
	 "torch.compile(model, mode=\"reduce-overhead\") - with static input shapes, so a step is "
	 "one launch."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, TD_ON_GRAPHS, 0, -1, 0,
	 "Graphs are replayed already: the launches left run outside them. Capture those too "
	 "(torch.cuda.make_graphed_callables, torch.cuda.CUDAGraph) or fuse them with "
	 "torch.compile(model)."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, TRAIN, ANY_E, TD_ON_MEGATRON, TD_ON_GRAPHS, -1, 1,
	 "Megatron-LM launches its layers kernel by kernel: capture them as CUDA graphs "
	 "(--enable-cuda-graph), use Transformer Engine's fused layers (--transformer-impl "
	 "transformer_engine), and keep Megatron's fusions on (no --no-bias-gelu-fusion, "
	 "--no-bias-dropout-fusion or --no-masked-softmax-fusion)."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, TD_ON_NO_MODULE, 0, -1, 0,
	 "Many kernels shorter than their launch, and no nn.Module to compile: the work is "
	 "probably a Python loop over tensors or tensor elements. Vectorise it - one tensor op "
	 "over the whole tensor (x.sum(), torch.where, indexing with a tensor of indices) instead "
	 "of a loop, and one .cpu() or .item() after it, not one per element."},
	{TD_FIX_FEWER_LAUNCHES, ANY_V, ANY_R, ANY_E, 0, 0, -1, 1,
	 "Launch fewer kernels: torch.compile(model) fuses the small ops, and "
	 "mode=\"reduce-overhead\" also replays the step as a graph (torch.cuda.CUDAGraph by hand), "
	 "so a step costs one launch. A larger batch gives each launch more work."},

	/* the host's Python between launches */
	{TD_FIX_HOST_BOUND, ANY_V, ANY_R, ANY_E, TD_ON_NO_MODULE | TD_ON_ELEM_LOOP, 0, -1, 0,
	 "There is no nn.Module in sight, and an op reads one element at a time: vectorise the "
	 "Python loop over tensors (one tensor op over the whole tensor instead of a loop, one "
	 ".cpu() before the loop instead of one per element)."},
	{TD_FIX_HOST_BOUND, ANY_V, ANY_R, ANY_E, TD_ON_NO_MODULE, 0, -1, 0,
	 "No nn.Module is in sight, and no op reads one element at a time: find what that host "
	 "time is - the Python frame named above, or py-spy record --native --pid PID where the "
	 "trace leaves it untraced - and move it off the step: precompute it, or do it on the "
	 "GPU."},
	{TD_FIX_HOST_BOUND, ANY_V, TRAIN, ANY_E, TD_ON_DEEPSPEED, TD_ON_COMPILED, -1, 0,
	 "Move that work off the step (precompute it, or do it on the GPU) and cut per-item Python "
	 "loops over tensors; the DeepSpeed engine can compile the model itself - "
	 "model_engine.compile() after deepspeed.initialize() - so the host launches less per "
	 "step, and a larger train_micro_batch_size_per_gpu gives each launch more work."},
	{TD_FIX_HOST_BOUND, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 0,
	 "Move that work off the step (precompute it, or do it on the GPU) and cut per-item Python "
	 "loops over tensors; the model is compiled already, so look for graph breaks "
	 "(TORCH_LOGS=graph_breaks) that send the step back to Python."},
	{TD_FIX_HOST_BOUND, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Move that work off the step (precompute it, or do it on the GPU), cut per-item Python "
	 "loops over tensors, and compile the model (torch.compile(model, "
	 "mode=\"reduce-overhead\")) so the host launches less per step."},

	/* a serving engine's loop */
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, ANY_E, TD_ON_GRAPHS, 0, -1, 0,
	 "Graphs are replayed already: what is left is the scheduler, sampling and the launches "
	 "between graph replays. Batch more requests per iteration (vLLM max_num_seqs, SGLang "
	 "--max-running-requests) and keep batch sizes inside the captured ones (vLLM "
	 "cudagraph_capture_sizes, SGLang --cuda-graph-max-bs)."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, TD_ENGINE_VLLM, 0, 0, -1, 1,
	 "Decode runs eagerly: replay it with graphs (drop enforce_eager=True / --enforce-eager), "
	 "keep compilation on (compilation_config), and batch more requests per iteration "
	 "(max_num_seqs) so each launch does more work."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, TD_ENGINE_SGLANG, 0, 0, -1, 1,
	 "Decode runs eagerly: keep graphs on (no --disable-cuda-graph) and raise "
	 "--cuda-graph-max-bs to cover the batch sizes served, and batch more requests per "
	 "iteration (--max-running-requests)."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, ANY_E, 0, 0, -1, 1,
	 "Decode runs eagerly: replay it with graphs (the engine's graph mode) or compile it, and "
	 "batch more requests per iteration so each launch does more work."},

	/* many tiny kernels */
	{TD_FIX_SMALL_KERNELS, ANY_V, TRAIN, ANY_E, TD_ON_SMALL_BATCH, TD_ON_COMPILED | TD_ON_GRAPHS,
	 -1, 0,
	 "The kernels are small because the work per step is (%s): raise the batch size first "
	 "(DataLoader(batch_size=...); gradient accumulation keeps the effective batch if it must "
	 "stay), then fuse the small ops with torch.compile(model)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, ANY_R, ANY_E, TD_ON_SMALL_BATCH, TD_ON_COMPILED | TD_ON_GRAPHS,
	 -1, 0,
	 "The kernels are small because the work per pass is (%s): run larger batches first, then "
	 "fuse the small ops with torch.compile(model)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED | TD_ON_GRAPHS, 0, -1, 0,
	 "The step is compiled and replayed as graphs already: these small kernels run outside "
	 "the graph. Bring them inside the compiled region or batch them (torch._foreach_* ops, "
	 "torch.cat)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 0,
	 "The model is compiled already: replay it as a graph (torch.compile(model, "
	 "mode=\"reduce-overhead\")) so the small kernels cost one launch, and batch small tensors "
	 "into one (torch._foreach_* ops, torch.cat)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, TRAIN, ANY_E, TD_ON_MEGATRON, TD_ON_GRAPHS, -1, 0,
	 "Megatron-LM runs these as separate small kernels: use Transformer Engine's fused layers "
	 "(--transformer-impl transformer_engine), keep Megatron's fusions on (no "
	 "--no-bias-gelu-fusion, --no-bias-dropout-fusion, --no-masked-softmax-fusion or "
	 "--no-gradient-accumulation-fusion), and capture the layers as CUDA graphs "
	 "(--enable-cuda-graph)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, ANY_R, ANY_E, TD_ON_NO_MODULE, 0, -1, 0,
	 "No nn.Module in sight: the small kernels come from a Python loop over tensors. "
	 "Vectorise it (one op over a whole tensor, torch._foreach_* for lists of tensors)."},
	{TD_FIX_SMALL_KERNELS, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Fuse the small ops: torch.compile(model) (mode=\"reduce-overhead\" also replays the step "
	 "as a graph, which removes per-kernel launch cost), or capture the static part with "
	 "torch.cuda.CUDAGraph. Batching many small tensors into one (torch._foreach_* ops, "
	 "torch.cat) also helps."},

	/* exposed communication of a group whose parallelism its description names */
	{TD_FIX_COMM_GROUP, ANY_V, TRAIN, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_TP, 0,
	 "The tensor-parallel group's collectives wait with nothing to overlap them: add "
	 "--sequence-parallel (the all-reduce becomes a reduce-scatter and an all-gather around "
	 "the norms) and, with Transformer Engine, --tp-comm-overlap; keep the group inside one "
	 "NVLink domain (--tensor-model-parallel-size no larger than the GPUs of a node)."},
	{TD_FIX_COMM_GROUP, ANY_V, TRAIN, ANY_E, 0, 0, TD_PAR_TP, 0,
	 "The tensor-parallel group's collectives wait with nothing to overlap them: overlap them "
	 "with the matmuls around them (async tensor parallelism: torch._inductor.config."
	 "_micro_pipeline_tp = True under torch.compile, or Transformer Engine's comm overlap), "
	 "use sequence parallelism so each all-reduce becomes a reduce-scatter and an all-gather, "
	 "and keep the group inside one node (NVLink)."},
	{TD_FIX_COMM_GROUP, ANY_V, INFER, ANY_E, 0, 0, TD_PAR_TP, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it: keep "
	 "the engine's custom all-reduce on (vLLM: no --disable-custom-all-reduce), overlap it "
	 "with the next layer's compute (async tensor parallelism), or serve with fewer "
	 "tensor-parallel ranks and a larger batch per rank."},
	{TD_FIX_COMM_GROUP, ANY_V, TRAIN, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_PP, 0,
	 "The pipeline's send/recv waits: that is the pipeline bubble and stage imbalance. Run "
	 "more micro-batches per step (a larger --global-batch-size over --micro-batch-size), "
	 "interleave the schedule (--num-layers-per-virtual-pipeline-stage), and balance the "
	 "layers across stages so no stage is the slow one."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, 0, 0, TD_PAR_PP, 0,
	 "The pipeline's send/recv waits: that is the pipeline bubble and stage imbalance. Keep "
	 "more micro-batches in flight (torch.distributed.pipelining: n_microbatches several "
	 "times the stages), use an interleaved schedule (ScheduleInterleaved1F1B), and balance "
	 "the stages so none is the slow one; for inference prefer tensor parallelism inside a "
	 "node."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap it with the shared experts' compute (--moe-shared-expert-overlap) "
	 "or dispatch with DeepEP (--moe-token-dispatcher-type flex), balance the routing "
	 "(--moe-aux-loss-coeff, a capacity factor) so no rank's experts are the slow ones, and "
	 "keep the expert group inside one node where it fits."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, 0, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap dispatch and combine with the experts' compute (DeepEP's kernels, or "
	 "the shared experts run while the tokens travel), balance the routing (the auxiliary "
	 "load-balancing loss, a capacity factor) so no rank's experts are the slow ones, and keep "
	 "the expert group inside one node where it fits."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_CP, 0,
	 "The context-parallel exchange of keys and values waits with nothing to overlap it: "
	 "overlap it with the attention compute (--cp-comm-type p2p with Transformer Engine: ring "
	 "attention's pipelined send/recv), or use fewer context-parallel ranks "
	 "(--context-parallel-size) for these sequence lengths."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, 0, 0, TD_PAR_CP, 0,
	 "The context-parallel exchange of keys and values waits with nothing to overlap it: "
	 "overlap it with the attention compute (ring attention's pipelined send/recv, as torch's "
	 "context_parallel does), or use fewer context-parallel ranks for these sequence "
	 "lengths."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Overlap the group's collectives with compute: issue them on a side stream (async_op=True) "
	 "and wait only where the result is used; send fewer, larger messages. If one rank is "
	 "slow, the rest wait here: run tracedoc diagnose on every rank's trace to find it."},

	/* exposed communication, by framework and collective */
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_TORCHREC, 0, TD_COLL_ALL_TO_ALL, 0,
	 "The embedding all-to-all (torchrec's sparse data distribution) waits with nothing to "
	 "overlap it: pipeline it with torchrec.distributed.train_pipeline.TrainPipelineSparseDist "
	 "(the next batch's input distribution runs while this batch computes), and balance the "
	 "embedding tables across ranks (EmbeddingShardingPlanner) so no rank's shard is the slow "
	 "one."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, 0, TD_ON_FSDP, TD_COLL_ALL_TO_ALL, 0,
	 "The all-to-all (model-parallel embeddings, or experts) waits with nothing to overlap "
	 "it: start it for the next batch while this batch computes (pipeline the sparse input "
	 "distribution one batch ahead, with the all-to-all on a side stream) and balance what "
	 "each rank holds so no rank's shard is the slow one."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_DEEPSPEED, 0, -1, 0,
	 "DeepSpeed's collectives wait with nothing to overlap them: in the DeepSpeed config set "
	 "\"zero_optimization\": {\"overlap_comm\": true, \"contiguous_gradients\": true} and "
	 "raise \"reduce_bucket_size\" and \"allgather_bucket_size\" (fewer, larger "
	 "collectives); under ZeRO-3 raise \"stage3_prefetch_bucket_size\" so parameters are "
	 "gathered ahead of the layer that needs them. If one rank is slow, the rest wait here: "
	 "run tracedoc diagnose on every rank's trace."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_MEGATRON, 0, -1, 0,
	 "Megatron-LM's collectives wait with nothing to overlap them: with the distributed "
	 "optimizer (--use-distributed-optimizer) add --overlap-grad-reduce and "
	 "--overlap-param-gather; for tensor parallelism add --sequence-parallel and, with "
	 "Transformer Engine, --tp-comm-overlap. If one rank is slow, the rest wait here: run "
	 "tracedoc diagnose on every rank's trace."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_FSDP, 0, -1, 0,
	 "FSDP waits for its all-gathers and reduce-scatters: prefetch the next shard while this "
	 "one computes - FSDP(model, forward_prefetch=True, backward_prefetch=BackwardPrefetch."
	 "BACKWARD_PRE, limit_all_gathers=True) (FSDP2: fully_shard(..., "
	 "reshard_after_forward=False) for the last layers). Under gradient accumulation skip the "
	 "reduce-scatter of the non-final micro-steps (model.set_requires_gradient_sync(False), or "
	 "no_sync()). If one rank is slow, the rest wait here: run tracedoc diagnose on every "
	 "rank's trace to find it."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_DDP, 0, TD_COLL_ALL_REDUCE, 0,
	 "DDP's all-reduce runs after backward instead of during it: let buckets start earlier "
	 "and overlap - DistributedDataParallel(model, bucket_cap_mb=50, "
	 "gradient_as_bucket_view=True) (try 10-100), and under gradient accumulation wrap the "
	 "non-final micro-steps in `with model.no_sync():`. A comm hook halves the bytes: "
	 "model.register_comm_hook(None, torch.distributed.algorithms.ddp_comm_hooks."
	 "default_hooks.bf16_compress_hook). If one rank is slow, the rest wait here: run tracedoc "
	 "diagnose on every rank's trace to find it."},
	{TD_FIX_COMM, ANY_V, INFER, ANY_E, 0, 0, TD_COLL_ALL_REDUCE, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it: keep "
	 "the engine's custom all-reduce on (vLLM: no --disable-custom-all-reduce), overlap it "
	 "with the next layer's compute (async tensor parallelism, torch.distributed."
	 "_symmetric_memory), or serve with fewer tensor-parallel ranks and a larger batch per "
	 "rank."},
	{TD_FIX_COMM, ANY_V, INFER, ANY_E, 0, 0, TD_COLL_CUSTOM, 0,
	 "The custom all-reduce of tensor parallelism waits with nothing to overlap it: overlap it "
	 "with the next layer's compute (async tensor parallelism), or serve with fewer "
	 "tensor-parallel ranks and a larger batch per rank."},
	{TD_FIX_COMM, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Communication in the forward pass waits with nothing to overlap it: check which "
	 "collective it is (the kernels above) and its group - expert-parallel all-to-all "
	 "(overlap dispatch and combine with the experts' compute), pipeline send/recv (more "
	 "micro-batches in flight) or tensor-parallel all-reduce (async tensor parallelism)."},
	{TD_FIX_COMM, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Overlap collectives with compute: issue them on a side stream (async_op=True) and wait "
	 "only where the result is used; send fewer, larger messages (flatten small tensors into "
	 "one buffer); compress what you send (bf16). If one rank is slow, the rest wait here: run "
	 "tracedoc diagnose on every rank's trace to find it."},
};
const size_t td_fix_nentries = sizeof(td_fix_entries) / sizeof(td_fix_entries[0]);

static int fits(const struct td_fix_entry *e, const struct td_context *c, int coll)
{
	return (e->vendor == TD_VENDOR_UNKNOWN || e->vendor == c->vendor) &&
	       (e->run == TD_RUN_UNKNOWN || e->run == c->run) &&
	       (e->engine == TD_ENGINE_NONE || e->engine == c->engine) &&
	       (c->on & e->need) == e->need && !(c->on & e->none) &&
	       (e->coll < 0 || e->coll == coll);
}

const struct td_fix_entry *td_fix_pick(const struct td_context *c, enum td_mech m, int coll)
{
	size_t i;

	for (i = 0; i < td_fix_nentries; i++)
		if (td_fix_entries[i].mech == m && fits(&td_fix_entries[i], c, coll))
			return &td_fix_entries[i];
	return NULL;
}

const char *td_fix_text(const struct td_context *c, enum td_mech m, int coll, const char *arg,
			char *buf, size_t cap)
{
	const struct td_fix_entry *e = td_fix_pick(c, m, coll);
	const char *p, *s;

	if (!cap)
		return buf;
	buf[0] = '\0';
	if (!e)
		return buf;
	s = e->text;
	p = strstr(s, "%s");
	if (p)
		snprintf(buf, cap, "%.*s%s%s", (int)(p - s), s, arg ? arg : "", p + 2);
	else
		snprintf(buf, cap, "%s", s);
	return buf;
}

const char *td_fix_token(const struct td_context *c, enum td_fix_token k)
{
	int amd = c->vendor == TD_VENDOR_AMD;

	switch (k) {
	case TD_TOK_ALLOC_CONF:
		return amd ? "PYTORCH_HIP_ALLOC_CONF" : "PYTORCH_CUDA_ALLOC_CONF";
	case TD_TOK_NO_CACHING:
		return amd ? "PYTORCH_NO_HIP_MEMORY_CACHING" : "PYTORCH_NO_CUDA_MEMORY_CACHING";
	case TD_TOK_SMI:
		return amd ? "rocm-smi" : c->vendor == TD_VENDOR_NVIDIA ? "nvidia-smi"
			: "nvidia-smi or rocm-smi";
	case TD_TOK_GRAPHS:
		return amd ? "HIP graphs" : "CUDA graphs";
	case TD_TOK_DEVICE:
		return "cuda"; /* torch names ROCm devices "cuda" too */
	}
	return "";
}

const char *td_fix_optimizer(const struct td_context *c, const char *opt, char *buf, size_t cap)
{
	/* torch.optim classes with a fused CUDA/ROCm kernel (fused=True); Adagrad's fused
	 * implementation is CPU-only, the rest have foreach only */
	static const char *const fused[] = {"Adam", "AdamW", "SGD"};
	int has_fused = 0;
	size_t i;

	for (i = 0; opt && i < sizeof(fused) / sizeof(fused[0]); i++)
		has_fused |= !strcmp(opt, fused[i]);
	if ((!opt || !*opt) && c->opt_impl == TD_OPT_FOREACH)
		snprintf(buf, cap, "The optimizer runs foreach already: where it has a fused kernel "
			 "(Adam, AdamW, SGD) fused=True makes its update one kernel per step; else "
			 "compile the step (torch.compile(optimizer.step)).");
	else if ((!opt || !*opt) && c->opt_impl == TD_OPT_FUSED)
		snprintf(buf, cap, "The optimizer is fused already: these small kernels are not its "
			 "update; look at what launches them (the ops above).");
	else if (!opt || !*opt)
		snprintf(buf, cap, "The optimizer updates one parameter at a time: pass foreach=True "
			 "to it (fused=True where it has a fused kernel: Adam, AdamW, SGD); "
			 "torch.compile(model, mode=\"reduce-overhead\") fuses the rest of the step's "
			 "small ops.");
	else if (c->opt_impl == TD_OPT_FUSED)
		snprintf(buf, cap, "torch.optim.%s is fused already: these small kernels are not "
			 "its update; look at what launches them (the ops above).", opt);
	else if (c->opt_impl == TD_OPT_FOREACH && has_fused)
		snprintf(buf, cap, "torch.optim.%s runs foreach already: fused=True makes its update "
			 "one kernel per step (torch.optim.%s(params, ..., fused=True)).", opt, opt);
	else if (c->opt_impl == TD_OPT_FOREACH)
		snprintf(buf, cap, "torch.optim.%s runs foreach already and has no fused kernel on "
			 "the GPU: compile the step (torch.compile(optimizer.step)) to fuse what is "
			 "left.", opt);
	else if (has_fused)
		snprintf(buf, cap, "The optimizer updates one parameter at a time (a kernel per "
			 "parameter). Batch the update: torch.optim.%s(params, ..., fused=True) (or "
			 "foreach=True where fused is not available for your dtype).", opt);
	else
		snprintf(buf, cap, "The optimizer updates one parameter at a time (a kernel per "
			 "parameter). Batch the update: torch.optim.%s(params, ..., foreach=True) (one "
			 "kernel for many tensors; its fused=True is CPU-only or absent).", opt);
	return buf;
}
