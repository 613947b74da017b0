/* SPDX-License-Identifier: MIT */
/* small-kernels: launch-bound work. Kernels shorter than params.small_kernel_ns (10 us) or than
 * their own launch call, in back-to-back runs on a stream, grouped by the op (or Python frame)
 * that launched them. Sized by the device idle between the kernels of the runs, which fusion
 * (torch.compile) or CUDA Graphs remove; per-parameter optimizer loops get foreach/fused. */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "rules/rule.h"

struct group {
	uint64_t runs, kernels;
	int64_t idle;
	int optimizer;
};

struct ctx {
	struct td_analysis *a;
	struct group *g;
	uint32_t ng;
	uint64_t runs, kernels;
	struct td_small_run ev[8];
	uint32_t ev_site[8];
	size_t nev;
	int optimizer;
};

static int is_optimizer(const struct td_analysis *a, uint32_t e)
{
	const struct td_trace *t = a->t;

	for (; e != TD_NONE; e = td_trace_parent(t, e)) {
		const char *n = td_trace_name(t, td_trace_ev(t, e)->name);
		if ((td_an_class(a, td_trace_ev(t, e)->name) & NC_SINGLE_TENSOR_OPT) ||
		    strncmp(n, "Optimizer.step#", 15) == 0)
			return 1;
	}
	return 0;
}

static void on_run(void *vc, const struct td_small_run *run)
{
	struct ctx *c = vc;
	const struct td_trace *t = c->a->t;
	uint32_t l = td_trace_launch(t, run->first), site;
	size_t m, k;

	site = l != TD_NONE ? td_an_site(c->a, l)
		: td_strtab_intern(&c->a->labels, td_trace_name(t, td_trace_ev(t, run->first)->name),
				   td_strtab_len(&t->names, td_trace_ev(t, run->first)->name));
	if (site >= c->ng) {
		uint32_t n = c->a->labels.count + 64;
		c->g = td_realloc(c->g, n * sizeof(*c->g));
		memset(c->g + c->ng, 0, (n - c->ng) * sizeof(*c->g));
		c->ng = n;
	}
	c->g[site].runs++;
	c->g[site].kernels += run->n;
	c->g[site].idle += run->idle_ns;
	if (l != TD_NONE && is_optimizer(c->a, l))
		c->g[site].optimizer = c->optimizer = 1;
	c->runs++;
	c->kernels += run->n;
	if (c->nev < 8) {
		c->ev_site[c->nev] = site;
		c->ev[c->nev++] = *run;
		return;
	}
	for (m = 0, k = 1; k < c->nev; k++)
		if (c->ev[k].idle_ns < c->ev[m].idle_ns)
			m = k;
	if (run->idle_ns > c->ev[m].idle_ns) {
		c->ev[m] = *run;
		c->ev_site[m] = site;
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

		memset(&c, 0, sizeof(c));
		c.a = a;
		td_an_small_runs(a, d, on_run, &c);
		if (!c.runs) {
			free(c.g);
			continue;
		}
		f = td_report_add(r, "small-kernels", dv->device);
		f->savings_ns = dv->run_gap_ns;
		f->count = c.kernels;
		td_finding_title(f, "%llu of %llu kernels are small (< %s); %llu of them run back to "
				 "back in %llu launch-bound run%s, with %s of GPU idle between them",
				 (unsigned long long)dv->small_kernels, (unsigned long long)dv->kernels,
				 td_fmt_dur(b1, sizeof(b1), a->params.small_kernel_ns),
				 (unsigned long long)c.kernels, (unsigned long long)c.runs,
				 c.runs == 1 ? "" : "s", td_fmt_dur(b2, sizeof(b2), dv->run_gap_ns));
		while (nshown < 5) {
			uint32_t best = 0, s;
			for (s = 1; s < c.ng; s++) {
				size_t k;
				int taken = 0;
				for (k = 0; k < nshown; k++)
					taken |= shown[k] == s;
				if (taken || !c.g[s].runs)
					continue;
				if (!best || c.g[s].idle > c.g[best].idle ||
				    (c.g[s].idle == c.g[best].idle && c.g[s].kernels > c.g[best].kernels))
					best = s;
			}
			if (!best)
				break;
			shown[nshown++] = best;
			td_finding_where(f, "%s: %llu kernels in %llu run%s, %s idle between them%s",
					 td_an_label(a, best), (unsigned long long)c.g[best].kernels,
					 (unsigned long long)c.g[best].runs, c.g[best].runs == 1 ? "" : "s",
					 td_fmt_dur(b1, sizeof(b1), c.g[best].idle),
					 c.g[best].optimizer ? " (per-parameter optimizer loop)" : "");
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
		if (c.optimizer)
			td_finding_fix(f, "%s", "The optimizer updates one parameter at a time "
				       "(_single_tensor_*). Use torch.optim.AdamW(params, fused=True) (or "
				       "foreach=True); for the rest of the step, torch.compile(model, "
				       "mode=\"reduce-overhead\") fuses the small ops and replays them with "
				       "CUDA Graphs.");
		else
			td_finding_fix(f, "%s", "Fuse the small ops: torch.compile(model) (mode="
				       "\"reduce-overhead\" also replays the step with CUDA Graphs, which "
				       "removes per-kernel launch cost), or capture the static part with "
				       "torch.cuda.CUDAGraph. Batching many small tensors into one "
				       "(torch._foreach_* ops, torch.cat) also helps.");
		free(c.g);
	}
}

const struct td_rule rule_small_kernels = {
	.id = "small-kernels",
	.title = "Launch-bound runs of small kernels",
	.run = run,
};
