/* SPDX-License-Identifier: MIT */
/* A serving engine's iterations, where a trace has no ProfilerStep# and the configuration names
 * no step markers: the engine's own frame around each batch it runs is the step. In order:
 * vLLM (V0 and V1: the model runner's execute_model), SGLang (the scheduler's run_batch, the
 * worker's forward_batch_generation, its step[...] annotations), TensorRT-LLM (the PyExecutor's
 * _forward_step), TGI (generate_token), a Hugging Face pipeline's __call__, else the outermost
 * user annotation repeated most (not PyTorch's own: Optimizer.step, a DataLoader's __next__;
 * the collector's traces have analysis.c's nvtx_steps() instead). The outermost of
 * them is taken (a wrapper of the same family holds one iteration, not two); one run under
 * start-up work (vLLM's _dummy_run and profile_run, a graph capture) is no iteration. Each
 * iteration runs on to the next one's start, the last to the end of the GPU work it launched.
 * Then each steady iteration's phase: prefill, decode or mixed, from the engine's own markers
 * (vLLM's and SGLang's execute_context_C(..)_generation_G(..) annotation, SGLang's forward
 * mode in step[EXTEND ...] and forward_extend / forward_decode, TGI's Prefill / Decode), else
 * from its batch's token count (the first embedding's Input Dims) against the median. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/internal.h"

/* name ends with suffix */
static int ends(const char *n, const char *suffix)
{
	size_t ln = strlen(n), ls = strlen(suffix);

	return ln >= ls && memcmp(n + ln - ls, suffix, ls) == 0;
}

/* A Python frame's name: "FILE(LINE): FUNC". 1 when FILE ends with file and FUNC is func. */
static int frame_is(const char *n, const char *file, const char *func)
{
	const char *p = strstr(n, "): ");
	size_t lf = strlen(file);
	const char *q;

	if (!p || strcmp(p + 3, func) != 0)
		return 0;
	q = memchr(n, '(', (size_t)(p - n));
	while (q && q + 1 < p) { /* the last '(' before "): " opens the line number */
		const char *r = memchr(q + 1, '(', (size_t)(p - q - 1));
		if (!r)
			break;
		q = r;
	}
	return q && (size_t)(q - n) >= lf && memcmp(q - lf, file, lf) == 0;
}

/* The families of iteration frames, in the order they are tried. */
static int fam_vllm(const char *n)
{
	return frame_is(n, "model_runner.py", "execute_model");
}
static int fam_sglang(const char *n)
{
	return frame_is(n, "scheduler.py", "run_batch") ||
	       frame_is(n, "scheduler.py", "_run_batch_inner");
}
static int fam_sglang_worker(const char *n)
{
	return frame_is(n, "tp_worker.py", "forward_batch_generation");
}
static int fam_sglang_step(const char *n)
{
	return strncmp(n, "step[", 5) == 0 && ends(n, "]");
}
static int fam_trtllm(const char *n)
{
	return frame_is(n, "py_executor.py", "_forward_step") ||
	       strncmp(n, "_forward_step ", 14) == 0 || strcmp(n, "_forward_step") == 0;
}
static int fam_tgi(const char *n)
{
	return frame_is(n, "causal_lm.py", "generate_token");
}
static int fam_hf(const char *n)
{
	return frame_is(n, "pipelines/base.py", "__call__");
}

static const struct {
	int (*is)(const char *n);
	enum td_iter_src src;
} families[] = {
	{fam_vllm, TD_ITER_VLLM},          {fam_sglang, TD_ITER_SGLANG},
	{fam_sglang_worker, TD_ITER_SGLANG}, {fam_sglang_step, TD_ITER_SGLANG},
	{fam_trtllm, TD_ITER_TRTLLM},      {fam_tgi, TD_ITER_TGI},
	{fam_hf, TD_ITER_HF},
};

/* Spans under which a model runs at start-up, not to serve: vLLM's _dummy_run and
 * profile_run, graph captures (vLLM's capture_model, SGLang's cuda_graph_runner), warm-up. */
static int startup_frame(const char *n)
{
	return strstr(n, "_dummy_run") || strstr(n, "profile_run") || strstr(n, "capture") ||
	       strstr(n, "warm_up") || strstr(n, "warmup");
}

/* 1 when host event i has no CPU op or annotation around it (Python frames aside) and no
 * start-up work */
static int outermost(const struct td_analysis *a, uint32_t i, const uint8_t *start)
{
	const struct td_trace *t = a->t;
	uint32_t p;
	int depth = 0;

	for (p = td_trace_parent(t, i); p != TD_NONE && depth < MAX_CHAIN;
	     p = td_trace_parent(t, p), depth++) {
		const struct td_event *e = td_trace_ev(t, p);
		if (e->kind == TD_K_USER_ANNOTATION || e->kind == TD_K_CPU_OP ||
		    (e->name <= t->names.count && start[e->name]))
			return 0;
	}
	return 1;
}

/* PyTorch's own annotations, never a loop's iteration */
static int torch_own(const char *n)
{
	static const char *const own[] = {"Optimizer.", "enumerate(", "TorchDynamo", "## ",
					  "aten::", "nccl:", "record_param_comms", "cuda",
					  "autograd::", "DistributedDataParallel", "FullyShardedDataParallel",
					  "capture_", "ProfilerStep", NULL};
	size_t i;

	for (i = 0; own[i]; i++)
		if (!strncmp(n, own[i], strlen(own[i])))
			return 1;
	return 0;
}

/* No engine frame: the outermost user annotation (NVTX range, record_function) repeated most,
 * 3 times or more, none under start-up work, is the iteration; Python frames around it do not
 * count as outer. */
#define ANNOT_MIN 3
static void annotation_iters(struct td_analysis *a, const uint8_t *start, struct td_vec *v)
{
	size_t sj;
	const struct td_trace *t = a->t;
	uint32_t *cnt = td_calloc(t->names.count + 1, sizeof(*cnt)), i, best = 0;

	TD_FOR_KIND(t, TD_K_USER_ANNOTATION, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_USER_ANNOTATION && td_ev_dur(e) > 0 && e->name &&
		    e->name <= t->names.count && outermost(a, i, start))
			cnt[e->name]++;
	}
	for (i = 1; i <= t->names.count; i++)
		if (cnt[i] > cnt[best] && !torch_own(td_trace_name(t, i)))
			best = i;
	if (best && cnt[best] >= ANNOT_MIN) {
		TD_FOR_KIND(t, TD_K_USER_ANNOTATION, sj, i) {
			const struct td_event *e = td_trace_ev(t, i);
			if (e->name == best && e->kind == TD_K_USER_ANNOTATION && td_ev_dur(e) > 0 &&
			    outermost(a, i, start))
				*(uint32_t *)td_vec_push(v) = i;
		}
		a->iter_src = TD_ITER_ANNOTATION;
		a->name_class[best] |= NC_STEP;
	}
	free(cnt);
}

/* A training loop with no ProfilerStep#: torch.optim's record_function range
 * "Optimizer.step#<Class>.step" comes once an iteration, so from one to the next is an
 * iteration (the optimizer's step, then the next batch's zero_grad, forward and backward,
 * whatever the loop's order); the thread with the most of them, 3 or more (2 iterations). */
#define OPT_MIN 3
static void optimizer_iters(struct td_analysis *a, struct td_vec *v)
{
	const struct td_trace *t = a->t;
	uint32_t i, *per = td_calloc(t->tracks.len + 1, sizeof(uint32_t)), best = TD_NONE;
	uint8_t *opt = td_calloc(t->names.count + 1, 1);
	static const int kinds[2] = {TD_K_USER_ANNOTATION, TD_K_CPU_OP};
	size_t j;
	uint32_t x;
	int any = 0, k;

	for (i = 1; i <= t->names.count; i++)
		any |= opt[i] = !strncmp(td_trace_name(t, i), "Optimizer.step#", 15);
	for (k = 0; any && k < 2; k++) /* the annotations and ops (TD_FOR_KIND) */
		TD_FOR_KIND(t, kinds[k], j, x) {
			const struct td_event *ev = td_trace_ev(t, x);
			uint32_t tr;
			if (ev->kind != kinds[k] || !opt[ev->name] || td_ev_dur(ev) <= 0)
				continue;
			tr = td_trace_track_of(t, x);
			if (++per[tr] >= OPT_MIN && (best == TD_NONE || per[tr] > per[best]))
				best = tr;
		}
	if (best != TD_NONE) {
		const struct td_track *tr = td_trace_track(t, best);
		for (i = tr->first; i < tr->first + tr->count; i++) {
			const struct td_event *e = td_trace_ev(t, i);
			if (opt[e->name] && (e->kind == TD_K_USER_ANNOTATION || e->kind == TD_K_CPU_OP) &&
			    td_ev_dur(e) > 0)
				*(uint32_t *)td_vec_push(v) = i;
		}
		a->iter_src = TD_ITER_OPTIMIZER; /* its name stays an op's, not a step's (NC_STEP):
						   * the optimizer's own time in the tables */
	}
	free(per);
	free(opt);
}

void td_an_engine_iters(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	uint8_t *fam, *start;
	uint32_t i;
	size_t f, nf = sizeof(families) / sizeof(families[0]);
	struct td_vec v;

	for (i = 1; i <= t->names.count; i++)
		if (a->name_class[i] & NC_STEP)
			return;
	fam = td_calloc(t->names.count + 1, 1);
	start = td_calloc(t->names.count + 1, 1);
	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_trace_name(t, i);
		for (f = 0; f < nf; f++)
			if (families[f].is(n)) {
				fam[i] = (uint8_t)(f + 1);
				break;
			}
		start[i] = startup_frame(n);
	}
	td_vec_init(&v, sizeof(uint32_t));
	for (f = 1; f <= nf && !v.len; f++) {
		int any = 0;
		for (i = 1; i <= t->names.count && !any; i++)
			any = fam[i] == f;
		if (!any)
			continue;
		for (i = 0; i < t->events.len; i++) {
			const struct td_event *e = td_trace_ev(t, i);
			uint32_t p;
			int keep = 1, depth = 0;
			if (!e->name || e->name > t->names.count || fam[e->name] != f ||
			    td_kind_on_gpu_track(e->kind) || td_ev_dur(e) <= 0)
				continue;
			for (p = td_trace_parent(t, i); p != TD_NONE && keep && depth++ < MAX_CHAIN;
			     p = td_trace_parent(t, p)) {
				uint32_t pn = td_trace_ev(t, p)->name;
				keep = pn > t->names.count || (fam[pn] != f && !start[pn]);
			}
			if (keep)
				*(uint32_t *)td_vec_push(&v) = i;
		}
		if (v.len) {
			a->iter_src = families[f - 1].src;
			for (i = 1; i <= t->names.count; i++)
				if (fam[i] == f)
					a->name_class[i] |= NC_STEP;
		}
	}
	free(fam);
	if (!v.len && t->dropped_records < 0) /* the collector's: nvtx_steps() (analysis.c) */
		annotation_iters(a, start, &v);
	if (!v.len)
		optimizer_iters(a, &v);
	free(start);
	a->iter_ev = v.data;
	a->niter_ev = v.len;
}

#define IV_LESS(x, y) ((x)->start < (y)->start || ((x)->start == (y)->start && (x)->end > (y)->end))
TD_DEFINE_SORT(sort_iv, struct td_interval, IV_LESS)

/* The iterations as steps into v (struct td_interval), by start: nested or repeated ones
 * dropped, each run on to the next one's start, the last to the end of the GPU work launched
 * inside it. */
void td_an_iter_intervals(const struct td_analysis *a, struct td_vec *v)
{
	const struct td_trace *t = a->t;
	size_t k, j = 0;
	struct td_dev_events it;
	uint32_t g;
	struct td_interval *s;
	int64_t own_end;

	for (k = 0; k < a->niter_ev; k++) {
		const struct td_event *e = td_trace_ev(t, a->iter_ev[k]);
		*(struct td_interval *)td_vec_push(v) = (struct td_interval){e->ts, td_ev_end(e)};
	}
	sort_iv(v->data, v->len);
	s = v->data;
	for (k = 0; k < v->len; k++) { /* one inside another (two threads' frames): the outer */
		if (j && s[k].start < s[j - 1].end)
			continue;
		s[j++] = s[k];
	}
	v->len = j;
	if (!j)
		return;
	for (k = 0; k + 1 < j; k++)
		s[k].end = s[k + 1].start;
	if (a->iter_src == TD_ITER_OPTIMIZER) { /* the last optimizer step opens no whole one */
		v->len = j - 1;
		return;
	}
	own_end = s[j - 1].end;
	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &g);) {
		const struct td_event *e = td_trace_ev(t, g);
		uint32_t l = td_trace_launch(t, g);
		int64_t lt;
		if (l == TD_NONE || !td_kind_is_gpu_op(e->kind))
			continue;
		lt = td_trace_ev(t, l)->ts;
		if (lt >= s[j - 1].start && lt < own_end && td_ev_end(e) > s[j - 1].end)
			s[j - 1].end = td_ev_end(e);
	}
}

const char *td_iter_src_name(enum td_iter_src s)
{
	static const char *const names[] = {"", "vLLM execute_model", "SGLang batches",
					    "TensorRT-LLM _forward_step", "TGI generate_token",
					    "Hugging Face pipeline calls", "the outermost repeated annotation",
					    "from one Optimizer.step# to the next"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "";
}
