/* SPDX-License-Identifier: MIT */
/* The model builder: raw events (numbers converted, strings copied) into the td_trace model.
 * Interns names, finds tracks and devices, stores the compact events and counts odd data. */
#include "parser/builder.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/utf8.h"
#include "parser/trace.h"

#define SLICE_EQ(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), lit, sizeof(lit) - 1) == 0)

struct meta_name {
	int64_t pid, tid;
	uint8_t pid_str, tid_str;
	uint32_t name;
};

/* interned ids of one event */
struct ids {
	uint32_t name;
	int64_t pid, tid;
};

void td_builder_init(struct td_builder *b, struct td_trace *t)
{
	b->t = t;
	td_vec_init(&b->thread_names, sizeof(struct meta_name));
	b->args_slots = NULL;
	b->args_nslots = 0;
	b->launch_slots = NULL;
	b->launch_nslots = 0;
	b->mthread_slots = NULL;
	b->mthread_nslots = 0;
}

void td_builder_free(struct td_builder *b)
{
	td_vec_free(&b->thread_names);
	free(b->args_slots);
	free(b->launch_slots);
	free(b->mthread_slots);
}

/* A hash of the first `words` 32-bit words of x. */
static size_t words_hash(const uint32_t *x, size_t words)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	for (i = 0; i < words; i++)
		h = (h ^ x[i]) * 0xff51afd7ed558ccdull;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (size_t)(h >> 17);
}

/* 1 + the index in v of the element whose first `words` 32-bit words are x's, added when new,
 * over an open-addressing table (*slots, *nslots: 1 + index, 0 empty, at most half full).
 * Ops repeat a few argument lists and kernels a few launch configurations: one copy each (a
 * table per op would be 32 bytes on every CPU op of a record_shapes trace). */
static uint32_t uniq_id(struct td_vec *v, uint32_t **slots, size_t *nslots, const void *x,
			size_t words)
{
	size_t i, mask;

	if ((v->len + 1) * 2 > *nslots) {
		size_t n = *nslots ? *nslots * 2 : 1024, k;
		free(*slots);
		*slots = td_calloc(n, sizeof(uint32_t));
		*nslots = n;
		for (k = 0; k < v->len; k++) {
			for (i = words_hash((const uint32_t *)((const char *)v->data + k * v->elem),
					    words) & (n - 1);
			     (*slots)[i]; i = (i + 1) & (n - 1))
				;
			(*slots)[i] = (uint32_t)k + 1;
		}
	}
	mask = *nslots - 1;
	for (i = words_hash(x, words) & mask; (*slots)[i]; i = (i + 1) & mask)
		if (!memcmp((const char *)v->data + ((*slots)[i] - 1) * v->elem, x, words * 4))
			return (*slots)[i];
	memcpy(td_vec_push(v), x, v->elem);
	(*slots)[i] = (uint32_t)v->len;
	return (*slots)[i];
}

static uint32_t args_id(struct td_builder *b, const struct td_op_args *a)
{
	return uniq_id(&b->t->op_args, &b->args_slots, &b->args_nslots, a, sizeof(*a) / 4);
}

uint32_t td_builder_intern(struct td_builder *b, const char *s, uint32_t len)
{
	struct td_trace *t = b->t;
	uint32_t before = t->names.count;
	uint32_t id = td_strtab_intern(&t->names, s, len);

	if (t->names.count != before && !td_utf8_valid(s, len))
		t->anom.invalid_utf8++;
	return id;
}

void td_builder_finish(struct td_builder *b)
{
	struct td_trace *t = b->t;
	size_t i;

	for (i = 0; i < b->thread_names.len; i++) { /* each by the track table: linear in names */
		struct meta_name *m = &TD_VEC_AT(&b->thread_names, struct meta_name, i);
		uint32_t k = td_trace_find_cpu_track(t, m->pid, m->pid_str, m->tid, m->tid_str);
		if (k != TD_NONE)
			td_trace_track(t, k)->name = m->name;
	}
}

/* --- events into the model --------------------------------------------------------------- */

static int64_t stream_from_tid(const struct td_raw *e, const char *strs)
{
	if (!e->has_tid)
		return -1;
	if (!e->tid_str)
		return e->tid;
	{
		/* legacy "stream 7" */
		const char *s = strs + e->tid_text.off;
		uint32_t i;
		int64_t v = 0;
		int any = 0;
		for (i = 0; i < e->tid_text.len; i++) {
			if (s[i] >= '0' && s[i] <= '9') {
				if (v < INT64_MAX / 10 - 10)
					v = v * 10 + (s[i] - '0');
				any = 1;
			} else if (any) {
				break;
			}
		}
		return any ? v : -1;
	}
}

static enum td_kind span_kind(struct td_builder *b, const struct td_raw *e, const char *strs)
{
	switch (e->cat) {
	case CAT_CPU_OP: return TD_K_CPU_OP;
	case CAT_USER_ANN: return TD_K_USER_ANNOTATION;
	case CAT_GPU_ANN: return TD_K_GPU_ANNOTATION;
	case CAT_PYTHON: return TD_K_PYTHON;
	case CAT_RUNTIME:
	case CAT_DRIVER: return TD_K_RUNTIME;
	case CAT_KERNEL: return TD_K_KERNEL;
	case CAT_MEMCPY: return TD_K_MEMCPY;
	case CAT_MEMSET: return TD_K_MEMSET;
	case CAT_SYNC: return TD_K_SYNC;
	case CAT_TRACE:
	case CAT_OVERHEAD: return TD_K_OTHER_SPAN;
	case CAT_NONE:
		/* torch.autograd.profiler's chrome export: no cat, pid names the side */
		if (e->has_pid && e->pid_str) {
			const char *s = strs + e->pid_text.off;
			if (SLICE_EQ(s, e->pid_text.len, "CPU functions"))
				return TD_K_CPU_OP;
			if (SLICE_EQ(s, e->pid_text.len, "CUDA functions"))
				return TD_K_KERNEL;
		}
		b->t->anom.unknown_cat++;
		return TD_K_OTHER_SPAN;
	default:
		b->t->anom.unknown_cat++;
		return TD_K_OTHER_SPAN;
	}
}

static void push_fact(struct td_trace *t, enum td_fact_kind kind, int64_t ts, int64_t value,
		      uint32_t name, uint32_t track)
{
	struct td_fact *f = td_vec_push(&t->facts);

	memset(f, 0, sizeof(*f));
	f->ts = ts;
	f->value = value;
	f->name = name;
	f->track = track;
	f->kind = kind;
}

/* What tracedoc check reads of a span (struct td_fact): read as PyTorch's trace validator
 * reads it (a "Sequence number" of 0 falls back to "seq_num"). */
static void add_facts(struct td_trace *t, const struct td_raw *e, const char *strs,
		      uint32_t name, uint32_t track, enum td_kind k)
{
	const char *nm = strs + e->name.off;
	uint32_t n = e->name.set ? e->name.len : 0;

	if (k == TD_K_SYNC && (SLICE_EQ(nm, n, "Stream Wait Event") || SLICE_EQ(nm, n, "Event Sync")))
		push_fact(t, TD_FACT_SYNC_WAIT, e->ts, e->chk & TD_RAW_CHK_WAIT_REC && e->wait_rec >= 0
			  ? e->wait_rec : -1, name, track);
	else if (SLICE_EQ(nm, n, "record_param_comms"))
		push_fact(t, TD_FACT_COMMS, e->ts, ~e->chk & TD_RAW_CHK_COMMS, name, track);
	if (e->chk & (TD_RAW_CHK_SEQ | TD_RAW_CHK_SEQ_NUM)) {
		static const char bwd[] = "autograd::engine::evaluate_function:";
		int seq = e->chk & TD_RAW_CHK_SEQ && e->seq != 0;
		if (!seq && !(e->chk & TD_RAW_CHK_SEQ_NUM))
			return;
		for (uint32_t i = 0; i + sizeof(bwd) - 1 <= n; i++)
			if (nm[i] == 'a' && !memcmp(nm + i, bwd, sizeof(bwd) - 1)) {
				push_fact(t, TD_FACT_BWD_SEQ, e->ts, seq ? e->seq : e->seq_num, name,
					  track);
				break;
			}
	}
}

static void add_span(struct td_builder *b, const struct td_raw *e, const struct ids *id,
		     const char *strs, enum td_kind k)
{
	struct td_trace *t = b->t;
	struct td_event *ev;
	struct td_track *tr;
	uint32_t track;
	int64_t dur = e->dur;

	if (!e->has_ts || e->bad_ts) {
		t->anom.missing_ts++;
		return;
	}
	if (!id->name)
		t->anom.missing_name++;
	if (td_kind_on_gpu_track(k)) {
		int64_t dev = e->has_device ? e->device : (e->has_pid && !e->pid_str ? e->pid : 0);
		int64_t stream = e->has_stream ? e->stream : stream_from_tid(e, strs);
		if (stream == 4294967295ll) /* CUPTI's "no stream" */
			stream = -1;
		track = td_trace_gpu_track(t, (int32_t)dev, stream);
	} else {
		track = td_trace_cpu_track(t, id->pid, e->pid_str, id->tid, e->tid_str);
	}
	tr = td_trace_track(t, track);
	if (e->ts < tr->last_ts)
		t->anom.unsorted_ts++;
	tr->last_ts = e->ts;

	ev = td_trace_push(t, track);
	ev->ts = e->ts;
	if (!e->has_dur) {
		t->anom.missing_dur++;
		ev->flags |= TD_EF_NO_DUR;
		dur = 0;
	} else if (dur < 0) {
		t->anom.negative_dur++;
		dur = 0;
	} else if (dur > TD_DUR_MAX) {
		t->anom.dur_overflow++;
		dur = TD_DUR_MAX;
	}
	if (e->ts > 0 && dur > INT64_MAX - e->ts) { /* its end would not fit: saturate, count */
		t->anom.dur_overflow++;
		dur = INT64_MAX - e->ts;
	}
	ev->dur_lo = (uint32_t)dur;
	ev->dur_hi = (uint16_t)(dur >> 32);
	ev->kind = (uint8_t)k;
	ev->name = id->name;
	if (k == TD_K_CPU_OP || k == TD_K_USER_ANNOTATION) { /* their args, in place of a corr */
		if (e->dims.set || e->types.set || e->call_stack.set || e->has_kflop ||
		    e->has_kbytes) {
			struct td_op_args a;
			a.dims = e->dims.set ? td_builder_intern(b, strs + e->dims.off, e->dims.len) : 0;
			a.types = e->types.set ? td_builder_intern(b, strs + e->types.off,
								   e->types.len) : 0;
			a.stack = e->call_stack.set ? td_builder_intern(b, strs + e->call_stack.off,
									e->call_stack.len) : 0;
			/* scalars vary op by op: kept only where FLOPs need them (analysis/flops.h,
			 * analysis/roofline.h): a convolution's stride, padding, dilation and
			 * output mask (aten::conv2d, aten::convolution_backward, aten::_convolution) */
			a.concrete = e->concrete.set && e->name.len >= 10 &&
				(!memcmp(strs + e->name.off, "aten::conv", 10) ||
				 (e->name.len >= 12 && !memcmp(strs + e->name.off, "aten::_conv", 11)))
				? td_builder_intern(b, strs + e->concrete.off, e->concrete.len) : 0;
			a.kflop = e->has_kflop ? e->kflop : -1;
			a.kbytes = e->has_kbytes ? e->kbytes : -1;
			ev->args = args_id(b, &a);
		}
	} else {
		ev->corr = (uint32_t)e->corr;
	}
	if (!e->has_corr)
		ev->flags |= TD_EF_NO_CORR;
	if (e->cat == CAT_DRIVER)
		ev->flags |= TD_EF_DRIVER;
	if (e->cat == CAT_OVERHEAD)
		ev->flags |= TD_EF_OVERHEAD;
	if (k == TD_K_MEMCPY || k == TD_K_MEMSET) {
		uint64_t *nb = td_vec_push(&t->xfer_bytes);
		*nb = e->has_bytes && e->bytes > 0 ? (uint64_t)e->bytes : 0;
		ev->aux = (uint32_t)(t->xfer_bytes.len - 1);
	} else if (k == TD_K_SYNC) {
		ev->aux = e->has_wait_stream && e->wait_stream >= 0 && e->wait_stream < UINT32_MAX
			? (uint32_t)e->wait_stream + 1 : 0;
	} else {
		ev->aux = (uint32_t)e->ext;
		if (!e->has_ext)
			ev->flags |= TD_EF_NO_EXT;
	}
	if (k == TD_K_KERNEL && e->arg_name.set && e->arg_name.len && e->has_corr) {
		struct td_kernel_mark *km = td_vec_push(&t->kernel_marks);
		km->ts = e->ts;
		km->track = track;
		km->corr = (uint32_t)e->corr;
		km->name = td_builder_intern(b, strs + e->arg_name.off, e->arg_name.len);
		km->pad = 0;
	}
	if (k == TD_K_RUNTIME && e->full && e->kernel.set && e->kernel.len && e->has_corr) {
		struct td_launch_name *ln = td_vec_push(&t->launch_names);
		ln->corr = (uint32_t)e->corr;
		ln->name = td_builder_intern(b, strs + e->kernel.off, e->kernel.len);
	}
	if (k == TD_K_KERNEL && e->has_coll && e->has_corr) {
		struct td_coll *c = td_vec_push(&t->colls);
		c->corr = (uint32_t)e->corr;
		c->device = td_trace_track(t, track)->device;
		c->name = e->coll_name.set ? td_builder_intern(b, strs + e->coll_name.off,
							      e->coll_name.len) : 0;
		c->pg = e->pg_name.set ? td_builder_intern(b, strs + e->pg_name.off, e->pg_name.len) : 0;
		c->pg_desc = e->pg_desc.set ? td_builder_intern(b, strs + e->pg_desc.off,
							       e->pg_desc.len) : 0;
		c->dtype = e->dtype.set ? td_builder_intern(b, strs + e->dtype.off, e->dtype.len) : 0;
		c->group_size = e->group_size > 0 && e->group_size < INT32_MAX ? (int32_t)e->group_size
									      : -1;
		c->in_nelems = e->in_nelems > 0 ? e->in_nelems : -1;
		c->out_nelems = e->out_nelems > 0 ? e->out_nelems : -1;
		ev->flags |= TD_EF_COLL;
	}
	if (k == TD_K_KERNEL && e->has_launch) {
		struct td_launch l;
		uint32_t lid;
#define CLAMP32(v) ((v) >= 0 && (v) < INT32_MAX ? (int32_t)(v) : -1)
		l.grid = e->grid.set ? td_builder_intern(b, strs + e->grid.off, e->grid.len) : 0;
		l.block = e->block.set ? td_builder_intern(b, strs + e->block.off, e->block.len) : 0;
		l.regs = e->launch_has & 1 ? CLAMP32(e->regs) : -1;
		l.smem = e->launch_has & 2 ? CLAMP32(e->smem) : -1;
		l.occ = e->launch_has & 4 ? CLAMP32(e->occ) : -1;
		l.bpsm = e->launch_has & 8 ? CLAMP32(e->bpsm) : -1;
		l.n = 0;
#undef CLAMP32
		lid = uniq_id(&t->launches, &b->launch_slots, &b->launch_nslots, &l,
			     offsetof(struct td_launch, n) / 4);
		TD_VEC_AT(&t->launches, struct td_launch, lid - 1).n++;
		ev->aux = lid;
		ev->flags |= TD_EF_LAUNCH;
	}
	add_facts(t, e, strs, id->name, track, k);
	if (k == TD_K_RUNTIME && !t->rocm) {
		const char *nm = td_strtab_str(&t->names, id->name);
		if (nm[0] == 'h' && nm[1] == 'i' && nm[2] == 'p')
			t->rocm = 1;
	}
	if (td_kind_is_gpu_op(k)) {
		struct td_device *d = td_trace_device(t, td_trace_track(t, track)->device);
		if (d->ops == 0 || e->ts < d->first_ts)
			d->first_ts = e->ts;
		if (d->ops == 0 || e->ts + dur > d->last_end)
			d->last_end = e->ts + dur;
		d->ops++;
	}
}

void td_builder_add(struct td_builder *b, const struct td_raw *e, const char *strs)
{
	struct td_trace *t = b->t;
	struct ids id;
	enum td_kind k;

	id.name = e->name.set ? td_builder_intern(b, strs + e->name.off, e->name.len) : 0;
	id.pid = e->pid_str ? td_builder_intern(b, strs + e->pid_text.off, e->pid_text.len) : e->pid;
	id.tid = e->tid_str ? td_builder_intern(b, strs + e->tid_text.off, e->tid_text.len) : e->tid;

	if (e->legacy_cat)
		t->legacy = 1;
	switch (e->ph) {
	case 'X':
		k = span_kind(b, e, strs);
		add_span(b, e, &id, strs, k);
		break;
	case 's':
	case 'f':
	case 't':
		k = e->cat == CAT_AC2G ? TD_K_FLOW_AC2G : e->cat == CAT_FWDBWD ? TD_K_FLOW_FWDBWD
			: TD_K_FLOW_OTHER;
		if (e->ph == 's')
			t->flows_s++;
		else if (e->ph == 'f')
			t->flows_f++;
		break;
	case 'i':
	case 'I':
		if (e->name.set && SLICE_EQ(strs + e->name.off, e->name.len, "[memory]")) {
			/* Device Type 0 is the host; CUDA's is 1 (older traces: no type, a device) */
			int host = e->has_mem_devtype && e->mem_devtype == 0;
			int sample = e->has_ts && !e->bad_ts && (e->has_mem_total || e->has_mem_bytes);
			k = TD_K_MEMORY;
			if (e->has_device && e->device >= 0 && e->has_mem_total && !host) {
				struct td_device *d = td_trace_device(t, (int32_t)e->device);
				if (e->mem_total > d->peak_allocated)
					d->peak_allocated = e->mem_total;
			}
			if (sample && e->has_device && e->device > INT16_MAX && !host) {
				t->anom.huge_number++; /* a device no sample can be stored for */
			} else if (sample) {
				struct td_mem_sample *m = td_vec_push(&t->mem);
				int huge;
				m->ts = e->ts;
				huge = td_mem_set(m, TD_MEM_ALLOCATED, e->has_mem_total ? e->mem_total : -1);
				huge |= td_mem_set(m, TD_MEM_RESERVED,
						   e->has_mem_reserved ? e->mem_reserved : -1);
				huge |= td_mem_set(m, TD_MEM_BYTES, e->has_mem_bytes ? e->mem_bytes : 0);
				t->anom.huge_number += (uint64_t)huge;
				m->device = host || !e->has_device || e->device < 0 ? -1
					    : (int16_t)e->device;
				struct td_mem_thread th;
				memset(&th, 0, sizeof(th));
				th.pid = id.pid;
				th.tid = id.tid;
				th.flags = (e->pid_str ? 1u : 0u) | (e->tid_str ? 2u : 0u);
				/* resolved at finalize: the thread's spans may come later */
				m->track = uniq_id(&t->mem_threads, &b->mthread_slots, &b->mthread_nslots,
						   &th, offsetof(struct td_mem_thread, pad) / 4);
			}
		} else {
			k = TD_K_INSTANT;
		}
		break;
	case 'C':
		k = TD_K_COUNTER;
		break;
	case 'M':
		k = TD_K_METADATA;
		if (e->arg_name.set && e->name.set &&
		    SLICE_EQ(strs + e->name.off, e->name.len, "thread_name")) {
			struct meta_name *m = td_vec_push(&b->thread_names);
			m->pid = id.pid;
			m->tid = id.tid;
			m->pid_str = e->pid_str;
			m->tid_str = e->tid_str;
			m->name = td_builder_intern(b, strs + e->arg_name.off, e->arg_name.len);
		}
		break;
	default:
		k = TD_K_UNKNOWN;
		t->anom.unknown_ph++;
		break;
	}
	t->by_kind[k]++;
}

void td_builder_add_records(struct td_builder *b, const unsigned char *buf, size_t len)
{
	size_t off = 0;

	while (off < len) { /* records are 8-aligned: read in place */
		const struct td_raw *e = (const struct td_raw *)(const void *)(buf + off);
		td_builder_add(b, e, (const char *)buf + off + td_raw_head(e));
		off += td_raw_size(e);
	}
}
