/* SPDX-License-Identifier: MIT */
/* Element loops (analysis/loops.h): per host thread, the top-level CPU ops as a sequence of
 * names; for each period p (1..TD_LOOP_PERIOD_MAX), the maximal stretches where every op
 * equals the one p before it; a stretch of at least params.element_loop_min iterations, whose
 * iterations touch one element each and keep the GPU next to idle, is a loop. Shorter periods
 * are taken first, so an iteration is never counted twice. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "common/vec.h"
#include "analysis/analysis.h"
#include "analysis/blocking.h"
#include "analysis/loops.h"

int td_an_top_op(const struct td_trace *t, uint32_t k)
{
	uint32_t p = td_trace_parent(t, k);
	int depth = 0;

	for (; p != TD_NONE && depth < 512; p = td_trace_parent(t, p), depth++)
		if (td_trace_ev(t, p)->kind == TD_K_CPU_OP)
			return 0;
	return 1;
}

int td_an_element_op(const char *n)
{
	return !strcmp(n, "aten::select") || !strcmp(n, "aten::item") ||
	       !strcmp(n, "aten::_local_scalar_dense") || !strcmp(n, "aten::unbind");
}

struct span {
	size_t i, n;       /* ops [i, i + n) of the thread's sequence */
	uint32_t p;
};

/* whether ops [i, i + n) hold one a loop already took (marked in taken): a period's stretches
 * do not overlap, so each period looks at each op once at most */
static int overlaps(const uint8_t *taken, size_t i, size_t n)
{
	size_t k;

	for (k = i; k < i + n; k++)
		if (taken[k])
			return 1;
	return 0;
}

static int by_start(const void *x, const void *y)
{
	const struct span *a = x, *b = y;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* the loops among one thread's top-level ops ops[0..m), whose names are nm[0..m) (read once:
 * each period compares them again, and the ops lie far apart among the thread's frames) */
static void find_in_track(struct td_analysis *a, uint32_t track, const uint32_t *ops,
			  const uint32_t *nm, size_t m, struct td_vec *out,
			  const struct td_block_unit *u, size_t nu)
{
	const struct td_trace *t = a->t;
	size_t min = (size_t)a->params.element_loop_min, i, k, lo, hi;
	uint32_t p;
	struct td_vec acc;
	uint8_t *taken;

	if (m < min)
		return;
	td_vec_init(&acc, sizeof(struct span));
	taken = td_calloc(m, 1);
	for (p = 1; p <= TD_LOOP_PERIOD_MAX; p++) {
		for (i = 0; i + p < m;) {
			size_t j = i, reps;
			while (j + p < m && nm[j] == nm[j + p])
				j++;
			if (j == i) {
				i++;
				continue;
			}
			reps = (j - i + p) / p;
			if (reps >= min && !overlaps(taken, i, reps * p)) {
				struct span *s = td_vec_push(&acc);
				s->i = i;
				s->n = reps * p;
				s->p = p;
				memset(taken + i, 1, reps * p);
			}
			i = j + 1;
		}
	}
	free(taken);
	if (acc.len)
		qsort(acc.data, acc.len, sizeof(struct span), by_start);
	/* the thread's blocking units: by first call, so a range of them, by start within it */
	{
		const struct td_track *tr = td_trace_track(t, track);
		TD_LOWER_BOUND(lo, nu, u[mid].first < tr->first);
		TD_LOWER_BOUND(hi, nu, u[mid].first < tr->first + tr->count);
		u += lo;
		nu = hi - lo;
	}
	for (k = 0; k < acc.len; k++) {
		const struct span *s = &TD_VEC_AT(&acc, struct span, k);
		struct td_elem_loop L;
		int elem = 0;
		size_t q, d;
		const struct td_event *e0 = td_trace_ev(t, ops[s->i]);
		const struct td_event *e1 = td_trace_ev(t, ops[s->i + s->n - 1]);

		memset(&L, 0, sizeof(L));
		L.track = track;
		L.first = ops[s->i];
		L.last = ops[s->i + s->n - 1];
		L.start = e0->ts;
		L.end = td_ev_end(e1);
		L.period = s->p;
		L.iters = (uint32_t)(s->n / s->p);
		for (q = 0; q < s->p; q++) {
			L.names[q] = td_trace_ev(t, ops[s->i + q])->name;
			elem |= td_an_element_op(td_trace_name(t, L.names[q]));
		}
		d = td_an_dev_of_host(a, L.first, TD_NONE);
		if (!td_an_in_host_window(a, d, L.start))
			continue;
		L.dev = d;
		/* its waits for the GPU (the thread's units starting in it, found by a search:
		 * a pass over all units per loop was quadratic in the loops), and its launches */
		TD_LOWER_BOUND(q, nu, td_trace_ev(t, u[mid].first)->ts < L.start);
		for (; q < nu && td_trace_ev(t, u[q].first)->ts < L.end; q++) {
			L.syncs++;
			L.blocked_ns += u[q].blocked;
		}
		{
			const struct td_track *tr = td_trace_track(t, track);
			uint32_t x;
			for (x = L.first; x < tr->first + tr->count; x++) {
				const struct td_event *e = td_trace_ev(t, x);
				if (e->ts >= L.end)
					break;
				if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_LAUNCH))
					L.launches++;
			}
		}
		L.gpu_busy_ns = td_an_busy_between(a, d, L.start, L.end);
		/* one element each time: an element's access, or a wait in most iterations; and
		 * the GPU next to idle (a small kernel's worth an iteration at most) */
		if (!elem && L.syncs * 2 < L.iters)
			continue;
		if (L.gpu_busy_ns > (int64_t)L.iters * a->params.small_kernel_ns)
			continue;
		{
			char buf[256];
			const char *uf = td_an_user_frame(a, L.first, buf, sizeof(buf));
			L.site = *uf ? td_an_intern(a, uf) : td_an_site(a, L.first);
		}
		*(struct td_elem_loop *)td_vec_push(out) = L;
	}
	td_vec_free(&acc);
}

size_t td_an_elem_loops(struct td_analysis *a, const struct td_elem_loop **out)
{
	const struct td_trace *t = a->t;
	const struct td_block_unit *u;
	size_t nu, tk, sj, from, to;
	int64_t open_end;
	struct td_vec loops, ops, nm;

	if (a->loops_done) {
		*out = a->loops;
		return a->nloops;
	}
	a->loops_done = 1;
	*out = NULL;
	if (!a->ndev)
		return 0;
	nu = td_an_block_units(a, &u);
	td_vec_init(&loops, sizeof(struct td_elem_loop));
	td_vec_init(&ops, sizeof(uint32_t));
	td_vec_init(&nm, sizeof(uint32_t));
	for (tk = 0; tk < t->tracks.len; tk++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)tk);
		uint32_t x;
		if (tr->is_gpu || tr->count < (uint32_t)a->params.element_loop_min)
			continue;
		ops.len = nm.len = 0;
		/* the track's CPU ops (TD_FOR_KIND): from the first at or after its start */
		from = td_trace_kind_begin(t, TD_K_CPU_OP);
		to = td_trace_kind_end(t, TD_K_CPU_OP);
		TD_LOWER_BOUND(sj, to - from, td_trace_scan_at(t, from + mid) < tr->first);
		open_end = INT64_MIN;
		for (sj += from; sj < to && (x = td_trace_scan_at(t, sj)) < tr->first + tr->count;
		     sj++) {
			const struct td_event *e = td_trace_ev(t, x);
			/* top-level: no CPU op above it; one that begins after every CPU op before
			 * it on the thread has ended has none (ops nest), without a walk up its
			 * parents through the Python frames */
			int top = e->kind == TD_K_CPU_OP && (e->ts >= open_end || td_an_top_op(t, x));
			if (e->kind == TD_K_CPU_OP && td_ev_end(e) > open_end)
				open_end = td_ev_end(e);
			if (top) {
				*(uint32_t *)td_vec_push(&ops) = x;
				*(uint32_t *)td_vec_push(&nm) = e->name;
			}
		}
		find_in_track(a, (uint32_t)tk, ops.data, nm.data, ops.len, &loops, u, nu);
	}
	td_vec_free(&ops);
	td_vec_free(&nm);
	*out = a->loops = loops.data;
	return a->nloops = loops.len;
}

int td_an_in_elem_loop(struct td_analysis *a, uint32_t track, int64_t ts)
{
	const struct td_elem_loop *L;
	size_t n = td_an_elem_loops(a, &L), lo = 0, hi = n;

	/* by (track, start): the last loop that starts at or before ts on track */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L[mid].track < track || (L[mid].track == track && L[mid].start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && L[lo - 1].track == track && ts < L[lo - 1].end;
}
