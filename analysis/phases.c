/* SPDX-License-Identifier: MIT */
/* Each steady step's phase (prefill, decode or mixed) from what the engine marks inside it,
 * else from its batch's token count; and the figures of each phase: count, step time (median,
 * p90), GPU busy and the causes of its idle time, collectives and how much of them no compute
 * overlaps (a tensor-parallel all-reduce the next layer waits for). */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/internal.h"
#include "analysis/intervals.h"

#define P_PREFILL 1
#define P_DECODE 2

const char *td_phase_name(enum td_phase p)
{
	static const char *const names[] = {"", "prefill", "decode", "mixed"};

	return p < TD_PHASE_COUNT ? names[p] : "";
}

/* A Python frame "FILE(LINE): FUNC" calling func, or an annotation named so. */
static int calls(const char *n, const char *func)
{
	const char *p = strstr(n, "): ");

	return p ? strcmp(p + 3, func) == 0 : 0;
}

/* The number after key in n ("context_" in "execute_context_1(888_788544)_generation_0(0)"),
 * -1 when absent. */
static long count_after(const char *n, const char *key)
{
	const char *p = strstr(n, key);
	long v = 0;

	if (!p)
		return -1;
	for (p += strlen(key); *p >= '0' && *p <= '9' && v < 100000000; p++)
		v = v * 10 + (*p - '0');
	return v;
}

/* The phase bits a name marks: vLLM's and SGLang's execute_..context_C(..)_generation_G(..)
 * annotation (C prefill requests, G decode ones), SGLang's step[EXTEND|DECODE|MIXED ...] and
 * forward_extend / forward_decode, TGI's Prefill and Decode. */
static unsigned marks(const char *n)
{
	if (strncmp(n, "execute_", 8) == 0 && strstr(n, "context_") && strstr(n, "generation_")) {
		long c = count_after(n, "context_"), g = count_after(n, "generation_");
		return (c > 0 ? P_PREFILL : 0) | (g > 0 ? P_DECODE : 0);
	}
	if (strncmp(n, "step[", 5) == 0) {
		if (strncmp(n + 5, "EXTEND", 6) == 0 || strncmp(n + 5, "PREFILL", 7) == 0)
			return P_PREFILL;
		if (strncmp(n + 5, "DECODE", 6) == 0)
			return P_DECODE;
		if (strncmp(n + 5, "MIXED", 5) == 0)
			return P_PREFILL | P_DECODE;
		return 0;
	}
	if (calls(n, "forward_extend") || calls(n, "Prefill"))
		return P_PREFILL;
	if (calls(n, "forward_decode") || calls(n, "Decode"))
		return P_DECODE;
	return 0;
}

/* The tokens of an embedding lookup from its Input Dims "[[V, H], [B, S]]": B x S; 0 unknown */
static int64_t embed_tokens(const char *dims)
{
	const char *p = strstr(dims, "], [");
	int64_t prod = 1, v = -1;

	if (!p)
		return 0;
	for (p += 4; *p && *p != ']'; p++) {
		if (*p >= '0' && *p <= '9') {
			v = (v < 0 ? 0 : v) * 10 + (*p - '0');
			if (v > ((int64_t)1 << 40))
				return 0;
		} else if (*p == ',' && v >= 0) {
			prod *= v;
			v = -1;
		}
	}
	if (v >= 0)
		prod *= v;
	return prod > ((int64_t)1 << 40) ? 0 : prod;
}

/* A step's token count far above the median (PREFILL_X times or more) carries prefill. */
#define PREFILL_X 4

int td_an_prefill_only(const struct td_analysis *a)
{
	size_t k;

	if (!a->step_phase || !a->nsteps)
		return 0;
	for (k = 0; k < a->nsteps; k++)
		if (a->step_phase[k] != TD_PHASE_PREFILL)
			return 0;
	return 1;
}

void td_an_step_phases(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	uint8_t *bits, *cls;
	int64_t *tok;
	uint32_t i, embed = 0;
	size_t k, marked = 0, sized = 0;
	struct td_dev_events it;

	if (!a->nsteps || a->iter_src == TD_ITER_NONE || a->training) /* a loop of training */
		return;
	bits = td_calloc(a->nsteps, 1);
	tok = td_calloc(a->nsteps, sizeof(*tok));
	cls = td_calloc(t->names.count + 1, 1);
	for (i = 1; i <= t->names.count; i++) {
		const char *n = td_trace_name(t, i);
		cls[i] = (uint8_t)marks(n);
		if (strcmp(n, "aten::embedding") == 0)
			embed = i;
	}
	for (td_host_events_begin(&it, t); td_dev_events_next(&it, &i);) {
		const struct td_event *e = td_trace_ev(t, i);
		const struct td_op_args *args;
		size_t s;
		if (!e->name || e->name > t->names.count || (!cls[e->name] && e->name != embed))
			continue;
		/* its middle: an engine's annotation may open just before the iteration's frame */
		if ((s = td_an_step_of(a, e->ts + td_ev_dur(e) / 2)) == SIZE_MAX)
			continue;
		bits[s] |= cls[e->name];
		if (e->name == embed && !tok[s] && (args = td_trace_op_args(t, i)) && args->dims)
			tok[s] = embed_tokens(td_trace_name(t, args->dims));
	}
	for (k = 0; k < a->nsteps; k++) {
		marked += bits[k] != 0;
		sized += tok[k] > 0;
	}
	if (!marked && sized >= 3 && sized == a->nsteps) {
		int64_t *v = td_malloc(a->nsteps * sizeof(*v)), med;
		memcpy(v, tok, a->nsteps * sizeof(*v));
		med = td_median_i64(v, a->nsteps);
		free(v);
		for (k = 0; k < a->nsteps; k++)
			bits[k] = tok[k] >= PREFILL_X * med && tok[k] > med ? P_PREFILL : P_DECODE;
		a->phase_by_shape = 1;
		marked = a->nsteps;
	}
	if (marked) {
		a->step_phase = td_calloc(a->nsteps, 1);
		for (k = 0; k < a->nsteps; k++)
			a->step_phase[k] = bits[k] == (P_PREFILL | P_DECODE) ? TD_PHASE_MIXED
					   : bits[k] == P_PREFILL ? TD_PHASE_PREFILL
					   : bits[k] == P_DECODE  ? TD_PHASE_DECODE
								  : TD_PHASE_NONE;
	}
	free(bits);
	free(tok);
	free(cls);
}

int64_t td_an_phase_median(const struct td_analysis *a, size_t k)
{
	int64_t *dur, med = 0;
	size_t i, n = 0;

	if (!a->step_phase || k >= a->nsteps)
		return 0;
	dur = td_malloc(a->nsteps * sizeof(*dur));
	for (i = 0; i < a->nsteps; i++)
		if (a->step_phase[i] == a->step_phase[k])
			dur[n++] = a->steps[i].end - a->steps[i].start;
	if (n >= 3)
		med = td_median_i64(dur, n);
	free(dur);
	return med;
}

/* What graphs replay in phase o->phase's steps on device index d: the GPU time of the ops a
 * graph launch put there (their union), the launches, and the host time from one launch's end
 * to the next one's start on the launching thread, within a step. */
static void graphs(const struct td_analysis *a, size_t d, struct td_phase_stat *o)
{
	const struct td_trace *t = a->t;
	uint8_t *is_graph = td_calloc(t->names.count + 1, 1);
	struct td_dev_events it;
	struct td_vec ops;
	uint32_t i, prev = TD_NONE, prev_track = TD_NONE;
	size_t prev_step = SIZE_MAX;
	int any = 0;

	for (i = 1; i <= t->names.count; i++)
		if ((a->name_class[i] & NC_LAUNCH) && strstr(td_trace_name(t, i), "GraphLaunch"))
			any = is_graph[i] = 1;
	if (!any) {
		free(is_graph);
		return;
	}
	td_vec_init(&ops, sizeof(struct td_interval));
	if (d < a->ndev)
		for (td_dev_events_begin(&it, t, a->dev[d].device); td_dev_events_next(&it, &i);) {
			const struct td_event *e = td_trace_ev(t, i);
			uint32_t l = td_trace_launch(t, i);
			size_t k;
			if (l == TD_NONE || !td_kind_is_gpu_op(e->kind) ||
			    !is_graph[td_trace_ev(t, l)->name])
				continue;
			k = td_an_step_of(a, td_trace_ev(t, l)->ts);
			if (k != SIZE_MAX && a->step_phase[k] == o->phase)
				*(struct td_interval *)td_vec_push(&ops) =
					(struct td_interval){e->ts, td_ev_end(e)};
		}
	/* their union: a graph's kernels on two streams at once count once, as busy time does */
	o->graph_ns = td_intervals_total(ops.data, td_iv_merge(ops.data, ops.len));
	td_vec_free(&ops);
	for (td_host_events_begin(&it, t); td_dev_events_next(&it, &i);) {
		const struct td_event *e = td_trace_ev(t, i);
		size_t k;
		if (e->kind != TD_K_RUNTIME || !is_graph[e->name])
			continue;
		k = td_an_step_of(a, e->ts);
		if (k == SIZE_MAX || a->step_phase[k] != o->phase)
			continue;
		o->graph_launches++;
		if (prev != TD_NONE && prev_track == td_dev_events_track(&it) && prev_step == k &&
		    e->ts > td_ev_end(td_trace_ev(t, prev))) {
			o->between_ns += e->ts - td_ev_end(td_trace_ev(t, prev));
			o->gaps++;
		}
		prev = i;
		prev_track = td_dev_events_track(&it);
		prev_step = k;
	}
	free(is_graph);
}

/* a piece of a phase's idle time and what held it */
struct what_ns {
	uint32_t what;
	uint8_t cause;
	int64_t ns;
};
#define WHAT_LESS(x, y) ((x)->what < (y)->what || ((x)->what == (y)->what && (x)->cause < (y)->cause))
TD_DEFINE_SORT(sort_what, struct what_ns, WHAT_LESS)

/* the (cause, what) holding most of the pieces v: o->top_what, top_cause, top_what_ns */
static void top_what(struct td_vec *v, struct td_phase_stat *o)
{
	struct what_ns *w = v->data;
	size_t i, j;

	sort_what(w, v->len);
	for (i = 0; i < v->len; i = j) {
		int64_t sum = 0;
		for (j = i; j < v->len && w[j].what == w[i].what && w[j].cause == w[i].cause; j++)
			sum += w[j].ns;
		if (sum > o->top_what_ns) {
			o->top_what_ns = sum;
			o->top_what = w[i].what;
			o->top_cause = w[i].cause;
		}
	}
}

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

/* Device index d's collective kernels over its steps' GPU spans (*comm) and the part of them
 * no compute kernel overlaps (*exposed), both merged; NULL and 0 without collectives. */
static void collectives(const struct td_analysis *a, size_t d, struct td_interval **comm,
			size_t *ncomm, struct td_interval **exposed, size_t *nexp)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_interval *comp;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t ncomp, k;

	*comm = *exposed = NULL;
	*ncomm = *nexp = 0;
	if (!a->has_comm || !dv->gsteps)
		return;
	for (k = 0; k < a->nsteps; k++) {
		lo = dv->gsteps[k].start < lo ? dv->gsteps[k].start : lo;
		hi = dv->gsteps[k].end > hi ? dv->gsteps[k].end : hi;
	}
	if (hi <= lo)
		return;
	td_an_kernel_sets(a, dv->device, lo, hi, &comp, &ncomp, comm, ncomm);
	*exposed = td_malloc((*ncomm + ncomp + 1) * sizeof(**exposed));
	*nexp = td_iv_minus(*comm, *ncomm, comp, ncomp, *exposed);
	free(comp);
}

size_t td_an_phase_stats(const struct td_analysis *a, size_t d, struct td_phase_stat *out)
{
	struct td_interval *comm = NULL, *exposed = NULL;
	size_t ncomm = 0, nexp = 0;
	const struct td_dev_analysis *dv = d < a->ndev ? &a->dev[d] : NULL;
	int64_t *dur;
	size_t n = 0, k, s;
	int p;
	struct td_vec whats;

	if (!a->step_phase)
		return 0;
	dur = td_malloc(a->nsteps * sizeof(*dur));
	td_vec_init(&whats, sizeof(struct what_ns));
	if (dv)
		collectives(a, d, &comm, &ncomm, &exposed, &nexp);
	for (p = TD_PHASE_PREFILL; p < TD_PHASE_COUNT; p++) {
		struct td_phase_stat *o = &out[n];
		size_t m = 0;
		whats.len = 0;
		memset(o, 0, sizeof(*o));
		o->phase = (enum td_phase)p;
		for (k = 0; k < a->nsteps; k++) {
			const struct td_interval *g;
			if (a->step_phase[k] != p)
				continue;
			dur[m++] = a->steps[k].end - a->steps[k].start;
			if (!dv || !dv->gsteps)
				continue;
			g = &dv->gsteps[k];
			o->gpu_ns += g->end - g->start;
			o->busy_ns += td_an_busy_between(a, d, g->start, g->end);
			o->comm_ns += td_iv_total_in(comm, ncomm, g->start, g->end);
			o->comm_exposed_ns += td_iv_total_in(exposed, nexp, g->start, g->end);
			TD_LOWER_BOUND(s, dv->nsegs, dv->segs[mid].end <= g->start);
			for (; s < dv->nsegs && dv->segs[s].start < g->end; s++) { /* idle by cause */
				const struct td_seg *sg = &dv->segs[s];
				int64_t lo = sg->start > g->start ? sg->start : g->start;
				int64_t hi = sg->end < g->end ? sg->end : g->end;
				int64_t st, rw, own;
				if (hi <= lo)
					continue;
				/* what a one-off claims is told under it, as the breakdown does */
				td_an_oneoff_in(a, d, lo, hi, &st, &rw, &o->oneoff_row);
				own = hi - lo - rw - (sg->cause == CAUSE_WARMUP ? 0 : st);
				o->idle_by_cause[sg->cause] += own;
				o->idle_by_cause[CAUSE_WARMUP] += sg->cause == CAUSE_WARMUP ? 0 : st;
				o->oneoff_ns += rw;
				if (sg->what && own > 0)
					*(struct what_ns *)td_vec_push(&whats) =
						(struct what_ns){sg->what, sg->cause, own};
			}
		}
		top_what(&whats, o);
		if (!m)
			continue;
		graphs(a, d, o);
		sort_i64(dur, m);
		o->count = m;
		o->median_ns = m % 2 ? dur[m / 2] : dur[m / 2 - 1] + (dur[m / 2] - dur[m / 2 - 1]) / 2;
		o->p90_ns = dur[(m * 9 + 9) / 10 - 1]; /* nearest rank */
		n++;
	}
	free(dur);
	free(comm);
	free(exposed);
	td_vec_free(&whats);
	return n;
}
