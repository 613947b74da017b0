/* SPDX-License-Identifier: MIT */
#include "tables/memory.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"

static char *dup(const char *s)
{
	return td_strndup(s, strlen(s));
}

void td_mem_report(const struct td_analysis *a, struct td_mem_report *out)
{
	const struct td_trace *t = a->t;
	struct td_mem_dev *d;
	size_t n = td_mem_devs(a, &d, 1), k, i;

	memset(out, 0, sizeof(*out));
	out->dev = td_calloc(n ? n : 1, sizeof(*out->dev));
	out->n = n;
	out->samples = t->mem.len;
	if (t->mem.len) {
		out->start = TD_VEC_AT(&t->mem, struct td_mem_sample, 0).ts;
		out->end = TD_VEC_AT(&t->mem, struct td_mem_sample, t->mem.len - 1).ts;
	}
	for (k = 0; k < n; k++) {
		struct td_mem_view *v = &out->dev[k];
		char fr[1100];
		v->d = d[k];
		if (v->d.peak_alloc_op != TD_NONE) {
			const char *nm = td_trace_name(t, td_trace_ev(t, v->d.peak_alloc_op)->name);
			size_t len = strlen(nm);
			v->peak_op = td_malloc(len + 3);
			td_mark(v->peak_op, len + 3, nm);
			v->peak_frame = dup(td_an_user_frame(a, v->d.peak_alloc_op, fr, sizeof(fr)));
		} else {
			v->peak_op = dup("");
			v->peak_frame = dup("");
		}
		v->peak_step = v->d.peak_alloc >= 0 ? td_trace_step_at(t, v->d.peak_alloc_ts) : -1;
		v->step_number = td_malloc((a->nsteps ? a->nsteps : 1) * sizeof(*v->step_number));
		for (i = 0; i < a->nsteps; i++)
			v->step_number[i] = td_trace_step_at(t, a->steps[i].start);
		/* the curve in TD_MEM_POINTS slices of the samples' span, each its largest values */
		for (i = 0; i < v->d.nsamples; i++) {
			const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample,
								   v->d.sample[i]);
			int64_t span = out->end - out->start;
			size_t p = span > 0 ? (size_t)((double)(m->ts - out->start) / (double)span *
						       (TD_MEM_POINTS - 1) + 0.5) : 0;
			struct td_mem_point *pt;
			if (p >= TD_MEM_POINTS)
				p = TD_MEM_POINTS - 1;
			while (v->npts <= p) {
				/* a slice with no sample of its own keeps the level before it; the
				 * sample's own slice starts from the sample */
				pt = &v->pts[v->npts];
				if (v->npts < p && v->npts) {
					*pt = v->pts[v->npts - 1];
				} else if (v->npts < p) { /* before this device's first sample */
					pt->allocated = pt->reserved = -1;
				} else {
					pt->allocated = v->d.alloc[i];
					pt->reserved = td_mem_get(m, TD_MEM_RESERVED);
				}
				pt->ts = out->start + (int64_t)((double)span * (double)v->npts /
								(TD_MEM_POINTS - 1));
				v->npts++;
			}
			pt = &v->pts[p];
			if (v->d.alloc[i] > pt->allocated)
				pt->allocated = v->d.alloc[i];
			if (td_mem_get(m, TD_MEM_RESERVED) > pt->reserved)
				pt->reserved = td_mem_get(m, TD_MEM_RESERVED);
		}
	}
	free(d); /* the per-device arrays now belong to the views */
}

void td_mem_report_free(struct td_mem_report *r)
{
	size_t k;

	for (k = 0; k < r->n; k++) {
		free(r->dev[k].d.sample);
		free(r->dev[k].d.alloc);
		free(r->dev[k].d.step_alloc);
		free(r->dev[k].peak_op);
		free(r->dev[k].peak_frame);
		free(r->dev[k].step_number);
	}
	free(r->dev);
	memset(r, 0, sizeof(*r));
}
