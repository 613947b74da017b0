/* SPDX-License-Identifier: MIT */
/* The categories of a snapshot's memory and the rules that infer them (tables/snapshot_cat.h). */
#include "tables/snapshot_cat.h"

#include <ctype.h>
#include <string.h>

static const char *const cat_names[TD_SNAP_NCAT][2] = {
	{"unknown", "Unknown"}, {"parameter", "PARAMETER"}, {"gradient", "GRADIENT"},
	{"optimizer state", "OPTIMIZER_STATE"}, {"activation", "ACTIVATION"},
	{"autograd detail", "AUTOGRAD_DETAIL"},
};

static const struct {
	const char *id, *text;
	unsigned cat;
} rules[TD_SNAP_NRULE] = {
	{"no-frames", "no frames recorded", TD_CAT_UNKNOWN},
	{"frames", "no frame tells (none of the rules' frames)", TD_CAT_UNKNOWN},
	{"user_metadata", "its user_metadata names the category", TD_CAT_UNKNOWN},
	{"frame:optimizer", "a frame in torch/optim/ or an optimizer's step()", TD_CAT_OPTIMIZER},
	{"frame:AccumulateGrad", "an AccumulateGrad frame (autograd accumulating a .grad)",
	 TD_CAT_GRADIENT},
	{"frame:backward", "a backward() or autograd engine frame", TD_CAT_AUTOGRAD},
	{"frame:parameter", "a frame making parameters: nn.Module _apply/to/cuda, load_state_dict, "
	 "reset_parameters, torch/nn/init.py, torch/nn/parameter.py, an nn module's __init__",
	 TD_CAT_PARAMETER},
	{"compile_context", "its compile_context names the compiled graph's forward, backward or "
	 "optimizer", TD_CAT_UNKNOWN},
	{"frame:forward", "a forward() or nn.Module call frame", TD_CAT_ACTIVATION},
	{"annotation:Optimizer.step", "allocated inside an Optimizer.step external annotation",
	 TD_CAT_OPTIMIZER},
	{"no-frames:engine", "no frames where the snapshot has Python frames: the autograd engine's "
	 "thread (backward)", TD_CAT_AUTOGRAD},
	{"life:gradient", "made by backward and still live when Optimizer.step begins",
	 TD_CAT_GRADIENT},
	{"annotation:Optimizer.zero_grad", "allocated before the trace, freed inside "
	 "Optimizer.zero_grad (set_to_none)", TD_CAT_GRADIENT},
	{"annotation:Optimizer.step-free", "allocated before the trace, freed inside "
	 "Optimizer.step (the previous step's state replaced)", TD_CAT_OPTIMIZER},
	{"life:persistent", "allocated before the trace and live at its end, no frame telling: "
	 "the model's parameters (or buffers)", TD_CAT_PARAMETER},
	{"before-trace", "allocated before the trace, nothing telling", TD_CAT_UNKNOWN},
};

const char *td_snap_cat_name(unsigned cat)
{
	return cat < TD_SNAP_NCAT ? cat_names[cat][0] : "unknown";
}

const char *td_snap_cat_pytorch(unsigned cat)
{
	return cat < TD_SNAP_NCAT ? cat_names[cat][1] : "Unknown";
}

const char *td_snap_rule_id(unsigned rule)
{
	return rule < TD_SNAP_NRULE ? rules[rule].id : "";
}

const char *td_snap_rule_text(unsigned rule)
{
	return rule < TD_SNAP_NRULE ? rules[rule].text : "";
}

unsigned td_snap_rule_cat(unsigned rule)
{
	return rule < TD_SNAP_NRULE ? rules[rule].cat : TD_CAT_UNKNOWN;
}

/* s contains w (lower case), ASCII case ignored */
static int has(const char *s, const char *w)
{
	size_t i;

	for (; *s; s++) {
		for (i = 0; w[i] && tolower((unsigned char)s[i]) == w[i]; i++)
			;
		if (!w[i])
			return 1;
	}
	return 0;
}

/* the file's path has dir (with '/' or '\\' between its parts) */
static int in_dir(const char *file, size_t n, const char *dir)
{
	size_t k = strlen(dir), i, j;

	for (i = 0; i + k <= n; i++) {
		for (j = 0; j < k; j++) {
			char c = file[i + j] == '\\' ? '/' : file[i + j];
			if (c != dir[j])
				break;
		}
		if (j == k)
			return 1;
	}
	return 0;
}

static int one_of(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(name, *list))
			return 1;
	return 0;
}

static uint8_t frame_hint(const char *f)
{
	static const char *const module_param[] = {
		"_apply", "to", "cuda", "convert", "to_empty", "load_state_dict",
		"_load_from_state_dict", "register_parameter", "half", "float", "bfloat16", "double",
		"type", NULL,
	};
	static const char *const param_names[] = {
		"load_state_dict", "_load_from_state_dict", "reset_parameters", NULL,
	};
	const char *sep = strstr(f, "): "), *name, *base;
	size_t n;

	if (strstr(f, "AccumulateGrad"))
		return TD_SNAP_HINT(TD_CAT_GRADIENT, TD_RULE_ACCUMULATE);
	if (strstr(f, "torch::autograd::Engine::"))
		return TD_SNAP_HINT(TD_CAT_AUTOGRAD, TD_RULE_BACKWARD);
	if (!sep) /* not "file(line): name" */
		return 0;
	name = sep + 3;
	for (n = (size_t)(sep - f); n && f[n - 1] != '('; n--)
		;
	n = n ? n - 1 : 0; /* the file: f[0..n) */
	for (base = f + n; base > f && base[-1] != '/' && base[-1] != '\\'; base--)
		;
	if ((in_dir(f, n, "torch/optim/") && strcmp(name, "zero_grad")) ||
	    (!strcmp(name, "step") && (size_t)(base - f) < n && has(base, "optim")))
		return TD_SNAP_HINT(TD_CAT_OPTIMIZER, TD_RULE_OPTIM);
	if (!strcmp(name, "backward") || !strcmp(name, "_engine_run_backward"))
		return TD_SNAP_HINT(TD_CAT_AUTOGRAD, TD_RULE_BACKWARD);
	if ((in_dir(f, n, "torch/nn/modules/module.py") && one_of(name, module_param)) ||
	    one_of(name, param_names) || in_dir(f, n, "torch/nn/init.py") ||
	    in_dir(f, n, "torch/nn/parameter.py") ||
	    (in_dir(f, n, "torch/nn/modules/") && !strcmp(name, "__init__")))
		return TD_SNAP_HINT(TD_CAT_PARAMETER, TD_RULE_PARAM);
	if (!strcmp(name, "forward") || (in_dir(f, n, "torch/nn/modules/module.py") &&
					 (!strcmp(name, "_call_impl") ||
					  !strcmp(name, "_wrapped_call_impl"))))
		return TD_SNAP_HINT(TD_CAT_ACTIVATION, TD_RULE_FORWARD);
	return 0;
}

/* the category a user_metadata or compile_context names, by a word in it */
static int named_cat(const char *t)
{
	return has(t, "optim") ? TD_CAT_OPTIMIZER : has(t, "grad") ? TD_CAT_GRADIENT
		: has(t, "param") || has(t, "weight") ? TD_CAT_PARAMETER : has(t, "activation")
		? TD_CAT_ACTIVATION : -1;
}

uint8_t td_snap_cat_hint(enum td_snap_hint_of of, const char *text)
{
	int c;

	if (of == TD_SNAP_HINT_FRAME)
		return frame_hint(text);
	if (!*text || !strcmp(text, "N/A")) /* what every entry has when none was set */
		return 0;
	if (of == TD_SNAP_HINT_METADATA)
		return (c = named_cat(text)) >= 0 ? TD_SNAP_HINT(c, TD_RULE_METADATA) : 0;
	/* compile_context: "N/A" when none; a compiled backward's, forward's, optimizer's */
	if (has(text, "backward"))
		return TD_SNAP_HINT(TD_CAT_AUTOGRAD, TD_RULE_COMPILE);
	if (has(text, "optim"))
		return TD_SNAP_HINT(TD_CAT_OPTIMIZER, TD_RULE_COMPILE);
	if (has(text, "forward"))
		return TD_SNAP_HINT(TD_CAT_ACTIVATION, TD_RULE_COMPILE);
	return 0;
}
