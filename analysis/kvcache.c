/* SPDX-License-Identifier: MIT */
/* The KV-cache reservation (analysis/kvcache.h). */
#include "analysis/kvcache.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

/* the engines' KV-cache allocation functions, as a Python frame names them ("FILE(N): FUNC") */
static const char *const alloc_fn[] = {
	"initialize_kv_cache", "initialize_kv_cache_tensors", "_allocate_kv_cache_tensors",
	"_init_cache_engine", "init_memory_pool", "_create_buffers", NULL,
};

static int is_alloc_frame(const char *n)
{
	const char *f = strstr(n, "): ");
	size_t i;

	if (!f)
		return 0;
	for (i = 0; alloc_fn[i]; i++)
		if (!strcmp(f + 3, alloc_fn[i]))
			return 1;
	return 0;
}

/* the outermost allocation frame: its event, TD_NONE when none */
static uint32_t frame(const struct td_trace *t)
{
	uint8_t *match = td_calloc(t->names.count + 1, 1);
	uint32_t found = TD_NONE, i, any = 0;

	for (i = 1; i <= t->names.count; i++)
		any |= match[i] = (uint8_t)is_alloc_frame(td_trace_name(t, i));
	for (i = 0; any && i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		uint32_t p;
		if (e->kind != TD_K_PYTHON || !match[e->name])
			continue;
		for (p = td_trace_parent(t, i); p != TD_NONE; p = td_trace_parent(t, p))
			if (match[td_trace_ev(t, p)->name])
				break;
		if (p == TD_NONE && (found == TD_NONE || e->ts < td_trace_ev(t, found)->ts))
			found = i; /* the first outermost one */
	}
	free(match);
	return found;
}

int td_an_kv_cache(const struct td_analysis *a, struct td_kv_cache *kv)
{
	const struct td_trace *t = a->t;
	const struct td_mem_sample *m = t->mem.data;
	const struct td_event *e;
	uint32_t track;
	int64_t end;
	size_t i;

	memset(kv, 0, sizeof(*kv));
	kv->frame = TD_NONE;
	kv->device = -1;
	kv->reserved_before = kv->reserved_after = kv->allocated_after = -1;
	if (!t->mem.len || (kv->frame = frame(t)) == TD_NONE)
		return 0;
	e = td_trace_ev(t, kv->frame);
	end = td_ev_end(e);
	track = td_trace_track_of(t, kv->frame);
	/* its device: the one its thread allocated most on under it */
	for (i = 0; i < t->mem.len; i++) {
		int64_t b = td_mem_get(&m[i], TD_MEM_BYTES);
		if (m[i].ts < e->ts || m[i].ts >= end || m[i].track != track || m[i].device < 0)
			continue;
		if (kv->device < 0)
			kv->device = m[i].device;
		if (m[i].device != kv->device)
			continue;
		kv->bytes += b;
		kv->allocations += b > 0;
		kv->reserved_after = td_mem_get(&m[i], TD_MEM_RESERVED);
		kv->allocated_after = td_mem_get(&m[i], TD_MEM_ALLOCATED);
	}
	if (kv->device < 0 || kv->bytes <= 0) {
		kv->frame = TD_NONE;
		return 0;
	}
	/* the device's reserved memory before it: its last sample before the frame */
	for (i = 0; i < t->mem.len && m[i].ts < e->ts; i++)
		if (m[i].device == kv->device) {
			kv->reserved_before = td_mem_get(&m[i], TD_MEM_RESERVED);
			kv->complete = 1;
		}
	return 1;
}
