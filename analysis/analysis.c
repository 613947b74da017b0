/* SPDX-License-Identifier: MIT */
#include "analysis/analysis.h"
#include "analysis/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "config/config.h"
#include "analysis/internal.h"

/* An annotation that names the run's preparation, or lies inside one */
static int in_startup_range(const struct td_analysis *a, uint32_t i)
{
	const struct td_trace *t = a->t;
	int depth;

	for (depth = 0; i != TD_NONE && depth < 64; i = td_trace_parent(t, i), depth++) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_USER_ANNOTATION && (a->name_class[e->name] & NC_STARTUP_NAME))
			return 1;
	}
	return 0;
}

/* No range repeats at the top: where ranges name the run's preparation ("Initialize Model",
 * "Warm-up", "init_model", "warmup"), what begins after the last of them is the steady state,
 * as a ProfilerStep trace's warm-up steps are left out: the outermost ranges that begin then
 * ("benchmark_loop") are the steps - or, where one holds a range repeated 3 times or more that
 * covers most of it ("Benchmark Forward Only": 10 "Forward" ranges, 98% of it), those. */
static void after_startup_ranges(struct td_analysis *a)
{
	size_t sj;
	const struct td_trace *t = a->t;
	int64_t end = INT64_MIN;
	uint32_t i, *cnt;
	int64_t *sum;

	TD_FOR_KIND(t, TD_K_USER_ANNOTATION, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_USER_ANNOTATION && td_ev_dur(e) > 0 && e->name &&
		    e->name <= t->names.count && (a->name_class[e->name] & NC_STARTUP_NAME) &&
		    td_ev_end(e) > end)
			end = td_ev_end(e);
	}
	if (end == INT64_MIN)
		return;
	cnt = td_calloc(t->names.count + 1, sizeof(*cnt));
	sum = td_calloc(t->names.count + 1, sizeof(*sum));
	TD_FOR_KIND(t, TD_K_USER_ANNOTATION, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		uint32_t p = td_trace_parent(t, i), j, best = 0;
		if (e->kind != TD_K_USER_ANNOTATION || td_ev_dur(e) <= 0 || !e->name ||
		    e->name > t->names.count || e->ts < end ||
		    (a->name_class[e->name] & NC_STARTUP_NAME) ||
		    (p != TD_NONE && td_trace_ev(t, p)->ts >= end))
			continue;
		/* its children: a name repeated that covers most of it */
		for (j = i + 1; j < t->events.len; j++) {
			const struct td_event *c = td_trace_ev(t, j);
			if (td_trace_track_of(t, j) != td_trace_track_of(t, i) || c->ts >= td_ev_end(e))
				break;
			if (c->kind == TD_K_USER_ANNOTATION && td_trace_parent(t, j) == i && c->name &&
			    c->name <= t->names.count) {
				cnt[c->name]++;
				sum[c->name] += td_ev_dur(c);
				if (!best || cnt[c->name] > cnt[best])
					best = c->name;
			}
		}
		if (best && cnt[best] >= 3 && 5 * sum[best] >= 4 * td_ev_dur(e))
			a->name_class[best] |= NC_STEP;
		else
			a->name_class[e->name] |= NC_STEP;
		for (j = i + 1; j < t->events.len; j++) { /* counts back to zero */
			const struct td_event *c = td_trace_ev(t, j);
			if (td_trace_track_of(t, j) != td_trace_track_of(t, i) || c->ts >= td_ev_end(e))
				break;
			if (c->name <= t->names.count) {
				cnt[c->name] = 0;
				sum[c->name] = 0;
			}
		}
	}
	free(cnt);
	free(sum);
	a->steps_after_startup = 1;
}

/* A trace tracedoc record wrote has no ProfilerStep#: where the program marks its loop's body
 * with an NVTX range (torch.cuda.nvtx.range("step"), nvtxRangePush), the outermost range
 * repeated most (3 times or more) is the step - unless the configuration names step markers,
 * or some name is one already. Before the replay's thread reads the names' classes. */
static void nvtx_steps(struct td_analysis *a)
{
	size_t sj;
	const struct td_trace *t = a->t;
	uint32_t *cnt, best = 0, i;

	if (t->dropped_records < 0 && !t->nsys) /* neither the collector's nor an nsys export */
		return;
	for (i = 1; i <= t->names.count; i++)
		if (a->name_class[i] & NC_STEP)
			return;
	cnt = td_calloc(t->names.count + 1, sizeof(*cnt));
	TD_FOR_KIND(t, TD_K_USER_ANNOTATION, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_USER_ANNOTATION && td_ev_dur(e) > 0 && e->name &&
		    e->name <= t->names.count && td_trace_parent(t, i) == TD_NONE)
			cnt[e->name]++;
	}
	for (i = 1; i <= t->names.count; i++)
		if (cnt[i] > cnt[best])
			best = i;
	if (best && cnt[best] >= 3)
		a->name_class[best] |= NC_STEP;
	else
		after_startup_ranges(a);
	free(cnt);
}

#define STEP_LESS(x, y) ((x)->start < (y)->start || ((x)->start == (y)->start && (x)->end > (y)->end))
TD_DEFINE_SORT(sort_steps, struct td_interval, STEP_LESS)

/* Every step the names classified after td_analysis_begin() make, start-up ones included,
 * into v (struct td_interval, initialised here), by start, one per start time. */
static void all_steps(const struct td_analysis *a, struct td_vec *v)
{
	const struct td_trace *t = a->t;
	uint32_t i;
	size_t k, j;

	td_vec_init(v, sizeof(struct td_interval));
	if (a->niter_ev)
		td_an_iter_intervals(a, v);
	for (i = 0; i < t->events.len && !a->niter_ev; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		struct td_interval *s;
		if ((e->kind != TD_K_CPU_OP && e->kind != TD_K_USER_ANNOTATION) ||
		    !(a->name_class[e->name] & NC_STEP))
			continue;
		if (a->steps_after_startup && in_startup_range(a, i))
			continue; /* the same range inside the warm-up is start-up */
		s = td_vec_push(v);
		s->start = e->ts;
		s->end = td_ev_end(e);
	}
	sort_steps(v->data, v->len);
	for (k = 0, j = 0; k < v->len; k++) { /* the same step recorded twice */
		struct td_interval *s = &TD_VEC_AT(v, struct td_interval, k);
		if (j && TD_VEC_AT(v, struct td_interval, j - 1).start == s->start)
			continue;
		TD_VEC_AT(v, struct td_interval, j++) = *s;
	}
	v->len = j;
}

void td_analysis_iterations(const struct td_trace *t, struct td_iter_summary *out)
{
	struct td_analysis a;
	struct td_vec v;
	int64_t *dur;
	size_t k;

	td_analysis_begin(&a, t, NULL, 0);
	all_steps(&a, &v);
	out->count = v.len;
	out->src = a.iter_src;
	out->median_ns = 0;
	if (v.len) {
		dur = td_malloc(v.len * sizeof(*dur));
		for (k = 0; k < v.len; k++)
			dur[k] = TD_VEC_AT(&v, struct td_interval, k).end -
				 TD_VEC_AT(&v, struct td_interval, k).start;
		out->median_ns = td_median_i64(dur, v.len);
		free(dur);
	}
	td_vec_free(&v);
	td_analysis_free(&a);
}

/* Steps: spans named ProfilerStep#N or matching the configured step markers, on the host, one
 * per start time, or a serving engine's iterations (iterations.c). Leading steps of
 * warmup_step_ratio times the median or more (an iteration: its phase's median, of 3 or more)
 * are start-up (a cold first step: allocation, autotuning, compilation) and left out of the
 * steady state. */
static void find_steps(struct td_analysis *a)
{
	struct td_vec v;
	size_t k, j, k0 = 0;

	all_steps(a, &v);
	j = v.len;
	if (a->niter_ev) { /* a serving run: every iteration's phase, before any is left out */
		a->steps = v.data;
		a->nsteps = j;
		td_an_step_phases(a);
	}
	if (j >= 3) {
		int64_t *dur = td_malloc(j * sizeof(*dur)), med;
		for (k = 0; k < j; k++)
			dur[k] = TD_VEC_AT(&v, struct td_interval, k).end -
				 TD_VEC_AT(&v, struct td_interval, k).start;
		med = td_median_i64(dur, j);
		free(dur);
		while (k0 + 1 < j && med > 0) {
			const struct td_interval *s = &TD_VEC_AT(&v, struct td_interval, k0);
			/* a prefill among decodes is no cold step: measured against its phase */
			int64_t m = a->step_phase ? td_an_phase_median(a, k0) : med;
			if (m <= 0 ||
			    (double)(s->end - s->start) < a->params.warmup_step_ratio * (double)m)
				break;
			k0++;
		}
	}
	if (k0) {
		a->warm_steps = k0;
		a->warm_start = TD_VEC_AT(&v, struct td_interval, 0).start;
		a->warm_end = TD_VEC_AT(&v, struct td_interval, k0 - 1).end;
		memmove(v.data, (struct td_interval *)v.data + k0, (j - k0) * sizeof(struct td_interval));
		if (a->step_phase)
			memmove(a->step_phase, a->step_phase + k0, j - k0);
		j -= k0;
	}
	if (j >= 2 && !a->niter_ev) {
		/* the step the profiler opens as it stops (mi250-rocm's ProfilerStep#2: 49 us after
		 * a 9.29 ms step) is no step: a twentieth of the others' median or less */
		int64_t *dur = td_malloc(j * sizeof(*dur)), med;
		const struct td_interval *last = &TD_VEC_AT(&v, struct td_interval, j - 1);
		for (k = 0; k + 1 < j; k++)
			dur[k] = TD_VEC_AT(&v, struct td_interval, k).end -
				 TD_VEC_AT(&v, struct td_interval, k).start;
		med = td_median_i64(dur, j - 1);
		free(dur);
		if (20 * (last->end - last->start) <= med)
			j--;
	}
	a->steps = v.data;
	a->nsteps = j;
	if (j) {
		a->has_steps = 1;
		a->steps_start = a->steps[0].start;
		a->steps_end = a->steps[0].end;
		for (k = 0; k < j; k++)
			if (a->steps[k].end > a->steps_end)
				a->steps_end = a->steps[k].end;
	}
}

/* CPU tracks grouped by process, for looking at a thread's siblings; within a process the
 * threads with the most events come first. */
struct trk {
	int64_t pid;
	uint8_t pid_str;
	uint32_t count, id;
};
#define TRK_LESS(x, y) ((x)->pid < (y)->pid || ((x)->pid == (y)->pid && ((x)->pid_str < \
	(y)->pid_str || ((x)->pid_str == (y)->pid_str && ((x)->count > (y)->count || \
	((x)->count == (y)->count && (x)->id < (y)->id))))))
TD_DEFINE_SORT(sort_trk, struct trk, TRK_LESS)

static void group_threads(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	size_t n = t->tracks.len, i, m = 0, g;
	struct trk *v = td_malloc((n ? n : 1) * sizeof(*v));

	a->proc_tracks = td_malloc((n ? n : 1) * sizeof(uint32_t));
	a->proc_of = td_calloc(n ? n : 1, sizeof(uint32_t));
	a->proc_len = td_calloc(n ? n : 1, sizeof(uint32_t));
	for (i = 0; i < n; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (tr->is_gpu)
			continue;
		v[m].pid = tr->pid;
		v[m].pid_str = tr->pid_is_str;
		v[m].count = tr->count;
		v[m].id = (uint32_t)i;
		m++;
	}
	sort_trk(v, m);
	for (i = 0; i < m; i = g) {
		size_t k;
		for (g = i; g < m && v[g].pid == v[i].pid && v[g].pid_str == v[i].pid_str; g++)
			a->proc_tracks[g] = v[g].id;
		for (k = i; k < g; k++) {
			a->proc_of[v[k].id] = (uint32_t)i;
			a->proc_len[v[k].id] = (uint32_t)(g - i);
		}
	}
	free(v);
}

void td_analysis_run(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg)
{
	td_analysis_begin(a, t, cfg, 0);
	td_analysis_finish(a);
}

void td_analysis_begin(struct td_analysis *a, const struct td_trace *t, struct td_config *cfg,
		       int jobs)
{
	struct td_strtab stems;
	struct td_vec stem_class;
	size_t i;

	memset(a, 0, sizeof(*a));
	a->t = t;
	a->jobs = jobs;
	if (!cfg) { /* the defaults, patterns included */
		cfg = a->own_cfg = td_malloc(sizeof(*cfg));
		td_config_default(cfg);
	}
	a->cfg = cfg;
	a->params = cfg->params;
	td_strtab_init(&a->labels);
	a->name_class = td_malloc((t->names.count + 1) * sizeof(uint32_t));
	/* names numbered once per iteration ("ProfilerStep#41", as many as the steps) share the
	 * class of their stem: td_name_class() reads no digits after a '#' (the patterns of the
	 * config still see each name) */
	td_strtab_init(&stems);
	td_vec_init(&stem_class, sizeof(uint32_t));
	for (i = 0; i <= t->names.count; i++) {
		const char *n = td_strtab_str(&t->names, (uint32_t)i);
		size_t len = td_strtab_len(&t->names, (uint32_t)i), sl = td_name_stem_len(n, len);
		uint32_t c;
		if (sl < len) {
			uint32_t s = td_strtab_intern(&stems, n, sl);
			if (s > stem_class.len)
				*(uint32_t *)td_vec_push(&stem_class) = td_name_class(n);
			c = TD_VEC_AT(&stem_class, uint32_t, s - 1);
		} else {
			c = td_name_class(n);
		}
		if (i) {
			if (td_config_match(cfg, PAT_SYNC_OPS, n, len))
				c |= NC_USER_SYNC;
			if (td_config_match(cfg, PAT_STEP_MARKERS, n, len))
				c |= NC_STEP;
			if (td_config_match(cfg, PAT_DATALOADER, n, len))
				c |= NC_DATALOADER;
			if (td_config_match(cfg, PAT_COMMUNICATION, n, len))
				c |= NC_COMM;
			if (td_config_match(cfg, PAT_WARMUP, n, len))
				c |= NC_WARMUP;
			if (td_config_match(cfg, PAT_IGNORE, n, len)) {
				c |= NC_IGNORE;
				if (!a->skip_name)
					a->skip_name = td_calloc(t->names.count + 1, 1);
				a->skip_name[i] = 1;
			}
		}
		a->name_class[i] = c;
		a->has_comm |= (c & NC_COMM) != 0;
	}
	td_strtab_free(&stems);
	td_vec_free(&stem_class);
	td_an_engine_iters(a);
	nvtx_steps(a);
}

/* a->peaks: the table's for the device with the most GPU ops (the first with properties
 * when none ran any), then --peaks over them */
static void find_peaks(struct td_analysis *a)
{
	const struct td_device *best = NULL;
	struct td_error err;
	size_t i;

	for (i = 0; i < a->t->devices.len; i++) {
		const struct td_device *d = &TD_VEC_AT(&a->t->devices, struct td_device, i);
		if (d->has_props && (!best || d->ops > best->ops))
			best = d;
	}
	td_peaks_from_row(best ? td_peaks_find(td_trace_name(a->t, best->name), best->cc_major,
					       best->cc_minor, best->num_sms, best->total_mem)
			  : NULL, &a->peaks);
	if (a->cfg->peaks_json) /* checked when read: cannot fail */
		(void)td_peaks_parse(a->cfg->peaks_json, &a->peaks, &err);
}

void td_analysis_finish(struct td_analysis *a)
{
	const struct td_trace *t = a->t;
	size_t i, k = 0;

	a->has_python = t->by_kind[TD_K_PYTHON] > 0;
	td_health_waits_dropped(t, &a->waits);
	a->waits_dropped = a->waits.dropped;
	td_context_derive(t, &a->ctx);
	find_peaks(a);
	a->training = a->ctx.run == TD_RUN_TRAINING;
	a->serving = !a->training && a->ctx.engine != TD_ENGINE_NONE;
	find_steps(a);
	if (a->serving && td_an_prefill_only(a))
		a->ctx.on |= TD_ON_PREFILL;
	group_threads(a);
	td_an_detect_warmup(a);
	for (i = 0; i < t->devices.len; i++)
		if (TD_VEC_AT(&t->devices, struct td_device, i).ops)
			a->ndev++;
	a->dev = td_calloc(a->ndev ? a->ndev : 1, sizeof(*a->dev));
	a->small = td_calloc(t->events.len / 8 + 1, 1);
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *dv = &TD_VEC_AT(&t->devices, struct td_device, i);
		if (!dv->ops)
			continue;
		a->dev[k].device = dv->id;
		td_an_analyse_device(a, &a->dev[k]);
		k++;
	}
}

void td_analysis_free(struct td_analysis *a)
{
	size_t i;

	if (a->detach) /* first: the replay's builder may still read the names' classes */
		a->detach(a);
	free(a->oneoffs);
	for (i = 0; i < a->ndev; i++) {
		free(a->dev[i].busy);
		free(a->dev[i].gaps);
		free(a->dev[i].segs);
		free(a->dev[i].gsteps);
		td_vec_free(&a->dev[i].idle);
		td_vec_free(&a->dev[i].claims);
	}
	free(a->dev);
	free(a->small);
	free(a->name_class);
	free(a->skip_name);
	free(a->steps);
	free(a->iter_ev);
	free(a->step_phase);
	free(a->warm_ev);
	free(a->capture_ev);
	free(a->proc_tracks);
	free(a->proc_of);
	free(a->proc_len);
	free(a->block_units);
	free(a->loops);
	free(a->mfu);
	free(a->site_cache);
	td_strtab_free(&a->labels);
	if (a->own_cfg) {
		td_config_free(a->own_cfg);
		free(a->own_cfg);
	}
	memset(a, 0, sizeof(*a));
}

