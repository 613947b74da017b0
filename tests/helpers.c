/* SPDX-License-Identifier: MIT */
#include "tests/helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "parser/input.h"
#include "parser/parser.h"

unsigned char *th_slurp(const char *path, size_t *len)
{
	struct td_input *in;
	struct td_error err;
	size_t cap = 1 << 20, n = 0;
	unsigned char *buf;

	if (td_input_open(path, &in, &err) != 0)
		return NULL;
	buf = td_malloc(cap);
	for (;;) {
		ssize_t r;
		if (cap - n < (1 << 16))
			buf = td_realloc(buf, cap *= 2);
		r = td_input_read(in, buf + n, cap - n, &err);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	td_input_close(in);
	*len = n;
	return buf;
}

int th_parse_mem(const unsigned char *buf, size_t len, size_t chunk, struct td_trace *t,
		 struct td_error *err)
{
	struct td_parser *p;
	size_t off = 0;
	int rc = 0;

	td_trace_init(t);
	memset(err, 0, sizeof(*err));
	p = td_parser_new(t);
	while (off < len && rc == 0) {
		size_t n = len - off < chunk ? len - off : chunk;
		rc = td_parser_feed(p, buf + off, n, err);
		off += n;
	}
	if (rc == 0)
		rc = td_parser_finish(p, err);
	td_parser_free(p);
	if (rc == 0)
		td_trace_finalize(t);
	return rc;
}

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}
#define MIXV(h, v) ((h) = mix((h), &(v), sizeof(v)))

uint64_t th_digest(const struct td_trace *t)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		const char *nm = td_trace_name(t, e->name);
		const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, (uint32_t)i));
		int64_t dur = td_ev_dur(e);
		uint64_t bytes = 0;

		MIXV(h, e->ts);
		MIXV(h, dur);
		MIXV(h, e->kind);
		MIXV(h, e->flags);
		MIXV(h, e->corr);
		MIXV(h, e->name);
		if (e->kind == TD_K_MEMCPY || e->kind == TD_K_MEMSET)
			bytes = TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
		else
			bytes = e->aux;
		MIXV(h, bytes);
		h = mix(h, nm, td_strtab_len(&t->names, e->name) + 1);
		MIXV(h, tr->is_gpu);
		MIXV(h, tr->pid);
		MIXV(h, tr->tid);
		MIXV(h, tr->device);
		MIXV(h, tr->stream);
		MIXV(h, t->link[i]);
	}
	for (i = 0; i < t->steps.len; i++) {
		const struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		MIXV(h, s->event);
		MIXV(h, s->number);
	}
	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *d = &TD_VEC_AT(&t->devices, struct td_device, i);
		MIXV(h, d->id);
		MIXV(h, d->ops);
		MIXV(h, d->first_ts);
		MIXV(h, d->last_end);
		MIXV(h, d->peak_allocated);
		MIXV(h, d->total_mem);
		MIXV(h, d->cc_major);
		MIXV(h, d->cc_minor);
		MIXV(h, d->num_sms);
		MIXV(h, d->has_props);
		h = mix(h, td_trace_name(t, d->name), strlen(td_trace_name(t, d->name)));
	}
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		h = mix(h, td_trace_name(t, tr->name), strlen(td_trace_name(t, tr->name)) + 1);
	}
	/* every string in interning order: the same ids for the same strings */
	for (i = 1; i <= t->names.count; i++)
		h = mix(h, td_strtab_str(&t->names, (uint32_t)i), td_strtab_len(&t->names, (uint32_t)i) + 1);
	for (i = 0; i < t->colls.len; i++) {
		const struct td_coll *c = &TD_VEC_AT(&t->colls, struct td_coll, i);
		MIXV(h, c->corr);
		MIXV(h, c->device);
		MIXV(h, c->name);
		MIXV(h, c->pg);
		MIXV(h, c->dtype);
		MIXV(h, c->group_size);
		MIXV(h, c->in_nelems);
		MIXV(h, c->out_nelems);
	}
	for (i = 0; i < t->op_args.len; i++) {
		const struct td_op_args *a = &TD_VEC_AT(&t->op_args, struct td_op_args, i);
		MIXV(h, a->dims);
		MIXV(h, a->types);
		MIXV(h, a->stack);
	}
	for (i = 0; i < t->mem.len; i++) {
		const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample, i);
		int64_t allocated = td_mem_get(m, TD_MEM_ALLOCATED);
		int64_t reserved = td_mem_get(m, TD_MEM_RESERVED), bytes = td_mem_get(m, TD_MEM_BYTES);
		int32_t device = m->device;
		MIXV(h, m->ts);
		MIXV(h, allocated);
		MIXV(h, reserved);
		MIXV(h, bytes);
		MIXV(h, device);
		MIXV(h, m->track);
	}
	h = mix(h, t->partial_msg, strlen(t->partial_msg));
	MIXV(h, t->bytes_in);
	MIXV(h, t->events_close);
	MIXV(h, t->dropped_records);
	MIXV(h, t->memory_events);
	MIXV(h, t->backend);
	MIXV(h, t->display_time_unit);
	MIXV(h, t->trace_name);
	h = mix(h, t->by_kind, sizeof(t->by_kind));
	h = mix(h, &t->anom, sizeof(t->anom));
	MIXV(h, t->n_trace_events);
	MIXV(h, t->partial);
	MIXV(h, t->partial_offset);
	MIXV(h, t->rank);
	MIXV(h, t->world_size);
	MIXV(h, t->schema_version);
	MIXV(h, t->base_time_ns);
	MIXV(h, t->legacy);
	MIXV(h, t->rocm);
	MIXV(h, t->layout);
	MIXV(h, t->flows_s);
	MIXV(h, t->flows_f);
	return h;
}

const char *th_fixture(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/%s", TD_FIXTURES, name);
	return buf;
}

const char *th_shared(const char *name)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf), "%s/%s", TD_SHARED_TRACES, name);
	return buf;
}

int th_have_shared(void)
{
	struct stat st;
	return stat(TD_SHARED_TRACES, &st) == 0 && S_ISDIR(st.st_mode);
}
