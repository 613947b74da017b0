/* SPDX-License-Identifier: MIT */
/* startup: one-off start-up before the steady state - the part of the trace before the window
 * the findings are measured on that start-up work holds: start-up calls and graph captures
 * (analysis/startup.c), compilation and configured start-up spans, the warm-up steps left
 * out, and first calls of ops that took far longer than their later calls (cuBLAS or cuDNN
 * initialising inside the first aten::mm). It is no per-step saving: a one-off cost, told as
 * such (risk 3). When it is most of the trace the report leads with it, since nothing measured
 * after it is the run's steady state yet; from a tenth of the trace it is a note. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/internal.h"
#include "analysis/intervals.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"

#define STARTUP_MIN_NS 10000000 /* told from 10 ms ... */
#define STARTUP_NOTE 0.10       /* ... and a tenth of the trace */
#define STARTUP_LEAD 0.50       /* the report leads with it from half of the trace */
#define FIRST_CALL_X 10         /* a first call this many times its later calls' median */
#define FIRST_CALL_NS 1000000   /* ... and 1 ms or more */

struct piece {
	uint32_t ev;
	int64_t ns;   /* its part before the window */
};

static int piece_longer(const void *x, const void *y)
{
	const struct piece *a = x, *b = y;
	return a->ns != b->ns ? (a->ns < b->ns ? 1 : -1) : (a->ev > b->ev) - (a->ev < b->ev);
}

static void add(struct td_vec *iv, struct td_vec *pc, uint32_t ev, int64_t from, int64_t to,
		int64_t lo, int64_t hi)
{
	struct td_interval *x;
	struct piece *p;

	if (from < lo)
		from = lo;
	if (to > hi)
		to = hi;
	if (to <= from)
		return;
	x = td_vec_push(iv);
	x->start = from;
	x->end = to;
	if (ev != TD_NONE) {
		p = td_vec_push(pc);
		p->ev = ev;
		p->ns = to - from;
	}
}

/* Top-level CPU ops begun before `hi` whose first call took FIRST_CALL_X times its name's later
 * calls' median: what they did the first time was start-up (a library's handle, its
 * workspace, its kernels' modules). Each name's first such call found in one pass, its later
 * calls on its thread gathered in a second (a scan of the thread per name was quadratic in
 * the names), then each median taken. */
static void first_calls(const struct td_analysis *a, int64_t lo, int64_t hi, struct td_vec *iv,
			struct td_vec *pc)
{
	size_t sj;
	const struct td_trace *t = a->t;
	uint32_t nn = t->names.count + 1, i, *first = td_malloc(nn * sizeof(*first)), *cands;
	uint32_t *end = NULL;
	struct td_vec cv;
	size_t ncand = 0, c, *at = NULL, *fill = NULL;
	int64_t *later = NULL;

	memset(first, 0xff, nn * sizeof(*first)); /* TD_NONE: no first call */
	td_vec_init(&cv, sizeof(uint32_t));
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		uint32_t p = td_trace_parent(t, i);
		if (e->kind != TD_K_CPU_OP || e->ts >= hi || first[e->name] != TD_NONE ||
		    td_ev_dur(e) < FIRST_CALL_NS)
			continue;
		while (p != TD_NONE && td_trace_ev(t, p)->kind != TD_K_CPU_OP)
			p = td_trace_parent(t, p);
		if (p != TD_NONE)
			continue;
		first[e->name] = i;
		*(uint32_t *)td_vec_push(&cv) = i;
	}
	cands = cv.data;
	ncand = cv.len;
	if (!ncand)
		goto out;
	/* each first call's later calls of its name on its thread: counted, then placed */
	end = td_malloc(nn * sizeof(*end));
	at = td_calloc(nn + 1, sizeof(*at));
	for (c = 0; c < ncand; c++) {
		const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, cands[c]));
		end[td_trace_ev(t, cands[c])->name] = tr->first + tr->count;
	}
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *x = td_trace_ev(t, i);
		if (x->kind == TD_K_CPU_OP && first[x->name] != TD_NONE && i > first[x->name] &&
		    i < end[x->name])
			at[x->name + 1]++;
	}
	for (i = 0; i < nn; i++)
		at[i + 1] += at[i];
	fill = td_malloc(nn * sizeof(*fill));
	memcpy(fill, at, nn * sizeof(*fill));
	later = td_malloc((at[nn] ? at[nn] : 1) * sizeof(*later));
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *x = td_trace_ev(t, i);
		if (x->kind == TD_K_CPU_OP && first[x->name] != TD_NONE && i > first[x->name] &&
		    i < end[x->name])
			later[fill[x->name]++] = td_ev_dur(x);
	}
	for (c = 0; c < ncand; c++) {
		const struct td_event *e = td_trace_ev(t, cands[c]);
		size_t n = at[e->name + 1] - at[e->name];
		int64_t med;
		if (!n)
			continue;
		med = td_median_i64(later + at[e->name], n);
		if (td_ev_dur(e) >= FIRST_CALL_X * (med > 0 ? med : 1))
			add(iv, pc, cands[c], e->ts, td_ev_end(e) - med, lo, hi);
	}
out:
	free(later);
	free(fill);
	free(at);
	free(end);
	td_vec_free(&cv);
	free(first);
}

/* what a piece is: a start-up call's kind, or the first call of an op */
static uint32_t label_of(struct td_analysis *a, uint32_t ev)
{
	const struct td_event *e = td_trace_ev(a->t, ev);
	char buf[600], m[520];

	if (e->kind != TD_K_CPU_OP || (td_an_class(a, e->name) & (NC_COMPILE | NC_WARMUP)))
		return td_an_warm_label(a, ev);
	snprintf(buf, sizeof(buf), "first call of %s (a library initialising: far longer than its "
		 "later calls)", td_mark(m, sizeof(m), td_trace_name(a->t, e->name)));
	return td_an_intern(a, buf);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	int64_t lo = INT64_MAX, end = INT64_MIN, hi = INT64_MAX, span, held;
	struct td_vec iv, pc;
	struct td_finding *f;
	size_t i, d;
	char b1[32], b2[32], b3[32], fix[3200], part[700];

	if (!a->ndev)
		return;
	for (i = 0; i < t->events.len; i++) { /* the trace's span */
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		if (e->kind == TD_K_OTHER_SPAN) /* the profiler's own span ("PyTorch Profiler") */
			continue;
		if (e->ts < lo)
			lo = e->ts;
		if (td_ev_end(e) > end)
			end = td_ev_end(e);
	}
	for (d = 0; d < a->ndev; d++) { /* the steady state begins with its first device's */
		int64_t s = a->dev[d].host_start < a->dev[d].win_start ? a->dev[d].host_start
			    : a->dev[d].win_start;
		if (s < hi)
			hi = s;
	}
	span = end - lo;
	if (span <= 0 || hi <= lo || (double)(hi - lo) < STARTUP_NOTE * (double)span)
		return;
	td_vec_init(&iv, sizeof(struct td_interval));
	td_vec_init(&pc, sizeof(struct piece));
	for (i = 0; i < a->nwarm_ev; i++) {
		const struct td_event *e = td_trace_ev(t, a->warm_ev[i]);
		add(&iv, &pc, a->warm_ev[i], e->ts, td_ev_end(e), lo, hi);
	}
	for (i = 0; i < t->events.len; i++) { /* compilation, configured start-up spans */
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		uint32_t p;
		if (e->ts >= hi || td_kind_on_gpu_track(e->kind) ||
		    !(td_an_class(a, e->name) & (NC_COMPILE | NC_WARMUP)))
			continue;
		p = td_trace_parent(t, (uint32_t)i);
		if (p != TD_NONE && (td_an_class(a, td_trace_ev(t, p)->name) & (NC_COMPILE | NC_WARMUP)))
			continue;
		add(&iv, &pc, (uint32_t)i, e->ts, td_ev_end(e), lo, hi);
	}
	if (a->warm_steps)
		add(&iv, &pc, TD_NONE, a->warm_start, a->warm_end, lo, hi);
	first_calls(a, lo, hi, &iv, &pc);
	held = iv.len ? td_iv_total_in(iv.data, td_iv_merge(iv.data, iv.len), lo, hi) : 0;
	td_vec_free(&iv);
	if (held < STARTUP_MIN_NS || (double)held < STARTUP_NOTE * (double)span) {
		td_vec_free(&pc);
		return;
	}
	if (pc.len)
		qsort(pc.data, pc.len, sizeof(struct piece), piece_longer);
	f = td_report_add(r, "startup", a->dev[0].device);
	f->risk = 3;
	f->severity = (double)held >= STARTUP_LEAD * (double)span ? SEV_HIGH
		      : (double)held >= 0.25 * (double)span ? SEV_MEDIUM : SEV_INFO;
	f->count = pc.len;
	{
		char what[700] = "";
		for (i = 0; i < pc.len && i < 2; i++) {
			const struct piece *p = &TD_VEC_AT(&pc, struct piece, i);
			size_t len = strlen(what);
			snprintf(what + len, sizeof(what) - len, "%s%s %s", i ? " and " : ": ",
				 td_an_label(a, label_of(a, p->ev)), td_fmt_dur(b1, sizeof(b1),
											  p->ns));
		}
		td_finding_title(f, "Start-up holds %s of the %s trace (%.0f%%) before the steady state "
				 "begins%s%s", td_fmt_dur(b1, sizeof(b1), held),
				 td_fmt_dur(b2, sizeof(b2), span), 100.0 * (double)held / (double)span,
				 f->severity == SEV_HIGH ? ", so the trace is mostly start-up" : "", what);
	}
	td_finding_where(f, "a one-off cost, not a per-step saving: the steady state measured after "
			 "it is %s (%s)", td_fmt_dur(b3, sizeof(b3), end - hi),
			 a->has_steps ? "its steps" : "from the first to the last GPU op");
	for (i = 0; i < pc.len && (int)i < a->params.evidence_max; i++) {
		const struct piece *p = &TD_VEC_AT(&pc, struct piece, i);
		const struct td_event *e = td_trace_ev(t, p->ev);
		td_finding_evidence(f, e->ts, td_ev_dur(e), "%s took %s, %s of it before the steady "
				    "state", td_an_label(a, label_of(a, p->ev)),
				    td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)),
				    td_fmt_dur(b2, sizeof(b2), p->ns));
	}
	td_finding_value(f, "startup_before_ns", held);
	td_finding_value(f, "trace_ns", span);
	/* profile the steady state; then what each kind of start-up it holds needs */
	td_fix_text(&a->ctx, TD_FIX_WARMUP, -1, NULL, fix, sizeof(fix));
	{
		unsigned kinds = 0;
		for (i = 0; i < pc.len; i++) {
			const struct td_event *e = td_trace_ev(t, TD_VEC_AT(&pc, struct piece, i).ev);
			unsigned c = td_an_class(a, e->name);
			kinds |= td_an_is_capture(a, TD_VEC_AT(&pc, struct piece, i).ev) ? 8
				 : e->kind == TD_K_RUNTIME && (c & NC_LAUNCH) ? 1
				 : (c & NC_COMPILE) ? 2 : 4;
		}
		if (kinds & 1)
			strncat(fix, td_fix_text(&a->ctx, TD_FIX_LAZY_LOADING, -1, NULL, part,
						 sizeof(part)), sizeof(fix) - strlen(fix) - 1);
		if (kinds & 2)
			strncat(fix, td_fix_text(&a->ctx, TD_FIX_WARMUP_COMPILE, -1, NULL, part,
						 sizeof(part)), sizeof(fix) - strlen(fix) - 1);
		if (kinds & 8)
			strncat(fix, td_fix_text(&a->ctx, TD_FIX_WARMUP_CAPTURE, -1, NULL, part,
						 sizeof(part)), sizeof(fix) - strlen(fix) - 1);
		if ((kinds & 4) || !kinds)
			strncat(fix, td_fix_text(&a->ctx, TD_FIX_WARMUP_CALLS, -1, NULL, part,
						 sizeof(part)), sizeof(fix) - strlen(fix) - 1);
	}
	td_finding_fix(f, "%s", fix);
	td_vec_free(&pc);
}

const struct td_rule rule_startup = {
	.id = "startup",
	.title = "One-off start-up before the steady state",
	.run = run,
};
