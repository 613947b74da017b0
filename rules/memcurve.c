/* SPDX-License-Identifier: MIT */
#include "rules/memcurve.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

uint32_t td_an_op_at(const struct td_trace *t, uint32_t track, int64_t ts)
{
	const struct td_track *tr;
	uint32_t lo, hi, e;

	if (track == TD_NONE || track >= t->tracks.len)
		return TD_NONE;
	tr = td_trace_track(t, track);
	if (tr->is_gpu || !tr->count)
		return TD_NONE;
	lo = tr->first;
	hi = tr->first + tr->count;
	while (lo < hi) { /* the last span starting at or before ts */
		uint32_t mid = lo + (hi - lo) / 2;
		if (td_trace_ev(t, mid)->ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == tr->first)
		return TD_NONE;
	/* what holds ts is that span or one of its ancestors */
	for (e = lo - 1; e != TD_NONE; e = td_trace_parent(t, e)) {
		const struct td_event *x = td_trace_ev(t, e);
		if ((x->kind == TD_K_CPU_OP || x->kind == TD_K_USER_ANNOTATION) && x->ts <= ts &&
		    ts < td_ev_end(x))
			return e;
	}
	return TD_NONE;
}

int64_t td_trace_step_at(const struct td_trace *t, int64_t ts)
{
	size_t i;

	for (i = 0; i < t->steps.len; i++) {
		const struct td_step *s = &TD_VEC_AT(&t->steps, struct td_step, i);
		if (s->ts <= ts && ts < s->end)
			return s->number;
	}
	return -1;
}

static int cmp_dev(const void *x, const void *y)
{
	int32_t a = ((const struct td_mem_dev *)x)->device, b = ((const struct td_mem_dev *)y)->device;

	/* GPUs by id, the host (-1) last */
	if ((a < 0) != (b < 0))
		return a < 0 ? 1 : -1;
	return a < b ? -1 : a > b;
}

/* allocated at the last sample before ts (the first one's, minus its change, before it) */
static int64_t alloc_before(const struct td_trace *t, const struct td_mem_dev *d, int64_t ts)
{
	size_t lo = 0, hi = d->nsamples;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (TD_VEC_AT(&t->mem, struct td_mem_sample, d->sample[mid]).ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		return d->alloc[lo - 1];
	return -1;
}

size_t td_mem_devs(const struct td_analysis *a, struct td_mem_dev **out)
{
	const struct td_trace *t = a->t;
	struct td_mem_dev *d = NULL;
	size_t n = 0, i, k;

	for (i = 0; i < t->mem.len; i++) {
		const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample, i);
		for (k = 0; k < n && d[k].device != m->device; k++)
			;
		if (k == n) {
			d = td_realloc(d, (n + 1) * sizeof(*d));
			memset(&d[n], 0, sizeof(d[n]));
			d[n].device = m->device;
			d[n].summed = 1;
			n++;
		}
		d[k].nsamples++;
		if (m->allocated >= 0)
			d[k].summed = 0;
		if (m->reserved >= 0)
			d[k].has_reserved = 1;
	}
	if (n)
		qsort(d, n, sizeof(*d), cmp_dev);
	for (k = 0; k < n; k++) {
		struct td_mem_dev *x = &d[k];
		int64_t sum = 0;
		size_t j = 0;
		x->sample = td_malloc((x->nsamples ? x->nsamples : 1) * sizeof(*x->sample));
		x->alloc = td_malloc((x->nsamples ? x->nsamples : 1) * sizeof(*x->alloc));
		x->peak_alloc = x->peak_res = -1;
		x->peak_alloc_op = TD_NONE;
		if (x->device >= 0) {
			const struct td_device *dv = td_trace_find_device(t, x->device);
			x->capacity = dv && dv->total_mem > 0 ? dv->total_mem : 0;
		}
		for (i = 0; i < t->mem.len; i++) {
			const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample, i);
			int64_t v;
			if (m->device != x->device)
				continue;
			sum += m->bytes;
			v = x->summed ? sum : m->allocated;
			if (v < 0) /* a sample without the total in a trace that has it: as before */
				v = j ? x->alloc[j - 1] : 0;
			x->sample[j] = (uint32_t)i;
			x->alloc[j] = v;
			if (!j)
				x->first_alloc = v;
			x->last_alloc = v;
			if (v > x->peak_alloc) {
				x->peak_alloc = v;
				x->peak_alloc_ts = m->ts;
				x->res_at_peak_alloc = m->reserved;
				x->peak_alloc_op = td_an_op_at(t, m->track, m->ts);
			}
			if (m->reserved > x->peak_res) {
				x->peak_res = m->reserved;
				x->peak_res_ts = m->ts;
				x->alloc_at_peak_res = v;
			}
			j++;
		}
		x->nstep = a->nsteps;
		x->step_alloc = td_malloc((a->nsteps + 1) * sizeof(*x->step_alloc));
		for (i = 0; i < a->nsteps; i++)
			x->step_alloc[i] = alloc_before(t, x, a->steps[i].start);
		x->step_alloc[a->nsteps] = a->nsteps ? alloc_before(t, x, a->steps[a->nsteps - 1].end)
						     : -1;
	}
	*out = d;
	return n;
}

void td_mem_devs_free(struct td_mem_dev *d, size_t n)
{
	size_t k;

	for (k = 0; k < n; k++) {
		free(d[k].sample);
		free(d[k].alloc);
		free(d[k].step_alloc);
	}
	free(d);
}
