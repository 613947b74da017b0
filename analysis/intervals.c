/* SPDX-License-Identifier: MIT */
#include "analysis/intervals.h"

#include <stdlib.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"

size_t td_iv_minus(const struct td_interval *c, size_t nc, const struct td_interval *p,
		   size_t np, struct td_interval *out)
{
	size_t i, j = 0, n = 0, k;

	for (i = 0; i < nc; i++) {
		int64_t s = c[i].start;
		while (j < np && p[j].end <= s)
			j++;
		for (k = j; k < np && p[k].start < c[i].end; k++) {
			if (p[k].start > s) {
				out[n].start = s;
				out[n++].end = p[k].start;
			}
			if (p[k].end > s)
				s = p[k].end;
		}
		if (s < c[i].end) {
			out[n].start = s;
			out[n++].end = c[i].end;
		}
	}
	return n;
}

int64_t td_iv_total_in(const struct td_interval *v, size_t n, int64_t from, int64_t to)
{
	int64_t sum = 0;
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].end <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && v[lo].start < to; lo++) {
		int64_t s = v[lo].start > from ? v[lo].start : from;
		int64_t e = v[lo].end < to ? v[lo].end : to;
		if (e > s)
			sum += e - s;
	}
	return sum;
}

void td_an_kernel_sets(const struct td_analysis *a, int32_t device, int64_t from, int64_t to,
		       struct td_interval **comp, size_t *ncomp, struct td_interval **comm,
		       size_t *ncomm)
{
	struct td_dev_events it;
	uint32_t k;
	const struct td_trace *t = a->t;
	size_t cap, np = 0, nc = 0;
	struct td_interval *p, *c;

	cap = td_dev_events_count(t, device);
	p = td_malloc((cap ? cap : 1) * sizeof(*p));
	c = td_malloc((cap ? cap : 1) * sizeof(*c));
	for (td_dev_events_begin(&it, t, device); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		unsigned cl = td_an_class(a, e->name);
		int64_t s = e->ts > from ? e->ts : from, en = td_ev_end(e) < to ? td_ev_end(e) : to;
		struct td_interval *dst;
		if (e->kind != TD_K_KERNEL || (cl & NC_IGNORE) || en <= s)
			continue;
		dst = (cl & NC_COMM) ? &c[nc++] : &p[np++];
		dst->start = s;
		dst->end = en;
	}
	*ncomp = td_iv_merge(p, np);
	*ncomm = td_iv_merge(c, nc);
	*comp = p;
	*comm = c;
}
