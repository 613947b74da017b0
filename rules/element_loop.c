/* SPDX-License-Identifier: MIT */
/* element-loop: a Python loop over a tensor's elements (analysis/loops.h), `total +=
 * t[i].cpu()` or `total += t[i]`: the same few ops once per element, each waiting for the GPU
 * or launching a kernel of next to nothing. The waits and launches are symptoms; the loop is
 * the mechanism, and its fix removes it: one tensor op over the whole tensor (t.sum(),
 * torch.where), or one copy of the tensor to the host before a loop over a list. Sized by
 * replaying that: the loop's host time, its calls, its waits and its GPU ops removed, one
 * iteration's time kept for the op that replaces it (TD_RP_REMOVE). It claims the GPU idle
 * while the loop runs; sync-stall and small-kernels leave the waits and runs inside it.
 * Two other fixes, where they apply, are each replayed by their own edits and stated beside
 * it (td_finding.alts): the tensor copied to the host once before the loop (its Python and its
 * ops kept, over CPU values: the per-element copies, waits and launches gone) and, for a loop
 * that copies each element to the host to compute on it, the math kept on the GPU (the copies
 * and waits gone, each op that ran on the host then launched). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "analysis/loops.h"
#include "replay/replay.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

struct site {
	uint64_t loops, iters, syncs, launches;
	int64_t host_ns, won;
	uint32_t loop;        /* the longest loop here (index) */
};

/* "aten::select, aten::to, aten::add" */
static void ops_of(struct td_analysis *a, const struct td_elem_loop *L, char *buf, size_t cap)
{
	uint32_t q;
	size_t len = 0;

	buf[0] = 0;
	for (q = 0; q < L->period && len + 2 < cap; q++) {
		snprintf(buf + len, cap - len, "%s%s", q ? ", " : "", td_an_name(a, L->names[q]));
		len = strlen(buf);
	}
}

/* --- the alternatives ------------------------------------------------------------------- */

/* One op's runtime calls (the events after it on its thread, up to its end). */
struct calls {
	int launches;     /* kernel launches */
	int reads;        /* copies or synchronizes: the op reads the GPU */
	int64_t ns;       /* time in them */
};

static void calls_of(struct td_analysis *a, uint32_t k, struct calls *c)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, k);
	const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, k));
	int64_t end = td_ev_end(e);
	uint32_t x;

	memset(c, 0, sizeof(*c));
	for (x = k + 1; x < tr->first + tr->count; x++) {
		const struct td_event *y = td_trace_ev(t, x);
		unsigned cl;
		if (y->ts >= end)
			break;
		if (y->kind != TD_K_RUNTIME)
			continue;
		cl = td_an_class(a, y->name);
		c->launches += (cl & NC_LAUNCH) != 0;
		c->reads += (cl & (NC_MEMCPY_CALL | NC_SYNC_CALL)) != 0;
		if (cl & (NC_LAUNCH | NC_MEMCPY_CALL | NC_SYNC_CALL))
			c->ns += td_ev_dur(y) < end - y->ts ? td_ev_dur(y) : end - y->ts;
	}
}

/* What an op of a loop's iteration costs run the other way, from the trace's own top-level ops
 * outside the loops: on the GPU (ops of its name that launch and read nothing; else any op that
 * launches one kernel and reads nothing: this host's dispatch of a GPU op) or on the host (ops
 * of its name with no runtime call). -1 where the trace has none. */
struct costs {
	uint32_t names[4 * TD_LOOP_PERIOD_MAX];
	struct td_vec gpu[4 * TD_LOOP_PERIOD_MAX], cpu[4 * TD_LOOP_PERIOD_MAX], any_gpu;
	size_t n;
};

static void costs_scan(struct td_analysis *a, const struct td_elem_loop *L, size_t nl, size_t d,
		       struct costs *c)
{
	const struct td_trace *t = a->t;
	uint32_t k;
	size_t i, q, j, sj;

	memset(c, 0, sizeof(*c));
	td_vec_init(&c->any_gpu, sizeof(int64_t));
	for (i = 0; i < nl; i++)
		for (q = 0; L[i].dev == d && q < L[i].period; q++) {
			for (j = 0; j < c->n && c->names[j] != L[i].names[q]; j++)
				;
			if (j == c->n && c->n < 4 * TD_LOOP_PERIOD_MAX) {
				c->names[c->n] = L[i].names[q];
				td_vec_init(&c->gpu[c->n], sizeof(int64_t));
				td_vec_init(&c->cpu[c->n++], sizeof(int64_t));
			}
		}
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, k) {
		const struct td_event *e = td_trace_ev(t, k);
		struct calls cl;
		if (e->kind != TD_K_CPU_OP || !td_an_top_op(t, k) ||
		    td_an_in_elem_loop(a, td_trace_track_of(t, k), e->ts))
			continue;
		calls_of(a, k, &cl);
		for (j = 0; j < c->n && c->names[j] != e->name; j++)
			;
		if (cl.launches == 1 && !cl.reads)
			*(int64_t *)td_vec_push(&c->any_gpu) = td_ev_dur(e);
		if (j == c->n)
			continue;
		if (cl.launches && !cl.reads)
			*(int64_t *)td_vec_push(&c->gpu[j]) = td_ev_dur(e);
		else if (!cl.launches && !cl.reads && !cl.ns)
			*(int64_t *)td_vec_push(&c->cpu[j]) = td_ev_dur(e);
	}
}

static void costs_free(struct costs *c)
{
	size_t j;

	for (j = 0; j < c->n; j++) {
		td_vec_free(&c->gpu[j]);
		td_vec_free(&c->cpu[j]);
	}
	td_vec_free(&c->any_gpu);
}

/* the median of v, -1 for none */
static int64_t median_or(struct td_vec *v)
{
	return v->len ? td_median_i64(v->data, v->len) : -1;
}

static int64_t cost_of(struct costs *c, uint32_t name, int gpu)
{
	size_t j;

	for (j = 0; j < c->n && c->names[j] != name; j++)
		;
	if (j == c->n)
		return -1;
	return median_or(gpu ? &c->gpu[j] : &c->cpu[j]);
}

enum { ALT_ONCE, ALT_GPU, NALT };

struct alts {
	struct td_vec ed[NALT];   /* struct td_rp_edit */
	int applies[NALT];
	int assumed[NALT];        /* an op's cost the other way not found in the trace: assumed */
	int64_t gpu_op;           /* what an op launched instead costs (the last one sized) */
};

static void edit(struct td_vec *v, uint32_t track, int64_t from, int64_t to, int64_t residual)
{
	struct td_rp_edit *e = td_vec_push(v);

	memset(e, 0, sizeof(*e));
	e->kind = TD_RP_REMOVE;
	e->track = track;
	e->from = from;
	e->to = to;
	e->residual = residual < 0 ? 0 : residual;
}

/* The edits of each alternative for loop L: its top-level ops, one by one. ALT_ONCE: an op that
 * only copies an element to the host goes (the first stays once: the one copy before the
 * loop); any other op that reads the GPU or launches costs what it costs on the host (the
 * trace's ops of its name with no call, else its own time less its calls). ALT_GPU, where the
 * loop copies elements to the host and computes on them there: every op that reads the GPU
 * goes; one that computes on the host (no call, no element access) costs a GPU op's dispatch
 * (the trace's ops of its name that launch, else any op launching one kernel, else its own time
 * and a launch). Element accesses (select) stay as they are in both. */
static void alt_edits(struct td_analysis *a, const struct td_elem_loop *L, struct costs *c,
		      struct alts *al, int64_t launch)
{
	const struct td_trace *t = a->t;
	const struct td_track *tr = td_trace_track(t, L->track);
	int copies = 0, host_math = 0, first_copy = 1;
	uint32_t k;

	for (k = L->first; k <= L->last && k < tr->first + tr->count; k++) { /* what applies */
		const struct td_event *e = td_trace_ev(t, k);
		struct calls cl;
		if (e->kind != TD_K_CPU_OP || !td_an_top_op(t, k))
			continue;
		calls_of(a, k, &cl);
		if (td_an_element_op(td_trace_name(t, e->name)))
			continue;
		copies |= cl.reads != 0;
		host_math |= !cl.launches && !cl.reads && !cl.ns;
		if (copies && host_math)
			break;
	}
	for (k = L->first; k <= L->last && k < tr->first + tr->count; k++) {
		const struct td_event *e = td_trace_ev(t, k);
		int elem;
		struct calls cl;
		int64_t own, x;
		if (e->kind != TD_K_CPU_OP || !td_an_top_op(t, k))
			continue;
		calls_of(a, k, &cl);
		elem = td_an_element_op(td_trace_name(t, e->name));
		own = td_ev_dur(e);
		if (cl.reads || cl.launches) { /* over CPU values */
			if (cl.reads && !elem) {
				edit(&al->ed[ALT_ONCE], L->track, e->ts, td_ev_end(e), first_copy ? own : 0);
				first_copy = 0;
			} else {
				x = cost_of(c, e->name, 0);
				al->assumed[ALT_ONCE] |= x < 0;
				edit(&al->ed[ALT_ONCE], L->track, e->ts, td_ev_end(e),
				     x < 0 ? own - cl.ns : x);
			}
			al->applies[ALT_ONCE] = 1;
		}
		if (!copies || !host_math)
			continue;
		al->applies[ALT_GPU] = 1;
		if (cl.reads) /* the value stays on the GPU */
			edit(&al->ed[ALT_GPU], L->track, e->ts, td_ev_end(e), 0);
		else if (!elem && !cl.launches && !cl.ns) { /* launched instead */
			x = cost_of(c, e->name, 1);
			if (x < 0)
				x = median_or(&c->any_gpu);
			al->assumed[ALT_GPU] |= x < 0;
			x = x < 0 ? own + launch : x;
			al->gpu_op = x;
			edit(&al->ed[ALT_GPU], L->track, e->ts, td_ev_end(e), x);
		}
	}
}

/* Replays each alternative that applies to the device's loops, states it (td_finding.alts and
 * a where line) beside the loop removed (primary_ns, replayed alike). */
static void alternatives(struct td_analysis *a, struct td_finding *f, size_t d,
			 const struct td_elem_loop *L, size_t nl)
{
	static const char *const name[NALT] = {"copy_once", "keep_on_gpu"};
	const struct td_whatif *w = td_an_whatif(a);
	struct costs c;
	struct alts al;
	int64_t base, win, primary, save[NALT], lim;
	size_t i, j;
	char b[NALT + 1][32], b4[32], line[900];
	int len;

	if (!w || !w->ok || (base = td_whatif_base(a, d)) <= 0)
		return;
	win = td_whatif_window(a, d, f->edits.data, f->edits.len);
	primary = win < 0 ? -1 : base - win;
	memset(&al, 0, sizeof(al));
	for (j = 0; j < NALT; j++)
		td_vec_init(&al.ed[j], sizeof(struct td_rp_edit));
	costs_scan(a, L, nl, d, &c);
	for (i = 0; i < nl; i++)
		if (L[i].dev == d)
			alt_edits(a, &L[i], &c, &al, w->launch_cost);
	costs_free(&c);
	lim = a->dev[d].host_end - a->dev[d].host_start;
	for (j = 0; j < NALT; j++) {
		save[j] = -1;
		if (!al.applies[j])
			continue;
		win = td_whatif_window(a, d, al.ed[j].data, al.ed[j].len);
		if (win >= 0) {
			save[j] = base - win;
			save[j] = save[j] < 0 ? 0 : save[j] > lim ? lim : save[j];
		}
	}
	len = snprintf(line, sizeof(line), "each fix replayed: the loop removed (one tensor op over "
		       "the whole tensor): ~%s", primary < 0 ? "?" : td_fmt_dur(b[NALT],
										sizeof(b[0]), primary));
	if (primary >= 0)
		td_finding_alt(f, "vectorise", primary);
	for (j = 0; j < NALT; j++) {
		if (save[j] < 0 || len < 0 || (size_t)len >= sizeof(line))
			continue;
		td_finding_alt(f, name[j], save[j]);
		td_fmt_dur(b[j], sizeof(b[j]), save[j]);
		if (j == ALT_ONCE)
			len += snprintf(line + len, sizeof(line) - (size_t)len, "; the tensor copied to "
					"the host once before the loop (its Python and ops kept, over "
					"CPU values%s): ~%s", al.assumed[j] ? ", each op's host cost assumed "
					"its own less its calls" : "", b[j]);
		else
			len += snprintf(line + len, sizeof(line) - (size_t)len, "; the math kept on the "
					"GPU (no copy or wait per element; each host op launched at %s%s, "
					"its kernel beside the loop's host time): ~%s",
					td_fmt_dur(b4, sizeof(b4), al.gpu_op), al.assumed[j]
					? ", assumed: its own time and a launch" : ", as the trace's GPU ops "
					"cost", b[j]);
	}
	if (f->alts.len > 1)
		td_finding_where(f, "%s", line);
	for (j = 0; j < NALT; j++)
		td_vec_free(&al.ed[j]);
}

static void run_device(struct td_analysis *a, struct td_report *r, size_t d,
		       const struct td_elem_loop *L, size_t nl)
{
	uint32_t nlabels = a->labels.count + 1, top[4], ntop = 0, tag;
	struct site *sites;
	struct td_claims cl;
	struct td_finding *f;
	int64_t *won, held = 0, kept = 0;
	uint64_t iters = 0, syncs = 0, launches = 0, loops = 0;
	size_t i, ev[8], nev = 0;
	char b1[32], b2[32], b3[32], ops[400];

	for (i = 0; i < nl; i++)
		loops += L[i].dev == d;
	if (!loops)
		return;
	f = td_report_add(r, "element-loop", a->dev[d].device);
	sites = td_calloc(nlabels, sizeof(*sites));
	won = td_calloc(nl, sizeof(*won));
	td_claims_init(&cl);
	for (i = 0; i < nl; i++) {
		const struct td_elem_loop *x = &L[i];
		int64_t one = (x->end - x->start) / x->iters;
		struct td_rp_edit e;
		if (x->dev != d)
			continue;
		td_claims_add(&cl, x->start, x->end, CAUSE_COUNT, (uint32_t)i);
		/* the loop gone, one op of one iteration's cost in its place */
		memset(&e, 0, sizeof(e));
		e.kind = TD_RP_REMOVE;
		e.track = x->track;
		e.from = x->start;
		e.to = x->end;
		e.residual = one;
		td_finding_edit(f, &e);
		held += x->end - x->start;
		kept += one;
		iters += x->iters;
		syncs += x->syncs;
		launches += x->launches;
		if (nev < 8)
			ev[nev++] = i;
	}
	td_finding_claim(a, f, d, &cl, won, nl);
	td_claims_free(&cl);
	for (i = 0; i < nl; i++) {
		struct site *s;
		if (L[i].dev != d)
			continue;
		s = &sites[L[i].site];
		if (!s->loops || L[i].end - L[i].start > L[s->loop].end - L[s->loop].start)
			s->loop = (uint32_t)i;
		s->loops++;
		s->iters += L[i].iters;
		s->syncs += L[i].syncs;
		s->launches += L[i].launches;
		s->host_ns += L[i].end - L[i].start;
		s->won += won[i];
	}
	for (;;) { /* the sites that hold the host longest */
		uint32_t best = 0, s, k;
		for (s = 1; s < nlabels; s++) {
			int taken = 0;
			for (k = 0; k < ntop; k++)
				taken |= top[k] == s;
			if (sites[s].loops && !taken && (!best || sites[s].host_ns > sites[best].host_ns))
				best = s;
		}
		if (!best || ntop == 4)
			break;
		top[ntop++] = best;
	}
	tag = top[0];
	ops_of(a, &L[sites[tag].loop], ops, sizeof(ops));
	f->count = iters;
	f->host_ns = held - kept;
	f->frees_host = 1;
	td_finding_title(f, "A Python loop over a tensor's elements at %s runs %s once per element: "
			 "%llu iteration%s in %llu loop%s hold the host %s (%s each)%s%s",
			 td_an_label(a, tag), ops, (unsigned long long)iters, iters == 1 ? "" : "s",
			 (unsigned long long)loops, loops == 1 ? "" : "s",
			 td_fmt_dur(b1, sizeof(b1), held),
			 td_fmt_dur(b2, sizeof(b2), iters ? held / (int64_t)iters : 0),
			 syncs ? ", each waiting for the GPU" : launches ? ", each launching a kernel" : "",
			 syncs && launches ? " and launching kernels" : "");
	for (i = 0; i < ntop; i++) {
		const struct site *s = &sites[top[i]];
		ops_of(a, &L[s->loop], ops, sizeof(ops));
		td_finding_where(f, "%s: %llu loop%s of %llu iterations (%s), host %s, %llu waits for "
				 "the GPU, %llu kernel launches, GPU idle under them %s",
				 td_an_label(a, top[i]), (unsigned long long)s->loops,
				 s->loops == 1 ? "" : "s", (unsigned long long)s->iters, ops,
				 td_fmt_dur(b1, sizeof(b1), s->host_ns), (unsigned long long)s->syncs,
				 (unsigned long long)s->launches, td_fmt_dur(b2, sizeof(b2), s->won));
	}
	td_finding_where(f, "the fix replayed: each loop removed (its ops, their launches and waits, "
			 "the Python between them), one op costing one iteration (%s in all) in its "
			 "place", td_fmt_dur(b3, sizeof(b3), kept));
	alternatives(a, f, d, L, nl);
	for (i = 0; i < nev && (int)i < a->params.evidence_max; i++) {
		const struct td_elem_loop *x = &L[ev[i]];
		td_finding_evidence(f, x->start, x->end - x->start, "%u iterations of %u op%s at %s",
				    x->iters, x->period, x->period == 1 ? "" : "s", td_an_label(a, x->site));
	}
	td_finding_value(f, "iterations", (int64_t)iters);
	td_finding_value(f, "loops", (int64_t)loops);
	td_finding_value(f, "syncs", (int64_t)syncs);
	td_finding_value(f, "launches", (int64_t)launches);
	{
		char fix[1200];
		ops_of(a, &L[sites[tag].loop], ops, sizeof(ops));
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_ELEMENT_LOOP, -1, ops, fix,
						    sizeof(fix)));
	}
	free(sites);
	free(won);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_elem_loop *L;
	size_t nl = td_an_elem_loops(a, &L), d;

	for (d = 0; d < a->ndev && nl; d++)
		run_device(a, r, d, L, nl);
}

const struct td_rule rule_element_loop = {
	.id = "element-loop",
	.title = "Python loops over a tensor's elements",
	.run = run,
};
