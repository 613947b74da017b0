/* SPDX-License-Identifier: MIT */
/* The fix catalogue: the entry that fits a context, its vendor tokens expanded
 * (fixes/entries.c holds the entries), and the optimizer's fix. */
#include "fixes/catalogue.h"

#include <stdio.h>
#include <string.h>

static int fits(const struct td_fix_entry *e, const struct td_context *c, int coll)
{
	return (e->vendor == TD_VENDOR_UNKNOWN || e->vendor == c->vendor) &&
	       (e->run == TD_RUN_UNKNOWN || e->run == c->run) &&
	       (!e->engines || (e->engines & (1u << c->engine))) &&
	       (c->on & e->need) == e->need && !(c->on & e->none) &&
	       (e->coll < 0 || e->coll == coll);
}

size_t td_fix_count(void)
{
	return td_fix_nentries + td_fix_ncomm;
}

const struct td_fix_entry *td_fix_entry_at(size_t i)
{
	return i < td_fix_nentries ? &td_fix_entries[i] : &td_fix_entries_comm[i - td_fix_nentries];
}

const struct td_fix_entry *td_fix_pick(const struct td_context *c, enum td_mech m, int coll)
{
	size_t i, n = td_fix_count();

	for (i = 0; i < n; i++)
		if (td_fix_entry_at(i)->mech == m && fits(td_fix_entry_at(i), c, coll))
			return td_fix_entry_at(i);
	return NULL;
}

/* t with its @TOKEN@s expanded for c, in buf */
static void expand(const struct td_context *c, const char *t, char *buf, size_t cap)
{
	static const struct {
		const char *name;
		enum td_fix_token k;
	} toks[] = {{"ALLOC_CONF", TD_TOK_ALLOC_CONF}, {"NO_CACHING", TD_TOK_NO_CACHING},
		    {"SMI", TD_TOK_SMI}, {"GRAPHS", TD_TOK_GRAPHS}, {"MALLOC", TD_TOK_MALLOC},
		    {"FREE", TD_TOK_FREE}, {"MEMCPY", TD_TOK_MEMCPY},
		    {"PIN_MEMORY", TD_TOK_PIN_MEMORY}, {"CMD", TD_TOK_CMD},
		    {"GPU_CHECK", TD_TOK_GPU_CHECK}};
	size_t o = 0, i;

	while (*t && o + 1 < cap) {
		const char *end = *t == '@' ? strchr(t + 1, '@') : NULL;
		for (i = 0; end && i < sizeof(toks) / sizeof(toks[0]); i++)
			if (strlen(toks[i].name) == (size_t)(end - t - 1) &&
			    !strncmp(t + 1, toks[i].name, (size_t)(end - t - 1)))
				break;
		if (end && i < sizeof(toks) / sizeof(toks[0])) {
			int w = snprintf(buf + o, cap - o, "%s", td_fix_token(c, toks[i].k));
			o = w < 0 ? o : o + (size_t)w < cap ? o + (size_t)w : cap - 1;
			t = end + 1;
		} else {
			buf[o++] = *t++;
		}
	}
	buf[o] = '\0';
}

const char *td_fix_text(const struct td_context *c, enum td_mech m, int coll, const char *arg,
			char *buf, size_t cap)
{
	const struct td_fix_entry *e = td_fix_pick(c, m, coll);
	char text[1600];
	const char *p;

	if (!cap)
		return buf;
	buf[0] = '\0';
	if (!e)
		return buf;
	expand(c, e->text, text, sizeof(text));
	p = strstr(text, "%s");
	if (p)
		snprintf(buf, cap, "%.*s%s%s", (int)(p - text), text, arg ? arg : "", p + 2);
	else
		snprintf(buf, cap, "%s", text);
	if ((c->on & TD_ON_TORCH1) && strstr(buf, "torch.compile")) {
		size_t n = strlen(buf);
		snprintf(buf + n, cap - n, " (torch.compile needs PyTorch 2.0 or later: this trace "
			 "was written by 1.x)");
	}
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
	case TD_TOK_MALLOC:
		return amd ? "hipMalloc" : "cudaMalloc";
	case TD_TOK_FREE:
		return amd ? "hipFree" : "cudaFree";
	case TD_TOK_MEMCPY:
		return amd ? "hipMemcpy" : "cudaMemcpy";
	case TD_TOK_PIN_MEMORY:
		return (c->on & TD_ON_PIN_MEMORY) ? "" : "pin_memory=True, ";
	case TD_TOK_CMD:
		return c->engine == TD_ENGINE_VLLM ? "vllm serve MODEL"
			: c->engine == TD_ENGINE_SGLANG ? "python -m sglang.launch_server --model-path MODEL"
			: c->run == TD_RUN_TRAINING ? "python train.py"
			: c->run == TD_RUN_INFERENCE ? "python serve.py" : "python your_script.py";
	case TD_TOK_GPU_CHECK:
		return amd ? "rocm-smi --showclocks --showtemp (clocks, throttling) and rocm-smi "
			     "--showrasinfo (ECC)"
			: c->vendor == TD_VENDOR_NVIDIA ? "nvidia-smi -q (clocks, throttling, ECC)"
			: "nvidia-smi -q or rocm-smi (clocks, throttling, ECC)";
	case TD_TOK_NTOKENS:
		break;
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
