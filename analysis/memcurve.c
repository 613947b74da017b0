/* SPDX-License-Identifier: MIT */
#include "analysis/memcurve.h"

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

size_t td_mem_devs(const struct td_analysis *a, struct td_mem_dev **out, int curve)
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
		if (td_mem_get(m, TD_MEM_ALLOCATED) >= 0)
			d[k].summed = 0;
		if (td_mem_get(m, TD_MEM_RESERVED) >= 0)
			d[k].has_reserved = 1;
	}
	if (n)
		qsort(d, n, sizeof(*d), cmp_dev);
	for (k = 0; k < n; k++) {
		struct td_mem_dev *x = &d[k];
		int64_t sum = 0, prev = -1;
		size_t j = 0, b = 0, nb = a->nsteps + 1;
		if (curve) {
			x->sample = td_malloc((x->nsamples ? x->nsamples : 1) * sizeof(*x->sample));
			x->alloc = td_malloc((x->nsamples ? x->nsamples : 1) * sizeof(*x->alloc));
		}
		/* the step boundaries (each start, then the last end) come in time order, as the
		 * samples do: each gets the curve at the last sample before it */
		x->nstep = a->nsteps;
		x->step_alloc = td_malloc(nb * sizeof(*x->step_alloc));
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
			sum += td_mem_get(m, TD_MEM_BYTES);
			v = x->summed ? sum : td_mem_get(m, TD_MEM_ALLOCATED);
			if (v < 0) /* a sample without the total in a trace that has it: as before */
				v = j ? prev : 0;
			for (; b < a->nsteps && a->steps[b].start <= m->ts; b++)
				x->step_alloc[b] = prev;
			if (b == a->nsteps && a->nsteps && a->steps[b - 1].end <= m->ts)
				x->step_alloc[b++] = prev;
			if (curve) {
				x->sample[j] = (uint32_t)i;
				x->alloc[j] = v;
			}
			prev = v;
			if (!j)
				x->first_alloc = v;
			x->last_alloc = v;
			if (v > x->peak_alloc) {
				x->peak_alloc = v;
				x->peak_alloc_ts = m->ts;
				x->res_at_peak_alloc = td_mem_get(m, TD_MEM_RESERVED);
				x->peak_alloc_op = td_an_op_at(t, m->track, m->ts);
			}
			if (td_mem_get(m, TD_MEM_RESERVED) > x->peak_res) {
				x->peak_res = td_mem_get(m, TD_MEM_RESERVED);
				x->peak_res_ts = m->ts;
				x->alloc_at_peak_res = v;
			}
			j++;
		}
		for (; b < nb; b++)
			x->step_alloc[b] = a->nsteps ? prev : -1;
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
