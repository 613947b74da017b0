/* SPDX-License-Identifier: MIT */
/* dataloader: time in enumerate(DataLoader)#...__next__ per step, its share of the steps and
 * the GPU idle under it. Flagged from params.dataloader_share of the steady state (5%, the
 * TensorBoard plugin's threshold); sized by the GPU idle it causes (the dataloader cause). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

/* What fetching a batch from workers that keep up still costs the loop: the batch received,
 * about one host copy of it (at FETCH_BYTES_PER_US, 10 GB/s; a ResNet-50 batch of 19 MB took
 * 1.4 ms with 4 workers), sized by the bytes the thread uploads after the span and before the
 * next one; no less than params.dataloader_residual_ns. */
#define FETCH_BYTES_PER_US 10000
#define LOADER_READY_NS 1000000 /* a span this long waited (sizing/graph.c's LOADER_WAIT_NS) */

struct span {
	uint32_t ev;
	uint64_t bytes;     /* uploaded after it, before the next span on its thread */
};

static void batch_bytes(struct td_analysis *a, struct span *sp, size_t n)
{
	const struct td_trace *t = a->t;
	struct td_dev_events it;
	uint32_t k;

	for (td_gpu_events_begin(&it, t); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k), *l;
		uint32_t lk = td_trace_launch(t, k);
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		const struct td_track *tr;
		size_t lo;
		if (e->kind != TD_K_MEMCPY || lk == TD_NONE)
			continue;
		td_memcpy_kind(td_trace_name(t, e->name), &dir, &src, &dst);
		if (dir != CD_HTOD)
			continue;
		l = td_trace_ev(t, lk);
		tr = td_trace_track(t, td_trace_track_of(t, lk));
		/* the last span starting before the launch (spans are by track, then time; a
		 * track's events are [first, first + count)) */
		TD_LOWER_BOUND(lo, n, sp[mid].ev < tr->first ||
				     (sp[mid].ev < tr->first + tr->count &&
				      td_trace_ev(t, sp[mid].ev)->ts <= l->ts));
		if (lo && sp[lo - 1].ev >= tr->first &&
		    td_ev_end(td_trace_ev(t, sp[lo - 1].ev)) <= l->ts)
			sp[lo - 1].bytes += TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
	}
}

/* The loader's other threads: host threads, not the loop's, that make runtime calls inside its
 * spans - the pin_memory thread, pinning each batch as it comes. Under the loader's fix they
 * hold the loop nowhere (TD_RP_UNJOIN over the whole trace, an edit each into *out). */
#define LOADER_THREADS_MAX 8
static void loader_threads(struct td_analysis *a, const struct td_vec *spans, struct td_vec *out)
{
	const struct td_trace *t = a->t;
	const struct span *sp = spans->data;
	size_t n = spans->len, lo, i, nt = 0, j;
	uint32_t k, tracks[LOADER_THREADS_MAX], loop;
	int64_t from, to;

	if (!n)
		return;
	loop = td_trace_track_of(t, sp[0].ev);
	from = td_trace_ev(t, sp[0].ev)->ts;
	to = td_ev_end(td_trace_ev(t, sp[n - 1].ev));
	TD_FOR_KIND(t, TD_K_RUNTIME, j, k) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t tr;
		if (e->kind != TD_K_RUNTIME || e->ts < from || e->ts >= to)
			continue;
		tr = td_trace_track_of(t, k);
		if (tr == loop || td_trace_track(t, tr)->is_gpu)
			continue;
		for (i = 0; i < nt && tracks[i] != tr; i++)
			;
		if (i < nt || nt == LOADER_THREADS_MAX)
			continue;
		/* inside a span: the last one starting at or before it (spans by time) */
		TD_LOWER_BOUND(lo, n, td_trace_ev(t, sp[mid].ev)->ts <= e->ts);
		if (lo && e->ts < td_ev_end(td_trace_ev(t, sp[lo - 1].ev)))
			tracks[nt++] = tr;
	}
	for (i = 0; i < nt; i++) {
		struct td_rp_edit *ed = td_vec_push(out);
		memset(ed, 0, sizeof(*ed));
		ed->kind = TD_RP_UNJOIN;
		ed->track = tracks[i];
		ed->from = INT64_MIN / 2; /* all of its bursts: it pins every batch */
		ed->to = INT64_MAX / 2;
	}
}

/* The fix as edits of the replay (into *out, struct td_rp_edit): each loader span in the window
 * shrinks to what fetching its batch still costs - with workers already, the shortest span the
 * trace shows (a batch that was ready); in the main process, the batch's size at a host copy's
 * speed - plus `keep` of the wait it then loses (a share that stays: a pool made faster but
 * still behind, which waits as long in each span that waited, in proportion), and the calls
 * inside it stay; the loader's other threads the loop joins after it (pin_memory) no longer
 * hold it (TD_RP_UNJOIN). Sets *resid (the residuals' total); 0 when the loader cannot be
 * replayed. */
static int fix_edits(struct td_analysis *a, struct td_vec *spans, int single, int64_t shortest,
		     double keep, struct td_vec *out, int64_t *resid)
{
	const struct td_trace *t = a->t;
	struct span *sp = spans->data;
	size_t i, n = spans->len;

	/* a loader on a thread that makes no runtime calls: the graph does not know who waits
	 * for it, so it is not replayed (sized by the idle it causes) */
	for (i = 0; i < n; i++) {
		const struct td_whatif *w = td_an_whatif(a);
		if (!w || w->g.track_first[td_trace_track_of(t, sp[i].ev)] == TD_NONE)
			return 0;
	}
	/* workers already: the shortest span is a ready batch's cost when it stands out (a
	 * quarter of the median or less) and is short (receiving a ready batch takes well under
	 * LOADER_READY_NS: dlrm-v100-rank1's 81-118 us); when every batch waited - workers that
	 * drifted apart, each batch coming alone, the shortest span the least wait - size it as
	 * for one process */
	if (!single && n) {
		int64_t *dur = td_calloc(n, sizeof(*dur)), med;
		for (i = 0; i < n; i++)
			dur[i] = td_ev_dur(td_trace_ev(t, sp[i].ev));
		med = td_median_i64(dur, n);
		free(dur);
		if (shortest * 4 > med || shortest >= LOADER_READY_NS)
			single = 1;
	}
	if (single) {
		for (i = 0; i < n; i++)
			sp[i].bytes = 0;
		batch_bytes(a, sp, n);
	}
	*resid = 0;
	for (i = 0; i < n; i++) {
		const struct td_event *e = td_trace_ev(t, sp[i].ev);
		int64_t r = single ? (int64_t)(sp[i].bytes / FETCH_BYTES_PER_US) * 1000 : shortest;
		struct td_rp_edit ed;
		if (single && r < a->params.dataloader_residual_ns)
			r = a->params.dataloader_residual_ns;
		if (r < td_ev_dur(e))
			r += (int64_t)(keep * (double)(td_ev_dur(e) - r));
		memset(&ed, 0, sizeof(ed));
		ed.kind = TD_RP_DROP_HOST;
		ed.track = td_trace_track_of(t, sp[i].ev);
		ed.from = e->ts;
		ed.to = td_ev_end(e);
		ed.residual = r < td_ev_dur(e) ? r : td_ev_dur(e);
		*resid += ed.residual;
		*(struct td_rp_edit *)td_vec_push(out) = ed;
	}
	loader_threads(a, spans, out);
	return 1;
}

/* The pool that cannot keep up: K workers taking W a batch make one every W/K, the steps'
 * pace P while the loop waits in __next__; the loop's own work is S = P less the wait the
 * fix removes. Keeping up takes P/S times the workers (K is not in the trace); K doubled
 * makes the pace P/2, a wait of P/2 - S a step left. The pin_memory thread pins each batch
 * (pin a batch): after the fix it holds the pace where it takes longer than S. */
struct pool {
	int64_t pace, own, wait, pin;
};

static void pool_of(struct td_analysis *a, size_t dev, const struct td_vec *spans, int64_t w,
		    int64_t first, int64_t total, int64_t resid, struct pool *p)
{
	const struct td_trace *t = a->t;
	uint32_t loop_track = spans->len ? td_trace_track_of(t, TD_VEC_AT(spans, struct span,
								       0).ev) : TD_NONE;
	int64_t n = (int64_t)spans->len, pinned = 0, pins = 0;
	uint32_t k, pin;
	size_t j;

	memset(p, 0, sizeof(*p));
	if (!n)
		return;
	p->pace = (w - first) / n;
	p->wait = (total - resid) / n;
	p->own = p->pace - p->wait;
	pin = td_strtab_find(&t->names, "aten::pin_memory", 16);
	TD_FOR_KIND(t, TD_K_CPU_OP, j, k) { /* aten::pin_memory on another thread */
		const struct td_event *e = td_trace_ev(t, k);
		if (!pin)
			break;
		if (e->kind == TD_K_CPU_OP && e->name == pin &&
		    td_trace_track_of(t, k) != loop_track &&
		    td_an_in_host_window(a, dev, e->ts)) {
			pinned += td_ev_dur(e);
			pins++;
		}
	}
	p->pin = pins ? pinned / pins : 0;
}

/* The finding's edits, and the pool's figures said; the other fix (num_workers doubled)
 * replayed beside the waits gone. Returns the residuals' total, -1: not replayed. */
static int64_t replay_fix(struct td_analysis *a, struct td_finding *f, size_t dev,
			  struct td_vec *spans, int single, int64_t shortest, int64_t w,
			  int64_t first, int64_t total)
{
	struct td_vec ed;
	struct pool p;
	int64_t resid = 0, extra = 0, r2;
	size_t i;
	int behind;
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
	int64_t steps = a->has_steps && a->nsteps ? (int64_t)a->nsteps : (int64_t)spans->len;

	td_vec_init(&ed, sizeof(struct td_rp_edit));
	if (!fix_edits(a, spans, single, shortest, 0.0, &ed, &resid)) {
		td_vec_free(&ed);
		return -1;
	}
	pool_of(a, dev, spans, w, first, total, resid, &p);
	/* workers that cannot keep up: __next__ waits at their pace (the replay's gates: not a
	 * fixed cost of receiving each batch), a tenth of the steps or more */
	behind = !single && p.own > 0 && p.wait * 10 >= p.pace && td_an_whatif(a) &&
		 td_an_whatif(a)->g.gates.len;
	if (!single && p.pin > p.own && p.own > 0) { /* the pin thread then holds the pace */
		extra = p.pin - p.own;
		ed.len = 0;
		fix_edits(a, spans, single, shortest, p.wait > 0 ? (double)extra / (double)p.wait
			  : 0.0, &ed, &resid);
		td_finding_where(f, "the pin_memory thread pins a batch in %s, longer than the "
				 "loop's own %s a step: with the workers keeping up it holds the "
				 "pace, so %s a step of the wait stays",
				 td_fmt_dur(b1, sizeof(b1), p.pin), td_fmt_dur(b2, sizeof(b2), p.own),
				 td_fmt_dur(b3, sizeof(b3), extra));
	} else if (behind && p.pin) {
		td_finding_where(f, "the pin_memory thread pins each batch (%s a batch): with the "
				 "batches late it pins them inside __next__, which goes with the waits",
				 td_fmt_dur(b1, sizeof(b1), p.pin));
	}
	for (i = 0; i < ed.len; i++)
		td_finding_edit(f, &TD_VEC_AT(&ed, struct td_rp_edit, i));
	if (behind) {
		int64_t base = td_whatif_base(a, dev), all, half;
		all = base > 0 ? td_whatif_window(a, dev, ed.data, ed.len) : -1;
		ed.len = 0;
		half = p.pace / 2 - p.own > 0 ? p.pace / 2 - p.own : 0;
		if (extra > half)
			half = extra;
		fix_edits(a, spans, single, shortest, (double)half / (double)p.wait, &ed, &r2);
		r2 = base > 0 ? td_whatif_window(a, dev, ed.data, ed.len) : -1;
		if (steps < 1)
			steps = 1;
		td_finding_where(f, "the workers make a batch every %s (the steps' pace; the loop "
				 "waits %s a step for it in __next__, its own work takes %s): to keep "
				 "up they must be %.1fx as many (num_workers is not in the trace, nor "
				 "how many CPU cores are free for them) - the saving above is what "
				 "that wins; num_workers doubled makes a batch every %s and wins ~%s "
				 "(replayed, %s a step)", td_fmt_dur(b1, sizeof(b1), p.pace),
				 td_fmt_dur(b2, sizeof(b2), p.wait), td_fmt_dur(b3, sizeof(b3), p.own),
				 (double)p.pace / (double)p.own, td_fmt_dur(b4, sizeof(b4), p.pace / 2),
				 r2 < 0 ? "?" : td_fmt_dur(b5, sizeof(b5), base - r2),
				 r2 < 0 ? "?" : td_fmt_dur(b6, sizeof(b6), (base - r2) / steps));
		if (all >= 0)
			td_finding_alt(f, "workers_keep_up", base - all);
		if (r2 >= 0)
			td_finding_alt(f, "double_workers", base - r2);
		td_finding_value(f, "pace_ns", p.pace);
		td_finding_value(f, "loop_own_ns", p.own);
	}
	td_vec_free(&ed);
	return resid;
}

/* The loader's first __next__, where it is ten times the others' median, twice the longest of
 * them and 1 ms or more: the workers starting and the first batches made (resnet-2080ti: 1.94
 * s, then 0.1-748 ms) - start-up, which every run of the loop pays once, whatever its loader
 * does after. Not a pool's steady wait: K workers that cannot keep up hand over K batches at
 * once, so the others' median is a ready batch's cost while each K-th waits as long as the
 * first (2 workers: 25, 0.1, 14, 0.1 ms). Taken out of spans (what the finding counts and its
 * fix replays); returns its duration, 0: none, and its start in *at. */
#define LOADER_START_RATIO 10
#define LOADER_START_OVER_LONGEST 2
#define LOADER_START_MIN_NS 1000000
static int64_t loader_start(struct td_analysis *a, struct td_vec *spans, int64_t *at)
{
	const struct td_trace *t = a->t;
	size_t k, first = 0, n = spans->len, m = 0;
	int64_t *o, med, fd, longest = 0;

	if (n < 3)
		return 0;
	for (k = 1; k < n; k++)
		if (td_trace_ev(t, TD_VEC_AT(spans, struct span, k).ev)->ts <
		    td_trace_ev(t, TD_VEC_AT(spans, struct span, first).ev)->ts)
			first = k;
	o = td_malloc((n - 1) * sizeof(*o));
	for (k = 0; k < n; k++)
		if (k != first) {
			o[m] = td_ev_dur(td_trace_ev(t, TD_VEC_AT(spans, struct span, k).ev));
			if (o[m] > longest)
				longest = o[m];
			m++;
		}
	med = td_median_i64(o, m);
	free(o);
	fd = td_ev_dur(td_trace_ev(t, TD_VEC_AT(spans, struct span, first).ev));
	if (fd < LOADER_START_MIN_NS || fd < LOADER_START_RATIO * med ||
	    fd < LOADER_START_OVER_LONGEST * longest)
		return 0;
	*at = td_trace_ev(t, TD_VEC_AT(spans, struct span, first).ev)->ts;
	memmove(&TD_VEC_AT(spans, struct span, first), &TD_VEC_AT(spans, struct span, first + 1),
		(n - first - 1) * sizeof(struct span));
	spans->len--;
	return fd;
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	int64_t total = 0, longest = 0, shortest = INT64_MAX, w, idle = 0;
	uint64_t calls = 0;
	int single = 0;
	uint32_t name = 0, i, top[8];
	size_t ntop = 0, d, best_dev = 0, k;
	int64_t first_dur, first_at = 0;
	int64_t ws, we;
	struct td_finding *f;
	struct td_vec spans;       /* struct span: the loader spans in the window, for the replay */
	char b1[32], b2[32], b3[32], b4[32];

	if (!a->ndev || a->serving) /* a server's requests do not come from a DataLoader */
		return;
	for (d = 0; d < a->ndev; d++) /* the device the loader holds up most */
		if (a->dev[d].idle_by_cause[CAUSE_DATALOADER] > idle) {
			idle = a->dev[d].idle_by_cause[CAUSE_DATALOADER];
			best_dev = d;
		}
	ws = a->dev[best_dev].host_start;
	we = a->dev[best_dev].host_end;
	w = we - ws;
	td_vec_init(&spans, sizeof(struct span));
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);

		if (e->ts < ws || e->ts >= we || !td_an_outer_dataloader(a, i))
			continue;
		((struct span *)td_vec_push(&spans))->ev = i;
	}
	first_dur = loader_start(a, &spans, &first_at);
	for (k = 0; k < spans.len; k++) {
		const struct td_event *e;
		unsigned c;
		i = TD_VEC_AT(&spans, struct span, k).ev;
		e = td_trace_ev(t, i);
		c = td_an_class(a, e->name);
		total += td_ev_dur(e);
		calls++;
		if (td_ev_dur(e) < shortest)
			shortest = td_ev_dur(e);
		if (c & NC_SINGLE_PROC_DL)
			single = 1;
		if (!name || td_ev_dur(e) > longest) {
			name = e->name;
			longest = td_ev_dur(e);
		}
		/* keep the longest few calls for evidence */
		ntop = td_an_keep_longest(t, top, ntop, 8, i);
	}
	if (!calls || w <= 0 || (double)total < a->params.dataloader_share * (double)w) {
		td_vec_free(&spans);
		return;
	}
	f = td_report_add(r, "dataloader", a->dev[best_dev].device);
	f->lifts_gates = 1; /* the loop's waits for the workers go with it */
	/* the first __next__'s idle is start-up: held here (no other finding's), but left out of
	 * what the fix wins back, as its time is */
	for (d = 0; d < a->ndev; d++)
		if (td_finding_claim_cause(a, f, d, CAUSE_DATALOADER) && first_dur)
			f->idle_ns -= td_an_idle_in(a, d, first_at, first_at + first_dur,
						    1u << CAUSE_DATALOADER);
	f->count = calls;
	if (a->has_steps && a->nsteps) {
		int64_t per = total / (int64_t)a->nsteps;
		td_finding_title(f, "DataLoader takes %.0f%% of the steady-state steps (%s per step, "
				 "mean; steps take %s mean, %s median); the GPU waits for it %s",
				 100.0 * (double)total / (double)w, td_fmt_dur(b1, sizeof(b1), per),
				 td_fmt_dur(b2, sizeof(b2), td_an_mean_step(a)),
				 td_fmt_dur(b4, sizeof(b4), td_an_median_step(a)),
				 td_fmt_dur(b3, sizeof(b3), f->idle_ns));
	} else {
		td_finding_title(f, "DataLoader takes %.0f%% of the window from the first to the last "
				 "GPU op (%s in %llu calls); the GPU waits for it %s",
				 100.0 * (double)total / (double)w, td_fmt_dur(b1, sizeof(b1), total),
				 (unsigned long long)calls, td_fmt_dur(b3, sizeof(b3), f->idle_ns));
	}
	td_finding_where(f, "%s (%llu call%s, %s in total, longest %s)", td_an_name(a, name),
			 (unsigned long long)calls, calls == 1 ? "" : "s",
			 td_fmt_dur(b1, sizeof(b1), total), td_fmt_dur(b2, sizeof(b2), longest));
	if (first_dur)
		td_finding_where(f, "its first __next__ (%s: the workers starting, the first batches "
				 "made) is start-up, left out: every run pays it once",
				 td_fmt_dur(b1, sizeof(b1), first_dur));
	td_an_longest_first(t, top, ntop); /* the evidence */
	for (k = 0; k < ntop && (int)k < a->params.evidence_max; k++) {
		const struct td_event *e = td_trace_ev(t, top[k]);
		int64_t busy = td_an_busy_between(a, best_dev, e->ts, td_ev_end(e));
		td_finding_evidence(f, e->ts, td_ev_dur(e), "__next__ took %s; GPU busy %.0f%% meanwhile",
				    td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)),
				    td_ev_dur(e) ? 100.0 * (double)busy / (double)td_ev_dur(e) : 0.0);
	}
	{
		int64_t resid = replay_fix(a, f, best_dev, &spans, single, shortest, w, first_dur,
					   total);
		if (resid >= 0)
			td_finding_value(f, "residual_ns", resid);
		td_vec_free(&spans);
	}
	td_finding_value(f, "dataloader_ns", total);
	td_finding_value(f, "calls", (int64_t)calls);
	{
		char fix[1200];
		td_fix_text(&a->ctx, single ? TD_FIX_LOADER_MAIN : TD_FIX_LOADER_WORKERS, -1, NULL, fix,
			    sizeof(fix));
		td_finding_fix(f, "%s", fix);
	}
}

const struct td_rule rule_dataloader = {
	.id = "dataloader",
	.title = "DataLoader time per step and the GPU idle it causes",
	.run = run,
};
