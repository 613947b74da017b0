/* SPDX-License-Identifier: MIT */
#include "analysis/names.h"

#include <stdio.h>
#include <ctype.h>
#include <string.h>

static int starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static int any_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return 1;
	return 0;
}

unsigned td_name_class(const char *n)
{
	static const char *const sync[] = {
		"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
		"cudaThreadSynchronize", "cuStreamSynchronize", "cuCtxSynchronize",
		"cuEventSynchronize", "hipStreamSynchronize", "hipDeviceSynchronize",
		"hipEventSynchronize", NULL,
	};
	static const char *const create[] = {
		"aten::randn", "aten::rand", "aten::randint", "aten::zeros", "aten::ones",
		"aten::empty", "aten::full", "aten::arange", "aten::linspace", "aten::eye",
		"aten::tensor", "aten::scalar_tensor", "aten::normal", NULL,
	};
	/* calls that create the context, a stream, a handle or the allocator's first pool, or
	 * load a module: start-up work when far slower than their steady-state peers */
	static const char *const warm_prefix[] = {
		"cuInit", "cuCtxCreate", "cuDevicePrimaryCtxRetain", "cudaSetDevice", "cudaFree",
		"cudaMalloc", "cudaHostAlloc", "cudaHostRegister", "cudaDeviceGetStreamPriorityRange",
		"cudaStreamCreate", "cudaGetDeviceProperties", "cudaGetDeviceCount",
		"cudaDeviceGetAttribute", "cudaEventCreate", "cudaFuncGetAttributes",
		"cudaFuncSetAttribute", "cuModuleLoad", "cuLibraryLoad", "cuModuleGetFunction",
		"cuLibraryGetKernel", "cudaGetFuncBySymbol", "cudnnCreate", "cublasCreate",
		"cublasLtCreate", "hipInit", "hipSetDevice", "hipFree", "hipMalloc", "hipHostMalloc",
		"hipDeviceGetStreamPriorityRange", "hipStreamCreate", "hipGetDeviceProperties",
		"hipGetDeviceCount", "hipDeviceGetAttribute", "hipModuleLoad", "hipEventCreate",
		/* occupancy queries load the kernel's module on first use; graph capture and
		 * instantiation run once, and the kernels captured do not run */
		"cudaOccupancy", "hipOccupancy", "cudaStreamBeginCapture", "cudaStreamEndCapture",
		"cudaGraphInstantiate", "cudaGraphUpload", "cuGraphInstantiate", "cuStreamBeginCapture",
		"cuStreamEndCapture", "hipStreamBeginCapture", "hipStreamEndCapture",
		"hipGraphInstantiate", "hipGraphUpload", NULL,
	};
	/* Python frames that run only while torch.compile traces, compiles or autotunes: a file,
	 * and when the file also runs in the steady state, the functions that do not */
	static const struct {
		const char *file, *funcs[4];
	} compile_frames[] = {
		{"torch/_dynamo/convert_frame.py(", {NULL}},
		{"torch/_dynamo/symbolic_convert.py(", {NULL}},
		{"torch/_dynamo/output_graph.py(", {"compile", NULL}},
		/* its compile_fx*, fw/bw/inference_compiler and codegen functions; its `run` and
		 * wrappers call the compiled graph every step (flux-mi300x: the four cudagraph
		 * replays of the denoiser, 82% of the window, run under compile_fx.py run) */
		{"torch/_inductor/compile_fx.py(", {"compile", "codegen", "cudagraphify", NULL}},
		{"torch/_inductor/codecache.py(", {"compile", "load", "write", "build"}},
		{"torch/_inductor/async_compile.py(", {NULL}},
		{"torch/_inductor/graph.py(", {NULL}},
		{"torch/_inductor/scheduler.py(", {NULL}},
		{"torch/_inductor/select_algorithm.py(", {NULL}},
		{"torch/_inductor/autotune_process.py(", {NULL}},
		{"torch/_inductor/runtime/triton_heuristics.py(", {"autotune", "benchmark", "precompile"}},
		{"triton/compiler/compiler.py(", {"): compile", "_compile", NULL}},
		{"triton/runtime/autotuner.py(", {"bench", NULL}},
	};
	unsigned c = 0;
	size_t i;

	for (i = 0; warm_prefix[i]; i++)
		if (starts(n, warm_prefix[i]))
			c |= NC_WARMUP_CALL;
	if (strstr(n, "BeginCapture") || strstr(n, "EndCapture") ||
	    strstr(n, "GraphInstantiate") || strstr(n, "GraphUpload"))
		c |= NC_CAPTURE;
	if (strstr(n, ".py(")) {
		for (i = 0; i < sizeof(compile_frames) / sizeof(compile_frames[0]); i++) {
			const char *at = strstr(n, compile_frames[i].file), *fn;
			size_t k;
			if (!at)
				continue;
			fn = strstr(at, "): ");
			if (!compile_frames[i].funcs[0])
				c |= NC_COMPILE;
			for (k = 0; fn && k < 4 && compile_frames[i].funcs[k]; k++)
				if (strstr(compile_frames[i].funcs[k][0] == ')' ? fn : fn + 3,
					   compile_frames[i].funcs[k]))
					c |= NC_COMPILE;
		}
	}
	{ /* start-up by its words: "Warm-up Step 1", "warmup", "Initialize Model", "init_model",
	   * "setup" - whole words, any case (not "initial_state", "upsetup") */
		static const char *const words[] = {"warmup", "warm-up", "warm up", "initialize",
						    "initialise", "initialization", "initialisation",
						    "init", "setup", "set up", NULL};
		size_t len = strlen(n), k;
		for (i = 0; words[i] && len < 256; i++) {
			size_t w = strlen(words[i]);
			for (k = 0; k + w <= len; k++) {
				size_t j = 0;
				while (j < w && tolower((unsigned char)n[k + j]) == words[i][j])
					j++;
				if (j == w && (k == 0 || !isalpha((unsigned char)n[k - 1])) &&
				    (k + w == len || !isalpha((unsigned char)n[k + w]))) {
					c |= NC_STARTUP_NAME;
					break;
				}
			}
		}
	}
	if (starts(n, "cudaStreamWaitEvent") || starts(n, "hipStreamWaitEvent") ||
	    starts(n, "cuStreamWaitEvent"))
		c |= NC_STREAM_WAIT;
	if (starts(n, "enumerate(DataLoader)#") || starts(n, "enumerate(DataPipe)#")) {
		c |= NC_DATALOADER;
		if (strstr(n, "_SingleProcessDataLoaderIter"))
			c |= NC_SINGLE_PROC_DL;
	}
	if (starts(n, "ProfilerStep#"))
		c |= NC_STEP;
	if (any_of(n, sync))
		c |= NC_SYNC_CALL;
	if (starts(n, "cudaMemcpy") || starts(n, "hipMemcpy") || starts(n, "cuMemcpy")) {
		c |= NC_MEMCPY_CALL;
		if (!strstr(n, "Async"))
			c |= NC_MEMCPY_SYNC;
	}
	if (starts(n, "cudaMemset") || starts(n, "hipMemset") || starts(n, "cuMemset"))
		c |= NC_MEMSET_CALL;
	if (starts(n, "cudaMalloc") || starts(n, "cudaFree") || starts(n, "cudaHostAlloc") ||
	    starts(n, "hipMalloc") || starts(n, "hipFree") || starts(n, "hipHostMalloc") ||
	    starts(n, "hipHostFree") || starts(n, "cuMemAlloc") || starts(n, "cuMemFree") ||
	    starts(n, "cudaMallocHost") || starts(n, "cudaFreeHost") || starts(n, "cuMemHostAlloc"))
		c |= NC_ALLOC;
	if (starts(n, "cudaLaunch") || starts(n, "__cudaLaunch") || starts(n, "cuLaunch") ||
	    starts(n, "cudaGraphLaunch") ||
	    starts(n, "cuGraphLaunch") || starts(n, "hipLaunch") || starts(n, "hipExtModuleLaunch") ||
	    starts(n, "hipModuleLaunch") || starts(n, "hipGraphLaunch") ||
	    starts(n, "hipExtLaunch"))
		c |= NC_LAUNCH;
	if (starts(n, "aten::_"))
		c |= NC_INTERNAL_OP;
	if (any_of(n, create))
		c |= NC_CREATE_OP;
	if (!strcmp(n, "aten::to") || !strcmp(n, "aten::_to_copy") || !strcmp(n, "aten::copy_"))
		c |= NC_TO_OP;
	if (strstr(n, "_single_tensor_"))
		c |= NC_SINGLE_TENSOR_OPT;
	/* python_function frames look like "path/file.py(42): func"; user code is what is not
	 * under site-packages, torch/ or the interpreter */
	if (td_is_user_frame(n))
		c |= NC_PY_USER;
	return c;
}

int td_is_user_frame(const char *n)
{
	return strstr(n, ".py(") && !strstr(n, "site-packages/") && !strstr(n, "dist-packages/") &&
	       !starts(n, "torch/") && !strstr(n, "/torch/") && !starts(n, "<built-in") &&
	       !strstr(n, "/lib/python") && !starts(n, "threading.py");
}

static enum td_mem_kind mem_kind(const char *s, size_t n)
{
	if (n >= 8 && !strncmp(s, "Pageable", 8))
		return MK_PAGEABLE;
	if (n >= 6 && !strncmp(s, "Pinned", 6))
		return MK_PINNED;
	if (n >= 6 && !strncmp(s, "Device", 6))
		return MK_DEVICE;
	if (n >= 7 && !strncmp(s, "Managed", 7))
		return MK_MANAGED;
	if (n >= 4 && !strncmp(s, "Host", 4))
		return MK_HOST;
	return MK_UNKNOWN;
}

void td_memcpy_kind(const char *name, enum td_copy_dir *dir, enum td_mem_kind *src,
		    enum td_mem_kind *dst)
{
	const char *p = strstr(name, "Memcpy ");
	const char *open, *arrow;

	*dir = CD_OTHER;
	*src = *dst = MK_UNKNOWN;
	if (!p)
		return;
	p += 7;
	if (!strncmp(p, "HtoD", 4))
		*dir = CD_HTOD;
	else if (!strncmp(p, "DtoH", 4))
		*dir = CD_DTOH;
	else if (!strncmp(p, "DtoD", 4))
		*dir = CD_DTOD;
	else if (!strncmp(p, "HtoH", 4))
		*dir = CD_HTOH;
	else if (!strncmp(p, "PtoP", 4))
		*dir = CD_PTOP;
	open = strchr(p, '(');
	arrow = open ? strstr(open, "->") : NULL;
	if (open && arrow) {
		*src = mem_kind(open + 1, (size_t)(arrow - open - 1));
		arrow += 2;
		while (*arrow == ' ')
			arrow++;
		*dst = mem_kind(arrow, strlen(arrow));
	}
}

const char *td_copy_dir_name(enum td_copy_dir d)
{
	static const char *const n[] = {"other", "HtoD", "DtoH", "DtoD", "HtoH", "PtoP"};
	return n[d];
}

const char *td_mem_kind_name(enum td_mem_kind k)
{
	static const char *const n[] = {"?", "pageable", "pinned", "device", "managed", "host"};
	return n[k];
}

const char *td_frame_label(const char *name, char *buf, size_t cap)
{
	const char *paren = strstr(name, ".py(");
	const char *close = paren ? strstr(paren, "): ") : NULL;

	if (paren && close) {
		const char *file = name, *slash;
		/* the last two path components are enough to find the file */
		for (slash = paren; slash > name; slash--)
			if (*slash == '/')
				break;
		if (slash > name) {
			const char *prev = slash - 1;
			while (prev > name && *prev != '/')
				prev--;
			file = *prev == '/' ? prev + 1 : prev;
		}
		snprintf(buf, cap, "%.*s:%.*s %s", (int)(paren + 3 - file), file,
			 (int)(close - paren - 4), paren + 4, close + 3);
		return buf;
	}
	snprintf(buf, cap, "%s", name);
	return buf;
}
