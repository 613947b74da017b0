/* SPDX-License-Identifier: MIT */
/* What is start-up work: runtime calls that create the context, a stream, a library handle or
 * the allocator's first pool (a call of the startup list far slower than its steady-state
 * peers, unless such slow calls recur through the run), the first call of any other runtime
 * API that does no GPU work nor waits for it when it takes 1 ms or more (and 10x its later
 * calls), lazy module loading (the first launch of a kernel taking 1 ms or more, or 50x the
 * trace's median launch, and 10x its own kind's median), torch.compile / Triton compilation
 * and autotuning frames, and spans the config names (patterns.warmup). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/internal.h"

#define MS 1000000

struct name_dur { /* 16 bytes: one per launch of a trace of millions */
	int64_t dur;
	uint32_t name;
	uint32_t ev;
};
#define DUR_LESS(x, y) ((x)->dur < (y)->dur || ((x)->dur == (y)->dur && (x)->ev < (y)->ev))
TD_DEFINE_SORT(sort_nd, struct name_dur, DUR_LESS)
TD_DEFINE_SELECT(select_nd, struct name_dur, sort_nd)

#define U32_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_u32, uint32_t, U32_LESS)

/* the median duration of one name's calls (reorders them) */
#define ND_DUR(x) ((x)->dur)
TD_DEFINE_MEDIAN(median_of_run, struct name_dur, select_nd, ND_DUR)

/* A runtime call that does no GPU work nor waits for it: its first call is start-up when
 * slow (cudaGetDeviceProperties, cudaOccupancyMaxActiveBlocksPerMultiprocessor,
 * cuModuleLoadData, cudaFuncSetAttribute...: the runtime initializing what it serves). */
#define NC_GPU_BOUND (NC_SYNC_CALL | NC_MEMCPY_CALL | NC_MEMSET_CALL | NC_ALLOC | NC_LAUNCH | \
		      NC_STREAM_WAIT | NC_USER_SYNC | NC_CAPTURE)
static int other_call(uint32_t c)
{
	return !(c & (NC_GPU_BOUND | NC_WARMUP_CALL));
}

/* e's name class when the warm-up rule looks at it (a start-up call, a launch or another call
 * that does no GPU work, not one to ignore: with bit 31 set, never 0), else 0 */
static uint32_t looked_at(const struct td_analysis *a, const struct td_event *e)
{
	uint32_t c = e->kind == TD_K_RUNTIME ? a->name_class[e->name] : 0;

	if (e->kind != TD_K_RUNTIME || (c & NC_IGNORE))
		return 0;
	if (c & (NC_WARMUP_CALL | NC_LAUNCH))
		return c;
	return other_call(c) ? (c | 0x80000000u) : 0;
}

/* The slow calls of one start-up name, cand[first..n): when more than WARM_FEW of them, and
 * more than WARM_SHARE of its calls, are slow, they are the run's steady cost, and only its
 * first call (at first_ts) is kept. Returns the new end. */
#define WARM_FEW 4
#define WARM_SHARE 0.05
static size_t recurring(const struct td_trace *t, uint32_t *cand, size_t first, size_t n,
			int64_t first_ts, size_t calls)
{
	size_t k, m = first;

	if (n - first <= WARM_FEW || (double)(n - first) <= WARM_SHARE * (double)calls)
		return n;
	for (k = first; k < n; k++)
		if (td_trace_ev(t, cand[k])->ts == first_ts)
			cand[m++] = cand[k];
	return m;
}

/* A graph capture (torch.cuda.graph, a server's graph warm-up) runs once: the host runs the
 * forward pass under capture, its launches only recorded, from a BeginCapture call to the next
 * EndCapture on its thread. The innermost span holding both (capture_32_FULL in vLLM's capture
 * trace, its 54 ms of Python under capture) is start-up work as a whole; a step marker is not
 * taken for one. Fills a->capture_ev, sorted. */
struct cap_call {
	uint32_t track, ev;
	int64_t ts;
	int begin;
};
#define CAP_LESS(x, y) ((x)->track < (y)->track || ((x)->track == (y)->track && (x)->ts < (y)->ts))
TD_DEFINE_SORT(sort_cap, struct cap_call, CAP_LESS)

static void captures(struct td_analysis *a)
{
	size_t sj;
	const struct td_trace *t = a->t;
	struct td_vec calls, spans;
	uint8_t *kind = td_calloc(t->names.count + 1, 1); /* 1: begins a capture, 2: ends one */
	size_t i, begins = 0;

	a->ncapture = 0;
	for (i = 1; i <= t->names.count; i++)
		if (a->name_class[i] & NC_CAPTURE) {
			const char *n = td_trace_name(t, (uint32_t)i);
			kind[i] = strstr(n, "BeginCapture") ? 1 : strstr(n, "EndCapture") ? 2 : 0;
			begins += kind[i] == 1;
		}
	if (!begins) { /* no capture: no pass over the events */
		free(kind);
		return;
	}
	td_vec_init(&calls, sizeof(struct cap_call));
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		if (e->kind == TD_K_RUNTIME && kind[e->name])
			*(struct cap_call *)td_vec_push(&calls) = (struct cap_call){
				td_trace_track_of(t, (uint32_t)i), (uint32_t)i, e->ts, kind[e->name] == 1};
	}
	free(kind);
	sort_cap(calls.data, calls.len);
	td_vec_init(&spans, sizeof(uint32_t));
	for (i = 0; i + 1 < calls.len; i++) {
		const struct cap_call *b = &TD_VEC_AT(&calls, struct cap_call, i), *e = b + 1;
		int64_t end;
		uint32_t p;
		if (!b->begin || e->begin || e->track != b->track)
			continue;
		end = td_ev_end(td_trace_ev(t, e->ev));
		for (p = td_trace_parent(t, b->ev); p != TD_NONE; p = td_trace_parent(t, p))
			if (td_ev_end(td_trace_ev(t, p)) >= end)
				break;
		if (p != TD_NONE && !(a->name_class[td_trace_ev(t, p)->name] & NC_STEP))
			*(uint32_t *)td_vec_push(&spans) = p;
	}
	td_vec_free(&calls);
	sort_u32(spans.data, spans.len);
	a->ncapture = 0;
	for (i = 0; i < spans.len; i++) /* one span may hold several captures */
		if (!a->ncapture || TD_VEC_AT(&spans, uint32_t, i) !=
				    TD_VEC_AT(&spans, uint32_t, a->ncapture - 1))
			TD_VEC_AT(&spans, uint32_t, a->ncapture++) = TD_VEC_AT(&spans, uint32_t, i);
	a->capture_ev = spans.data;
}

void td_an_detect_warmup(struct td_analysis *a)
{
	size_t sj;
	const struct td_trace *t = a->t;
	struct name_dur *v;
	int64_t *launch_dur, *first_ts, *first_call, launch_med;
	uint32_t *cand, *at, g;
	struct td_dev_events gpu;
	size_t n = 0, nl = 0, ncand = 0, i, j, nwarm = 0;

	/* the calls to look at, counted per name, then grouped by name (a counting sort: names
	 * are small ids) */
	at = td_calloc(t->names.count + 2, sizeof(*at));
	first_call = td_malloc((t->names.count + 1) * sizeof(*first_call));
	for (i = 0; i <= t->names.count; i++)
		first_call[i] = INT64_MAX;
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		uint32_t c = looked_at(a, e);
		if (!c)
			continue;
		n++;
		nl += (c & NC_LAUNCH) != 0;
		at[e->name + 1]++;
		if (e->ts < first_call[e->name])
			first_call[e->name] = e->ts;
	}
	for (i = 1; i <= t->names.count + 1; i++)
		at[i] += at[i - 1];
	v = td_malloc((n ? n : 1) * sizeof(*v));
	j = 0;
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		struct name_dur *r;
		if (j == n)
			break;
		if (!looked_at(a, e))
			continue;
		r = &v[at[e->name]++]; /* at[name] moves to the next name's start */
		r->name = e->name;
		r->dur = td_ev_dur(e);
		r->ev = (uint32_t)i;
		j++;
	}
	free(at);
	/* the trace's median launch */
	launch_dur = td_malloc((nl ? nl : 1) * sizeof(*launch_dur));
	for (i = 0, j = 0; i < n; i++)
		if (a->name_class[v[i].name] & NC_LAUNCH)
			launch_dur[j++] = v[i].dur;
	launch_med = td_median_i64(launch_dur, nl);
	free(launch_dur);

	cand = td_malloc((n ? n : 1) * sizeof(*cand));
	for (i = 0; i < n; i = j) {
		size_t first = ncand;
		int64_t med;
		int launch = (a->name_class[v[i].name] & NC_LAUNCH) != 0;
		for (j = i; j < n && v[j].name == v[i].name; j++)
			;
		med = median_of_run(v + i, j - i);
		/* the slow tail of this name (slow holds for every duration above one that is) */
		for (size_t k = i; k < j; k++) {
			int64_t d = v[k].dur;
			int slow;
			if (launch)
				slow = (d >= MS || (launch_med > 0 && d >= 50 * launch_med)) && d >= 10 * med;
			else if (a->name_class[v[i].name] & NC_CAPTURE) /* once per graph */
				slow = 1;
			else if (other_call(a->name_class[v[i].name])) /* its first call only */
				slow = d >= MS && (j - i <= 2 || d >= 10 * med) &&
				       td_trace_ev(t, v[k].ev)->ts == first_call[v[i].name];
			else
				slow = d >= MS && (j - i <= 2 || d >= 10 * med);
			if (slow)
				cand[ncand++] = v[k].ev;
		}
		/* start-up happens once: a start-up call whose slow calls recur through the run
		 * (hipfree-mi300x: 330 of 1,360 hipFree take 1-70 ms, every iteration, with the
		 * caching allocator off) is the run's own cost, left to its rule; its first call
		 * (the context, the first pool) stays start-up */
		if (!launch && !(a->name_class[v[i].name] & NC_CAPTURE) &&
		    !other_call(a->name_class[v[i].name]))
			ncand = recurring(t, cand, first, ncand, first_call[v[i].name], j - i);
	}
	free(v);
	free(first_call);
	captures(a);
	if (a->ncapture) {
		cand = td_realloc(cand, (ncand + a->ncapture) * sizeof(*cand));
		memcpy(cand + ncand, a->capture_ev, a->ncapture * sizeof(*cand));
		ncand += a->ncapture;
	}
	sort_u32(cand, ncand);

	/* a slow launch is lazy loading only when it launched the first op of its kernel */
	first_ts = td_malloc((t->names.count + 1) * sizeof(*first_ts));
	for (i = 0; i <= t->names.count; i++)
		first_ts[i] = INT64_MAX;
	for (td_gpu_events_begin(&gpu, t); td_dev_events_next(&gpu, &g);) { /* GPU tracks only */
		const struct td_event *e = td_trace_ev(t, g);
		if (td_kind_is_gpu_op(e->kind) && e->ts < first_ts[e->name])
			first_ts[e->name] = e->ts;
	}
	a->warm_ev = cand; /* td_an_is_warm() looks here while we check */
	a->nwarm_ev = ncand;
	{
		uint8_t *keep = td_calloc(ncand ? ncand : 1, 1);
		for (i = 0; i < ncand; i++)
			keep[i] = !(a->name_class[td_trace_ev(t, cand[i])->name] & NC_LAUNCH);
		for (td_gpu_events_begin(&gpu, t); ncand && td_dev_events_next(&gpu, &g);) {
			const struct td_event *e = td_trace_ev(t, g);
			uint32_t l;
			size_t lo;
			if (!td_kind_is_gpu_op(e->kind) || (l = td_trace_launch(t, g)) == TD_NONE)
				continue;
			TD_LOWER_BOUND(lo, ncand, cand[mid] < l);
			if (lo < ncand && cand[lo] == l && e->ts == first_ts[e->name])
				keep[lo] = 1;
		}
		for (i = 0; i < ncand; i++)
			if (keep[i])
				cand[nwarm++] = cand[i];
		free(keep);
	}
	free(first_ts);
	a->nwarm_ev = nwarm;
}

uint32_t td_an_warm_label(struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, ev);
	unsigned c = a->name_class[e->name];
	const char *n = td_trace_name(t, e->name);
	char buf[700], fr[512], m[600];

	if (e->kind == TD_K_RUNTIME && (c & NC_LAUNCH))
		snprintf(buf, sizeof(buf), "lazy module loading: first %s of a kernel",
			 td_mark(m, sizeof(m), n));
	else if (e->kind == TD_K_RUNTIME)
		snprintf(buf, sizeof(buf), "start-up call: %s", td_mark(m, sizeof(m), n));
	else if (td_an_is_capture(a, ev))
		snprintf(buf, sizeof(buf), "graph capture: %s",
			 td_mark(m, sizeof(m), td_frame_label(n, fr, sizeof(fr))));
	else if (c & NC_COMPILE)
		snprintf(buf, sizeof(buf), "compilation: %s",
			 td_mark(m, sizeof(m), td_frame_label(n, fr, sizeof(fr))));
	else
		snprintf(buf, sizeof(buf), "start-up: %s", td_mark(m, sizeof(m), n));
	return td_an_intern(a, buf);
}

int td_an_is_capture(const struct td_analysis *a, uint32_t ev)
{
	size_t lo;

	TD_LOWER_BOUND(lo, a->ncapture, a->capture_ev[mid] < ev);
	return lo < a->ncapture && a->capture_ev[lo] == ev;
}
