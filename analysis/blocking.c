/* SPDX-License-Identifier: MIT */
#include "analysis/blocking.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"

struct pair {
	uint32_t runtime, op;
};
#define PAIR_LESS(x, y) ((x)->runtime < (y)->runtime)
TD_DEFINE_SORT(sort_pairs, struct pair, PAIR_LESS)

/* the GPU memcpy launched by a runtime call, if any */
static uint32_t copy_of(const struct pair *p, size_t n, uint32_t runtime)
{
	size_t lo;

	TD_LOWER_BOUND(lo, n, p[mid].runtime < runtime);
	return lo < n && p[lo].runtime == runtime ? p[lo].op : TD_NONE;
}

static unsigned op_kinds(const struct td_analysis *a, uint32_t call)
{
	const struct td_trace *t = a->t;
	unsigned k = 0;
	uint32_t e;
	int ops = 0, depth = 0;

	for (e = td_trace_parent(t, call); e != TD_NONE && depth < 256;
	     e = td_trace_parent(t, e), depth++) {
		const char *n = td_trace_name(t, td_trace_ev(t, e)->name);
		if (td_trace_ev(t, e)->kind != TD_K_CPU_OP)
			continue;
		ops++;
		if (strstr(n, "item") || strstr(n, "_local_scalar_dense") || strstr(n, "tolist") ||
		    strstr(n, "is_nonzero"))
			k |= BK_ITEM;
		/* bool(tensor) (aten::is_nonzero) is a .item(); nonzero and boolean-mask indexing
		 * (which runs aten::nonzero) copy a size back */
		if (strstr(n, "aten::nonzero") || strstr(n, "masked_select"))
			k |= BK_NONZERO;
	}
	if (!ops)
		k |= BK_EXPLICIT;
	return k;
}

/* What kind of blocking call event i is (0: not one); *op gets the copy it made. */
static unsigned blocking_kind(const struct td_analysis *a, const struct pair *pairs, size_t np,
			      uint32_t i, uint32_t *op)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, i);
	unsigned c = td_an_class(a, e->name);
	const char *n;

	*op = TD_NONE;
	if (td_kind_on_gpu_track(e->kind) || (c & NC_IGNORE))
		return 0;
	if (c & NC_USER_SYNC)
		return BK_USER;
	if (e->kind != TD_K_RUNTIME)
		return 0;
	n = td_trace_name(t, e->name);
	if (c & NC_MEMCPY_CALL) {
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		*op = copy_of(pairs, np, i);
		if (*op == TD_NONE)
			return (c & NC_MEMCPY_SYNC) ? BK_MEMCPY : 0;
		td_memcpy_kind(td_trace_name(t, td_trace_ev(t, *op)->name), &dir, &src, &dst);
		if (dir == CD_HTOD && src == MK_PAGEABLE)
			return BK_HTOD | ((c & NC_MEMCPY_SYNC) ? BK_MEMCPY : 0);
		if (dir == CD_DTOH && dst == MK_PAGEABLE)
			return BK_DTOH | ((c & NC_MEMCPY_SYNC) ? BK_MEMCPY : 0);
		return (c & NC_MEMCPY_SYNC) ? BK_MEMCPY : 0;
	}
	if (!(c & NC_SYNC_CALL))
		return 0;
	if (strstr(n, "StreamSynchronize"))
		return BK_STREAM;
	if (strstr(n, "EventSynchronize"))
		return BK_EVENT;
	return BK_DEVICE;
}

size_t td_an_block_units(struct td_analysis *a, const struct td_block_unit **out)
{
	const struct td_trace *t = a->t;
	struct pair *pairs;
	size_t np = 0, cap = 64, i, sj, from, to;
	int all = 0;
	struct td_vec units;
	struct td_block_unit *cur = NULL;

	if (a->block_done) {
		*out = a->block_units;
		return a->nblock;
	}
	a->block_done = 1;
	td_vec_init(&units, sizeof(struct td_block_unit));
	*out = NULL;
	if (!a->ndev)
		return 0;
	pairs = td_malloc(cap * sizeof(*pairs));
	TD_FOR_KIND(t, TD_K_MEMCPY, sj, i) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		uint32_t l;
		if (e->kind != TD_K_MEMCPY || (l = td_trace_launch(t, (uint32_t)i)) == TD_NONE)
			continue;
		if (np == cap)
			pairs = td_realloc(pairs, (cap *= 2) * sizeof(*pairs));
		pairs[np].runtime = l;
		pairs[np].op = (uint32_t)i;
		np++;
	}
	sort_pairs(pairs, np);
	/* the runtime calls (TD_FOR_KIND), unless a configured sync op names something else */
	for (i = 1; i <= t->names.count && !all; i++)
		all = (a->name_class[i] & NC_USER_SYNC) != 0;
	from = all ? 0 : td_trace_kind_begin(t, TD_K_RUNTIME);
	to = all ? t->events.len : td_trace_kind_end(t, TD_K_RUNTIME);
	for (sj = from; sj < to; sj++) {
		const struct td_event *e;
		i = all ? sj : td_trace_scan_at(t, sj);
		e = td_trace_ev(t, (uint32_t)i);
		uint32_t op, user;
		unsigned k = blocking_kind(a, pairs, np, (uint32_t)i, &op);
		size_t d;

		if (!k)
			continue;
		d = td_an_dev_of_host(a, (uint32_t)i, op);
		if (!td_an_in_host_window(a, d, e->ts))
			continue;
		user = td_an_user_op(a, (uint32_t)i);
		if (cur && cur->user == user &&
		    td_trace_track_of(t, cur->last) == td_trace_track_of(t, (uint32_t)i)) {
			cur->last = (uint32_t)i; /* another call of the same user call */
		} else {
			cur = td_vec_push(&units);
			cur->first = cur->last = (uint32_t)i;
			cur->user = user;
			cur->copy = TD_NONE;
			cur->dev = d;
			cur->site = td_an_site(a, (uint32_t)i);
			cur->kinds = op_kinds(a, (uint32_t)i);
			if (k & BK_USER)
				cur->kinds &= ~(unsigned)BK_EXPLICIT;
		}
		if (op != TD_NONE && cur->copy == TD_NONE)
			cur->copy = op;
		cur->kinds |= k;
		cur->blocked += td_ev_dur(e);
		cur->ncalls++;
	}
	free(pairs);
	*out = a->block_units = units.data;
	return a->nblock = units.len;
}

void td_claims_add_unit(const struct td_analysis *a, struct td_claims *c,
			const struct td_block_unit *u, uint32_t tag)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[u->dev];
	const struct td_event *first = td_trace_ev(t, u->first), *last = td_trace_ev(t, u->last);
	const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, u->last));
	int64_t s = first->ts, e = td_ev_end(last), stop, from;
	size_t lo = 0, hi = dv->ngaps;
	uint32_t k, limit;

	while (lo < hi) { /* the gap the wait ended in: the first one ending at or after e */
		size_t mid = (lo + hi) / 2;
		if (dv->gaps[mid].end < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the bubble runs on after the wait until the thread launches again, when the GPU was
	 * idle as the wait ended; otherwise only the idle during the wait counts */
	stop = e;
	if (lo < dv->ngaps && dv->gaps[lo].start <= e) {
		stop = dv->gaps[lo].end;
		limit = tr->first + tr->count;
		for (k = u->last + 1; k < limit && k < u->last + 100000; k++) {
			const struct td_event *x = td_trace_ev(t, k);
			unsigned cl = td_an_class(a, x->name);
			if (x->ts >= stop)
				break;
			if (x->ts >= e && ((x->kind == TD_K_RUNTIME && (cl & NC_LAUNCH)) ||
					   (cl & NC_DATALOADER))) {
				stop = x->ts;
				break;
			}
		}
	}
	/* during the wait, the idle the accounting gave to the blocking calls (short gaps between
	 * ops queued before it are device-side overhead, not the wait's); after it, up to the
	 * rest of the blocked time from the end of the bubble */
	td_claims_add(c, s, e, CAUSE_SYNC, tag);
	td_claims_add(c, s, e, CAUSE_TRANSFER, tag);
	from = stop - (u->blocked - td_an_idle_in(a, u->dev, s, e, (1u << CAUSE_SYNC) |
						  (1u << CAUSE_TRANSFER)));
	if (from < e)
		from = e;
	td_claims_add(c, from, stop, CAUSE_COUNT, tag);
}
