/* SPDX-License-Identifier: MIT */
/* tracedoc check's rules over the model (analysis/check.h). The first six are PyTorch's trace
 * validator's (torch/profiler/_trace_validator.py), read as it reads the trace: which events it
 * pairs, by which key, and what it counts as one violation. */
#include "analysis/check.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "parser/trace.h"

struct idts {
	int64_t id, ts;
};
#define IDTS_LESS(a, b) ((a)->id < (b)->id || ((a)->id == (b)->id && (a)->ts < (b)->ts))
TD_DEFINE_SORT(sort_idts, struct idts, IDTS_LESS)

/* Sorted by id, then ts; the first of each id (its earliest) kept: returns the new count. */
static size_t first_per_id(struct idts *v, size_t n)
{
	size_t i, k = 0;

	sort_idts(v, n);
	for (i = 0; i < n; i++)
		if (k == 0 || v[k - 1].id != v[i].id)
			v[k++] = v[i];
	return k;
}

static const struct idts *find_id(const struct idts *v, size_t n, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].id == id ? &v[lo] : NULL;
}

static struct td_health_rule *add_rule(struct td_health *c, const char *rule, const char *source,
				      enum td_health_level level, const char *what,
				      const char *weakens)
{
	struct td_health_rule *r = &c->rules[c->n++];

	memset(r, 0, sizeof(*r));
	r->rule = rule;
	r->source = source;
	r->level = level;
	r->what = what;
	r->weakens = weakens;
	return r;
}

/* One violation more, an example while there is room (fmt: printf). */
static void flag(struct td_health_rule *r, int64_t ts, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void flag(struct td_health_rule *r, int64_t ts, const char *fmt, ...)
{
	r->violations++;
	if (r->nex < TD_HEALTH_EXAMPLES && fmt) {
		va_list ap;
		r->ex[r->nex].ts = ts;
		va_start(ap, fmt);
		vsnprintf(r->ex[r->nex].text, sizeof(r->ex[r->nex].text), fmt, ap);
		va_end(ap);
		r->nex++;
	}
}

static const char *nm(const struct td_trace *t, uint32_t id)
{
	return td_trace_name(t, id);
}

/* A kernel's External id as the trace wrote it: its own, or (where the model keeps its launch
 * configuration in aux) its launch's, which Kineto copies onto it. -1: none. */
static int64_t kernel_ext(const struct td_trace *t, uint32_t k)
{
	const struct td_event *e = td_trace_ev(t, k);
	uint32_t l;

	if (e->flags & TD_EF_NO_EXT)
		return -1;
	if (!(e->flags & TD_EF_LAUNCH))
		return e->aux;
	l = td_trace_launch(t, k);
	return l == TD_NONE || (td_trace_ev(t, l)->flags & TD_EF_NO_EXT) ? -1
		: (int64_t)td_trace_ev(t, l)->aux;
}

/* check_gpu_kernel_causality: per External id, the earliest kernel must not start before the
 * earliest cudaLaunchKernel (cat cuda_runtime) of that id. */
static void gpu_kernel_causality(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "check_gpu_kernel_causality", "pytorch", TD_HEALTH_RED,
		"a GPU kernel starts at or after its cudaLaunchKernel (paired by External id)",
		"launch latency, queue and stall sizing unreliable: the device clock runs ahead of "
		"the host's");
	uint32_t launch_name = td_strtab_find(&t->names, "cudaLaunchKernel", 16);
	struct idts *l, *k;
	size_t nl = 0, nk = 0, i;
	struct td_dev_events it;
	uint32_t e;
	size_t sj;

	if (t->legacy || !launch_name) /* the validator reads cat cuda_runtime and kernel only */
		return;
	l = td_malloc((t->by_kind[TD_K_RUNTIME] + 1) * sizeof(*l));
	k = td_malloc((t->by_kind[TD_K_KERNEL] + 1) * sizeof(*k));
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		if (ev->kind == TD_K_RUNTIME && ev->name == launch_name &&
		    !(ev->flags & (TD_EF_DRIVER | TD_EF_NO_EXT)) && nl <= t->by_kind[TD_K_RUNTIME])
			l[nl++] = (struct idts){ev->aux, ev->ts};
	}
	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		int64_t x;
		if (td_trace_ev(t, e)->kind != TD_K_KERNEL || nk > t->by_kind[TD_K_KERNEL])
			continue;
		if ((x = kernel_ext(t, e)) >= 0)
			k[nk++] = (struct idts){x, td_trace_ev(t, e)->ts};
	}
	nl = first_per_id(l, nl);
	nk = first_per_id(k, nk);
	for (i = 0; i < nk; i++) {
		const struct idts *m = find_id(l, nl, k[i].id);
		if (!m)
			continue;
		r->checked++;
		if (k[i].ts < m->ts)
			flag(r, k[i].ts, "External id %lld: a kernel starts %.3f us before its "
			     "cudaLaunchKernel", (long long)k[i].id, (double)(m->ts - k[i].ts) / 1e3);
	}
	free(l);
	free(k);
}

static const char *track_desc(const struct td_trace *t, uint32_t track, char *buf, size_t cap)
{
	const struct td_track *tr = td_trace_track(t, track);

	snprintf(buf, cap, "device %d stream %lld", (int)tr->device, (long long)tr->stream);
	return buf;
}

/* check_stream_wait_corr_id_populated: every Stream Wait Event and Event Sync names the
 * cudaEventRecord it waits on (wait_on_cuda_event_record_corr_id >= 0). */
static void wait_corr_populated(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "check_stream_wait_corr_id_populated", "pytorch",
		TD_HEALTH_YELLOW, "each Stream Wait Event / Event Sync names the event record it "
		"waits on (wait_on_cuda_event_record_corr_id)",
		"cross-stream waits unreliable: the replay cannot tell which record a wait "
		"waits on");
	size_t i;
	char b[64];

	for (i = 0; i < t->facts.len; i++) {
		const struct td_fact *f = &TD_VEC_AT(&t->facts, struct td_fact, i);
		if (f->kind != TD_FACT_SYNC_WAIT)
			continue;
		r->checked++;
		if (f->value < 0)
			flag(r, f->ts, "%s on %s has no wait_on_cuda_event_record_corr_id",
			     nm(t, f->name), track_desc(t, f->track, b, sizeof(b)));
	}
}

/* check_stream_sync_overlap: no kernel of the stream still runs when its Stream Sync starts;
 * each (sync, kernel) pair is one violation. */
static void stream_sync_overlap(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "check_stream_sync_overlap", "pytorch",
		TD_HEALTH_YELLOW, "no kernel of a stream still runs when its Stream Sync starts",
		"sync sizing unreliable: a stream sync is recorded while its stream still runs");
	uint32_t sync_name = td_strtab_find(&t->names, "Stream Sync", 11);
	size_t ti, i;
	char b[64];

	if (!sync_name)
		return;
	for (ti = 0; ti < t->tracks.len; ti++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)ti);
		uint32_t first = tr->first, n = tr->count, j, nk = 0, *kix;
		int64_t *kts, *kmax;
		int any = 0;

		if (!tr->is_gpu)
			continue;
		for (j = 0; j < n && !any; j++)
			any = td_trace_ev(t, first + j)->kind == TD_K_SYNC &&
			      td_trace_ev(t, first + j)->name == sync_name;
		if (!any)
			continue;
		/* the stream's kernels by start, with the latest end so far */
		kts = td_malloc(((size_t)n + 1) * sizeof(*kts));
		kmax = td_malloc(((size_t)n + 1) * sizeof(*kmax));
		kix = td_malloc(((size_t)n + 1) * sizeof(*kix));
		for (j = 0; j < n; j++) {
			const struct td_event *e = td_trace_ev(t, first + j);
			if (e->kind != TD_K_KERNEL)
				continue;
			kts[nk] = e->ts;
			kix[nk] = first + j;
			kmax[nk] = nk && kmax[nk - 1] > td_ev_end(e) ? kmax[nk - 1] : td_ev_end(e);
			nk++;
		}
		for (j = 0; j < n; j++) {
			const struct td_event *s = td_trace_ev(t, first + j);
			size_t lo = 0, hi = nk;
			if (s->kind != TD_K_SYNC || s->name != sync_name)
				continue;
			r->checked++;
			while (lo < hi) { /* the kernels starting before the sync: [0, lo) */
				size_t mid = lo + (hi - lo) / 2;
				if (kts[mid] < s->ts)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (i = lo; i > 0 && kmax[i - 1] > s->ts; i--) {
				const struct td_event *e = td_trace_ev(t, kix[i - 1]);
				if (td_ev_end(e) > s->ts)
					flag(r, s->ts, "Stream Sync on %s starts while '%.80s' runs "
					     "(%.3f us more)", track_desc(t, (uint32_t)ti, b, sizeof(b)),
					     nm(t, e->name), (double)(td_ev_end(e) - s->ts) / 1e3);
			}
		}
		free(kix);
		free(kts);
		free(kmax);
	}
}

static int is_record_name(const char *s)
{
	return !strcmp(s, "cudaEventRecord") || !strcmp(s, "cudaEventRecord_ptsz") ||
	       !strcmp(s, "cudaEventRecordWithFlags") || !strcmp(s, "cudaEventRecordWithFlags_ptsz");
}

/* check_stream_wait_corr_id_in_past: a Stream Wait Event's record id names a cudaEventRecord
 * (runtime or driver; by its External id or its correlation) that started at or before it. */
static void wait_corr_in_past(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "check_stream_wait_corr_id_in_past", "pytorch",
		TD_HEALTH_YELLOW, "the event record a Stream Wait Event waits on is in the trace, "
		"at or before the wait",
		"cross-stream waits unreliable: waits on records made later or not traced");
	uint32_t sw = td_strtab_find(&t->names, "Stream Wait Event", 17);
	struct idts *rec = NULL;
	size_t nrec = 0, cap = 0, i, sj;
	uint32_t e;
	uint8_t *is_rec;

	if (!sw)
		return;
	is_rec = td_calloc((size_t)t->names.count + 1, 1); /* per name: 0 unknown, 1 yes, 2 no */
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		if (ev->kind != TD_K_RUNTIME || ev->name > t->names.count)
			continue;
		if (!is_rec[ev->name])
			is_rec[ev->name] = is_record_name(nm(t, ev->name)) ? 1 : 2;
		if (is_rec[ev->name] != 1)
			continue;
		if (nrec + 2 > cap) {
			cap = cap ? 2 * cap : 64;
			rec = td_realloc(rec, cap * sizeof(*rec));
		}
		if (!(ev->flags & TD_EF_NO_EXT))
			rec[nrec++] = (struct idts){ev->aux, ev->ts};
		if (!(ev->flags & TD_EF_NO_CORR))
			rec[nrec++] = (struct idts){ev->corr, ev->ts};
	}
	free(is_rec);
	nrec = nrec ? first_per_id(rec, nrec) : 0;
	for (i = 0; i < t->facts.len; i++) {
		const struct td_fact *f = &TD_VEC_AT(&t->facts, struct td_fact, i);
		const struct idts *m;
		if (f->kind != TD_FACT_SYNC_WAIT || f->name != sw || f->value < 0)
			continue;
		r->checked++;
		m = find_id(rec, nrec, f->value);
		if (!m)
			flag(r, f->ts, "Stream Wait Event waits on record %lld, not in the trace",
			     (long long)f->value);
		else if (m->ts > f->ts)
			flag(r, f->ts, "Stream Wait Event waits on record %lld, made %.3f us later",
			     (long long)f->value, (double)(m->ts - f->ts) / 1e3);
	}
	free(rec);
}

/* check_nccl_metadata: every record_param_comms carries Collective name, dtype, In msg nelems,
 * Out msg nelems and Group size. */
static void nccl_metadata(const struct td_trace *t, struct td_health *c)
{
	static const char *const keys[] = {"Collective name", "dtype", "In msg nelems",
					   "Out msg nelems", "Group size"};
	struct td_health_rule *r = add_rule(c, "check_nccl_metadata", "pytorch", TD_HEALTH_YELLOW,
		"each record_param_comms carries Collective name, dtype, In/Out msg nelems and "
		"Group size", "collective sizing and matching across ranks unreliable: "
		"collectives without their size or group");
	size_t i;

	for (i = 0; i < t->facts.len; i++) {
		const struct td_fact *f = &TD_VEC_AT(&t->facts, struct td_fact, i);
		char miss[120] = "";
		size_t k, o = 0;
		if (f->kind != TD_FACT_COMMS)
			continue;
		r->checked++;
		if (!f->value)
			continue;
		for (k = 0; k < 5; k++)
			if ((f->value >> k) & 1 && o < sizeof(miss))
				o += (size_t)snprintf(miss + o, sizeof(miss) - o, "%s%s", o ? ", " : "",
						      keys[k]);
		flag(r, f->ts, "record_param_comms without %s", miss);
	}
}

/* The op a backward node names, as the validator reads it: the name after its first ':',
 * without surrounding blanks. */
static const char *bwd_op(const char *s, size_t *len)
{
	const char *c = strchr(s, ':'), *end;

	s = c ? c + 1 : s;
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r' || *s == '\f' || *s == '\v')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n' ||
			   end[-1] == '\r' || end[-1] == '\f' || end[-1] == '\v'))
		end--;
	*len = (size_t)(end - s);
	return s;
}

struct seqname {
	int64_t seq, ts;
	uint32_t name, pad;
};
#define SEQ_LESS(a, b) ((a)->seq < (b)->seq || ((a)->seq == (b)->seq && \
	((a)->name < (b)->name || ((a)->name == (b)->name && (a)->ts < (b)->ts))))
TD_DEFINE_SORT(sort_seq, struct seqname, SEQ_LESS)

/* check_backward_seq_id_uniqueness: one backward op (autograd::engine::evaluate_function:)
 * per Sequence number; each number shared by several ops is one violation. */
static void bwd_seq_unique(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "check_backward_seq_id_uniqueness", "pytorch",
		TD_HEALTH_YELLOW, "each backward Sequence number belongs to one backward op",
		"forward-backward pairing unreliable: a backward node's forward op is ambiguous");
	struct seqname *v = td_malloc((t->facts.len + 1) * sizeof(*v));
	size_t n = 0, i, j;

	for (i = 0; i < t->facts.len; i++) {
		const struct td_fact *f = &TD_VEC_AT(&t->facts, struct td_fact, i);
		if (f->kind == TD_FACT_BWD_SEQ)
			v[n++] = (struct seqname){f->value, f->ts, f->name, 0};
	}
	sort_seq(v, n);
	for (i = 0; i < n; i = j) {
		size_t ops = 1, la, lb;
		const char *a = bwd_op(nm(t, v[i].name), &la), *first = a;
		for (j = i + 1; j < n && v[j].seq == v[i].seq; j++) {
			const char *b = bwd_op(nm(t, v[j].name), &lb);
			if (v[j].name != v[j - 1].name && (lb != la || memcmp(a, b, la))) {
				/* names sorted by id: an op already seen may come back; count it once */
				size_t q;
				int seen = 0;
				for (q = i; q < j && !seen; q++) {
					size_t lq;
					const char *oq = bwd_op(nm(t, v[q].name), &lq);
					seen = lq == lb && !memcmp(oq, b, lb);
				}
				ops += !seen;
			}
			a = b;
			la = lb;
		}
		r->checked++;
		if (ops > 1)
			flag(r, v[i].ts, "Sequence number %lld shared by %zu backward ops, e.g. "
			     "'%.60s'", (long long)v[i].seq, ops, first);
	}
	free(v);
}

/* tracedoc's own checks: what the trace lost, cut or left out, and which findings that
 * weakens. */
static void lost_records(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "dropped_records", "tracedoc", TD_HEALTH_RED,
		"the profiler lost no records (the collector's dropped count) and the trace was "
		"read to its end", "every finding: work is missing from the trace; idle may be "
		"work that was not recorded");
	struct td_health_rule *o;
	struct td_dev_events it;
	uint32_t e;

	r->checked = 1 + (t->dropped_records >= 0);
	if (t->dropped_records > 0) {
		flag(r, 0, "the collector dropped %lld records", (long long)t->dropped_records);
		r->violations += (uint64_t)t->dropped_records - 1;
	}
	if (t->partial)
		flag(r, 0, "the input ends early: %.150s", t->partial_msg);
	o = add_rule(c, "cupti_overhead", "tracedoc", TD_HEALTH_YELLOW,
		     "no profiler overhead rows (cat overhead: the profiler's own time)",
		     "host and launch timings include the profiler's own time");
	for (td_host_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		o->checked++;
		if (ev->flags & TD_EF_OVERHEAD) {
			flag(o, ev->ts, "'%.80s' %.3f us", nm(t, ev->name), (double)td_ev_dur(ev) / 1e3);
		}
	}
}

static void window_cut(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "window_cut_short", "tracedoc", TD_HEALTH_YELLOW,
		"every ProfilerStep is whole (its span has a duration and the GPU work it launched "
		"ends in the trace)", "per-step figures: a cut step is left out or shorter");
	size_t i;
	int64_t s0, s1;

	if (!td_trace_span(t, &s0, &s1))
		return;
	for (i = 0; i < t->steps.len; i++) {
		const struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		const struct td_event *ev = td_trace_ev(t, s->event);
		r->checked++;
		if (ev->flags & TD_EF_NO_DUR)
			flag(r, s->ts, "ProfilerStep#%lld has no duration", (long long)s->number);
	}
}

/* GPU ops without their launch, runtime calls without a correlation, ops without an External
 * id: what the attribution cannot tie together. */
static void missing_links(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *g = add_rule(c, "missing_correlation", "tracedoc", TD_HEALTH_YELLOW,
		"every GPU op has its launch call (by correlation id)",
		"op attribution: GPU time of ops without a launch is charged to no host op");
	struct td_health_rule *x = add_rule(c, "missing_external_id", "tracedoc", TD_HEALTH_YELLOW,
		"every CPU op carries its External id",
		"op to kernel attribution: ops without an External id launch nothing visible");
	struct td_dev_events it;
	uint32_t e;
	size_t sj;

	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		if (!td_kind_is_gpu_op(ev->kind))
			continue;
		g->checked++;
		if (td_trace_launch(t, e) == TD_NONE)
			flag(g, ev->ts, "'%.80s' has no launch call", nm(t, ev->name));
	}
	if (t->legacy || t->nsys) /* PyTorch 1.8/1.9 wrote none; nsys exports have no such id */
		return;
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		if (ev->kind != TD_K_CPU_OP)
			continue;
		x->checked++;
		if (ev->flags & TD_EF_NO_EXT)
			flag(x, ev->ts, "'%.80s' has no External id", nm(t, ev->name));
	}
}

/* What the recording left out: stacks, shapes, memory samples, sync records. */
static void missing_options(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r;
	size_t i;
	int stacks = t->by_kind[TD_K_PYTHON] > 0, shapes = 0;
	int gpu = t->by_kind[TD_K_KERNEL] + t->by_kind[TD_K_MEMCPY] + t->by_kind[TD_K_MEMSET] > 0;

	for (i = 0; i < t->op_args.len && !(stacks && shapes); i++) {
		const struct td_op_args *a = &TD_VEC_AT(&t->op_args, struct td_op_args, i);
		stacks |= a->stack != 0;
		shapes |= a->dims != 0;
	}
	r = add_rule(c, "missing_stacks", "tracedoc", TD_HEALTH_GREEN,
		     "Python stacks were recorded (with_stack=True)",
		     "findings name no Python source line");
	r->checked = 1;
	if (!stacks && t->by_kind[TD_K_CPU_OP])
		flag(r, 0, "no python_function events and no Call stack");
	r = add_rule(c, "missing_shapes", "tracedoc", TD_HEALTH_GREEN,
		     "input shapes were recorded (record_shapes=True)",
		     "FLOPs, roofline and shape advice unavailable");
	r->checked = 1;
	if (!shapes && t->by_kind[TD_K_CPU_OP])
		flag(r, 0, "no op has Input Dims");
	r = add_rule(c, "missing_memory", "tracedoc", TD_HEALTH_GREEN,
		     "memory samples were recorded (profile_memory=True)",
		     "memory findings (peaks, growth, fragmentation) unavailable");
	r->checked = 1;
	if (!t->mem.len && gpu)
		flag(r, 0, "no [memory] samples");
	r = add_rule(c, "missing_sync_events", "tracedoc", TD_HEALTH_GREEN,
		     "the GPU side of host waits was recorded (cuda_sync events)",
		     "sync sizing unreliable: no cuda_sync events; waits are sized from the host "
		     "calls alone");
	r->checked = 1;
	if (gpu && !t->by_kind[TD_K_SYNC])
		flag(r, 0, "no cuda_sync events (enable_cuda_sync_events)");
}

/* A trace whose runtime calls are all launches, asynchronous copies and memsets (100 or more),
 * with the correlation ids of those calls far apart (a median step of 3 or more: the calls
 * between them were there, and left out), was filtered: PyTorch writes others in every trace
 * (cudaStreamIsCapturing, cudaEventRecord, device queries, synchronizations). Its event
 * records, stream waits and synchronizations are gone: what queued GPU work and the host
 * waited for cannot be read. A generated trace numbers its calls one by one: not filtered. */
#define FILTERED_MIN_CALLS 100
#define FILTERED_MIN_STEP 3
#define U32_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_u32, uint32_t, U32_LESS)

int td_health_waits_dropped(const struct td_trace *t, uint64_t *ncalls, uint32_t *step)
{
	uint32_t e, *ids;
	size_t n = 0, i, m = 0, sj;
	uint32_t *gaps;

	*ncalls = 0;
	*step = 0;
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		const char *name;
		if (ev->kind != TD_K_RUNTIME)
			continue;
		name = nm(t, ev->name);
		if (!strstr(name, "Launch") && !strstr(name, "MemsetAsync") &&
		    !strstr(name, "MemcpyAsync") && !strstr(name, "MemcpyPeerAsync"))
			return 0;
		n++;
	}
	if (n < FILTERED_MIN_CALLS)
		return 0;
	ids = td_malloc(n * sizeof(*ids));
	TD_FOR_KIND(t, TD_K_RUNTIME, sj, e) {
		const struct td_event *ev = td_trace_ev(t, e);
		if (ev->kind == TD_K_RUNTIME && !(ev->flags & TD_EF_NO_CORR))
			ids[m++] = ev->corr;
	}
	sort_u32(ids, m);
	gaps = td_malloc((m ? m : 1) * sizeof(*gaps));
	for (i = 1, n = 0; i < m; i++)
		if (ids[i] > ids[i - 1])
			gaps[n++] = ids[i] - ids[i - 1];
	sort_u32(gaps, n);
	*ncalls = m;
	*step = n ? gaps[n / 2] : 0;
	free(ids);
	free(gaps);
	return *step >= FILTERED_MIN_STEP;
}

static void runtime_filtered(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "runtime_calls_filtered", "tracedoc",
		TD_HEALTH_YELLOW, "the runtime calls are not only launches and copies (a filter "
		"left event records, stream waits and synchronizations in)",
		"what queued GPU work and the host waited for: gpu-idle's waits are not sized, "
		"communication is sized by its mechanism, not replayed");
	uint64_t n;
	uint32_t step;

	r->checked = 1;
	if (td_health_waits_dropped(t, &n, &step))
		flag(r, 0, "all %llu runtime calls are launches, copies or memsets, their "
		     "correlation ids %u apart (median): no cudaEventRecord, cudaStreamWaitEvent "
		     "or synchronize", (unsigned long long)n, step);
}

/* Clock causality across threads: a GPU op starts after the host call that launched it. */
static void clock_causality(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "clock_causality", "tracedoc", TD_HEALTH_YELLOW,
		"every GPU op starts at or after its launch call on the host thread",
		"queue, launch and stall sizing unreliable: device and host clocks disagree");
	struct td_dev_events it;
	uint32_t e;
	int64_t worst = 0;

	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		uint32_t l;
		if (!td_kind_is_gpu_op(ev->kind) || (l = td_trace_launch(t, e)) == TD_NONE)
			continue;
		r->checked++;
		if (ev->ts < td_trace_ev(t, l)->ts) {
			int64_t d = td_trace_ev(t, l)->ts - ev->ts;
			worst = d > worst ? d : worst;
			flag(r, ev->ts, "'%.80s' starts %.3f us before '%.40s'", nm(t, ev->name),
			     (double)d / 1e3, nm(t, td_trace_ev(t, l)->name));
		}
	}
	/* more than 1 in 100, or by more than a millisecond: the clocks, not a rounding */
	if (r->violations * 100 > r->checked || worst > 1000000)
		r->level = TD_HEALTH_RED;
}

/* The share of device time replayed from graphs (launched by a *GraphLaunch call). */
static void graph_share(const struct td_trace *t, struct td_health *c)
{
	struct td_health_rule *r = add_rule(c, "graph_launch_share", "tracedoc", TD_HEALTH_GREEN,
		"the share of device time behind graph launches",
		"per-op attribution and fix sizing inside graphs: their kernels are charged to "
		"the graph launch, not to the ops that captured them");
	struct td_dev_events it;
	uint32_t e;
	int64_t all = 0, graph = 0;
	uint8_t *is_graph = td_calloc((size_t)t->names.count + 1, 1);

	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		uint32_t l;
		if (!td_kind_is_gpu_op(ev->kind))
			continue;
		r->checked++;
		all += td_ev_dur(ev);
		if ((l = td_trace_launch(t, e)) == TD_NONE)
			continue;
		l = td_trace_ev(t, l)->name;
		if (l > t->names.count)
			continue;
		if (!is_graph[l])
			is_graph[l] = strstr(nm(t, l), "GraphLaunch") ? 1 : 2;
		if (is_graph[l] == 1) {
			graph += td_ev_dur(ev);
			flag(r, ev->ts, NULL);
		}
	}
	free(is_graph);
	r->share = all > 0 ? (double)graph / (double)all : 0.0;
	if (r->violations) {
		r->nex = 1;
		r->ex[0].ts = 0;
		snprintf(r->ex[0].text, sizeof(r->ex[0].text), "%.1f%% of device time in %llu "
			 "ops launched by graph launches", 100.0 * r->share,
			 (unsigned long long)r->violations);
	}
}

const char *td_health_level_name(enum td_health_level l)
{
	return l == TD_HEALTH_RED ? "red" : l == TD_HEALTH_YELLOW ? "yellow" : "green";
}

int td_health_run(const struct td_trace *t, struct td_health *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	gpu_kernel_causality(t, c);
	wait_corr_populated(t, c);
	stream_sync_overlap(t, c);
	wait_corr_in_past(t, c);
	nccl_metadata(t, c);
	bwd_seq_unique(t, c);
	lost_records(t, c);
	window_cut(t, c);
	missing_links(t, c);
	missing_options(t, c);
	runtime_filtered(t, c);
	clock_causality(t, c);
	graph_share(t, c);
	for (i = 0; i < c->n; i++) {
		const struct td_health_rule *r = &c->rules[i];
		if (!r->violations)
			continue;
		c->n_violated++;
		if (r->level > c->health)
			c->health = r->level;
	}
	return 0;
}

void td_health_line(const struct td_health *c, char *buf, size_t cap)
{
	size_t i, o, shown = 0, more = 0, notes = 0;

	o = (size_t)snprintf(buf, cap, "%s: ", td_health_level_name(c->health));
	/* the rules that color the health, worst first, two named; the notes counted */
	for (int lv = TD_HEALTH_RED; lv >= TD_HEALTH_GREEN; lv--)
		for (i = 0; i < c->n; i++) {
			const struct td_health_rule *r = &c->rules[i];
			if (!r->violations || (int)r->level != lv)
				continue;
			if (lv == TD_HEALTH_GREEN)
				notes++;
			else if (shown < 2 && o < cap)
				o += (size_t)snprintf(buf + o, cap - o, "%s%s (%llu)", shown++ ? ", " : "",
						      r->rule, (unsigned long long)r->violations);
			else
				more++;
		}
	if (!shown && o < cap)
		o += (size_t)snprintf(buf + o, cap - o, "no rule broken");
	if (more && o < cap)
		o += (size_t)snprintf(buf + o, cap - o, " and %zu more", more);
	if (notes && o < cap)
		snprintf(buf + o, cap - o, "; %zu note%s (tracedoc check)", notes, notes == 1 ? "" : "s");
}
