/* SPDX-License-Identifier: MIT */
/* element-loop: a Python loop over a tensor's elements (analysis/loops.h), `total +=
 * t[i].cpu()` or `total += t[i]`: the same few ops once per element, each waiting for the GPU
 * or launching a kernel of next to nothing. The waits and launches are symptoms; the loop is
 * the mechanism, and its fix removes it: one tensor op over the whole tensor (t.sum(),
 * torch.where), or one copy of the tensor to the host before a loop over a list. Sized by
 * replaying that: the loop's host time, its calls, its waits and its GPU ops removed, one
 * iteration's time kept for the op that replaces it (TD_RP_REMOVE). It claims the GPU idle
 * while the loop runs; sync-stall and small-kernels leave the waits and runs inside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "analysis/loops.h"
#include "replay/replay.h"
#include "rules/rule.h"

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
