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

/* The fix as edits of the replay: each loader span in the window shrinks to what fetching its
 * batch still costs - with workers already, the shortest span the trace shows (a batch that was
 * ready); in the main process, the batch's size at a host copy's speed - and the calls inside
 * it stay. Sets *resid (the residuals' total); 0 when the loader cannot be replayed. */
static int replay_fix(struct td_analysis *a, struct td_finding *f, struct td_vec *spans,
		      int single, int64_t shortest, int64_t *resid)
{
	const struct td_trace *t = a->t;
	struct td_rp_edit *ed;
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
	 * quarter of the median or less); when every batch waited, size it as for one process */
	if (!single && n) {
		int64_t *dur = td_calloc(n, sizeof(*dur)), med;
		for (i = 0; i < n; i++)
			dur[i] = td_ev_dur(td_trace_ev(t, sp[i].ev));
		med = td_median_i64(dur, n);
		free(dur);
		if (shortest * 4 > med)
			single = 1;
	}
	if (single)
		batch_bytes(a, sp, n);
	ed = td_calloc(n + 1, sizeof(*ed));
	*resid = 0;
	for (i = 0; i < n; i++) {
		const struct td_event *e = td_trace_ev(t, sp[i].ev);
		int64_t r = single ? (int64_t)(sp[i].bytes / FETCH_BYTES_PER_US) * 1000 : shortest;
		if (single && r < a->params.dataloader_residual_ns)
			r = a->params.dataloader_residual_ns;
		ed[i].kind = TD_RP_DROP_HOST;
		ed[i].track = td_trace_track_of(t, sp[i].ev);
		ed[i].from = e->ts;
		ed[i].to = td_ev_end(e);
		ed[i].residual = r < td_ev_dur(e) ? r : td_ev_dur(e);
		*resid += ed[i].residual;
	}
	for (i = 0; i < n; i++)
		td_finding_edit(f, &ed[i]);
	free(ed);
	return 1;
}

/* The loader's first __next__, where it is ten times the others' median and 1 ms or more: the
 * workers starting and the first batches made (resnet-2080ti: 1.94 s, then 0.1-430 ms) -
 * start-up, which every run of the loop pays once, whatever its loader does after. Taken out
 * of spans (what the finding counts and its fix replays); returns its duration, 0: none, and
 * its start in *at. */
#define LOADER_START_RATIO 10
#define LOADER_START_MIN_NS 1000000
static int64_t loader_start(struct td_analysis *a, struct td_vec *spans, int64_t *at)
{
	const struct td_trace *t = a->t;
	size_t k, first = 0, n = spans->len, m = 0;
	int64_t *o, med, fd;

	if (n < 3)
		return 0;
	for (k = 1; k < n; k++)
		if (td_trace_ev(t, TD_VEC_AT(spans, struct span, k).ev)->ts <
		    td_trace_ev(t, TD_VEC_AT(spans, struct span, first).ev)->ts)
			first = k;
	o = td_malloc((n - 1) * sizeof(*o));
	for (k = 0; k < n; k++)
		if (k != first)
			o[m++] = td_ev_dur(td_trace_ev(t, TD_VEC_AT(spans, struct span, k).ev));
	med = td_median_i64(o, m);
	free(o);
	fd = td_ev_dur(td_trace_ev(t, TD_VEC_AT(spans, struct span, first).ev));
	if (fd < LOADER_START_MIN_NS || fd < LOADER_START_RATIO * med)
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
		int64_t resid = 0;
		if (replay_fix(a, f, &spans, single, shortest, &resid))
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
