/* SPDX-License-Identifier: MIT */
/* small-kernels: launch-bound work. Kernels shorter than params.small_kernel_ns (10 us) or than
 * their own launch call, in back-to-back runs on a stream, grouped by the op (or Python frame)
 * that launched them. Sized by the device idle between the kernels of the runs, which fusion
 * (torch.compile) or CUDA Graphs remove. The fix follows the group that holds the most: a
 * per-parameter optimizer loop (foreach / fused for the optimizer the trace ran),
 * zero_grad's fills (set_to_none), DDP's reducer (bucket views), else fusion. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "analysis/loops.h"
#include "replay/replay.h"
#include "rules/rule.h"

#define G_OPTIMIZER 1
#define G_ZERO_GRAD 2
#define G_DDP 4

struct group {
	uint64_t runs, kernels;
	unsigned flags;
	char opt[24];      /* the optimizer's class, when G_OPTIMIZER */
};

struct ctx {
	struct td_analysis *a;
	size_t d;
	struct group *g;
	uint32_t ng;
	uint64_t runs, kernels;
	struct td_small_run ev[8];
	uint32_t ev_site[8];
	size_t nev;
	struct td_claims claims;
	struct td_vec edits;       /* struct td_rp_edit: each run fused, for the replay */
	int64_t launch_ns;         /* the launch calls fusion removes: all but each run's first */
};

/* What the launching op chain says about a run: optimizer, zero_grad, DDP's reducer. */
static unsigned chain_flags(const struct td_analysis *a, uint32_t e, char *opt, size_t cap)
{
	const struct td_trace *t = a->t;
	unsigned fl = 0;
	int depth = 0;

	for (; e != TD_NONE && depth < 256; e = td_trace_parent(t, e), depth++) {
		const char *n = td_trace_name(t, td_trace_ev(t, e)->name);
		if (!strncmp(n, "Optimizer.step#", 15)) {
			const char *dot = strchr(n + 15, '.');
			size_t len = dot ? (size_t)(dot - (n + 15)) : strlen(n + 15);
			fl |= G_OPTIMIZER;
			snprintf(opt, cap, "%.*s", (int)(len < cap ? len : cap - 1), n + 15);
		} else if (td_an_class(a, td_trace_ev(t, e)->name) & NC_SINGLE_TENSOR_OPT) {
			fl |= G_OPTIMIZER;
			if (!*opt)
				snprintf(opt, cap, "%s", strstr(n, "adamw") ? "AdamW" : strstr(n, "adam")
					 ? "Adam" : strstr(n, "sgd") ? "SGD" : "");
		} else if (strstr(n, "zero_grad")) {
			fl |= G_ZERO_GRAD;
		} else if (strstr(n, "distributed::reducer")) { /* not all of DDP.forward */
			fl |= G_DDP;
		}
	}
	return fl;
}

static void on_run(void *vc, const struct td_small_run *run)
{
	struct ctx *c = vc;
	const struct td_trace *t = c->a->t;
	uint32_t l = td_trace_launch(t, run->first), site, k;
	const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, run->first));
	int64_t prev_end = INT64_MIN;
	char opt[24] = "";
	size_t m, j;

	/* a run launched by a loop over a tensor's elements is the element-loop rule's: its fix
	 * removes the loop, launches and all */
	if (l != TD_NONE && td_an_in_elem_loop(c->a, td_trace_track_of(t, l), td_trace_ev(t, l)->ts))
		return;
	site = l != TD_NONE ? td_an_site(c->a, l)
		: td_an_mark(c->a, td_trace_name(t, td_trace_ev(t, run->first)->name));
	if (site >= c->ng) {
		uint32_t n = c->a->labels.count + 64;
		c->g = td_realloc(c->g, n * sizeof(*c->g));
		memset(c->g + c->ng, 0, (n - c->ng) * sizeof(*c->g));
		c->ng = n;
	}
	c->g[site].runs++;
	c->g[site].kernels += run->n;
	if (l != TD_NONE) {
		c->g[site].flags |= chain_flags(c->a, l, opt, sizeof(opt));
		if (*opt)
			snprintf(c->g[site].opt, sizeof(c->g[site].opt), "%s", opt);
	}
	/* the gaps between the run's kernels are what fusion or a graph removes, and the
	 * launches of all its kernels but the first */
	for (k = run->first; k <= run->last && k < tr->first + tr->count; k++) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t kl;
		if (e->kind != TD_K_KERNEL)
			continue;
		if (prev_end != INT64_MIN && e->ts > prev_end)
			td_claims_add(&c->claims, prev_end, e->ts, CAUSE_COUNT, site);
		/* a kernel replayed from a graph shares the graph's one launch: fusing it frees no
		 * host time */
		if (prev_end != INT64_MIN && (kl = td_trace_launch(t, k)) != TD_NONE &&
		    !strstr(td_trace_name(t, td_trace_ev(t, kl)->name), "GraphLaunch"))
			c->launch_ns += td_ev_dur(td_trace_ev(t, kl));
		if (td_ev_end(e) > prev_end)
			prev_end = td_ev_end(e);
	}
	{
		struct td_rp_edit *e = td_vec_push(&c->edits);
		e->kind = TD_RP_FUSE;
		e->track = td_trace_track_of(t, run->first);
		e->from = run->start;
		e->to = run->end;
	}
	c->runs++;
	c->kernels += run->n;
	if (c->nev < 8) {
		c->ev_site[c->nev] = site;
		c->ev[c->nev++] = *run;
		return;
	}
	for (m = 0, j = 1; j < c->nev; j++)
		if (c->ev[j].idle_ns < c->ev[m].idle_ns)
			m = j;
	if (run->idle_ns > c->ev[m].idle_ns) {
		c->ev[m] = *run;
		c->ev_site[m] = site;
	}
}

static void fix_for(const struct td_analysis *a, struct td_finding *f, const struct group *top,
		    int serving)
{
	char buf[1200];

	if (top->flags & G_OPTIMIZER) { /* foreach / fused as they exist for it (fixes/) */
		td_finding_fix(f, "%s", td_fix_optimizer(&a->ctx, top->opt, buf, sizeof(buf)));
	} else if (top->flags & G_ZERO_GRAD) {
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_ZERO_GRAD, -1, NULL, buf,
						    sizeof(buf)));
	} else if (top->flags & G_DDP) {
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_BUCKET_COPY, -1, NULL, buf,
						    sizeof(buf)));
	} else if (serving) {
		td_finding_fix(f, "The engine launches many tiny kernels one by one. %s",
			       td_fix_text(&a->ctx, TD_FIX_SERVING_HOST, -1, NULL, buf, sizeof(buf)));
	} else {
		char detail[200];
		td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_SMALL_KERNELS, -1,
						    td_context_batch(&a->ctx, detail, sizeof(detail)),
						    buf, sizeof(buf)));
	}
}

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t d, i;
	char b1[32], b2[32];

	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		struct ctx c;
		struct td_finding *f;
		uint32_t shown[5];
		size_t nshown = 0;
		int64_t *won;

		memset(&c, 0, sizeof(c));
		c.a = a;
		c.d = d;
		td_claims_init(&c.claims);
		td_vec_init(&c.edits, sizeof(struct td_rp_edit));
		td_an_small_runs(a, d, on_run, &c);
		if (!c.runs) {
			td_claims_free(&c.claims);
			td_vec_free(&c.edits);
			free(c.g);
			continue;
		}
		f = td_report_add(r, "small-kernels", dv->device);
		won = td_calloc(c.ng ? c.ng : 1, sizeof(*won));
		td_finding_claim(a, f, d, &c.claims, won, c.ng);
		td_claims_free(&c.claims);
		for (size_t k = 0; k < c.edits.len; k++)
			td_finding_edit(f, &TD_VEC_AT(&c.edits, struct td_rp_edit, k));
		td_vec_free(&c.edits);
		f->count = c.kernels;
		f->host_ns = c.launch_ns; /* fused, the launches go: the host is freed that much */
		td_finding_title(f, "%llu of %llu kernels are small (under %s, or shorter than their "
				 "launch call); %llu of them run back to "
				 "back in %llu launch-bound run%s, with %s of GPU idle between them",
				 (unsigned long long)dv->small_kernels, (unsigned long long)dv->kernels,
				 td_fmt_dur(b1, sizeof(b1), a->params.small_kernel_ns),
				 (unsigned long long)c.kernels, (unsigned long long)c.runs,
				 c.runs == 1 ? "" : "s", td_fmt_dur(b2, sizeof(b2), f->idle_ns));
		while (nshown < 5) {
			uint32_t best = 0, s;
			for (s = 1; s < c.ng; s++) {
				size_t k;
				int taken = 0;
				for (k = 0; k < nshown; k++)
					taken |= shown[k] == s;
				if (taken || !c.g[s].runs)
					continue;
				if (!best || won[s] > won[best] ||
				    (won[s] == won[best] && c.g[s].kernels > c.g[best].kernels))
					best = s;
			}
			if (!best)
				break;
			shown[nshown++] = best;
			{
				const struct group *g = &c.g[best];
				char tag[64] = "";
				if (g->flags & G_OPTIMIZER)
					snprintf(tag, sizeof(tag), " (per-parameter optimizer loop%s%s)",
						 *g->opt ? ", " : "", g->opt);
				else if (g->flags & G_ZERO_GRAD)
					snprintf(tag, sizeof(tag), " (zero_grad)");
				else if (g->flags & G_DDP)
					snprintf(tag, sizeof(tag), " (DDP reducer)");
				td_finding_where(f, "%s: %llu kernels in %llu run%s, %s idle between them%s",
						 td_an_label(a, best), (unsigned long long)g->kernels,
						 (unsigned long long)g->runs, g->runs == 1 ? "" : "s",
						 td_fmt_dur(b1, sizeof(b1), won[best]), tag);
			}
		}
		/* evidence: the runs with the most idle */
		for (i = 0; i < c.nev; i++) {
			size_t m = i, k;
			for (k = i + 1; k < c.nev; k++)
				if (c.ev[k].idle_ns > c.ev[m].idle_ns ||
				    (c.ev[k].idle_ns == c.ev[m].idle_ns && c.ev[k].start < c.ev[m].start))
					m = k;
			if (m != i) {
				struct td_small_run tr = c.ev[i];
				uint32_t ts = c.ev_site[i];
				c.ev[i] = c.ev[m];
				c.ev_site[i] = c.ev_site[m];
				c.ev[m] = tr;
				c.ev_site[m] = ts;
			}
		}
		for (i = 0; i < c.nev && (int)i < a->params.evidence_max; i++)
			td_finding_evidence(f, c.ev[i].start, c.ev[i].end - c.ev[i].start,
					    "%u small kernels in %s, GPU idle %s between them, from %s",
					    c.ev[i].n, td_fmt_dur(b1, sizeof(b1), c.ev[i].end - c.ev[i].start),
					    td_fmt_dur(b2, sizeof(b2), c.ev[i].idle_ns),
					    td_an_label(a, c.ev_site[i]));
		td_finding_value(f, "small_kernels", (int64_t)dv->small_kernels);
		td_finding_value(f, "run_kernels", (int64_t)c.kernels);
		td_finding_value(f, "runs", (int64_t)c.runs);
		fix_for(a, f, nshown ? &c.g[shown[0]] : &c.g[0], a->serving);
		free(won);
		free(c.g);
	}
}

const struct td_rule rule_small_kernels = {
	.id = "small-kernels",
	.title = "Launch-bound runs of small kernels",
	.run = run,
};
