/* SPDX-License-Identifier: MIT */
/* The trace model's end (td_trace_finalize): the tracks' chunks gathered into one array and
 * sorted, the span trees, each GPU op's launch call, the steps. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "parser/trace.h"
#include "parser/trace_chunk.h"

static int kind_rank(int k)
{
	/* at equal start and length, the wider concept encloses the narrower */
	switch (k) {
	case TD_K_USER_ANNOTATION: return 0;
	case TD_K_PYTHON: return 1;
	case TD_K_CPU_OP: return 2;
	case TD_K_RUNTIME: return 3;
	default: return 4;
	}
}

/* At equal start, length and kind, events keep the order the trace wrote them in (the sorts
 * below are stable): a parent op and the child it calls at once (aten::to and aten::_to_copy on
 * a microsecond clock) nest as the trace's order (and External ids) say, not by their names. */
static int ev_less(const struct td_event *a, const struct td_event *b)
{
	int64_t da, db;

	if (a->ts != b->ts)
		return a->ts < b->ts;
	da = td_ev_dur(a);
	db = td_ev_dur(b);
	if (da != db)
		return da > db;
	if (a->kind != b->kind)
		return kind_rank(a->kind) < kind_rank(b->kind) ||
		       (kind_rank(a->kind) == kind_rank(b->kind) && a->kind < b->kind);
	return 0;
}
#define EV_LESS(a, b) ev_less((a), (b))
TD_DEFINE_STABLE_SORT(sort_events, struct td_event, EV_LESS)

struct corr_idx {
	uint32_t corr, idx;
};
#define CORR_LESS(a, b) ((a)->corr < (b)->corr || ((a)->corr == (b)->corr && (a)->idx < (b)->idx))
TD_DEFINE_SORT(sort_corr, struct corr_idx, CORR_LESS)

#define STEP_LESS(a, b) ((a)->ts < (b)->ts || ((a)->ts == (b)->ts && (a)->number < (b)->number))
TD_DEFINE_SORT(sort_steps, struct td_step, STEP_LESS)

#define COLL_LESS(a, b) ((a)->device < (b)->device || ((a)->device == (b)->device && \
	((a)->corr < (b)->corr || ((a)->corr == (b)->corr && (a)->name < (b)->name))))
TD_DEFINE_SORT(sort_colls, struct td_coll, COLL_LESS)

/* by time; samples at one instant keep the order they were read in */
#define MEM_LESS(a, b) ((a)->ts < (b)->ts)
TD_DEFINE_STABLE_SORT(sort_mem, struct td_mem_sample, MEM_LESS)

/* track ids by (device, id): an insertion-free merge sort, stable */
static void gpu_track_sort(const struct td_trace *t, uint32_t *v, size_t n)
{
	uint32_t *tmp;
	size_t w, i;

	if (n < 2)
		return;
	tmp = td_malloc(n * sizeof(*tmp));
	for (w = 1; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t a = i, am = i + w < n ? i + w : n, b = am, bm = i + 2 * w < n ? i + 2 * w : n,
			       o = i;
			while (a < am && b < bm)
				tmp[o++] = td_trace_track(t, v[b])->device < td_trace_track(t, v[a])->device
					? v[b++] : v[a++];
			while (a < am)
				tmp[o++] = v[a++];
			while (b < bm)
				tmp[o++] = v[b++];
		}
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
}

#define DEV_LESS(a, b) ((a)->id < (b)->id)
TD_DEFINE_SORT(sort_devices, struct td_device, DEV_LESS)

/* Insertion sort for a track that is almost in order (Kineto writes a parent span after its
 * children): O(n + moves). Gives up, leaving a permutation, once the moves exceed 8n; then
 * returns 0 and the caller sorts with the introsort. */
static int sort_nearly_sorted(struct td_event *a, size_t n)
{
	size_t i, budget = 8 * n + 64;

	for (i = 1; i < n; i++) {
		struct td_event tmp;
		size_t j = i;

		if (!ev_less(&a[i], &a[i - 1]))
			continue;
		tmp = a[i];
		while (j > 0 && ev_less(&tmp, &a[j - 1])) {
			a[j] = a[j - 1];
			j--;
			if (--budget == 0) {
				a[j] = tmp;
				return 0;
			}
		}
		a[j] = tmp;
	}
	return 1;
}

/* Where a chunk goes in td_trace.events. */
struct gather_job {
	struct td_chunk *c;
	size_t at;
};

struct gather {
	struct td_event *ev;
	struct gather_job *job;
	size_t from, to;
};

/* Copies jobs [from, to) into place, freeing each chunk once copied (so the memory stays near
 * one copy of the events: the array's pages are touched only as they are filled). */
static void *gather_part(void *arg)
{
	const struct gather *g = arg;
	size_t k;

	for (k = g->from; k < g->to; k++) {
		struct td_chunk *c = g->job[k].c;
		memcpy(g->ev + g->job[k].at, c->ev, c->len * sizeof(c->ev[0]));
		free(c);
	}
	return NULL;
}

/* The events the helper thread's work is worth starting for. */
#define PARALLEL_EVENTS ((size_t)1 << 18)

/* The tracks' chunks into one array, track by track, each track then sorted. The array is
 * sized once (the count is known): with two threads, each copies half of the chunks. */
static void sort_by_track(struct td_trace *t, int jobs)
{
	size_t ntr = t->tracks.len, nchunk = 0, i, k, pos = 0, half;
	struct gather_job *job;
	struct gather part[2];
	pthread_t th;
	int started = 0;

	for (i = 0; i < ntr; i++) {
		struct td_track *tr = td_trace_track(t, (uint32_t)i);
		const struct td_chunk *c;
		for (c = tr->chunks; c; c = c->next)
			nchunk++;
	}
	job = td_malloc((nchunk ? nchunk : 1) * sizeof(*job));
	t->track_firsts = td_malloc((ntr ? ntr : 1) * sizeof(uint32_t));
	for (i = 0, k = 0; i < ntr; i++) {
		struct td_track *tr = td_trace_track(t, (uint32_t)i);
		struct td_chunk *c;
		tr->first = t->track_firsts[i] = (uint32_t)pos;
		for (c = tr->chunks; c; c = c->next) {
			job[k].c = c;
			job[k++].at = pos;
			pos += c->len;
		}
		tr->chunks = tr->tail = NULL;
	}
	td_vec_reserve(&t->events, pos);
	t->events.len = pos;
	/* the first half of the events on this thread, the rest on the helper's */
	for (half = 0; half < nchunk && job[half].at < pos / 2; half++)
		;
	part[0] = (struct gather){t->events.data, job, 0, half};
	part[1] = (struct gather){t->events.data, job, half, nchunk};
	if (jobs > 1 && pos >= PARALLEL_EVENTS)
		started = pthread_create(&th, NULL, gather_part, &part[1]) == 0;
	gather_part(&part[0]);
	if (started)
		pthread_join(th, NULL);
	else
		gather_part(&part[1]);
	free(job);
	for (i = 0; i < ntr; i++) {
		struct td_track *tr = td_trace_track(t, (uint32_t)i);
		struct td_event *a = (struct td_event *)t->events.data + tr->first;
		if (!sort_nearly_sorted(a, tr->count)) {
			struct td_event *tmp = td_malloc(tr->count * sizeof(*tmp));
			sort_events(a, tr->count, tmp);
			free(tmp);
		}
	}
}

static void build_parents(struct td_trace *t, const struct td_track *tr, uint32_t *stack)
{
	uint32_t i, sp = 0;

	for (i = tr->first; i < tr->first + tr->count; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		int64_t end = td_ev_end(e);

		while (sp > 0) {
			const struct td_event *top = td_trace_ev(t, stack[sp - 1]);
			if (e->ts >= top->ts && end <= td_ev_end(top))
				break;
			sp--;
		}
		t->link[i] = sp ? stack[sp - 1] : TD_NONE;
		stack[sp++] = i;
	}
}

/* Every CPU track's span tree, into t->link. */
static void *all_parents(void *arg)
{
	struct td_trace *t = arg;
	uint32_t *stack, maxcount = 0;
	size_t i;

	for (i = 0; i < t->tracks.len; i++)
		if (td_trace_track(t, (uint32_t)i)->count > maxcount)
			maxcount = td_trace_track(t, (uint32_t)i)->count;
	stack = td_malloc((maxcount + 1) * sizeof(uint32_t));
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (!tr->is_gpu)
			build_parents(t, tr, stack);
	}
	free(stack);
	return NULL;
}

static int parse_step(const char *name, int64_t *n)
{
	static const char prefix[] = "ProfilerStep#";
	const char *p;
	int64_t v = 0;

	if (strncmp(name, prefix, sizeof(prefix) - 1) != 0)
		return 0;
	p = name + sizeof(prefix) - 1;
	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++)
		if (v < INT64_MAX / 10 - 10)
			v = v * 10 + (*p - '0');
	*n = v;
	return *p == '\0';
}

void td_trace_finalize(struct td_trace *t)
{
	size_t n, i, nruntime = 0, j, kd, fill[TD_K_NSTORED + 1];
	struct td_event *ev;
	struct corr_idx *ci;
	int64_t *step_num;
	pthread_t helper;
	int started = 0;

	if (t->finalized)
		return;
	t->finalized = 1;
	sort_by_track(t, t->jobs);
	n = t->events.len;
	{ /* each device's streams, for loops over one device's ops without scanning all tracks */
		size_t k, m = 0;
		t->gpu_tracks = td_malloc((t->tracks.len ? t->tracks.len : 1) * sizeof(uint32_t));
		for (k = 0; k < t->tracks.len; k++)
			if (td_trace_track(t, (uint32_t)k)->is_gpu)
				t->gpu_tracks[m++] = (uint32_t)k;
		t->ngpu_tracks = m;
		gpu_track_sort(t, t->gpu_tracks, m);
	}
	ev = t->events.data;
	sort_devices(t->devices.data, t->devices.len);
	free(t->dev_slots); /* by id now: the hash would point wrong */
	t->dev_slots = NULL;
	t->dev_nslots = 0;
	t->last_device = TD_NONE;
	sort_colls(t->colls.data, t->colls.len);
	{ /* each sample's thread, found once per thread; then the samples in time order */
		size_t nth = t->mem_threads.len, k;
		uint32_t *tr = td_malloc((nth ? nth : 1) * sizeof(*tr));
		struct td_mem_sample *m = t->mem.data;
		for (k = 0; k < nth; k++) {
			const struct td_mem_thread *th = &TD_VEC_AT(&t->mem_threads,
								    struct td_mem_thread, k);
			tr[k] = td_trace_find_cpu_track(t, th->pid, th->flags & 1, th->tid,
							   th->flags & 2);
		}
		for (k = 0; k < t->mem.len; k++)
			m[k].track = m[k].track && m[k].track <= nth ? tr[m[k].track - 1] : TD_NONE;
		free(tr);
		td_vec_free(&t->mem_threads);
		for (k = 1; k < t->mem.len && m[k - 1].ts <= m[k].ts; k++)
			;
		if (k < t->mem.len) { /* stable: samples at one instant keep the order read */
			struct td_mem_sample *tmp = td_malloc(t->mem.len * sizeof(*tmp));
			sort_mem(m, t->mem.len, tmp);
			free(tmp);
		}
	}
	t->last_device = TD_NONE;
	t->link = td_malloc((n ? n : 1) * sizeof(uint32_t));
	for (i = 0; i < n; i++)
		t->link[i] = TD_NONE;

	/* the CPU span trees (on the helper's thread) and each GPU op's launch: each writes the
	 * links of its own events */
	if (t->jobs > 1 && n >= PARALLEL_EVENTS)
		started = pthread_create(&helper, NULL, all_parents, t) == 0;
	if (!started)
		all_parents(t);

	/* runtime call <-> GPU op by correlation id; where Python frames are a quarter of the
	 * events or more, the others' indices by kind (TD_FOR_KIND): counted in this pass, placed
	 * in the next */
	free(t->scan);
	t->scan = NULL;
	memset(t->scan_off, 0, sizeof(t->scan_off));
	for (i = 0; i < n; i++) {
		if (ev[i].kind == TD_K_RUNTIME && !(ev[i].flags & TD_EF_NO_CORR))
			nruntime++;
		if (ev[i].kind < TD_K_NSTORED)
			t->scan_off[ev[i].kind + 1]++;
	}
	if (n && t->scan_off[TD_K_PYTHON + 1] >= n / 4) {
		t->scan_off[TD_K_PYTHON + 1] = 0; /* frames are not kept */
		for (kd = 1; kd <= TD_K_NSTORED; kd++)
			t->scan_off[kd] += t->scan_off[kd - 1];
		memcpy(fill, t->scan_off, sizeof(fill));
		t->scan = td_malloc((t->scan_off[TD_K_NSTORED] ? t->scan_off[TD_K_NSTORED] : 1) *
				    sizeof(*t->scan));
	}
	ci = td_malloc((nruntime ? nruntime : 1) * sizeof(*ci));
	for (i = 0, j = 0; i < n; i++)
		if (ev[i].kind == TD_K_RUNTIME && !(ev[i].flags & TD_EF_NO_CORR)) {
			ci[j].corr = ev[i].corr;
			ci[j].idx = (uint32_t)i;
			j++;
		}
	sort_corr(ci, nruntime);
	for (i = 0, j = 0; i < n; i++) {
		size_t lo = 0;
		uint32_t c = ev[i].corr;
		if (t->scan && ev[i].kind < TD_K_NSTORED && ev[i].kind != TD_K_PYTHON)
			t->scan[fill[ev[i].kind]++] = (uint32_t)i;
		if (!td_kind_on_gpu_track(ev[i].kind) || ev[i].kind == TD_K_GPU_ANNOTATION)
			continue;
		if (!(ev[i].flags & TD_EF_NO_CORR)) {
			/* a stream's ops come in launch order: the call is most often a step or
			 * two after the last one matched (taken when it is the first of its
			 * correlation id, as the search would find) */
			size_t q = j;
			while (q < nruntime && q < j + 4 && ci[q].corr < c)
				q++;
			if (q < nruntime && ci[q].corr == c && (q == 0 || ci[q - 1].corr < c))
				lo = q;
			else
				TD_LOWER_BOUND(lo, nruntime, ci[mid].corr < c);
			if (lo < nruntime && ci[lo].corr == c) {
				j = lo + 1;
				t->link[i] = ci[lo].idx;
				continue;
			}
		}
		if (td_kind_is_gpu_op(ev[i].kind) && nruntime)
			t->anom.orphan_gpu_ops++;
	}
	free(ci);
	if (started)
		pthread_join(helper, NULL);

	/* steps: ProfilerStep#N spans on the host, one per N */
	step_num = td_malloc((t->names.count + 1) * sizeof(int64_t));
	for (i = 0; i <= t->names.count; i++)
		if (!parse_step(td_strtab_str(&t->names, (uint32_t)i), &step_num[i]))
			step_num[i] = -1;
	for (i = 0; i < n; i++) {
		struct td_step *s;
		if (ev[i].kind != TD_K_CPU_OP && ev[i].kind != TD_K_USER_ANNOTATION)
			continue;
		if (step_num[ev[i].name] < 0)
			continue;
		s = td_vec_push(&t->steps);
		s->event = (uint32_t)i;
		s->number = step_num[ev[i].name];
		s->ts = ev[i].ts;
		s->end = td_ev_end(&ev[i]);
	}
	free(step_num);
	sort_steps(t->steps.data, t->steps.len);
	/* the same step can be recorded twice (cpu_op and user_annotation): keep one */
	for (i = 0, j = 0; i < t->steps.len; i++) {
		struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		size_t k;
		int dup = 0;
		for (k = j > 8 ? j - 8 : 0; k < j; k++)
			if (TD_VEC_AT(&t->steps, struct td_step, k).number == s->number) {
				dup = 1;
				break;
			}
		if (!dup)
			TD_VEC_AT(&t->steps, struct td_step, j++) = *s;
	}
	t->steps.len = j;
	free(t->track_slots);
	t->track_slots = NULL;
	t->track_nslots = 0;
	free(t->dev_slots); /* the devices are sorted now: the hash is stale */
	t->dev_slots = NULL;
	t->dev_nslots = 0;
}

