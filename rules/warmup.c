/* SPDX-License-Identifier: MIT */
/* warmup: one-off start-up work inside the window - CUDA context creation and first-use calls,
 * lazy module loading, torch.compile / Triton compilation and autotuning - and the leading
 * warm-up steps left out of the steady state. The fix is to profile the steady state (and,
 * where start-up itself matters, to move or cache it); the other rules then see no start-up.
 * Sized by replaying the window without the start-up work (the steady state), else by the GPU
 * idle it holds (the warmup cause), where it is most of the window; less, it is a one-off
 * (risk 3), no per-step saving, ranked after the steady-state findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/internal.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

#define K_CALL 1    /* context / stream / handle / first allocation */
#define K_LAZY 2    /* lazy module loading */
#define K_COMPILE 4 /* compilation, autotuning */
#define K_OTHER 8   /* configured start-up spans */
#define K_CAPTURE 16 /* a graph capture: the forward pass run under capture */

struct wev {
	uint32_t ev;
	int64_t dur;
};
#define WEV_LESS(x, y) ((x)->dur > (y)->dur || ((x)->dur == (y)->dur && (x)->ev < (y)->ev))
TD_DEFINE_SORT(sort_wev, struct wev, WEV_LESS)

static unsigned kind_of(const struct td_analysis *a, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(a->t, ev);
	unsigned c = td_an_class(a, e->name);

	if (e->kind == TD_K_RUNTIME)
		return (c & NC_LAUNCH) ? K_LAZY : K_CALL;
	if (td_an_is_capture(a, ev))
		return K_CAPTURE;
	return (c & NC_COMPILE) ? K_COMPILE : K_OTHER;
}

/* The start-up spans of device index d's host window: warm runtime calls, and compile or
 * configured spans not inside another one. */
static size_t collect(const struct td_analysis *a, size_t d, struct wev **out)
{
	const struct td_trace *t = a->t;
	struct td_vec v;
	size_t i;

	td_vec_init(&v, sizeof(struct wev));
	for (i = 0; i < a->nwarm_ev; i++) {
		const struct td_event *e = td_trace_ev(t, a->warm_ev[i]);
		struct wev *w;
		if (!td_an_meets_host_window(a, d, e->ts, td_ev_end(e)) ||
		    td_an_dev_of_host(a, a->warm_ev[i], TD_NONE) != d)
			continue;
		w = td_vec_push(&v);
		w->ev = a->warm_ev[i];
		w->dur = td_ev_dur(e);
	}
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		uint32_t p;
		struct wev *w;
		if (td_kind_on_gpu_track(e->kind) ||
		    !(td_an_class(a, e->name) & (NC_COMPILE | NC_WARMUP)) ||
		    !td_an_in_host_window(a, d, e->ts))
			continue;
		p = td_trace_parent(t, (uint32_t)i);
		if (p != TD_NONE && (td_an_class(a, td_trace_ev(t, p)->name) & (NC_COMPILE | NC_WARMUP)))
			continue;
		w = td_vec_push(&v);
		w->ev = (uint32_t)i;
		w->dur = td_ev_dur(e);
	}
	sort_wev(v.data, v.len);
	*out = v.data;
	return v.len;
}

/* the part of [ts, ts + dur) inside the device's window */
static int64_t inside(const struct td_dev_analysis *dv, int64_t ts, int64_t dur)
{
	int64_t s = ts > dv->win_start ? ts : dv->win_start;
	int64_t e = ts + dur < dv->win_end ? ts + dur : dv->win_end;

	return e > s ? e - s : 0;
}

/* The fix replayed: in the steady state the start-up work is not there. A first-use call,
 * compilation or a configured span goes with what it launched (autotuning's trial kernels); a
 * launch that loaded its module costs one launch, its kernel kept. Not replayed (the idle
 * bound kept) when a span is on a thread the replay has no calls of. */
static void warm_edits(struct td_analysis *a, struct td_finding *f, const struct wev *w,
		       size_t nw)
{
	const struct td_whatif *wi = td_an_whatif(a);
	size_t i;

	if (!wi || !nw)
		return;
	for (i = 0; i < nw; i++)
		if (wi->g.track_first[td_trace_track_of(a->t, w[i].ev)] == TD_NONE)
			return;
	for (i = 0; i < nw; i++) {
		const struct td_event *e = td_trace_ev(a->t, w[i].ev);
		struct td_rp_edit ed = {TD_RP_REMOVE, td_trace_track_of(a->t, w[i].ev), e->ts,
					td_ev_end(e), 0, 0};
		if (kind_of(a, w[i].ev) == K_LAZY) {
			ed.kind = TD_RP_WARM;
			ed.residual = wi->launch_cost;
		}
		td_finding_edit(f, &ed);
	}
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	size_t d, i;
	char b1[32], b2[32], b3[32];

	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		struct td_finding *f;
		struct wev *w;
		size_t nw;
		unsigned kinds = 0;
		int64_t w_ns = dv->win_end - dv->win_start;
		char what[800] = "";

		if (!dv->idle_by_cause[CAUSE_WARMUP])
			continue;
		nw = collect(a, d, &w);
		f = td_report_add(r, "warmup", dv->device);
		f->outside = 1; /* its idle is start-up's, not the steady state's */
		td_finding_claim_cause(a, f, d, CAUSE_WARMUP);
		f->count = nw;
		for (i = 0; i < nw; i++)
			kinds |= kind_of(a, w[i].ev);
		/* the two longest, named */
		for (i = 0; i < nw && i < 2; i++) {
			const struct td_event *e = td_trace_ev(t, w[i].ev);
			char fr[256], m[300];
			size_t len = strlen(what);
			const char *n = td_trace_name(t, e->name);
			if (kind_of(a, w[i].ev) & (K_COMPILE | K_CAPTURE))
				n = td_frame_label(n, fr, sizeof(fr));
			int64_t in = inside(dv, e->ts, w[i].dur);
			snprintf(what + len, sizeof(what) - len, "%s%s%s %s%s%s%s", i ? " and " : "",
				 kind_of(a, w[i].ev) == K_LAZY ? "a first " : "", td_mark(m, sizeof(m), n),
				 td_fmt_dur(b1, sizeof(b1), in), in < w[i].dur ? " (of " : "",
				 in < w[i].dur ? td_fmt_dur(b3, sizeof(b3), w[i].dur) : "",
				 in < w[i].dur ? ")" : "");
		}
		td_finding_title(f, "Start-up work inside the window holds the GPU %s (%.0f%% of it)%s%s",
				 td_fmt_dur(b2, sizeof(b2), f->idle_ns),
				 w_ns ? 100.0 * (double)f->idle_ns / (double)w_ns : 0.0,
				 *what ? ": " : "", what);
		for (i = 0; i < dv->idle.len; i++) {
			const struct td_idle_item *it = &TD_VEC_AT(&dv->idle, struct td_idle_item, i);
			if (it->cause == CAUSE_WARMUP)
				td_finding_where(f, "%s: %s of GPU idle", td_an_label(a, it->what),
						 td_fmt_dur(b1, sizeof(b1), it->ns));
		}
		/* most of the window start-up: nothing measured is the steady state yet, so it leads,
		 * sized; less, it is a one-off that costs a step nothing and ranks after the
		 * steady-state findings (a note from a quarter of the window on) */
		f->once = 1; /* sized or not, start-up is paid once, not every step */
		if (2 * f->idle_ns < w_ns) {
			f->risk = 3;
			f->severity = 4 * f->idle_ns >= w_ns ? SEV_MEDIUM : SEV_INFO;
			td_finding_where(f, "a one-off cost, not a per-step saving: every run pays it "
					 "once, and at %.0f%% of the window the trace is not mostly "
					 "start-up, so the steady-state findings come first",
					 w_ns ? 100.0 * (double)f->idle_ns / (double)w_ns : 0.0);
		}
		if (a->warm_steps)
			td_finding_where(f, "left out of the steady state: the first %zu step%s (%s), "
					 "%.0fx the median step or longer", a->warm_steps,
					 a->warm_steps == 1 ? "" : "s",
					 td_fmt_dur(b3, sizeof(b3), a->warm_end - a->warm_start),
					 a->params.warmup_step_ratio);
		for (i = 0; i < nw && (int)i < a->params.evidence_max; i++) {
			const struct td_event *e = td_trace_ev(t, w[i].ev);
			int64_t lo = e->ts > dv->win_start ? e->ts : dv->win_start;
			int64_t in = inside(dv, e->ts, w[i].dur);
			int64_t busy = in ? td_an_busy_between(a, d, lo, lo + in) : 0;
			/* clipped to the window it is told in: a call that began before it is
			 * said so, and the GPU idle is the window's */
			td_finding_evidence(f, e->ts, w[i].dur, "%s took %s%s%s%s (GPU idle %s "
					    "meanwhile%s)", td_an_label(a, td_an_warm_label(a, w[i].ev)),
					    td_fmt_dur(b1, sizeof(b1), w[i].dur),
					    in < w[i].dur ? ", " : "",
					    in < w[i].dur ? td_fmt_dur(b3, sizeof(b3), in) : "",
					    in < w[i].dur ? " of it inside the window" : "",
					    td_fmt_dur(b2, sizeof(b2), in - busy),
					    in < w[i].dur ? ", in the window" : "");
		}
		warm_edits(a, f, w, nw);
		td_finding_value(f, "warmup_idle_ns", f->idle_ns);
		td_finding_value(f, "warmup_spans", (int64_t)nw);
		{
			char fix[2800], part[700];
			size_t o;
			td_fix_text(&a->ctx, TD_FIX_WARMUP, -1, NULL, fix, sizeof(fix));
			o = strlen(fix);
			if (kinds & K_LAZY)
				o += (size_t)snprintf(fix + o, sizeof(fix) - o, "%s",
						      td_fix_text(&a->ctx, TD_FIX_LAZY_LOADING, -1, NULL,
								  part, sizeof(part)));
			if ((kinds & K_COMPILE) && o < sizeof(fix))
				o += (size_t)snprintf(fix + o, sizeof(fix) - o, "%s",
						      td_fix_text(&a->ctx, TD_FIX_WARMUP_COMPILE, -1, NULL,
								  part, sizeof(part)));
			if ((kinds & K_CAPTURE) && o < sizeof(fix))
				o += (size_t)snprintf(fix + o, sizeof(fix) - o, "%s",
						      td_fix_text(&a->ctx, TD_FIX_WARMUP_CAPTURE, -1, NULL,
								  part, sizeof(part)));
			if ((kinds & K_CALL) && o < sizeof(fix))
				snprintf(fix + o, sizeof(fix) - o, "%s",
					 td_fix_text(&a->ctx, TD_FIX_WARMUP_CALLS, -1, NULL, part,
						     sizeof(part)));
			td_finding_fix(f, "%s", fix);
		}
		free(w);
	}
}

const struct td_rule rule_warmup = {
	.id = "warmup",
	.title = "One-off start-up work in the window: context creation, lazy loading, compilation",
	.run = run,
};
