/* SPDX-License-Identifier: MIT */
/* Questions asked of a finished analysis (analysis/analysis.h): which step a time falls in,
 * how busy a device was between two times, which device a host call works for, the window a
 * finding is measured against. Below everything else in analysis/: it calls none of it. */
#include <stdint.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/internal.h"

const char *td_cause_id(enum td_cause c)
{
	static const char *const ids[CAUSE_COUNT] = {
		"dataloader", "warmup", "sync", "transfer", "allocator", "communication", "launch",
		"dependency", "host", "nothing",
	};
	return (unsigned)c < CAUSE_COUNT ? ids[c] : "?";
}

const char *td_cause_title(enum td_cause c)
{
	static const char *const t[CAUSE_COUNT] = {
		"data loading", "start-up work", "synchronizing call", "blocking transfer",
		"allocator", "waiting on a collective", "kernel-launch overhead",
		"waiting on another stream or event", "CPU op / Python", "nothing recorded on the host",
	};
	return (unsigned)c < CAUSE_COUNT ? t[c] : "?";
}

static int64_t *step_durations(const struct td_analysis *a)
{
	int64_t *d = td_malloc((a->nsteps ? a->nsteps : 1) * sizeof(*d));
	size_t i;

	for (i = 0; i < a->nsteps; i++)
		d[i] = a->steps[i].end - a->steps[i].start;
	return d;
}

int64_t td_an_median_step(const struct td_analysis *a)
{
	int64_t *d = step_durations(a), med = td_median_i64(d, a->nsteps);
	free(d);
	return med;
}

int64_t td_an_mean_step(const struct td_analysis *a)
{
	return a->nsteps ? (a->steps_end - a->steps_start) / (int64_t)a->nsteps : 0;
}

int td_an_outer_dataloader(const struct td_analysis *a, uint32_t ev)
{
	const struct td_trace *t = a->t;
	uint32_t p;
	int depth = 0;

	if (!(a->name_class[td_trace_ev(t, ev)->name] & NC_DATALOADER) ||
	    td_kind_on_gpu_track(td_trace_ev(t, ev)->kind))
		return 0;
	for (p = td_trace_parent(t, ev); p != TD_NONE && depth < MAX_CHAIN;
	     p = td_trace_parent(t, p), depth++)
		if (a->name_class[td_trace_ev(t, p)->name] & NC_DATALOADER)
			return 0;
	return 1;
}

int64_t td_an_idle_of(const struct td_analysis *a, size_t d, enum td_cause c, uint32_t what)
{
	size_t i;

	for (i = 0; i < a->dev[d].idle.len; i++) {
		const struct td_idle_item *it = &TD_VEC_AT(&a->dev[d].idle, struct td_idle_item, i);
		if (it->cause == c && it->what == what)
			return it->ns;
	}
	return 0;
}

int64_t td_an_busy_between(const struct td_analysis *a, size_t d, int64_t from, int64_t to)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t sum = 0;
	size_t lo = 0, hi = dv->nbusy;

	while (lo < hi) { /* first interval ending after from */
		size_t mid = (lo + hi) / 2;
		if (dv->busy[mid].end <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < dv->nbusy && dv->busy[lo].start < to; lo++) {
		int64_t s = dv->busy[lo].start > from ? dv->busy[lo].start : from;
		int64_t e = dv->busy[lo].end < to ? dv->busy[lo].end : to;
		if (e > s)
			sum += e - s;
	}
	return sum;
}

size_t td_an_step_of(const struct td_analysis *a, int64_t ts)
{
	size_t lo;

	TD_LOWER_BOUND(lo, a->nsteps, a->steps[mid].start <= ts);
	if (lo == 0 || ts >= a->steps[lo - 1].end)
		return SIZE_MAX;
	return lo - 1;
}

int td_an_dev_index(const struct td_analysis *a, int32_t dev)
{
	size_t lo = 0, hi = a->ndev;

	while (lo < hi) { /* a->dev is by id */
		size_t mid = lo + (hi - lo) / 2;
		if (a->dev[mid].device < dev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->ndev && a->dev[lo].device == dev ? (int)lo : -1;
}

size_t td_an_dev_of_host(const struct td_analysis *a, uint32_t ev, uint32_t op)
{
	const struct td_trace *t = a->t;
	size_t d;
	uint32_t tr;

	if (op != TD_NONE) {
		int i = td_an_dev_index(a, td_trace_track(t, td_trace_track_of(t, op))->device);
		if (i >= 0)
			return (size_t)i;
	}
	tr = td_trace_track_of(t, ev);
	for (d = 0; d < a->ndev; d++)
		if (a->dev[d].host_track == tr)
			return d;
	return 0;
}

int64_t td_an_window_ns(const struct td_analysis *a, int32_t device)
{
	int d = device < 0 ? (a->ndev ? 0 : -1) : td_an_dev_index(a, device);

	if (d >= 0)
		return a->dev[d].win_end - a->dev[d].win_start;
	return a->has_steps ? a->steps_end - a->steps_start : 0;
}

size_t td_an_steps(const struct td_analysis *a)
{
	return a->nsteps;
}

void td_an_longest_first(const struct td_trace *t, uint32_t *ev, size_t n)
{
	size_t k, j, m;

	for (k = 0; k < n; k++) { /* a selection: evidence lists are short */
		uint32_t tmp;
		for (m = k, j = k + 1; j < n; j++) {
			int64_t dj = td_ev_dur(td_trace_ev(t, ev[j])), dm = td_ev_dur(td_trace_ev(t, ev[m]));
			if (dj > dm || (dj == dm && ev[j] < ev[m]))
				m = j;
		}
		tmp = ev[k];
		ev[k] = ev[m];
		ev[m] = tmp;
	}
}

#define KT_NAME_LESS(x, y) ((x)->name < (y)->name)
TD_DEFINE_SORT(sort_kt_name, struct td_kernel_total, KT_NAME_LESS)
#define KT_NS_LESS(x, y) ((x)->ns > (y)->ns || ((x)->ns == (y)->ns && (x)->name < (y)->name))
TD_DEFINE_SORT(sort_kt_ns, struct td_kernel_total, KT_NS_LESS)

size_t td_an_kernel_totals(const struct td_analysis *a, size_t d, struct td_kernel_total **out)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_dev_events it;
	struct td_kernel_total *k;
	size_t n = 0, m, i, cap = td_dev_events_count(t, dv->device);
	uint32_t ev;

	k = td_malloc((cap ? cap : 1) * sizeof(*k));
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &ev);) {
		const struct td_event *e = td_trace_ev(t, ev);
		if (e->kind != TD_K_KERNEL || e->ts < dv->win_start || e->ts >= dv->win_end ||
		    (a->name_class[e->name] & (NC_COMM | NC_IGNORE)))
			continue;
		k[n++] = (struct td_kernel_total){e->name, td_ev_dur(e), 1};
	}
	sort_kt_name(k, n);
	for (i = 0, m = 0; i < n; i++) {
		if (m && k[m - 1].name == k[i].name) {
			k[m - 1].ns += k[i].ns;
			k[m - 1].calls++;
		} else {
			k[m++] = k[i];
		}
	}
	sort_kt_ns(k, m);
	*out = k;
	return m;
}

size_t td_an_keep_longest(const struct td_trace *t, uint32_t *ev, size_t n, size_t cap,
			  uint32_t e)
{
	size_t m = 0, k;

	if (n < cap) {
		ev[n] = e;
		return n + 1;
	}
	for (k = 1; k < n; k++)
		if (td_ev_dur(td_trace_ev(t, ev[k])) < td_ev_dur(td_trace_ev(t, ev[m])))
			m = k;
	if (td_ev_dur(td_trace_ev(t, e)) > td_ev_dur(td_trace_ev(t, ev[m])))
		ev[m] = e;
	return n;
}
