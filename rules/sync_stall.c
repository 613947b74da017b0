/* SPDX-License-Identifier: MIT */
/* sync-stall: host waits on the GPU - .item(), .cpu(), .tolist(), .numpy(), nonzero, boolean
 * indexing, cuda{Stream,Device,Event}Synchronize, synchronous cudaMemcpy and cudaMemcpyAsync
 * into pageable memory - grouped by call site. Reports calls, host-blocked time and the GPU
 * bubble that follows each (the idle gap overlapping the wait, until the GPU has work again).
 * A sync outside the steady-state window (e.g. the final cudaDeviceSynchronize) is not a stall.
 * Sized by the bubbles. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "rules/rule.h"

struct site {
	uint64_t calls;
	int64_t blocked, bubble;
	unsigned kinds; /* K_* */
};
#define K_ITEM 1
#define K_NONZERO 2
#define K_EXPLICIT 4
#define K_COPY 8

struct pair {
	uint32_t runtime, op;
};
#define PAIR_LESS(x, y) ((x)->runtime < (y)->runtime)
TD_DEFINE_SORT(sort_pairs, struct pair, PAIR_LESS)

/* the GPU memcpy launched by a runtime call, if any */
static uint32_t copy_of(const struct pair *p, size_t n, uint32_t runtime)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p[mid].runtime < runtime)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && p[lo].runtime == runtime ? p[lo].op : TD_NONE;
}

static unsigned site_kind(const struct td_analysis *a, uint32_t call, int is_copy)
{
	const struct td_trace *t = a->t;
	unsigned k = is_copy ? K_COPY : 0;
	uint32_t e;
	int ops = 0;

	for (e = td_trace_parent(t, call); e != TD_NONE; e = td_trace_parent(t, e)) {
		const char *n = td_trace_name(t, td_trace_ev(t, e)->name);
		if (td_trace_ev(t, e)->kind != TD_K_CPU_OP)
			continue;
		ops++;
		if (strstr(n, "item") || strstr(n, "_local_scalar_dense") || strstr(n, "tolist"))
			k |= K_ITEM;
		if (strstr(n, "nonzero") || strstr(n, "masked_select") || strstr(n, "index"))
			k |= K_NONZERO;
	}
	if (!ops && !is_copy)
		k |= K_EXPLICIT;
	return k;
}

/* device index for a host call: the device of its copy, else the one this thread feeds */
static size_t dev_for(const struct td_analysis *a, uint32_t call, uint32_t op)
{
	const struct td_trace *t = a->t;
	size_t d;
	int32_t dev = op != TD_NONE ? td_trace_track(t, td_trace_ev(t, op)->track)->device : -1;

	for (d = 0; d < a->ndev; d++)
		if (dev >= 0 ? a->dev[d].device == dev
			     : a->dev[d].host_track == td_trace_ev(t, call)->track)
			return d;
	return 0;
}

/* The bubble a wait leaves: device idle from the call's start until the host launches work
 * again (its next launch call on this thread) or turns to data loading, within the gap that
 * overlaps the wait. Each gap counts once. */
static int64_t bubble(const struct td_analysis *a, size_t d, uint32_t call, size_t *last)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_event *c = td_trace_ev(t, call);
	const struct td_track *tr = td_trace_track(t, c->track);
	int64_t s = c->ts, e = td_ev_end(c), stop;
	size_t lo = 0, hi = dv->ngaps;
	uint32_t k, limit;

	while (lo < hi) { /* first gap ending after s */
		size_t mid = (lo + hi) / 2;
		if (dv->gaps[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= dv->ngaps || dv->gaps[lo].start > e || lo + 1 == *last)
		return 0;
	stop = dv->gaps[lo].end;
	limit = tr->first + tr->count;
	for (k = call + 1; k < limit && k < call + 100000; k++) {
		const struct td_event *x = td_trace_ev(t, k);
		unsigned cl = td_an_class(a, x->name);
		if (x->ts >= stop)
			break;
		if (x->ts >= e && ((x->kind == TD_K_RUNTIME && (cl & NC_LAUNCH)) || (cl & NC_DATALOADER))) {
			stop = x->ts;
			break;
		}
	}
	*last = lo + 1;
	if (s < dv->gaps[lo].start)
		s = dv->gaps[lo].start;
	return stop > s ? stop - s - td_an_busy_between(a, d, s, stop) : 0;
}

static const char *fix_for(unsigned k)
{
	if (k & K_ITEM)
		return ".item()/.cpu()/.tolist() copy a value to the host and wait for the GPU. Keep "
		       "metrics on the GPU (accumulate loss.detach() and read it every N steps), and "
		       "branch with torch.where instead of Python if on tensor values.";
	if (k & K_NONZERO)
		return "nonzero() and boolean-mask indexing must copy the result size to the host. Use "
		       "fixed-size ops (torch.where, masked_fill, multiplying by the mask) or pass "
		       "torch.nonzero_static(..., size=N).";
	if (k & K_COPY)
		return "A copy to pageable host memory blocks until the GPU catches up. Copy into "
		       "pinned memory with .to(\"cpu\", non_blocking=True) and synchronize once, where "
		       "the value is really needed.";
	return "An explicit synchronize drains the GPU queue. Remove torch.cuda.synchronize() from "
	       "the step (time with CUDA events), or wait on one event/stream instead of the device.";
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	struct pair *pairs;
	size_t npairs = 0, i, d, *last_gap;
	struct site *sites;
	uint32_t nlabels, top[5];
	size_t ntop = 0;
	uint64_t calls = 0;
	int64_t blocked = 0, bubbles = 0, ws, we;
	unsigned kinds = 0;
	struct td_finding *f;
	char b1[32], b2[32], b3[32];
	struct {
		uint32_t call;
		int64_t dur;
	} ev[8];
	size_t nev = 0;

	if (!a->ndev)
		return;
	ws = a->dev[0].win_start;
	we = a->dev[0].win_end;
	pairs = td_malloc((t->events.len ? t->events.len : 1) / 8 * sizeof(*pairs) + sizeof(*pairs));
	{
		size_t cap = t->events.len / 8 + 1;
		for (i = 0; i < t->events.len; i++) {
			const struct td_event *e = td_trace_ev(t, (uint32_t)i);
			uint32_t l;
			if (e->kind != TD_K_MEMCPY || (l = td_trace_launch(t, (uint32_t)i)) == TD_NONE)
				continue;
			if (npairs == cap)
				pairs = td_realloc(pairs, (cap *= 2) * sizeof(*pairs));
			pairs[npairs].runtime = l;
			pairs[npairs].op = (uint32_t)i;
			npairs++;
		}
	}
	sort_pairs(pairs, npairs);
	last_gap = td_calloc(a->ndev, sizeof(size_t));
	sites = NULL;
	nlabels = 0;
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		unsigned c;
		uint32_t op = TD_NONE, site;
		int is_copy = 0;
		int64_t bub;

		if (td_kind_on_gpu_track(e->kind) || e->ts < ws || e->ts >= we)
			continue;
		c = td_an_class(a, e->name);
		if (e->kind != TD_K_RUNTIME && !(c & NC_USER_SYNC))
			continue;
		if (c & NC_USER_SYNC) {
			/* configured as synchronizing */
		} else if (c & NC_MEMCPY_CALL) {
			enum td_copy_dir dir;
			enum td_mem_kind src, dst;
			op = copy_of(pairs, npairs, (uint32_t)i);
			if (op == TD_NONE)
				continue;
			td_memcpy_kind(td_trace_name(t, td_trace_ev(t, op)->name), &dir, &src, &dst);
			if (!(c & NC_MEMCPY_SYNC) && !(dir == CD_DTOH && dst == MK_PAGEABLE))
				continue;
			is_copy = 1;
		} else if (!(c & NC_SYNC_CALL)) {
			continue;
		}
		site = td_an_site(a, (uint32_t)i);
		if (site >= nlabels) {
			uint32_t n = a->labels.count + 64;
			sites = td_realloc(sites, n * sizeof(*sites));
			memset(sites + nlabels, 0, (n - nlabels) * sizeof(*sites));
			nlabels = n;
		}
		d = dev_for(a, (uint32_t)i, op);
		bub = bubble(a, d, (uint32_t)i, &last_gap[d]);
		sites[site].calls++;
		sites[site].blocked += td_ev_dur(e);
		sites[site].bubble += bub;
		sites[site].kinds |= site_kind(a, (uint32_t)i, is_copy);
		calls++;
		blocked += td_ev_dur(e);
		bubbles += bub;
		/* keep the 8 longest waits */
		if (nev < 8) {
			ev[nev].call = (uint32_t)i;
			ev[nev++].dur = td_ev_dur(e);
		} else {
			size_t m = 0, k;
			for (k = 1; k < nev; k++)
				if (ev[k].dur < ev[m].dur)
					m = k;
			if (td_ev_dur(e) > ev[m].dur) {
				ev[m].call = (uint32_t)i;
				ev[m].dur = td_ev_dur(e);
			}
		}
	}
	free(pairs);
	free(last_gap);
	if (!calls) {
		free(sites);
		return;
	}
	f = td_report_add(r, "sync-stall", a->dev[0].device);
	f->savings_ns = bubbles;
	f->count = calls;
	/* the top sites by bubble, then blocked time */
	for (;;) {
		uint32_t best = 0, s;
		for (s = 1; s < nlabels; s++) {
			size_t k;
			int taken = 0;
			for (k = 0; k < ntop; k++)
				taken |= top[k] == s;
			if (!sites[s].calls || taken)
				continue;
			if (!best || sites[s].bubble > sites[best].bubble ||
			    (sites[s].bubble == sites[best].bubble && sites[s].blocked > sites[best].blocked))
				best = s;
		}
		if (!best || ntop == 5)
			break;
		top[ntop++] = best;
	}
	td_finding_title(f, "%llu host sync%s%s%s block the host %s; the GPU idles %s after them",
			 (unsigned long long)calls, calls == 1 ? "" : "s", ntop ? " at " : "",
			 ntop ? td_an_label(a, top[0]) : "", td_fmt_dur(b1, sizeof(b1), blocked),
			 td_fmt_dur(b2, sizeof(b2), bubbles));
	for (i = 0; i < ntop; i++) {
		struct site *s = &sites[top[i]];
		td_finding_where(f, "%s: %llu calls, host blocked %s, GPU idle after %s",
				 td_an_label(a, top[i]), (unsigned long long)s->calls,
				 td_fmt_dur(b1, sizeof(b1), s->blocked),
				 td_fmt_dur(b2, sizeof(b2), s->bubble));
		kinds |= s->kinds;
	}
	/* evidence: longest waits first */
	for (i = 0; i < nev; i++) {
		size_t m = i, k;
		for (k = i + 1; k < nev; k++)
			if (ev[k].dur > ev[m].dur || (ev[k].dur == ev[m].dur && ev[k].call < ev[m].call))
				m = k;
		if (m != i) {
			uint32_t c = ev[i].call;
			int64_t du = ev[i].dur;
			ev[i] = ev[m];
			ev[m].call = c;
			ev[m].dur = du;
		}
	}
	for (i = 0; i < nev && (int)i < a->params.evidence_max; i++) {
		const struct td_event *e = td_trace_ev(t, ev[i].call);
		td_finding_evidence(f, e->ts, td_ev_dur(e), "%s blocked %s at %s",
				    td_trace_name(t, e->name), td_fmt_dur(b3, sizeof(b3), td_ev_dur(e)),
				    td_an_label(a, td_an_site(a, ev[i].call)));
	}
	{
		char fix[2048] = "";
		unsigned order[] = {K_ITEM, K_NONZERO, K_COPY, K_EXPLICIT};
		size_t k, n = 0;
		for (k = 0; k < 4 && n < 2; k++) {
			if (!(kinds & order[k]))
				continue;
			if (n++)
				strncat(fix, " ", sizeof(fix) - strlen(fix) - 1);
			strncat(fix, fix_for(order[k]), sizeof(fix) - strlen(fix) - 1);
		}
		td_finding_fix(f, "%s", fix);
	}
	free(sites);
}

const struct td_rule rule_sync_stall = {
	.id = "sync-stall",
	.title = "Host waits on the GPU (.item(), .cpu(), synchronize, blocking copies)",
	.run = run,
};
