/* SPDX-License-Identifier: MIT */
/* The fix catalogue's entries (fixes/catalogue.h): by mechanism, the most specific context
 * first, each mechanism's last entry for a context nothing is known of. What picks among them
 * and expands their tokens is fixes/catalogue.c. These are one GPU's and one host's;
 * communication's and a job's ranks' are fixes/entries_comm.c (a mechanism's entries all in
 * one of the two). */
#include "fixes/entries.h"

const struct td_fix_entry td_fix_entries[] = {
	/* the top kernel, measured by the vendor's kernel profiler */
	{TD_FIX_KERNEL_PROFILE, NV, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Then measure the top kernel itself with Nsight Compute: ncu --kernel-name regex:'%s' "
	 "--launch-count 5 --set full -o top_kernel @CMD@."},
	{TD_FIX_KERNEL_PROFILE, AMD, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Then measure the top kernel itself on the AMD GPU: rocprofv3 --kernel-trace "
	 "--kernel-include-regex '%s' -- @CMD@, and its hardware counters with "
	 "rocprof-compute profile -n top -- @CMD@."},
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
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, ANY_E, TD_ON_CAPTURE, 0, -1, 0,
	 "The engine is capturing its graphs here, at start-up: the host time between these "
	 "launches is the capture's, once, not the serving loop's. Profile the iterations after "
	 "capture, which replay the graphs."},
	/* a prefill: graphs are captured for decode's batch sizes; more tokens a prefill spread
	 * the host's per-layer time */
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, VLLM, TD_ON_PREFILL, 0, -1, 0,
	 "These iterations are prefills (their prompts' tokens in one forward), which run beyond "
	 "the graphs vLLM captures for decode's batch sizes: the host's per-layer Python and "
	 "launches hold them. Keep compilation on (compilation_config; no enforce_eager=True), let "
	 "each prefill carry more tokens (max_num_batched_tokens, chunked prefill) so that host "
	 "time is spread over more work, and profile decode iterations too: they, not this "
	 "prefill, are the steady serving loop."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, SGLANG, TD_ON_PREFILL, 0, -1, 0,
	 "These batches are prefills (EXTEND), which SGLang's graphs do not cover: they are "
	 "captured for decode batches (--cuda-graph-max-bs does not reach a prefill), so the host's "
	 "per-layer Python and launches hold them. Let each prefill carry more tokens "
	 "(--chunked-prefill-size, --max-prefill-tokens) so that host time is spread over more "
	 "work, and profile decode batches too: they, not this prefill, are the steady serving "
	 "loop."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, ANY_E, TD_ON_PREFILL, 0, -1, 0,
	 "These iterations are prefills, which a serving engine's graphs (captured for decode's "
	 "batch sizes) do not cover: the host's per-layer Python and launches hold them. Let each "
	 "prefill carry more tokens so that host time is spread over more work, and profile decode "
	 "iterations too: they, not this prefill, are the steady serving loop."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, VLLM, 0, 0, -1, 1,
	 "The forward runs eagerly (no graph replays): replay it with graphs (drop "
	 "enforce_eager=True / --enforce-eager), keep compilation on (compilation_config), and batch more requests per iteration "
	 "(max_num_seqs) so each launch does more work."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, SGLANG, 0, 0, -1, 1,
	 "The forward runs eagerly (no graph replays): keep graphs on (no --disable-cuda-graph) "
	 "and raise --cuda-graph-max-bs to cover the batch sizes served, and batch more requests per "
	 "iteration (--max-running-requests)."},
	{TD_FIX_SERVING_HOST, ANY_V, ANY_R, ANY_E, 0, 0, -1, 1,
	 "The forward runs eagerly (no graph replays): replay it with graphs (the engine's graph "
	 "mode) or compile it, and batch more requests per iteration so each launch does more work."},

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

	/* the caching allocator */
	{TD_FIX_ALLOC_NO_CACHE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The caching allocator is off: every step allocates and frees each tensor through the "
	 "driver (%s), which is what @NO_CACHING@=1 does - a debugging switch (for "
	 "compute-sanitizer or a memory checker). Unset it outside debugging runs and benchmarks; "
	 "the pool then serves the steady state with no driver calls."},
	{TD_FIX_ALLOC_CHURN, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 "The caching allocator is being bypassed or emptied, so each iteration asks the driver for "
	 "memory again%s. vLLM reserves its memory at start-up: look for torch.cuda.empty_cache() "
	 "or gc.collect() in code run per request (custom logits processors, hooks), keep the "
	 "batch shapes inside the captured sizes, and set @ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_ALLOC_CHURN, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "PyTorch's caching allocator is being bypassed or emptied, so each step asks the driver "
	 "for memory again%s. Remove torch.cuda.empty_cache() (and explicit gc.collect()) from "
	 "the loop, set @ALLOC_CONF@=expandable_segments:True, keep tensor shapes static (pad "
	 "variable lengths to a few bucket sizes), and preallocate buffers that are reused every "
	 "step."},

	/* GPU idle with nothing recorded on the host, or waiting outside its stream */
	{TD_FIX_IDLE_UNTRACED, ANY_V, ANY_R, ANY_E, TD_ON_COLLECTOR, 0, -1, 0,
	 "tracedoc record sees the CUDA calls, not the host's work between them: the GPU waited "
	 "on host work that makes no CUDA call - Python, data loading, a library loading on its "
	 "first use (cuDNN and cuBLAS take seconds, once). Mark the loop's body with an NVTX "
	 "range (with torch.cuda.nvtx.range(\"step\"): ... in Python, nvtxRangePushA(\"step\") "
	 "and nvtxRangePop() in C++) so the report keeps to the steps, then sample the host there "
	 "(py-spy record --native --pid PID for Python, perf record -g -p PID for native code) "
	 "and move that work out of the step."},
	{TD_FIX_IDLE_UNTRACED, ANY_V, ANY_R, ANY_E, TD_ON_STACKS, 0, -1, 0,
	 "The launching thread recorded nothing while the GPU waited, though the trace records "
	 "Python frames: the time goes to what the profiler cannot see - another thread holding "
	 "the GIL, I/O, logging, a C extension. Sample the running process (py-spy record "
	 "--native --idle --pid PID) to find it, and move that work out of the step."},
	{TD_FIX_IDLE_UNTRACED, ANY_V, ANY_R, ANY_E, TD_ON_HOST_OPS, TD_ON_STACKS, -1, 0,
	 "The launching thread recorded nothing while the GPU waited: the time goes to code the "
	 "profiler does not see (another thread, the GIL, I/O, logging). Profile with "
	 "torch.profiler.profile(with_stack=True) to see the Python frames, and move that work "
	 "out of the step."},
	{TD_FIX_IDLE_UNTRACED, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The trace records no CPU ops or Python on the host (at most its runtime calls): what "
	 "the host did while the GPU waited is not in it. Profile again with the host side on - "
	 "torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], "
	 "with_stack=True) (the CUDA activity covers ROCm too) - and move what it shows out of "
	 "the step."},
	{TD_FIX_IDLE_DEPENDENCY, ANY_V, ANY_R, ANY_E, TD_ON_DIST, 0, -1, 0,
	 "Queued ops waited with the device idle for something outside this stream: an event from "
	 "another stream, another rank, a host callback or another process sharing the GPU. "
	 "Diagnose every rank's trace together to find a straggler, check @SMI@ for other "
	 "processes, and avoid cross-stream waits inside the step."},
	{TD_FIX_IDLE_DEPENDENCY, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Queued ops waited with the device idle for something outside this stream: an event from "
	 "another stream, a host callback, or another process sharing the GPU. Check @SMI@ for "
	 "other processes on the device, and avoid cross-stream waits inside the step (record the "
	 "event right after the work it guards, wait on it only where its result is used)."},

	/* device memory */
	{TD_FIX_MEM_PEAK, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 "vLLM reserves its KV cache up front (gpu_memory_utilization, 0.9 by default): a "
	 "reservation near the capacity is by design. Lower it only if another process needs the "
	 "GPU or start-up fails; a smaller max_model_len or max_num_seqs needs less cache."},
	{TD_FIX_MEM_PEAK, ANY_V, ANY_R, SGLANG, 0, 0, -1, 0,
	 "SGLang reserves its KV cache up front (--mem-fraction-static): a reservation near the "
	 "capacity is by design. Lower it only if another process needs the GPU or start-up "
	 "fails; a smaller --context-length or --max-running-requests needs less cache."},
	{TD_FIX_MEM_PEAK, ANY_V, ANY_R, TGI, 0, 0, -1, 0,
	 "TGI reserves its KV cache up front (--cuda-memory-fraction): a reservation near the "
	 "capacity is by design. Lower it only if another process needs the GPU or start-up "
	 "fails; a smaller --max-batch-total-tokens or --max-total-tokens needs less cache."},
	{TD_FIX_MEM_PEAK, ANY_V, ANY_R, TRTLLM, 0, 0, -1, 0,
	 "TensorRT-LLM reserves its KV cache up front (KvCacheConfig free_gpu_memory_fraction, "
	 "0.9 by default): a reservation near the capacity is by design. Lower it only if another "
	 "process needs the GPU or start-up fails; a smaller max_seq_len or max_batch_size needs "
	 "less cache."},
	{TD_FIX_MEM_PEAK, ANY_V, INFER, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "Cut the memory the forward pass holds at its peak: run it under torch.inference_mode() "
	 "(no autograd state), in bf16 (model.to(torch.bfloat16)), or with a smaller batch; and let "
	 "the caching allocator grow segments instead of fragmenting them: "
	 "@ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_MEM_PEAK, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Cut the memory the forward pass holds at its peak: run it under torch.inference_mode() "
	 "(no autograd state) and with a smaller batch - it runs in reduced precision already; "
	 "and let the caching allocator grow segments instead of fragmenting them: "
	 "@ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_MEM_PEAK, ANY_V, TRAIN, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "Cut the memory the step holds at its peak: activation checkpointing on the largest "
	 "blocks (torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)), mixed "
	 "precision (torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16)), or a smaller "
	 "batch with gradient accumulation; and let the caching allocator grow segments instead "
	 "of fragmenting them: @ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_MEM_PEAK, ANY_V, TRAIN, ANY_E, 0, 0, -1, 0,
	 "Cut the memory the step holds at its peak - it runs in reduced precision already: "
	 "activation checkpointing on the largest blocks (torch.utils.checkpoint.checkpoint(block, "
	 "x, use_reentrant=False)), or a smaller batch with gradient accumulation; and let the "
	 "caching allocator grow segments instead of fragmenting them: "
	 "@ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_MEM_PEAK, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Cut the memory held at the peak: in training, activation checkpointing on the largest "
	 "blocks (torch.utils.checkpoint.checkpoint) or a smaller batch; in inference, "
	 "torch.inference_mode() and a smaller batch; bf16 where the model is still in fp32. Let "
	 "the caching allocator grow segments instead of fragmenting them: "
	 "@ALLOC_CONF@=expandable_segments:True."},
	{TD_FIX_MEM_LEAK, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 "Something keeps tensors alive from one batch or request to the next: outputs kept on "
	 "the GPU (keep outputs.cpu(), or only the values needed), a cache keyed by request that "
	 "is never cleared, hooks that store activations, or a forward pass outside "
	 "torch.inference_mode() that keeps autograd state. What each step leaves behind is the "
	 "growth; `tracedoc memory` shows where the peak is, and "
	 "torch.cuda.memory._record_memory_history() the allocations that stay."},
	{TD_FIX_MEM_LEAK, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Something keeps tensors alive from one step to the next: a list of losses or outputs "
	 "(losses.append(loss) keeps each step's autograd graph: append loss.item() or "
	 "loss.detach()), metrics accumulated as tensors, a cache keyed by step, or hooks that "
	 "store activations. What each step leaves behind is the growth; `tracedoc memory` shows "
	 "where the peak is, and torch.cuda.memory._record_memory_history() the allocations that "
	 "stay."},
	{TD_FIX_MEM_FRAG, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The caching allocator holds blocks it cannot reuse for the sizes asked next. Let "
	 "segments grow in place: @ALLOC_CONF@=expandable_segments:True; allocate the largest, "
	 "long-lived tensors first and keep their shapes fixed (pad variable-length batches to a "
	 "few bucket sizes)."},

	/* small kernels of the training loop's own */
	{TD_FIX_ZERO_GRAD, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "zero_grad() launches a fill kernel per parameter: call "
	 "optimizer.zero_grad(set_to_none=True) (the default since PyTorch 2.0) so each .grad is "
	 "dropped instead of filled with zeros."},
	{TD_FIX_DDP_BUFFERS, ANY_V, TRAIN, ANY_E, TD_ON_DDP, 0, -1, 0,
	 "DDP broadcasts the module's buffers from rank 0 at every forward (broadcast_buffers=True, "
	 "the default), flattening them into one tensor and back on the host: %s. Where they need "
	 "no sync each step (BatchNorm's running statistics: SyncBatchNorm where they must agree), "
	 "construct it with DistributedDataParallel(model, broadcast_buffers=False)."},
	{TD_FIX_DDP_BUFFERS, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The data-parallel wrapper flattens the module's buffers into one tensor and back on the "
	 "host to broadcast them at every forward: %s. Turn that per-step broadcast off where the "
	 "buffers need no sync each step."},
	{TD_FIX_BUCKET_COPY, ANY_V, TRAIN, ANY_E, TD_ON_DDP | TD_ON_ONE_RANK, 0, -1, 0,
	 "DistributedDataParallel wraps a model trained on one rank (world_size 1): its reducer "
	 "still copies every gradient into its bucket with a small kernel and reduces the buckets "
	 "with no peer. Train the bare model at one rank (wrap it only when world_size > 1), or "
	 "at least DistributedDataParallel(model, gradient_as_bucket_view=True)."},
	{TD_FIX_BUCKET_COPY, ANY_V, TRAIN, ANY_E, TD_ON_DDP, 0, -1, 0,
	 "DDP's reducer copies each gradient into its bucket with a small kernel: "
	 "DistributedDataParallel(model, gradient_as_bucket_view=True) makes the gradients views "
	 "of the buckets, and a larger bucket_cap_mb means fewer, larger all-reduces."},
	{TD_FIX_BUCKET_COPY, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The data-parallel wrapper copies each tensor into its communication bucket with a small "
	 "kernel: let the tensors be views of the buckets (the wrapper's bucket-view option) and "
	 "use larger buckets, for fewer, larger all-reduces."},

	/* the data pipeline */
	{TD_FIX_LOADER_MAIN, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The loader runs in the main process (_SingleProcessDataLoaderIter, num_workers=0), "
	 "between the steps. Load in parallel: DataLoader(dataset, batch_size=..., num_workers=8, "
	 "@PIN_MEMORY@persistent_workers=True, prefetch_factor=4) - start with num_workers near "
	 "the CPU cores per GPU."},
	{TD_FIX_LOADER_WORKERS, NV, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The worker processes cannot keep up. Raise num_workers and prefetch_factor, set "
	 "@PIN_MEMORY@persistent_workers=True, and profile Dataset.__getitem__ (decoding and "
	 "augmentation are the usual cost: move them to the GPU, e.g. torchvision.transforms.v2 "
	 "on CUDA tensors or NVIDIA DALI)."},
	{TD_FIX_LOADER_WORKERS, AMD, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The worker processes cannot keep up. Raise num_workers and prefetch_factor, set "
	 "@PIN_MEMORY@persistent_workers=True, and profile Dataset.__getitem__ (decoding and "
	 "augmentation are the usual cost: move them to the GPU, e.g. torchvision.transforms.v2 "
	 "on GPU tensors, or ROCm's rocAL)."},
	{TD_FIX_LOADER_WORKERS, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The worker processes cannot keep up. Raise num_workers and prefetch_factor, set "
	 "@PIN_MEMORY@persistent_workers=True, and profile Dataset.__getitem__ (decoding and "
	 "augmentation are the usual cost: move them to the GPU, e.g. torchvision.transforms.v2 "
	 "on GPU tensors)."},

	/* host <-> device copies */
	{TD_FIX_PAGEABLE_UPLOAD, ANY_V, ANY_R, ANY_E, TD_ON_LOADER | TD_ON_PIN_MEMORY, 0, -1, 0,
	 "The loader pins its batches already (pin_memory=True), yet these copies come from "
	 "pageable memory: they are tensors it did not pin - built in the step itself, or a batch "
	 "type without a pin_memory() method. Pin those (tensor.pin_memory(), or give the batch "
	 "class a pin_memory() method) and copy with .to(\"cuda\", non_blocking=True): the host "
	 "then runs on, and the copy runs at the host link's full bandwidth with no stream sync."},
	{TD_FIX_PAGEABLE_UPLOAD, ANY_V, ANY_R, ANY_E, TD_ON_LOADER, 0, -1, 0,
	 "Copy from pinned memory without blocking the host: DataLoader(..., pin_memory=True) and "
	 "batch.to(\"cuda\", non_blocking=True) (or tensor.pin_memory() for tensors you build "
	 "yourself). The host then runs on, and the copy runs at the host link's full bandwidth "
	 "with no stream sync."},
	{TD_FIX_PAGEABLE_UPLOAD, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Copy from pinned memory without blocking the host: allocate the host buffers pinned "
	 "once (torch.empty(..., pin_memory=True), or tensor.pin_memory()) and reuse them, and "
	 "copy with .to(\"cuda\", non_blocking=True). The host then runs on, and the copy runs at "
	 "the host link's full bandwidth with no stream sync."},
	{TD_FIX_UPLOAD_SIDE_STREAM, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "These copies queue on the compute stream behind the kernels launched before them: issue "
	 "them on a side stream so they run beside that compute - s = torch.cuda.Stream(); with "
	 "torch.cuda.stream(s): x = batch.to(\"cuda\", non_blocking=True); then, before x is "
	 "used, torch.cuda.current_stream().wait_stream(s) and "
	 "x.record_stream(torch.cuda.current_stream()) (copying the next batch there while this "
	 "one computes hides the copy whole)."},
	{TD_FIX_CREATE_MOVE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Create the tensor where it is used: torch.randn(shape, device=\"cuda\") (likewise "
	 "zeros, ones, empty, full, arange) instead of torch.randn(shape).to(\"cuda\"): the GPU "
	 "fills it in microseconds and nothing crosses the host link."},

	/* the host waits on the GPU */
	/* a Python loop over a tensor's elements (%s: the ops of one iteration) */
	{TD_FIX_ELEMENT_LOOP, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "A Python loop runs %s once per element of a tensor. Remove the loop: one tensor op over "
	 "the whole tensor does the same work in one launch and reads the GPU once (total = "
	 "t.sum(); torch.where(cond, a, b) for an if per element; (t == v).nonzero() or .any() for "
	 "a search; t[idx] with a tensor of indices for a gather). Where the loop needs the values "
	 "in Python, copy the tensor to the host once before it (vals = t.tolist()) and loop over "
	 "the list: no wait for the GPU per element."},
	{TD_FIX_SYNC_ITEM, ANY_V, ANY_R, ANY_E, TD_ON_ELEM_LOOP, 0, -1, 0,
	 "An op reads one element at a time, and each read waits for the GPU: a Python loop over "
	 "a tensor's elements. Do the loop as one tensor op over the whole tensor (x.sum(), "
	 "torch.where, a comparison) and read the result once (one .tolist() or .cpu() after it, "
	 "not one .item() per element)."},
	{TD_FIX_SYNC_ITEM, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 "vLLM reads the sampled tokens back every step by design: turn on async scheduling "
	 "(--async-scheduling) so the next step is scheduled while the GPU runs this one. A "
	 ".item() or .tolist() in code of your own that runs per step (a logits processor, a "
	 "custom sampler) is a wait per step: keep that state on the GPU."},
	{TD_FIX_SYNC_ITEM, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 ".item()/.cpu()/.tolist() copy a value to the host and wait for the GPU. Keep the loop's "
	 "state on the GPU (stopping criteria and counts as tensors), read the results once per "
	 "batch (one .cpu() of the whole output), and branch with torch.where instead of Python "
	 "if on tensor values."},
	{TD_FIX_SYNC_ITEM, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 0,
	 ".item()/.cpu()/.tolist() copy a value to the host and wait for the GPU, and inside the "
	 "compiled model each one also breaks the graph (TORCH_LOGS=graph_breaks shows where). "
	 "Keep metrics on the GPU (accumulate loss.detach() and read it every N steps), and branch "
	 "with torch.where instead of Python if on tensor values."},
	{TD_FIX_SYNC_ITEM, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 ".item()/.cpu()/.tolist() copy a value to the host and wait for the GPU. Keep metrics on "
	 "the GPU (accumulate loss.detach() and read it every N steps), and branch with "
	 "torch.where instead of Python if on tensor values."},
	{TD_FIX_SYNC_NONZERO, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "nonzero() and boolean-mask indexing must copy the result size to the host. Use "
	 "fixed-size ops (torch.where, masked_fill, multiplying by the mask) or pass "
	 "torch.nonzero_static(..., size=N)."},
	{TD_FIX_SYNC_DTOH, ANY_V, ANY_R, VLLM, 0, 0, -1, 0, /* the sampled tokens, each iteration */
	 "vLLM reads each iteration's sampled tokens back: --async-scheduling overlaps that wait."},
	{TD_FIX_SYNC_DTOH, ANY_V, ANY_R, SGLANG, 0, 0, -1, 0,
	 "SGLang reads each batch's sampled tokens back: drop --disable-overlap-schedule to overlap it."},
	{TD_FIX_SYNC_DTOH, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "A copy to pageable host memory blocks until the GPU catches up. Copy into pinned memory "
	 "with .to(\"cpu\", non_blocking=True) and synchronize once, where the value is really "
	 "needed."},
	{TD_FIX_SYNC_MEMCPY, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "A synchronous @MEMCPY@ waits for all queued work: use @MEMCPY@Async on a stream into "
	 "pinned memory and wait on an event only where the data is used."},
	{TD_FIX_SYNC_MEMCPY_IDLE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "A synchronous @MEMCPY@ blocked the host %s while the GPU was busy under a tenth of it: "
	 "the trace does not show what it waited for (the host staging a pageable copy, another "
	 "stream, device or process, or work outside the trace). Check the copy's size and memory "
	 "kind in the evidence, then copy with @MEMCPY@Async from pinned memory on a stream."},
	{TD_FIX_SYNC_USER, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The op named in the config synchronizes: move it out of the step or make it "
	 "asynchronous."},
	{TD_FIX_SYNC_EXPLICIT, ANY_V, ANY_R, VLLM | SGLANG | TRTLLM | TGI, 0, 0, -1, 0,
	 "A sync of your own in the serving loop (a hook, a sampler) drains it: wait on one event."},
	{TD_FIX_SYNC_EXPLICIT, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "An explicit synchronize drains the GPU queue. Remove torch.cuda.synchronize() from the "
	 "step (time with torch.cuda.Event), or wait on one event/stream instead of the device."},

	{TD_FIX_SYNC_CHECK, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "A check on tensor values (if torch.isnan(x).any():, an assert on a tensor) reads its "
	 "answer with an .item() that waits for the GPU each time it runs. Take it off the hot path: "
	 "check every N steps or only under a debug flag, or assert on the GPU without waiting "
	 "(torch._assert_async(~torch.isnan(x).any()))."},
	{TD_FIX_SYNC_LAST_READ, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The host reads a result it uses next, with no GPU work queued after it: it waits for the "
	 "GPU's work however the copy is made, and an asynchronous copy would not start what uses "
	 "the data any earlier. The wait is the GPU's own time: to hide the host's work after it, "
	 "queue the next batch or request before reading this one's result."},

	/* start-up caught in the window */
	{TD_FIX_WARMUP, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 "This is one-off start-up work caught in the trace, not a steady-state cost: send a few "
	 "requests first, then profile (VLLM_TORCH_PROFILER_DIR, or --profiler-config in newer "
	 "releases; POST /start_profile and /stop_profile around the requests to measure), so the "
	 "recorded steps start warm."},
	{TD_FIX_WARMUP, ANY_V, ANY_R, SGLANG, 0, 0, -1, 0,
	 "This is one-off start-up work caught in the trace, not a steady-state cost: send a few "
	 "requests first, then profile (SGLANG_TORCH_PROFILER_DIR set, POST /start_profile and "
	 "/stop_profile around the requests to measure), so the recorded steps start warm."},
	{TD_FIX_WARMUP, ANY_V, ANY_R, ANY_E, TD_ON_NSYS, 0, -1, 0,
	 "This is one-off start-up work caught in the trace, not a steady-state cost: mark the "
	 "loop's body with an NVTX range (torch.cuda.nvtx.range(\"step\")) so its ranges are the "
	 "steps, and record only the steady state: nsys profile --trace=cuda,nvtx,osrt "
	 "--capture-range=cudaProfilerApi with torch.cuda.profiler.start() and stop() around the "
	 "later steps (--pytorch=autograd-nvtx adds PyTorch's ops)."},
	{TD_FIX_WARMUP, ANY_V, ANY_R, ANY_E, TD_ON_COLLECTOR, 0, -1, 0,
	 "This is one-off start-up work caught in the trace, not a steady-state cost: tracedoc "
	 "record traces the whole process, its start included. Mark the loop's body with an NVTX "
	 "range (with torch.cuda.nvtx.range(\"step\"): ... in Python, nvtxRangePushA(\"step\") "
	 "and nvtxRangePop() in C++): its ranges are then the steps and the slow first ones are "
	 "left out, and run enough steps that the steady state is most of the trace."},
	{TD_FIX_WARMUP, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "This is one-off start-up work caught in the trace, not a steady-state cost: profile the "
	 "steady state with torch.profiler.profile(schedule=torch.profiler.schedule(wait=1, "
	 "warmup=2, active=3), ...) and call prof.step() every iteration, so the recorded steps "
	 "start warm."},
	{TD_FIX_WARMUP_COMPILE, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 " vLLM compiles at start-up and caches the result under VLLM_CACHE_ROOT (~/.cache/vllm "
	 "by default): keep it on persistent storage between runs, so a restart loads the "
	 "compiled graphs instead of compiling them again."},
	{TD_FIX_WARMUP_COMPILE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 " Compilation runs again in every new process: keep the Inductor and Triton caches "
	 "between runs (TORCHINDUCTOR_CACHE_DIR, TRITON_CACHE_DIR on persistent storage; "
	 "TORCHINDUCTOR_FX_GRAPH_CACHE=1) and mark dynamic dimensions "
	 "(torch._dynamo.mark_dynamic) to avoid recompiles."},
	{TD_FIX_WARMUP_CAPTURE, ANY_V, ANY_R, VLLM, 0, 0, -1, 0,
	 " This trace records the engine capturing its @GRAPHS@ at start-up, one per batch size: "
	 "the forward passes run under capture, their kernels only recorded, so nothing here is "
	 "the serving loop. Profile requests sent after the server reports ready; to shorten "
	 "start-up, capture fewer sizes (compilation_config's cudagraph_capture_sizes)."},
	{TD_FIX_WARMUP_CAPTURE, ANY_V, ANY_R, SGLANG, 0, 0, -1, 0,
	 " This trace records the engine capturing its @GRAPHS@ at start-up, one per batch size: "
	 "the forward passes run under capture, their kernels only recorded, so nothing here is "
	 "the serving loop. Profile requests sent after the server reports ready; to shorten "
	 "start-up, capture fewer sizes (--cuda-graph-max-bs, or the sizes with --cuda-graph-bs)."},
	{TD_FIX_WARMUP_CAPTURE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 " This trace records @GRAPHS@ being captured: the work runs under capture, its kernels "
	 "only recorded, once. Profile the iterations that replay the graphs after capture."},
	/* GPU work that waited on work from before the trace */
	{TD_FIX_UNTRACED_WAIT, ANY_V, ANY_R, VLLM | SGLANG, 0, 0, -1, 0,
	 "The GPU waited on work queued before the profiler started (the batch before, an event "
	 "recorded earlier): nothing in this trace holds it, and nothing here can be sped up in "
	 "that time. Start the profile while the server is idle, or profile more iterations so "
	 "the work it waits for is in the trace; the findings below speak of what followed."},
	{TD_FIX_UNTRACED_WAIT, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "The GPU waited on work queued before the profiler started (an event recorded, or work "
	 "launched, earlier): nothing in this trace holds it. Drain the GPU before profiling "
	 "(torch.cuda.synchronize() before the profiler starts), or record more steps with a "
	 "schedule that waits a step first, so the window holds only what it measures; the "
	 "findings below speak of what followed."},
	{TD_FIX_WARMUP_CALLS, ANY_V, ANY_R, VLLM | SGLANG, 0, 0, -1, 0,
	 " The engine creates its contexts and handles once, at start-up: time and profile "
	 "requests sent after the server reports ready."},
	{TD_FIX_WARMUP_CALLS, ANY_V, TRAIN, ANY_E, 0, 0, -1, 0,
	 " Context and handle creation happen once per process: run one warm-up step (a forward "
	 "and backward) before timing."},
	{TD_FIX_WARMUP_CALLS, ANY_V, INFER, ANY_E, 0, 0, -1, 0,
	 " Context and handle creation happen once per process: run one warm-up forward pass at "
	 "each shape served before timing or serving."},
	{TD_FIX_WARMUP_CALLS, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 " Context and handle creation happen once per process: run one warm-up iteration before "
	 "timing or serving."},
	/* the kernels of a GPU-bound step (each %s: what the trace shows, "2.1 ms"). On NVIDIA
	 * from Ampere on, TF32 first: one line, no change to the model's code or dtypes */
	{TD_FIX_FP32_MM_BF16, NV, TRAIN, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: let them run "
	 "in TF32 first - torch.set_float32_matmul_precision(\"high\") (the same as "
	 "torch.backends.cuda.matmul.allow_tf32 = True) and torch.backends.cudnn.allow_tf32 = True, "
	 "no other change to the code; then run the forward pass in bf16 (with "
	 "torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):, no loss scaling needed)."},
	{TD_FIX_FP32_MM_BF16, NV, INFER, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: let them run "
	 "in TF32 first - torch.set_float32_matmul_precision(\"high\") and "
	 "torch.backends.cudnn.allow_tf32 = True, no other change to the code; then serve the model "
	 "with bf16 weights (model.to(torch.bfloat16))."},
	{TD_FIX_FP32_MM_BF16, NV, ANY_R, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: let them run "
	 "in TF32 first - torch.set_float32_matmul_precision(\"high\") and "
	 "torch.backends.cudnn.allow_tf32 = True, no other change to the code; then run them in "
	 "bf16 (with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):)."},
	/* AMD's matrix cores: bf16 */
	{TD_FIX_FP32_MM_BF16, AMD, TRAIN, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose matrix cores run bf16 far "
	 "faster: run the forward pass in bf16 (with torch.autocast(device_type=\"cuda\", "
	 "dtype=torch.bfloat16):, no loss scaling needed)."},
	{TD_FIX_FP32_MM_BF16, AMD, INFER, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose matrix cores run bf16 far "
	 "faster: serve the model with bf16 weights (model.to(torch.bfloat16))."},
	{TD_FIX_FP32_MM_BF16, ANY_V, TRAIN, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: run the "
	 "forward pass in bf16 (with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):, "
	 "no loss scaling needed), or at least let them use TF32 "
	 "(torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True)."},
	{TD_FIX_FP32_MM_BF16, ANY_V, INFER, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: serve the "
	 "model in bf16 (model.to(torch.bfloat16), or the forward pass under "
	 "torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16)), or at least let them use "
	 "TF32 (torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = "
	 "True)."},
	{TD_FIX_FP32_MM_BF16, ANY_V, ANY_R, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores: run them in "
	 "bf16 (with torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16):) or at least in "
	 "TF32 (torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = "
	 "True)."},
	/* reached only where reduced precision is on already (the entries above exclude it) */
	{TD_FIX_FP32_MM_BF16, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU with tensor cores, though part "
	 "of the step runs in reduced precision already: these run outside the autocast region "
	 "(or are ops it keeps in FP32, or on tensors made FP32 by hand). Bring them into it, and "
	 "let what must stay FP32 use TF32 (torch.backends.cuda.matmul.allow_tf32 = True; "
	 "torch.backends.cudnn.allow_tf32 = True)."},
	{TD_FIX_FP32_MM_FP16, ANY_V, TRAIN, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose tensor cores run fp16 "
	 "(not bf16 or TF32): train with automatic mixed precision - with "
	 "torch.autocast(device_type=\"cuda\", dtype=torch.float16): around the forward pass and "
	 "the loss, and torch.amp.GradScaler(\"cuda\") scaling the loss."},
	{TD_FIX_FP32_MM_FP16, ANY_V, INFER, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose tensor cores run fp16 "
	 "(not bf16 or TF32): serve the model in fp16 (model.half(), or the forward pass under "
	 "torch.autocast(device_type=\"cuda\", dtype=torch.float16)); inference needs no loss "
	 "scaling."},
	{TD_FIX_FP32_MM_FP16, ANY_V, ANY_R, ANY_E, 0, TD_ON_AMP | TD_ON_BF16 | TD_ON_FP16, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose tensor cores run fp16 "
	 "(not bf16 or TF32): run them in fp16 with automatic mixed precision (with "
	 "torch.autocast(device_type=\"cuda\", dtype=torch.float16):, and in training "
	 "torch.amp.GradScaler(\"cuda\") to scale the loss)."},
	/* reached only where reduced precision is on already */
	{TD_FIX_FP32_MM_FP16, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "FP32 matrix multiplies and convolutions take %s on a GPU whose tensor cores run fp16, "
	 "though part of the step runs in fp16 already: these run outside the autocast region (or "
	 "are ops it keeps in FP32, or on tensors made FP32 by hand). Bring them into it where "
	 "fp16's range allows."},
	{TD_FIX_LAYOUT, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "Layout transposes take %s: keep the model and its inputs in channels_last "
	 "(model.to(memory_format=torch.channels_last), x.to(memory_format=torch.channels_last))."},
	{TD_FIX_ELEMENTWISE, ANY_V, ANY_R, ANY_E, TD_ON_COMPILED, 0, -1, 0,
	 "%s, though the model is compiled: they run outside the compiled region. Find the graph "
	 "breaks (TORCH_LOGS=graph_breaks) or compile the code around the model too."},
	{TD_FIX_ELEMENTWISE, ANY_V, ANY_R, ANY_E, TD_ON_NO_MODULE, 0, -1, 0,
	 "%s, and no nn.Module is in sight: a Python loop over tensors runs them. Do its work in "
	 "fewer ops: one op over a whole tensor instead of a loop, torch._foreach_* over lists of "
	 "tensors, in-place ops."},
	{TD_FIX_ELEMENTWISE, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "%s: fuse them with torch.compile(model)."},
	{TD_FIX_SOFTMAX, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0,
	 "An eager softmax takes %s: use torch.nn.functional.scaled_dot_product_attention(q, k, v), "
	 "which fuses attention into one kernel."},
	{TD_FIX_GEMM_ALIGN, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0, "Matrix multiplies with dims the tensor "
	 "cores' tiles do not divide (%s): pad hidden, vocabulary and batch x sequence sizes to "
	 "multiples of 8 for 16-bit types (16 for fp8, 4 for TF32), better 64, to fill every tile."},
	{TD_FIX_OLD_ARCH, NV, ANY_R, ANY_E, 0, 0, -1, 0, "Kernels built for an older GPU "
	 "architecture take %s: the library has no kernel for this one at that shape and dtype and "
	 "falls back to one that uses none of what this architecture added (its newer tensor-core "
	 "instructions and types). Use a "
	 "build of PyTorch / cuBLAS / CUTLASS (or of the engine's kernels) compiled for this "
	 "architecture, or a dtype or shape the library has kernels for it in (the path the step's "
	 "other GEMMs take, where their kernels name this architecture); the kernel's name then "
	 "says so. "},
	{TD_FIX_OLD_ARCH, ANY_V, ANY_R, ANY_E, 0, 0, -1, 0, "Kernels built for an older GPU "
	 "architecture take %s: the library has no kernel for this one at that shape and dtype and "
	 "falls back. Use a build of the framework and its GEMM libraries compiled for this "
	 "architecture, or a dtype or shape they have kernels for it in. "},
};
const size_t td_fix_nentries = sizeof(td_fix_entries) / sizeof(td_fix_entries[0]);
