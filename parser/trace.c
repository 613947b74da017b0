/* SPDX-License-Identifier: MIT */
#include "parser/trace.h"
#include "parser/trace_chunk.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"


const char *td_kind_name(enum td_kind k)
{
	static const char *const names[TD_K_COUNT] = {
		[TD_K_CPU_OP] = "cpu_op",
		[TD_K_USER_ANNOTATION] = "user_annotation",
		[TD_K_PYTHON] = "python_function",
		[TD_K_RUNTIME] = "runtime",
		[TD_K_KERNEL] = "kernel",
		[TD_K_MEMCPY] = "memcpy",
		[TD_K_MEMSET] = "memset",
		[TD_K_SYNC] = "sync",
		[TD_K_GPU_ANNOTATION] = "gpu_user_annotation",
		[TD_K_OTHER_SPAN] = "other_span",
		[TD_K_FLOW_AC2G] = "flow_ac2g",
		[TD_K_FLOW_FWDBWD] = "flow_fwdbwd",
		[TD_K_FLOW_OTHER] = "flow_other",
		[TD_K_MEMORY] = "memory",
		[TD_K_INSTANT] = "instant",
		[TD_K_COUNTER] = "counter",
		[TD_K_METADATA] = "metadata",
		[TD_K_UNKNOWN] = "unknown",
	};
	return (unsigned)k < TD_K_COUNT ? names[k] : "?";
}

void td_trace_init(struct td_trace *t)
{
	memset(t, 0, sizeof(*t));
	td_strtab_init(&t->names);
	td_vec_init(&t->events, sizeof(struct td_event));
	td_vec_init(&t->tracks, sizeof(struct td_track));
	td_vec_init(&t->devices, sizeof(struct td_device));
	td_vec_init(&t->xfer_bytes, sizeof(uint64_t));
	td_vec_init(&t->steps, sizeof(struct td_step));
	td_vec_init(&t->colls, sizeof(struct td_coll));
	td_vec_init(&t->launch_names, sizeof(struct td_launch_name));
	td_vec_init(&t->kernel_marks, sizeof(struct td_kernel_mark));
	td_vec_init(&t->launches, sizeof(struct td_launch));
	td_vec_init(&t->op_args, sizeof(struct td_op_args));
	t->events_close = -1;
	td_vec_init(&t->mem, sizeof(struct td_mem_sample));
	td_vec_init(&t->mem_threads, sizeof(struct td_mem_thread));
	td_vec_init(&t->facts, sizeof(struct td_fact));
	t->schema_version = -1;
	t->rank = t->world_size = -1;
	t->base_time_ns = -1;
	t->dropped_records = -1;
	t->track_nslots = 64;
	t->track_slots = td_calloc(t->track_nslots, sizeof(uint32_t));
	t->last_track = TD_NONE;
	t->last_device = TD_NONE;
}

void td_trace_free(struct td_trace *t)
{
	size_t i;

	for (i = 0; i < t->tracks.len; i++) {
		struct td_chunk *c = td_trace_track(t, (uint32_t)i)->chunks;
		while (c) {
			struct td_chunk *next = c->next;
			free(c);
			c = next;
		}
	}
	td_strtab_free(&t->names);
	td_vec_free(&t->events);
	td_vec_free(&t->tracks);
	td_vec_free(&t->devices);
	td_vec_free(&t->xfer_bytes);
	td_vec_free(&t->steps);
	td_vec_free(&t->colls);
	td_vec_free(&t->launch_names);
	td_vec_free(&t->kernel_marks);
	td_vec_free(&t->launches);
	td_vec_free(&t->op_args);
	free(t->track_firsts);
	free(t->gpu_tracks);
	free(t->scan);
	td_vec_free(&t->mem);
	td_vec_free(&t->mem_threads);
	td_vec_free(&t->facts);
	free(t->link);
	free(t->track_slots);
	free(t->dev_slots);
	memset(t, 0, sizeof(*t));
}

/* --- tracks: a small hash keyed by (side, a, b) ------------------------------------------ */

static uint32_t track_hash(int gpu, int64_t a, int64_t b, int flags)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ull ^ ((uint64_t)b + (uint64_t)flags) *
		     0xc2b2ae3d27d4eb4full ^ (uint64_t)gpu;
	h ^= h >> 31;
	return (uint32_t)(h * 0x94d049bb133111ebull >> 32);
}

static int track_eq(const struct td_track *tr, int gpu, int64_t a, int64_t b, int flags)
{
	if (tr->is_gpu != gpu)
		return 0;
	if (gpu)
		return tr->device == a && tr->stream == b;
	return tr->pid == a && tr->tid == b && (tr->pid_is_str | tr->tid_is_str << 1) == flags;
}

static void track_rehash(struct td_trace *t)
{
	uint32_t n = t->track_nslots * 2, i;

	free(t->track_slots);
	t->track_slots = td_calloc(n, sizeof(uint32_t));
	t->track_nslots = n;
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, i);
		uint32_t h = tr->is_gpu ? track_hash(1, tr->device, tr->stream, 0)
			: track_hash(0, tr->pid, tr->tid, tr->pid_is_str | tr->tid_is_str << 1);
		uint32_t j = h & (n - 1);
		while (t->track_slots[j])
			j = (j + 1) & (n - 1);
		t->track_slots[j] = i + 1;
	}
}

static uint32_t track_get(struct td_trace *t, int gpu, int64_t a, int64_t b, int flags)
{
	uint32_t h, j, id;
	struct td_track *tr;

	if (t->last_track != TD_NONE && track_eq(td_trace_track(t, t->last_track), gpu, a, b, flags))
		return t->last_track;
	h = track_hash(gpu, a, b, flags);
	j = h & (t->track_nslots - 1);
	while ((id = t->track_slots[j]) != 0) {
		if (track_eq(td_trace_track(t, id - 1), gpu, a, b, flags))
			return t->last_track = id - 1;
		j = (j + 1) & (t->track_nslots - 1);
	}
	tr = td_vec_push(&t->tracks);
	tr->is_gpu = gpu;
	if (gpu) {
		tr->device = (int32_t)a;
		tr->stream = b;
	} else {
		tr->pid = a;
		tr->tid = b;
		tr->pid_is_str = flags & 1;
		tr->tid_is_str = (flags >> 1) & 1;
	}
	tr->last_ts = INT64_MIN;
	t->track_slots[j] = (uint32_t)t->tracks.len;
	if (t->tracks.len * 2 > t->track_nslots)
		track_rehash(t);
	return t->last_track = (uint32_t)t->tracks.len - 1;
}

/* The existing CPU track of (pid, tid), or TD_NONE: never adds one. */
static uint32_t track_find(const struct td_trace *t, int64_t a, int64_t b, int flags);

uint32_t td_trace_find_cpu_track(const struct td_trace *t, int64_t pid, int pid_is_str,
				 int64_t tid, int tid_is_str)
{
	return track_find(t, pid, tid, (pid_is_str ? 1 : 0) | (tid_is_str ? 2 : 0));
}

static uint32_t track_find(const struct td_trace *t, int64_t a, int64_t b, int flags)
{
	uint32_t j, id;

	if (!t->track_nslots)
		return TD_NONE;
	j = track_hash(0, a, b, flags) & (t->track_nslots - 1);
	while ((id = t->track_slots[j]) != 0) {
		if (track_eq(td_trace_track(t, id - 1), 0, a, b, flags))
			return id - 1;
		j = (j + 1) & (t->track_nslots - 1);
	}
	return TD_NONE;
}

uint32_t td_trace_cpu_track(struct td_trace *t, int64_t pid, int pid_is_str, int64_t tid,
			    int tid_is_str)
{
	return track_get(t, 0, pid, tid, (pid_is_str ? 1 : 0) | (tid_is_str ? 2 : 0));
}

uint32_t td_trace_gpu_track(struct td_trace *t, int32_t device, int64_t stream)
{
	uint32_t id = track_get(t, 1, device, stream, 0);
	td_trace_device(t, device);
	return id;
}

struct td_device *td_trace_device(struct td_trace *t, int32_t id)
{
	struct td_device *d;
	size_t i;

	if (t->last_device != TD_NONE) {
		d = &TD_VEC_AT(&t->devices, struct td_device, t->last_device);
		if (d->id == id)
			return d;
	}
	/* by a hash of the id: a trace of 100k devices is not quadratic */
	if ((t->devices.len + 1) * 2 > t->dev_nslots) {
		uint32_t n = t->dev_nslots ? t->dev_nslots * 2 : 64, k;
		free(t->dev_slots);
		t->dev_slots = td_calloc(n, sizeof(uint32_t));
		t->dev_nslots = n;
		for (k = 0; k < t->devices.len; k++) {
			uint32_t j = ((uint32_t)TD_VEC_AT(&t->devices, struct td_device, k).id * 2654435761u) &
				     (n - 1);
			while (t->dev_slots[j])
				j = (j + 1) & (n - 1);
			t->dev_slots[j] = k + 1;
		}
	}
	for (i = ((uint32_t)id * 2654435761u) & (t->dev_nslots - 1); t->dev_slots[i];
	     i = (i + 1) & (t->dev_nslots - 1)) {
		d = &TD_VEC_AT(&t->devices, struct td_device, t->dev_slots[i] - 1);
		if (d->id == id) {
			t->last_device = t->dev_slots[i] - 1;
			return d;
		}
	}
	t->dev_slots[i] = (uint32_t)t->devices.len + 1;
	d = td_vec_push(&t->devices);
	d->id = id;
	d->peak_allocated = -1;
	t->last_device = (uint32_t)t->devices.len - 1;
	return d;
}

/* Events arrive per track in chunks, so a track's events keep their arrival order, which is
 * nearly time order. Finalize concatenates the chunks track by track into one array (freeing
 * each chunk as it is copied, so memory stays near one copy) and sorts each track, cheaply when
 * it was already nearly sorted. */

struct td_event *td_trace_push(struct td_trace *t, uint32_t track)
{
	struct td_track *tr = td_trace_track(t, track);
	struct td_event *e;

	if (!tr->tail || tr->tail->len == tr->tail->cap) {
		/* small first: a trace of a million threads or streams holds a few events on each */
		uint32_t cap = tr->tail ? (tr->tail->cap * 2 > CHUNK_EVENTS ? CHUNK_EVENTS
								      : tr->tail->cap * 2) : CHUNK_FIRST;
		struct td_chunk *c = td_malloc(sizeof(*c) + cap * sizeof(struct td_event));
		c->next = NULL;
		c->len = 0;
		c->cap = cap;
		if (tr->tail)
			tr->tail->next = c;
		else
			tr->chunks = c;
		tr->tail = c;
	}
	e = &tr->tail->ev[tr->tail->len++];
	memset(e, 0, sizeof(*e));
	tr->count++;
	t->n_events++;
	return e;
}

int td_trace_span(const struct td_trace *t, int64_t *start, int64_t *end)
{
	size_t i;
	int any = 0;

	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		if (!any || e->ts < *start)
			*start = e->ts;
		if (!any || td_ev_end(e) > *end)
			*end = td_ev_end(e);
		any = 1;
	}
	return any;
}

#define IV_LESS(a, b) ((a)->start < (b)->start || ((a)->start == (b)->start && (a)->end < (b)->end))
TD_DEFINE_SORT(sort_iv, struct td_interval, IV_LESS)

size_t td_iv_merge(struct td_interval *v, size_t n)
{
	size_t i, m = 0;

	sort_iv(v, n);
	for (i = 0; i < n; i++) {
		if (m && v[i].start <= v[m - 1].end) {
			if (v[i].end > v[m - 1].end)
				v[m - 1].end = v[i].end;
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

size_t td_trace_busy(const struct td_trace *t, int32_t device, int64_t from, int64_t to,
		     struct td_interval **out)
{
	return td_trace_busy_skip(t, device, from, to, NULL, out);
}

size_t td_trace_busy_skip(const struct td_trace *t, int32_t device, int64_t from, int64_t to,
			  const uint8_t *skip_name, struct td_interval **out)
{
	struct td_dev_events it;
	size_t cap, n = 0;
	struct td_interval *iv;
	uint32_t k;

	cap = td_dev_events_count(t, device);
	iv = td_malloc((cap ? cap : 1) * sizeof(*iv));
	for (td_dev_events_begin(&it, t, device); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		int64_t s = e->ts, en = td_ev_end(e);
		if (!td_kind_is_gpu_op(e->kind) || (skip_name && skip_name[e->name]))
			continue;
		if (s < from)
			s = from;
		if (en > to)
			en = to;
		if (en <= s)
			continue;
		iv[n].start = s;
		iv[n].end = en;
		n++;
	}
	n = td_iv_merge(iv, n);
	/* merged, the intervals are often far fewer than the ops: give the rest back (callers
	 * hold them through the analysis) */
	*out = n < cap / 2 ? td_realloc(iv, (n ? n : 1) * sizeof(*iv)) : iv;
	return n;
}

int64_t td_intervals_total(const struct td_interval *iv, size_t n)
{
	int64_t sum = 0;
	size_t i;

	for (i = 0; i < n; i++)
		sum += iv[i].end - iv[i].start;
	return sum;
}

#define I64_LESS(a, b) (*(a) < *(b))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

TD_DEFINE_SELECT(select_i64, int64_t, sort_i64)
#define I64_VAL(p) (*(p))
TD_DEFINE_MEDIAN(median_i64, int64_t, select_i64, I64_VAL)

int64_t td_median_i64(int64_t *v, size_t n)
{
	return n ? median_i64(v, n) : 0;
}

int64_t td_trace_median_step(const struct td_trace *t)
{
	size_t n = t->steps.len, i;
	int64_t *d, med;

	if (!n)
		return 0;
	d = td_malloc(n * sizeof(*d));
	for (i = 0; i < n; i++) {
		const struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		d[i] = s->end - s->ts;
	}
	med = td_median_i64(d, n);
	free(d);
	return med;
}

const struct td_coll *td_trace_coll(const struct td_trace *t, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(t, ev);
	const struct td_coll *v = t->colls.data, *c;
	int32_t dev;
	size_t lo;

	if (!(e->flags & TD_EF_COLL))
		return NULL;
	dev = td_trace_track(t, td_trace_track_of(t, ev))->device;
	TD_LOWER_BOUND(lo, t->colls.len, v[mid].device < dev ||
		       (v[mid].device == dev && v[mid].corr < e->corr));
	c = lo < t->colls.len ? &v[lo] : NULL;
	return c && c->device == dev && c->corr == e->corr ? c : NULL;
}

const struct td_launch *td_trace_launch_of(const struct td_trace *t, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(t, ev);

	return (e->flags & TD_EF_LAUNCH) && e->aux && e->aux <= t->launches.len
	       ? &TD_VEC_AT(&t->launches, struct td_launch, e->aux - 1) : NULL;
}

const struct td_device *td_trace_find_device(const struct td_trace *t, int32_t id)
{
	size_t lo = 0, hi = t->devices.len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (TD_VEC_AT(&t->devices, struct td_device, mid).id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->devices.len && TD_VEC_AT(&t->devices, struct td_device, lo).id == id
		? &TD_VEC_AT(&t->devices, struct td_device, lo) : NULL;
}

size_t td_dev_events_count(const struct td_trace *t, int32_t device)
{
	size_t ndtr, i, n = 0;
	const uint32_t *dtr = td_trace_device_tracks(t, device, &ndtr);

	for (i = 0; i < ndtr; i++)
		n += td_trace_track(t, dtr[i])->count;
	return n;
}

const uint32_t *td_trace_device_tracks(const struct td_trace *t, int32_t dev, size_t *n)
{
	size_t lo = 0, hi = t->ngpu_tracks, first;

	while (lo < hi) { /* the first of dev */
		size_t mid = lo + (hi - lo) / 2;
		if (td_trace_track(t, t->gpu_tracks[mid])->device < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	first = lo;
	hi = t->ngpu_tracks;
	while (lo < hi) { /* past the last */
		size_t mid = lo + (hi - lo) / 2;
		if (td_trace_track(t, t->gpu_tracks[mid])->device <= dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	*n = lo - first;
	return t->gpu_tracks ? t->gpu_tracks + first : NULL;
}

const struct td_op_args *td_trace_op_args(const struct td_trace *t, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(t, ev);

	if ((e->kind != TD_K_CPU_OP && e->kind != TD_K_USER_ANNOTATION) || !e->args ||
	    e->args > t->op_args.len)
		return NULL;
	return &TD_VEC_AT(&t->op_args, struct td_op_args, e->args - 1);
}

int td_dtype_bytes(const char *d)
{
	static const struct {
		const char *name;
		int bytes;
	} sizes[] = {
		{"Float", 4}, {"float", 4}, {"Float32", 4}, {"BFloat16", 2}, {"Half", 2}, {"Float16", 2},
		{"Double", 8}, {"Long", 8}, {"Int", 4}, {"Short", 2}, {"Char", 1}, {"Byte", 1},
		{"Bool", 1}, {"Float8_e4m3fn", 1}, {"Float8_e5m2", 1}, {"ComplexFloat", 8},
	};
	size_t i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (!strcmp(d, sizes[i].name))
			return sizes[i].bytes;
	return 0;
}
