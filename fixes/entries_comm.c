/* SPDX-License-Identifier: MIT */
/* The fix catalogue's entries for communication and a job's ranks (fixes/catalogue.h), as
 * fixes/entries.c orders its own: by mechanism, the most specific context first, each
 * mechanism's last entry for a context nothing is known of. */
#include "fixes/entries.h"

const struct td_fix_entry td_fix_entries_comm[] = {
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
	{TD_FIX_COMM_GROUP, ANY_V, INFER, VLLM, 0, TD_ON_CUSTOM_AR, TD_PAR_TP, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it, and "
	 "vLLM runs it through NCCL: its custom all-reduce is off (--disable-custom-all-reduce) or "
	 "does not apply (more than 8 GPUs, or no NVLink or P2P between them). Where the GPUs are "
	 "NVLink-connected leave it on; else overlap the all-reduce with the next layer's compute "
	 "(async tensor parallelism), or serve with fewer tensor-parallel ranks and a larger batch "
	 "per rank."},
	{TD_FIX_COMM_GROUP, ANY_V, INFER, ANY_E, TD_ON_CUSTOM_AR, 0, TD_PAR_TP, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it, though "
	 "a custom all-reduce runs already: overlap it with the next layer's compute (async "
	 "tensor parallelism), fuse it with the norm that follows where the engine can, or serve "
	 "with fewer tensor-parallel ranks and a larger batch per rank."},
	{TD_FIX_COMM_GROUP, ANY_V, INFER, ANY_E, 0, 0, TD_PAR_TP, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it: use the "
	 "engine's custom all-reduce where the GPUs are NVLink-connected (vLLM: no "
	 "--disable-custom-all-reduce), overlap it with the next layer's compute (async tensor "
	 "parallelism), or serve with fewer tensor-parallel ranks and a larger batch per rank."},
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
	/* the MoE token exchange: DeepEP (NVIDIA's NVSHMEM) is advised only on NVIDIA, and not
	 * where its kernels run already */
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, TD_ON_MEGATRON | TD_ON_DEEPEP, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all runs through DeepEP already and waits with nothing to "
	 "overlap it: overlap it with the other micro-batch's compute "
	 "(--overlap-moe-expert-parallel-comm) and the shared experts' compute "
	 "(--moe-shared-expert-overlap), balance the routing (--moe-aux-loss-coeff, a capacity "
	 "factor) so no rank's experts are the slow ones, and keep the expert group inside one "
	 "node where it fits."},
	{TD_FIX_COMM_GROUP, NV, ANY_R, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap it with the shared experts' compute (--moe-shared-expert-overlap) "
	 "or dispatch with DeepEP (--moe-token-dispatcher-type flex), balance the routing "
	 "(--moe-aux-loss-coeff, a capacity factor) so no rank's experts are the slow ones, and "
	 "keep the expert group inside one node where it fits."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, TD_ON_MEGATRON, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap it with the other micro-batch's compute "
	 "(--overlap-moe-expert-parallel-comm) and the shared experts' compute "
	 "(--moe-shared-expert-overlap), balance the routing (--moe-aux-loss-coeff, a capacity "
	 "factor) so no rank's experts are the slow ones, and keep the expert group inside one "
	 "node where it fits."},
	{TD_FIX_COMM_GROUP, NV, INFER, VLLM, 0, TD_ON_DEEPEP, TD_PAR_EP, 0,
	 "vLLM's expert-parallel all-to-all waits with nothing to overlap it: pick the backend for "
	 "the phase (--all2all-backend deepep_low_latency for decode, which graphs can capture; "
	 "deepep_high_throughput for prefill), rebalance the experts across ranks (--enable-eplb) "
	 "so no rank's experts are the slow ones, and keep the expert group inside one node where "
	 "it fits."},
	{TD_FIX_COMM_GROUP, ANY_V, INFER, VLLM, 0, 0, TD_PAR_EP, 0,
	 "vLLM's expert-parallel all-to-all waits with nothing to overlap it: rebalance the experts "
	 "across ranks (--enable-eplb) so no rank's experts are the slow ones, check that the "
	 "backend fits the phase (--all2all-backend: deepep_low_latency in decode, "
	 "deepep_high_throughput in prefill), and keep the expert group inside one node where it "
	 "fits."},
	{TD_FIX_COMM_GROUP, NV, INFER, SGLANG, 0, TD_ON_DEEPEP, TD_PAR_EP, 0,
	 "SGLang's expert-parallel all-to-all waits with nothing to overlap it: dispatch with "
	 "DeepEP (--moe-a2a-backend deepep), overlap one micro-batch's dispatch and combine with "
	 "the other's compute (--enable-two-batch-overlap), and rebalance the experts across ranks "
	 "(--enable-eplb) so no rank's experts are the slow ones."},
	{TD_FIX_COMM_GROUP, ANY_V, INFER, SGLANG, 0, 0, TD_PAR_EP, 0,
	 "SGLang's expert-parallel all-to-all waits with nothing to overlap it: overlap one "
	 "micro-batch's dispatch and combine with the other's compute "
	 "(--enable-two-batch-overlap), and rebalance the experts across ranks (--enable-eplb) so "
	 "no rank's experts are the slow ones."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, TD_ON_DEEPEP, 0, TD_PAR_EP, 0,
	 "DeepEP's dispatch and combine wait with nothing to overlap them: split the batch in two "
	 "and run one half's dispatch and combine while the other half computes (in decode its "
	 "low-latency kernels with return_recv_hook=True, so the receive takes no SMs while the "
	 "other half runs), balance the routing (the auxiliary load-balancing loss, redundant "
	 "copies of the busiest experts) so no rank's experts are the slow ones, and keep the "
	 "expert group inside one node where it fits."},
	{TD_FIX_COMM_GROUP, NV, ANY_R, ANY_E, 0, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap dispatch and combine with the experts' compute (DeepEP's kernels, or "
	 "the shared experts run while the tokens travel), balance the routing (the auxiliary "
	 "load-balancing loss, a capacity factor) so no rank's experts are the slow ones, and keep "
	 "the expert group inside one node where it fits."},
	{TD_FIX_COMM_GROUP, ANY_V, ANY_R, ANY_E, 0, 0, TD_PAR_EP, 0,
	 "The expert-parallel all-to-all (the MoE dispatch and combine) waits with nothing to "
	 "overlap it: overlap dispatch and combine with the experts' compute (two micro-batches in "
	 "turn, or the shared experts run while the tokens travel), balance the routing (the "
	 "auxiliary load-balancing loss, a capacity factor) so no rank's experts are the slow "
	 "ones, and keep the expert group inside one node where it fits."},
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

	/* gradients all-reduced one tensor at a time, outside a data-parallel wrapper */
	{TD_FIX_COMM_UNBUCKETED, ANY_V, ANY_R, ANY_E, TD_ON_DDP, 0, -1, 0,
	 "DistributedDataParallel is in use, yet the all-reduces run one at a time (%s) with "
	 "nothing to overlap them: something all-reduces outside its buckets (metrics, a manual "
	 "loop over tensors, find_unused_parameters re-reducing) or the buckets are too small. "
	 "Find the op that issues them (the evidence below), raise bucket_cap_mb (try 25-100), and "
	 "flatten what is reduced by hand into one buffer."},
	{TD_FIX_COMM_UNBUCKETED, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "The all-reduces run one at a time (%s) with nothing to overlap them: in the forward pass "
	 "that is tensor parallelism. Overlap each with the next layer's compute (async tensor "
	 "parallelism), fuse the small ones into one buffer, or serve with fewer tensor-parallel "
	 "ranks and a larger batch per rank."},
	{TD_FIX_COMM_UNBUCKETED, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 0,
	 "The all-reduces run one at a time from the compiled step (%s) with nothing to overlap "
	 "them, and no DistributedDataParallel op is in the trace. Check first how the gradients "
	 "are reduced: under DDP with torch.compile keep torch._dynamo.config.optimize_ddp=True "
	 "(DDP's buckets, overlapped with backward) and raise bucket_cap_mb for fewer, larger "
	 "all-reduces; without DDP, wrap the model in DistributedDataParallel(model, "
	 "gradient_as_bucket_view=True) before compiling it."},
	{TD_FIX_COMM_UNBUCKETED, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The tensors are all-reduced one at a time (%s), with nothing to overlap them: wrap the "
	 "model in DistributedDataParallel(model, bucket_cap_mb=25, gradient_as_bucket_view=True), "
	 "which buckets gradients and all-reduces them during backward, or flatten them into one "
	 "buffer (torch._utils._flatten_dense_tensors) and issue one all-reduce (async_op=True) "
	 "that the next compute can overlap. If one rank is slow, the rest wait here: run tracedoc "
	 "diagnose on every rank's trace."},

	/* exposed communication, by framework and collective */
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_TORCHREC | TD_ON_SPARSE_PIPELINE | TD_ON_QCOMMS_FP8,
	 0, TD_COLL_ALL_TO_ALL, 0,
	 "The embedding all-to-all is exposed although torchrec's train pipeline already starts "
	 "the sparse data distribution a batch ahead (its sparse_data_dist or sdd_ ranges) and its "
	 "collectives already travel in FP8 (qcomms: fbgemm's FP8 row-wise kernels are in the "
	 "trace): what is left waits on the slowest rank or the links, not on the bytes. Balance "
	 "the embedding tables across ranks (EmbeddingShardingPlanner with the real table sizes and "
	 "pooling factors) so no rank's shard is the slow one, and run tracedoc diagnose on every "
	 "rank's trace to find the straggler."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_TORCHREC | TD_ON_SPARSE_PIPELINE, 0,
	 TD_COLL_ALL_TO_ALL, 0,
	 "The embedding all-to-all is exposed although torchrec's train pipeline already starts "
	 "the sparse data distribution a batch ahead (its sparse_data_dist or sdd_ ranges): what "
	 "is left waits on the slowest rank or the links. Balance the embedding tables across ranks "
	 "(EmbeddingShardingPlanner with the real table sizes and pooling factors) so no rank's "
	 "shard is the slow one, quantize what the all-to-all carries (torchrec's qcomms: fp16 or "
	 "bf16 forward and backward), and run tracedoc diagnose on every rank's trace to find the "
	 "straggler."},
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
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_DDP | TD_ON_BF16, 0, TD_COLL_ALL_REDUCE, 0,
	 "DDP's all-reduce runs with no compute beside it (its buckets finish after the backward's "
	 "compute, or too few start during it), and its gradients are bf16 already: smaller "
	 "buckets fill, and start, during the backward - DistributedDataParallel(model, "
	 "bucket_cap_mb=10, gradient_as_bucket_view=True) (below the default 25; larger ones, "
	 "50-100, mean fewer all-reduces, each ready later), and under gradient accumulation wrap the "
	 "non-final micro-steps in `with model.no_sync():`. Where the achieved rate is far below "
	 "the links' (the bandwidth line above), the collective library or the topology is the "
	 "limit: check its transport (NCCL_DEBUG=INFO / RCCL's, P2P and the fabric in use) and "
	 "run tracedoc diagnose on every rank's trace to find a slow rank."},
	{TD_FIX_COMM, ANY_V, TRAIN, ANY_E, TD_ON_DDP, 0, TD_COLL_ALL_REDUCE, 0,
	 "DDP's all-reduce runs with no compute beside it (its buckets finish after the backward's "
	 "compute, or too few start during it): smaller buckets fill, and start, during the "
	 "backward - DistributedDataParallel(model, bucket_cap_mb=10, "
	 "gradient_as_bucket_view=True) (below the default 25; larger ones, 50-100, mean fewer "
	 "all-reduces, each ready later), and under gradient accumulation wrap the "
	 "non-final micro-steps in `with model.no_sync():`. A comm hook halves the bytes: "
	 "model.register_comm_hook(None, torch.distributed.algorithms.ddp_comm_hooks."
	 "default_hooks.bf16_compress_hook). If one rank is slow, the rest wait here: run tracedoc "
	 "diagnose on every rank's trace to find it."},
	{TD_FIX_COMM, ANY_V, INFER, VLLM, 0, TD_ON_CUSTOM_AR, TD_COLL_ALL_REDUCE, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it, and "
	 "vLLM runs it through NCCL: its custom all-reduce is off (--disable-custom-all-reduce) or "
	 "does not apply (more than 8 GPUs, or no NVLink or P2P between them). Where the GPUs are "
	 "NVLink-connected leave it on; else overlap the all-reduce with the next layer's compute "
	 "(async tensor parallelism), or serve with fewer tensor-parallel ranks and a larger batch "
	 "per rank."},
	{TD_FIX_COMM, ANY_V, INFER, ANY_E, TD_ON_CUSTOM_AR, 0, TD_COLL_ALL_REDUCE, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it, though "
	 "a custom all-reduce runs already: overlap it with the next layer's compute (async "
	 "tensor parallelism), fuse it with the norm that follows where the engine can, or serve "
	 "with fewer tensor-parallel ranks and a larger batch per rank."},
	{TD_FIX_COMM, ANY_V, INFER, ANY_E, 0, 0, TD_COLL_ALL_REDUCE, 0,
	 "Tensor-parallel all-reduce in the forward pass waits with nothing to overlap it: use the "
	 "engine's custom all-reduce where the GPUs are NVLink-connected (vLLM: no "
	 "--disable-custom-all-reduce), overlap it with the next layer's compute (async tensor "
	 "parallelism), or serve with fewer tensor-parallel ranks and a larger batch per rank."},
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

	/* a job's ranks: the one that holds the others up (%s: "rank 3") */
	{TD_FIX_STRAGGLER_BEFORE, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Look at what %s does between iterations: work only it runs (logging, metrics on that "
	 "rank), its next requests arriving late, or a slower host or GPU (@GPU_CHECK@). Record "
	 "several iterations on every rank (torch.profiler.schedule(wait=1, warmup=1, active=5)) "
	 "and diagnose the job again to see the one before."},
	{TD_FIX_STRAGGLER_BEFORE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Look at what %s does between steps: work only it runs (logging, checkpointing, "
	 "evaluation on that rank), its next batch arriving late, or a slower host or GPU "
	 "(@GPU_CHECK@). Record several steps on every rank (torch.profiler.schedule(wait=1, "
	 "warmup=1, active=5)) and diagnose the job again to see the step before."},
	{TD_FIX_STRAGGLER_COMPUTE, ANY_V, TRAIN, ANY_E, 0, 0, -1, 0,
	 "Give %s the same work as the others: uneven batches or sequence lengths make one rank "
	 "compute longer while the rest wait in the next collective - shard evenly "
	 "(DistributedSampler(..., drop_last=True)), pack or bucket sequences by length. If the "
	 "work is the same, its GPU is slower: check it with @GPU_CHECK@ and run the job without "
	 "that node."},
	{TD_FIX_STRAGGLER_COMPUTE, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Give %s the same work as the others: uneven batches or sequence lengths make one rank "
	 "compute longer while the rest wait in the next collective - balance the requests across "
	 "ranks (the same batch size and sequence lengths on each: the router's load balancing, "
	 "padding or bucketing prompts by length). If the work is the same, its GPU is slower: "
	 "check it with @GPU_CHECK@ and run the job without that node."},
	{TD_FIX_STRAGGLER_COMPUTE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Give %s the same work as the others: uneven inputs (batch sizes, sequence lengths) make "
	 "one rank compute longer while the rest wait in the next collective - split the work "
	 "evenly across ranks, pack or bucket sequences by length. If the work is the same, its "
	 "GPU is slower: check it with @GPU_CHECK@ and run the job without that node."},
	{TD_FIX_STRAGGLER_ARRIVE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Make %s arrive on time: the others wait for it."},
	{TD_FIX_STRAGGLER_UNKNOWN, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Find what %s does before its collectives that the others do not: diagnose its own trace "
	 "beside another rank's; a slower GPU (@GPU_CHECK@) or a larger share of the requests are "
	 "the usual causes."},
	{TD_FIX_STRAGGLER_UNKNOWN, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Find what %s does before its collectives that the others do not: diagnose its own trace "
	 "beside another rank's; a slower GPU (@GPU_CHECK@) or a larger share of the data are the "
	 "usual causes."},
	/* compute that differs across ranks */
	{TD_FIX_IMBALANCE, ANY_V, TRAIN, ANY_E, 0, 0, -1, 0,
	 "Give every rank the same work: uneven batches or sequence lengths make one rank compute "
	 "longer while the rest wait in the next collective. Shard evenly (DistributedSampler(..., "
	 "drop_last=True)), pack or bucket sequences by length so each rank gets the same tokens "
	 "per step, and check that no rank runs extra work (logging, evaluation, a larger share)."},
	{TD_FIX_IMBALANCE, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Give every rank the same work: uneven batches or sequence lengths make one rank compute "
	 "longer while the rest wait in the next collective. Balance the requests across ranks "
	 "(the same batch size and sequence lengths on each: the router's load balancing, padding "
	 "or bucketing prompts by length), and check that no rank runs extra work (logging, a "
	 "larger share)."},
	{TD_FIX_IMBALANCE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Give every rank the same work: uneven inputs (batch sizes, sequence lengths) make one "
	 "rank compute longer while the rest wait in the next collective. Split the work evenly "
	 "across ranks, pack or bucket sequences by length, and check that no rank runs extra "
	 "work (logging, evaluation, a larger share)."},
};
const size_t td_fix_ncomm = sizeof(td_fix_entries_comm) / sizeof(td_fix_entries_comm[0]);
