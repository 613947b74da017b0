/* SPDX-License-Identifier: MIT */
/* The run's context (fixes/context.c) read from small traces of each kind, and the fix
 * catalogue (fixes/catalogue.c) walked entry by entry and context by context: every fix names
 * only APIs and tools that exist for its context. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fixes/catalogue.h"
#include "fixes/context.h"
#include "fixes/precision.h"
#include "config/peaks.h"
#include "tests/helpers.h"

#define OP(name) "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" name "\",\"pid\":1,\"tid\":1," \
	"\"ts\":10,\"dur\":5},"
#define RT(name) "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"" name "\",\"pid\":1," \
	"\"tid\":1,\"ts\":11,\"dur\":1,\"args\":{\"correlation\":7}},"
#define PY(name) "{\"ph\":\"X\",\"cat\":\"python_function\",\"name\":\"" name "\",\"pid\":1," \
	"\"tid\":1,\"ts\":9,\"dur\":8},"
#define KERNEL(name) "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"" name "\",\"pid\":0," \
	"\"tid\":7,\"ts\":12,\"dur\":3,\"args\":{\"device\":0,\"stream\":7,\"correlation\":7}},"
#define DEV(name) "],\"deviceProperties\":[{\"id\":0,\"name\":\"" name "\"}]}"

static void derive(const char *json, struct td_context *c, struct td_trace *t)
{
	struct td_error err;

	assert_int_equal(th_parse_mem((const unsigned char *)json, strlen(json), 1 << 16, t, &err),
			 0);
	td_context_derive(t, c);
}

#define CONTEXT(json, c) \
	struct td_trace t_; \
	struct td_context c; \
	derive(json, &c, &t_)

static void test_rocm_training(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("autograd::engine::evaluate_function: AddmmBackward0")
		OP("Optimizer.step#SGD.step") OP("aten::_foreach_add_") RT("hipLaunchKernel")
		KERNEL("Cijk_Alik_Bljk_SB") "{}" DEV("AMD Instinct MI250X"), c);
	char line[256];
	(void)state;
	assert_int_equal(c.vendor, TD_VENDOR_AMD);
	assert_int_equal(c.run, TD_RUN_TRAINING);
	assert_string_equal(c.optimizer, "SGD");
	assert_int_equal(c.opt_impl, TD_OPT_FOREACH);
	td_context_line(&t_, &c, line, sizeof(line));
	assert_string_equal(line, "ROCm, AMD Instinct MI250X, training, SGD (foreach), fp32 GEMMs");
	td_trace_free(&t_);
}

/* GEMM kernels' element types by their names, as the real traces spell them (their operand
 * types: the widest, what the tensor cores run, and the narrowest) */
static void test_gemm_dtypes(void **state)
{
	static const struct {
		const char *name;
		int gemm, mma, low;
	} cases[] = {
		{"volta_sgemm_128x64_nn", 1, TD_DT_FP32, TD_DT_FP32},
		{"ampere_sgemm_128x64_tn", 1, TD_DT_FP32, TD_DT_FP32},
		{"volta_scudnn_128x128_stridedB_splitK_medium_nn_v1", 1, TD_DT_FP32, TD_DT_FP32},
		{"void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int)", 1,
		 TD_DT_FP32, TD_DT_FP32},
		{"void implicit_convolve_sgemm<float, float, 1024, 6, 7>(int, int)", 1, TD_DT_FP32,
		 TD_DT_FP32},
		{"volta_h884gemm_64x64_ldg8_nn", 1, TD_DT_FP16, TD_DT_FP16},
		{"volta_fp16_s884cudnn_fp16_256x128_ldg8_relu_f2f_exp_small_nhwc2nchw_tn_v1", 1,
		 TD_DT_FP16, TD_DT_FP16},
		{"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16", 1, TD_DT_TF32,
		 TD_DT_TF32},
		/* CUTLASS's m16n8k8 on fp32 operands is TF32 (negq-rank0's GEMMs); "_f16" is fp16 */
		{"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align4>("
		 "cutlass_80_tensorop_s1688gemm_256x128_32x3_tn_align4::Params)", 1, TD_DT_TF32,
		 TD_DT_TF32},
		{"cutlass_75_tensorop_s1688gemm_f16_256x128_32x2_tn_align8", 1, TD_DT_FP16,
		 TD_DT_FP16},
		{"sm80_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize96x64x32", 1, TD_DT_BF16,
		 TD_DT_BF16},
		{"void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_"
		 "align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8::Params)",
		 1, TD_DT_BF16, TD_DT_BF16},
		/* TensorRT-LLM: output, then A and B, then the accumulator */
		{"bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_swiGlu_dynBatch_sm100f", 1,
		 TD_DT_FP8, TD_DT_FP4},
		{"bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_dynBatch_sm100f", 1,
		 TD_DT_FP8, TD_DT_FP4},
		/* CUTLASS's mainloop types (float_ue4m3_t is the block scale), its epilogue's bf16 out */
		{"_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS_12float_e2m1_tENS_13"
		 "float_ue4m3_tEEENS_8epilogue10collective18CollectiveEpilogueINS_10bfloat16_tE", 1,
		 TD_DT_FP4, TD_DT_FP4},
		{"Cijk_Ailk_Bljk_HHS_BH_MT128x128x32", 1, TD_DT_FP16, TD_DT_FP16},
		{"Cijk_Alik_Bljk_BBS_BH_MT64x64x64", 1, TD_DT_BF16, TD_DT_BF16},
		{"Cijk_Alik_Bljk_SB_MT64x64x8", 1, TD_DT_FP32, TD_DT_FP32},
		{"nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", 1, -1, -1},
		{"fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128", 0, -1, -1},
		{"void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float)", 0, -1,
		 -1},
		{"void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float> >", 0,
		 -1, -1},
	};
	size_t i;
	int mma, low;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int g = td_gemm_kernel_dtype(cases[i].name, &mma, &low);
		if (g != cases[i].gemm || mma != cases[i].mma || low != cases[i].low)
			fail_msg("%s: gemm %d mma %d low %d, want %d %d %d", cases[i].name, g, mma, low,
				 cases[i].gemm, cases[i].mma, cases[i].low);
	}
}

static void test_pinned_loader(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")
		OP("aten::pin_memory") "{}]}", c);
	(void)state;
	assert_true(c.on & TD_ON_LOADER_WORKERS);
	assert_true(c.on & TD_ON_LOADER);
	assert_true(c.on & TD_ON_PIN_MEMORY);
	td_trace_free(&t_);
}

static void test_unpinned_loader(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")
		OP("aten::pin_memory_stub") "{}]}", c);
	(void)state;
	assert_true(c.on & TD_ON_LOADER);
	assert_false(c.on & TD_ON_PIN_MEMORY);
	td_trace_free(&t_);
}

static void test_vllm_tp_graphs(void **state)
{
	CONTEXT("{\"traceEvents\":[" PY("vllm/v1/worker/gpu_model_runner.py(2907): execute_model")
		RT("cudaGraphLaunch") KERNEL("void cross_device_reduce_1stage<__nv_bfloat16, 4>()")
		KERNEL("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") "{}" DEV("NVIDIA H100 80GB HBM3"),
		c);
	(void)state;
	assert_int_equal(c.vendor, TD_VENDOR_NVIDIA);
	assert_int_equal(c.run, TD_RUN_INFERENCE);
	assert_int_equal(c.engine, TD_ENGINE_VLLM);
	assert_true(c.on & TD_ON_GRAPHS);
	assert_true(c.coll[TD_COLL_ALL_REDUCE] && c.coll[TD_COLL_CUSTOM]);
	assert_true(c.on & TD_ON_CUSTOM_AR);
	/* no group named: all-reduce in a server is tensor parallel, said as inferred */
	assert_int_equal(c.par, 0);
	assert_int_equal(c.par_inferred, 1u << TD_PAR_TP);
	{
		int inferred;
		char line[256];
		assert_int_equal(td_par_of_group(&c, TD_PAR_UNKNOWN, TD_COLL_ALL_REDUCE, 0, &inferred),
				 TD_PAR_TP);
		assert_true(inferred);
		assert_int_equal(td_par_of_group(&c, TD_PAR_DP, TD_COLL_ALL_REDUCE, 0, &inferred),
				 TD_PAR_DP); /* what the group says wins */
		assert_false(inferred);
		assert_int_equal(td_par_of_group(&c, TD_PAR_UNKNOWN, TD_COLL_SEND_RECV, 0, &inferred),
				 TD_PAR_UNKNOWN);
		td_context_line(&t_, &c, line, sizeof(line));
		assert_non_null(strstr(line, "tensor parallel (inferred)"));
	}
	td_trace_free(&t_);
}

/* all-to-all beside MoE kernels is expert parallel; send/recv alone, pipeline parallel; a
 * training step's all-reduce implies nothing */
static void test_inferred_parallelism(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("autograd::engine::evaluate_function: MmBackward0")
		KERNEL("fused_moe_kernel") KERNEL("ncclDevKernel_AllToAll_RING_LL")
		KERNEL("ncclDevKernel_AllReduce_Sum_bf16_RING_LL") "{}]}", c);
	(void)state;
	assert_int_equal(c.run, TD_RUN_TRAINING);
	assert_int_equal(c.par_inferred, 1u << TD_PAR_EP);
	td_trace_free(&t_);
}

static void test_inferred_pipeline(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("autograd::engine::evaluate_function: MmBackward0")
		KERNEL("ncclDevKernel_SendRecv") "{}]}", c);
	(void)state;
	assert_int_equal(c.par_inferred, 1u << TD_PAR_PP);
	td_trace_free(&t_);
}

static void test_capture(void **state)
{
	CONTEXT("{\"traceEvents\":[" RT("cudaStreamBeginCapture") RT("cudaStreamEndCapture")
		RT("cudaGraphInstantiateWithFlags") "{}" DEV("NVIDIA A100"), c);
	(void)state;
	assert_true(c.on & TD_ON_CAPTURE);
	assert_false(c.on & TD_ON_GRAPHS);
	td_trace_free(&t_);
}

static void test_torchrec_fsdp_compiled(void **state)
{
	{
		CONTEXT("{\"traceEvents\":[" OP("## KJTAllToAll ##") OP("CompiledFunctionBackward")
			KERNEL("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t") "{}" DEV("Tesla V100"), c);
		(void)state;
		assert_true(c.on & TD_ON_TORCHREC);
		assert_true(c.on & TD_ON_COMPILED);
		assert_int_equal(c.run, TD_RUN_TRAINING);
		assert_true(c.coll[TD_COLL_SEND_RECV]);
		td_trace_free(&t_);
	}
	{ /* fbgemm's embedding ops alone are plain DLRM, not torchrec */
		CONTEXT("{\"traceEvents\":[" OP("fbgemm::permute_sparse_features")
			OP("autograd::engine::evaluate_function: AddmmBackward0") "{}"
			DEV("Tesla V100"), c);
		assert_false(c.on & TD_ON_TORCHREC);
		td_trace_free(&t_);
	}
	{
		CONTEXT("{\"traceEvents\":[" OP("FullyShardedDataParallel.forward")
			OP("Optimizer.step#AdamW.step") OP("_fused_adamw_") "{}" DEV("NVIDIA H100"), c);
		assert_true(c.on & TD_ON_FSDP);
		assert_string_equal(c.optimizer, "AdamW");
		assert_int_equal(c.opt_impl, TD_OPT_FUSED);
		td_trace_free(&t_);
	}
}

#define ITEM4 OP("aten::item") OP("aten::item") OP("aten::item") OP("aten::item")
static void test_loop_without_module(void **state)
{
	(void)state;
	{ /* 16 .item() in the one step: a per-element loop */
		CONTEXT("{\"traceEvents\":[" PY("train.py(12): <module>") ITEM4 ITEM4 ITEM4 ITEM4
			OP("aten::cpu") RT("cudaMemcpyAsync") "{}" DEV("NVIDIA A100"), c);
		assert_true(c.on & TD_ON_NO_MODULE);
		assert_true(c.on & TD_ON_ELEM_LOOP);
		{ /* a vectorise fix, not torch.compile */
			char b[1200];
			td_fix_text(&c, TD_FIX_HOST_BOUND, -1, NULL, b, sizeof(b));
			assert_non_null(strstr(b, "vectorise"));
			assert_null(strstr(b, "torch.compile"));
		}
		td_trace_free(&t_);
	}
	{ /* one .item(): no module in sight, but no loop either: nothing to vectorise */
		CONTEXT("{\"traceEvents\":[" PY("train.py(12): <module>") OP("aten::item")
			OP("aten::cpu") RT("cudaMemcpyAsync") "{}" DEV("NVIDIA A100"), c);
		assert_true(c.on & TD_ON_NO_MODULE);
		assert_false(c.on & TD_ON_ELEM_LOOP);
		{
			char b[1200];
			td_fix_text(&c, TD_FIX_HOST_BOUND, -1, NULL, b, sizeof(b));
			assert_null(strstr(b, "vectorise"));
			assert_null(strstr(b, "torch.compile")); /* no model to compile either */
			assert_non_null(strstr(b, "py-spy"));
		}
		td_trace_free(&t_);
	}
}


/* a small batch: read from the layers' input shapes and the kernels' blocks per SM; its fix is
 * a larger batch before fusing */
static void test_small_batch(void **state)
{
	CONTEXT("{\"traceEvents\":[" OP("autograd::engine::evaluate_function: AddmmBackward0")
		"{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::linear\",\"pid\":1,\"tid\":1,"
		"\"ts\":20,\"dur\":5,\"args\":{\"Input Dims\":[[16, 64], [128, 64], [128]]}},"
		"{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":30,"
		"\"dur\":3,\"args\":{\"device\":0,\"stream\":7,\"correlation\":9,\"blocks per SM\":0.25,"
		"\"grid\":[20, 1, 1],\"block\":[128, 1, 1]}}" DEV("NVIDIA A100"), c);
	char b[1200], d[200];
	(void)state;
	assert_int_equal(c.batch, 16);
	assert_int_equal(c.bpsm, 250);
	assert_true(c.on & TD_ON_SMALL_BATCH);
	td_fix_text(&c, TD_FIX_FEWER_LAUNCHES, -1, td_context_batch(&c, d, sizeof(d)), b, sizeof(b));
	assert_non_null(strstr(b, "raise the batch size first"));
	assert_non_null(strstr(b, "batch 16 in the layers' inputs; the median kernel fills 0.2 "
			       "blocks per SM"));
	assert_non_null(strstr(b, "gradient accumulation"));
	td_trace_free(&t_);
}

/* --- the catalogue, entry by entry ----------------------------------------------------- */

static int any_of(const char *s, const char *const *words)
{
	for (; *words; words++)
		if (strstr(s, *words))
			return 1;
	return 0;
}

static const char *const nvidia_only[] = {"ncu ", "nsys", "Nsight Compute:", "nvidia-smi",
					  "CUDA_MODULE_LOADING", "PYTORCH_CUDA_ALLOC_CONF",
					  "cudaMemcpy", "cudaMalloc", "cudaFree", "DALI", NULL};
static const char *const ddp_words[] = {"DistributedDataParallel", "bucket_cap_mb", NULL};
static const char *const training_words[] = {"backward", "gradient", "no_sync", "GradScaler",
					      NULL};

static void test_entries(void **state)
{
	size_t i, j;
	int fallback[TD_FIX_NMECHS] = {0};

	(void)state;
	for (i = 0; i < td_fix_count(); i++) {
		const struct td_fix_entry *e = td_fix_entry_at(i);
		if (e->vendor == TD_VENDOR_AMD)
			assert_false(any_of(e->text, nvidia_only));
		if (e->vendor == TD_VENDOR_UNKNOWN) /* may name both, never one vendor's setting */
			assert_false(any_of(e->text, (const char *const[]){"CUDA_MODULE_LOADING",
				"PYTORCH_CUDA_ALLOC_CONF", "ncu ", NULL}));
		/* gradients reduced one by one with no wrapper: adopting DDP is the fix */
		if (!(e->need & TD_ON_DDP) && e->mech != TD_FIX_COMM_UNBUCKETED)
			assert_false(any_of(e->text, ddp_words));
		assert_true(strlen(e->text) < 1100); /* the rules' buffers hold it, with its %s */
		/* DeepEP runs on NVIDIA's NVSHMEM: advised there, or named where it runs */
		if (strstr(e->text, "DeepEP") && e->vendor != TD_VENDOR_NVIDIA &&
		    !(e->need & TD_ON_DEEPEP))
			fail_msg("entry %zu names DeepEP for any GPU: %s", i, e->text);
		if (e->need & TD_ON_DEEPEP) /* on already: not advised again */
			assert_false(any_of(e->text, (const char *const[]){"dispatch with DeepEP",
				"--moe-a2a-backend deepep", "--moe-token-dispatcher-type flex", NULL}));
		/* an engine mask names engines only: bit 0 (no engine) is no engine */
		assert_int_equal(e->engines & ~(((1u << (TD_ENGINE_TRTLLM + 1)) - 1) & ~1u), 0);
		if (!(e->need & TD_ON_FSDP))
			assert_null(strstr(e->text, "FSDP("));
		if (!(e->need & TD_ON_TORCHREC))
			assert_null(strstr(e->text, "torchrec"));
		if (!(e->need & TD_ON_DEEPSPEED))
			assert_false(any_of(e->text, (const char *const[]){"DeepSpeed",
				"zero_optimization", NULL}));
		if (!(e->need & TD_ON_MEGATRON))
			assert_false(any_of(e->text, (const char *const[]){"Megatron", "--overlap-",
				NULL}));
		if (e->run == TD_RUN_INFERENCE || e->engines ||
		    e->mech == TD_FIX_SERVING_HOST)
			assert_false(any_of(e->text, training_words));
		if (e->need & TD_ON_COMPILED) /* on already: not advised again */
			assert_false(any_of(e->text, (const char *const[]){"torch.compile(model)",
				"compile the model", NULL}));
		if (e->need & TD_ON_GRAPHS)
			assert_false(any_of(e->text, (const char *const[]){"reduce-overhead",
				"drop enforce_eager", NULL}));
		if (e->need & TD_ON_NO_MODULE)
			assert_null(strstr(e->text, "torch.compile"));
		if (e->vendor == TD_VENDOR_UNKNOWN && e->run == TD_RUN_UNKNOWN &&
		    !e->engines && !e->need && !e->none && e->coll < 0)
			fallback[e->mech] = 1;
		for (j = i + 1; j < td_fix_count(); j++) /* a fallback is the last of its kind */
			if (fallback[e->mech] && td_fix_entry_at(j)->mech == e->mech)
				fail_msg("entry %zu: a fallback before entry %zu of its mechanism", i, j);
	}
	for (i = 0; i < TD_FIX_NMECHS; i++)
		if (!fallback[i])
			fail_msg("mechanism %zu has no entry for an unknown context", i);
}

/* every mechanism in every context: the fix fits it */
static void test_contexts(void **state)
{
	static const unsigned flags[] = {0, TD_ON_COMPILED, TD_ON_GRAPHS, TD_ON_COMPILED | TD_ON_GRAPHS,
					 TD_ON_DDP, TD_ON_FSDP, TD_ON_TORCHREC, TD_ON_NO_MODULE,
					 TD_ON_NO_MODULE | TD_ON_ELEM_LOOP,
					 TD_ON_SMALL_BATCH, TD_ON_SMALL_BATCH | TD_ON_COMPILED,
					 TD_ON_DEEPSPEED, TD_ON_MEGATRON, TD_ON_STACKS, TD_ON_DIST,
					 TD_ON_BF16, TD_ON_AMP | TD_ON_DIST, TD_ON_LOADER,
					 TD_ON_LOADER | TD_ON_PIN_MEMORY, TD_ON_ELEM_LOOP,
					 TD_ON_CUSTOM_AR | TD_ON_DIST, TD_ON_DEEPEP | TD_ON_DIST,
					 TD_ON_DEEPEP | TD_ON_MEGATRON | TD_ON_DIST,
					 TD_ON_TORCH1, TD_ON_TORCH1 | TD_ON_DDP};
	int v, r, e, m, k;
	size_t fi;

	(void)state;
	for (v = 0; v <= TD_VENDOR_AMD; v++)
		for (r = 0; r <= TD_RUN_INFERENCE; r++)
			for (e = 0; e <= TD_ENGINE_TRTLLM; e++)
				for (fi = 0; fi < sizeof(flags) / sizeof(flags[0]); fi++)
					for (m = 0; m < TD_FIX_NMECHS; m++)
						for (k = -1; k < TD_COLL_NKINDS; k++) {
	struct td_context c;
	char b[1600];
	memset(&c, 0, sizeof(c));
	c.vendor = (enum td_vendor)v;
	c.run = (enum td_run)r;
	c.engine = (enum td_engine)e;
	c.on = flags[fi];
	td_fix_text(&c, (enum td_mech)m, k, "kernel", b, sizeof(b));
	assert_true(b[0] != '\0'); /* something to do, or to check first, always */
	if ((c.on & TD_ON_TORCH1) && strstr(b, "torch.compile")) /* 2.0's: said so */
		assert_non_null(strstr(b, "torch.compile needs PyTorch 2.0 or later"));
	assert_null(strchr(b, '@')); /* every vendor token expanded */
	if (v == TD_VENDOR_AMD)
		assert_false(any_of(b, nvidia_only));
	if (v == TD_VENDOR_NVIDIA)
		assert_false(any_of(b, (const char *const[]){"rocm-smi", "_HIP_", "hipMalloc",
			"hipFree", NULL}));
	if (!(c.on & TD_ON_DDP) && m != TD_FIX_COMM_UNBUCKETED)
		assert_false(any_of(b, ddp_words));
	if (!(c.on & TD_ON_DIST) && m < TD_FIX_STRAGGLER_BEFORE) /* one process: no other rank
								    * to look at (a job's have) */
		assert_false(any_of(b, (const char *const[]){"every rank", "another rank",
			NULL}) && m != TD_FIX_COMM && m != TD_FIX_COMM_GROUP &&
			     m != TD_FIX_COMM_UNBUCKETED);
	if (c.on & (TD_ON_AMP | TD_ON_BF16)) /* mixed precision on already */
		assert_null(strstr(b, "torch.autocast"));
	if (r == TD_RUN_INFERENCE && any_of(b, training_words))
		fail_msg("mechanism %d, flags %#x, inference: %s", m, c.on, b);
	if (c.on & TD_ON_COMPILED)
		assert_null(strstr(b, "torch.compile(model)"));
	if (c.on & TD_ON_CUSTOM_AR) /* on already */
		assert_null(strstr(b, "--disable-custom-all-reduce"));
	if (c.on & TD_ON_PIN_MEMORY) /* the loader pins already */
		assert_null(strstr(b, "pin_memory=True, "));
	if (c.on & TD_ON_DEEPEP) /* on already */
		assert_false(any_of(b, (const char *const[]){"dispatch with DeepEP",
			"--moe-a2a-backend deepep", NULL}));
	else if (v != TD_VENDOR_NVIDIA)
		assert_null(strstr(b, "DeepEP"));
	if (strstr(b, "PCIe")) /* Grace's host link is NVLink-C2C: name no bus */
		fail_msg("mechanism %d names PCIe: %s", m, b);
						}
}

static void test_optimizer(void **state)
{
	static const char *const opts[] = {"Adam", "AdamW", "SGD", "Adagrad", "RMSprop", "Adamax",
					   ""};
	size_t i;
	int impl;
	char b[800];

	(void)state;
	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		for (impl = TD_OPT_NONE; impl <= TD_OPT_FUSED; impl++) {
			struct td_context c;
			int has_fused = !strcmp(opts[i], "Adam") || !strcmp(opts[i], "AdamW") ||
					!strcmp(opts[i], "SGD");
			memset(&c, 0, sizeof(c));
			c.vendor = TD_VENDOR_NVIDIA;
			c.opt_impl = (enum td_opt_impl)impl;
			td_fix_optimizer(&c, opts[i], b, sizeof(b));
			if (*opts[i] && !has_fused) /* Adagrad's fused is CPU-only */
				assert_null(strstr(b, "fused=True)"));
			if (impl == TD_OPT_FUSED)
				assert_false(any_of(b, (const char *const[]){"fused=True",
					"foreach=True", NULL}));
			if (impl == TD_OPT_FOREACH)
				assert_null(strstr(b, "foreach=True"));
		}
}

/* Megatron-LM and DeepSpeed training get their own levers beyond communication; graphs on
 * already, or inference, do not get them. */
static void test_frameworks(void **state)
{
	struct td_context c;
	char b[1600];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.vendor = TD_VENDOR_NVIDIA;
	c.run = TD_RUN_TRAINING;
	c.on = TD_ON_MEGATRON;
	td_fix_text(&c, TD_FIX_SMALL_KERNELS, -1, NULL, b, sizeof(b));
	assert_non_null(strstr(b, "--transformer-impl transformer_engine"));
	assert_true(td_fix_pick(&c, TD_FIX_FEWER_LAUNCHES, -1)->graph);
	td_fix_text(&c, TD_FIX_FEWER_LAUNCHES, -1, NULL, b, sizeof(b));
	assert_non_null(strstr(b, "--enable-cuda-graph"));
	c.on |= TD_ON_GRAPHS;
	td_fix_text(&c, TD_FIX_FEWER_LAUNCHES, -1, NULL, b, sizeof(b));
	assert_null(strstr(b, "--enable-cuda-graph"));
	c.on = TD_ON_DEEPSPEED;
	td_fix_text(&c, TD_FIX_HOST_BOUND, -1, NULL, b, sizeof(b));
	assert_non_null(strstr(b, "model_engine.compile()"));
	c.run = TD_RUN_INFERENCE;
	td_fix_text(&c, TD_FIX_HOST_BOUND, -1, NULL, b, sizeof(b));
	assert_null(strstr(b, "model_engine"));
}

/* A process group's parallelism by its description. */
static void test_parallelism(void **state)
{
	(void)state;
	assert_int_equal(td_pg_parallelism("TENSOR_MODEL_PARALLEL_GROUP"), TD_PAR_TP);
	assert_int_equal(td_pg_parallelism("PIPELINE_MODEL_PARALLEL_GROUP"), TD_PAR_PP);
	assert_int_equal(td_pg_parallelism("EXPERT_TENSOR_PARALLEL_GROUP"), TD_PAR_EP);
	assert_int_equal(td_pg_parallelism("DATA_PARALLEL_GROUP_WITH_CP"), TD_PAR_DP);
	assert_int_equal(td_pg_parallelism("CONTEXT_PARALLEL_GROUP"), TD_PAR_CP);
	assert_int_equal(td_pg_parallelism("mesh_tp"), TD_PAR_TP);
	assert_int_equal(td_pg_parallelism("mesh_dp_shard"), TD_PAR_DP);
	assert_int_equal(td_pg_parallelism("mesh_pp"), TD_PAR_PP);
	assert_int_equal(td_pg_parallelism("ep:0"), TD_PAR_EP);
	assert_int_equal(td_pg_parallelism("tpu_group"), TD_PAR_UNKNOWN); /* not the token tp */
	assert_int_equal(td_pg_parallelism("default_pg"), TD_PAR_UNKNOWN);
	assert_int_equal(td_pg_parallelism("undefined"), TD_PAR_UNKNOWN);
	assert_int_equal(td_pg_parallelism(NULL), TD_PAR_UNKNOWN);
}

/* The host link a pinned copy is replayed at, by the device's name. */
static void test_host_link(void **state)
{
	(void)state;
	assert_int_equal(td_host_link_mbps("NVIDIA GH200 480GB"), 350000); /* not an H200 */
	assert_int_equal(td_host_link_mbps("NVIDIA H100 80GB HBM3"), 50000);
	assert_int_equal(td_host_link_mbps("NVIDIA B200"), 50000);
	assert_int_equal(td_host_link_mbps("AMD Instinct MI300X"), 50000);
	assert_int_equal(td_host_link_mbps("NVIDIA A100-SXM4-80GB"), 25000);
	assert_int_equal(td_host_link_mbps("AMD Instinct MI210"), 25000);
	assert_int_equal(td_host_link_mbps("NVIDIA L4"), 25000);
	assert_int_equal(td_host_link_mbps("Tesla V100-SXM2-32GB"), 12000);
	assert_int_equal(td_host_link_mbps("NVIDIA GeForce RTX 2080 Ti"), 12000);
	assert_int_equal(td_host_link_mbps(NULL), 12000);
}

static void test_picks(void **state)
{
	struct td_context c;
	char b[1600];

	(void)state;
	memset(&c, 0, sizeof(c));
	c.vendor = TD_VENDOR_NVIDIA;
	c.run = TD_RUN_TRAINING;
	c.on = TD_ON_DDP;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM, TD_COLL_ALL_REDUCE, NULL, b, sizeof(b)),
			       "bucket_cap_mb"));
	c.on = TD_ON_DDP | TD_ON_TORCHREC;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM, TD_COLL_ALL_TO_ALL, NULL, b, sizeof(b)),
			       "TrainPipelineSparseDist"));
	c.on = TD_ON_DEEPSPEED; /* its own settings, whatever the collective */
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM, TD_COLL_ALL_REDUCE, NULL, b, sizeof(b)),
			       "\"overlap_comm\": true"));
	assert_null(strstr(b, "DistributedDataParallel"));
	c.on = TD_ON_MEGATRON;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM, TD_COLL_REDUCE_SCATTER, NULL, b,
					   sizeof(b)), "--overlap-grad-reduce"));
	c.run = TD_RUN_INFERENCE;
	c.on = 0;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM, TD_COLL_ALL_REDUCE, NULL, b, sizeof(b)),
			       "Tensor-parallel"));
	/* the custom all-reduce: on already is not advised; vLLM on NCCL is told why not */
	c.engine = TD_ENGINE_VLLM;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM_GROUP, TD_PAR_TP, NULL, b, sizeof(b)),
			       "runs it through NCCL"));
	c.on = TD_ON_CUSTOM_AR;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_COMM_GROUP, TD_PAR_TP, NULL, b, sizeof(b)),
			       "a custom all-reduce runs already"));
	assert_null(strstr(b, "--disable-custom-all-reduce"));
	c.engine = TD_ENGINE_NONE;
	c.on = 0;
	c.vendor = TD_VENDOR_AMD;
	assert_string_equal(td_fix_token(&c, TD_TOK_ALLOC_CONF), "PYTORCH_HIP_ALLOC_CONF");
	assert_string_equal(td_fix_token(&c, TD_TOK_SMI), "rocm-smi");
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_KERNEL_PROFILE, -1, "gemm", b, sizeof(b)),
			       "rocprofv3 --kernel-trace --kernel-include-regex 'gemm'"));
	assert_non_null(strstr(b, "-- python serve.py")); /* the run is inference here */
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_ALLOC_NO_CACHE, -1, "9 hipMalloc", b,
					   sizeof(b)), "(9 hipMalloc), which is what "
			       "PYTORCH_NO_HIP_MEMORY_CACHING=1 does"));
	c.vendor = TD_VENDOR_NVIDIA;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_LAZY_LOADING, -1, NULL, b, sizeof(b)),
			       "CUDA_MODULE_LOADING=EAGER"));
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_MEM_FRAG, -1, NULL, b, sizeof(b)),
			       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
	/* the serving engine's own knob for the memory it reserves */
	c.engine = TD_ENGINE_VLLM;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_MEM_PEAK, -1, NULL, b, sizeof(b)),
			       "gpu_memory_utilization"));
	c.engine = TD_ENGINE_SGLANG;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_MEM_PEAK, -1, NULL, b, sizeof(b)),
			       "--mem-fraction-static"));
	c.engine = TD_ENGINE_NONE;
	/* mixed precision advised only where the step does not run in it */
	c.run = TD_RUN_TRAINING;
	c.on = 0;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_MEM_PEAK, -1, NULL, b, sizeof(b)),
			       "torch.autocast"));
	c.on = TD_ON_BF16;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_MEM_PEAK, -1, NULL, b, sizeof(b)),
			       "reduced precision already"));
	/* a stack-recorded trace is not told to record stacks */
	c.on = TD_ON_STACKS;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_IDLE_UNTRACED, -1, NULL, b, sizeof(b)),
			       "py-spy record"));
	c.on = TD_ON_HOST_OPS;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_IDLE_UNTRACED, -1, NULL, b, sizeof(b)),
			       "with_stack=True"));
	assert_null(strstr(b, "ProfilerActivity.CPU"));
	c.on = 0; /* runtime calls only: the host side was not recorded */
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_IDLE_UNTRACED, -1, NULL, b, sizeof(b)),
			       "ProfilerActivity.CPU"));
	/* the data pipeline: the vendor's GPU decoder, nothing the loader does already */
	c.on = TD_ON_LOADER | TD_ON_LOADER_WORKERS;
	c.vendor = TD_VENDOR_AMD;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_LOADER_WORKERS, -1, NULL, b, sizeof(b)),
			       "rocAL"));
	c.vendor = TD_VENDOR_NVIDIA;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_LOADER_WORKERS, -1, NULL, b, sizeof(b)),
			       "pin_memory=True, persistent_workers=True"));
	assert_non_null(strstr(b, "NVIDIA DALI"));
	c.on |= TD_ON_PIN_MEMORY;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_LOADER_WORKERS, -1, NULL, b, sizeof(b)),
			       "set persistent_workers=True"));
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_PAGEABLE_UPLOAD, -1, NULL, b, sizeof(b)),
			       "pins its batches already"));
	c.on = 0;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_PAGEABLE_UPLOAD, -1, NULL, b, sizeof(b)),
			       "allocate the host buffers pinned"));
	/* waits: the vendor's runtime call, the loop it comes from, the engine's own lever */
	c.vendor = TD_VENDOR_AMD;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_MEMCPY, -1, NULL, b, sizeof(b)),
			       "hipMemcpyAsync"));
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_MEMCPY_IDLE, -1, "493.0 ms", b,
					   sizeof(b)), "A synchronous hipMemcpy blocked the host "
			       "493.0 ms"));
	c.vendor = TD_VENDOR_NVIDIA;
	c.on = TD_ON_NO_MODULE | TD_ON_ELEM_LOOP;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_ITEM, -1, NULL, b, sizeof(b)),
			       "one tensor op over the whole tensor"));
	c.on = 0;
	c.run = TD_RUN_INFERENCE;
	c.engine = TD_ENGINE_VLLM;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_ITEM, -1, NULL, b, sizeof(b)),
			       "--async-scheduling"));
	c.engine = TD_ENGINE_NONE;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_ITEM, -1, NULL, b, sizeof(b)),
			       "once per batch"));
	assert_null(strstr(b, "loss"));
	c.run = TD_RUN_TRAINING;
	c.on = TD_ON_COMPILED;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_SYNC_ITEM, -1, NULL, b, sizeof(b)),
			       "breaks the graph"));
	/* start-up: a warm-up step for training, a forward pass for inference, the engine's
	 * profiler endpoints for a server */
	c.on = 0;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_WARMUP_CALLS, -1, NULL, b, sizeof(b)),
			       "a forward and backward"));
	c.run = TD_RUN_INFERENCE;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_WARMUP_CALLS, -1, NULL, b, sizeof(b)),
			       "warm-up forward pass"));
	c.engine = TD_ENGINE_VLLM;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_WARMUP, -1, NULL, b, sizeof(b)),
			       "/start_profile"));
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_WARMUP_COMPILE, -1, NULL, b, sizeof(b)),
			       "VLLM_CACHE_ROOT"));
	c.engine = TD_ENGINE_NONE;
	/* FP32 matmuls: the precision the tensor cores run, loss scaling only for training,
	 * nothing advised that is on already */
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_FP32_MM_FP16, -1, "2.0 ms", b, sizeof(b)),
			       "take 2.0 ms"));
	assert_non_null(strstr(b, "model.half()"));
	c.run = TD_RUN_TRAINING;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_FP32_MM_FP16, -1, "2.0 ms", b, sizeof(b)),
			       "torch.amp.GradScaler(\"cuda\")"));
	assert_null(strstr(b, "bfloat16"));
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_FP32_MM_BF16, -1, "2.0 ms", b, sizeof(b)),
			       "dtype=torch.bfloat16"));
	assert_non_null(strstr(b, "allow_tf32"));
	c.on = TD_ON_AMP;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_FP32_MM_BF16, -1, "2.0 ms", b, sizeof(b)),
			       "outside the autocast region"));
	c.on = TD_ON_COMPILED;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_ELEMENTWISE, -1, "9 small elementwise "
					   "kernels take 1 ms", b, sizeof(b)), "graph_breaks"));
	c.on = 0;
	/* one process waits on no other rank */
	assert_null(strstr(td_fix_text(&c, TD_FIX_IDLE_DEPENDENCY, -1, NULL, b, sizeof(b)),
			   "rank"));
	c.on = TD_ON_DIST;
	assert_non_null(strstr(td_fix_text(&c, TD_FIX_IDLE_DEPENDENCY, -1, NULL, b, sizeof(b)),
			       "every rank's trace"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rocm_training),
		cmocka_unit_test(test_gemm_dtypes),
		cmocka_unit_test(test_vllm_tp_graphs),
		cmocka_unit_test(test_pinned_loader),
		cmocka_unit_test(test_inferred_parallelism),
		cmocka_unit_test(test_inferred_pipeline),
		cmocka_unit_test(test_unpinned_loader),
		cmocka_unit_test(test_capture),
		cmocka_unit_test(test_torchrec_fsdp_compiled),
		cmocka_unit_test(test_loop_without_module),
		cmocka_unit_test(test_small_batch),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_contexts),
		cmocka_unit_test(test_optimizer),
		cmocka_unit_test(test_picks),
		cmocka_unit_test(test_host_link),
		cmocka_unit_test(test_parallelism),
		cmocka_unit_test(test_frameworks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
