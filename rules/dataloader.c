/* SPDX-License-Identifier: MIT */
/* dataloader: time in enumerate(DataLoader)#...__next__ per step, its share of the steps and
 * the GPU idle under it. Flagged from params.dataloader_share of the steady state (5%, the
 * TensorBoard plugin's threshold); sized by the GPU idle it causes (the dataloader cause). */
#include <stdio.h>
#include <string.h>

#include "rules/rule.h"

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	int64_t total = 0, longest = 0, w, idle = 0;
	uint64_t calls = 0;
	int single = 0;
	uint32_t name = 0, i, top[8];
	size_t ntop = 0, d, best_dev = 0, k;
	int64_t ws, we;
	struct td_finding *f;
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
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		unsigned c = td_an_class(a, e->name);

		if (e->ts < ws || e->ts >= we || !td_an_outer_dataloader(a, i))
			continue;
		total += td_ev_dur(e);
		calls++;
		if (c & NC_SINGLE_PROC_DL)
			single = 1;
		if (!name || td_ev_dur(e) > longest) {
			name = e->name;
			longest = td_ev_dur(e);
		}
		/* keep the longest few calls for evidence */
		if (ntop < 8) {
			top[ntop++] = i;
		} else {
			size_t m = 0;
			for (k = 1; k < ntop; k++)
				if (td_ev_dur(td_trace_ev(t, top[k])) < td_ev_dur(td_trace_ev(t, top[m])))
					m = k;
			if (td_ev_dur(e) > td_ev_dur(td_trace_ev(t, top[m])))
				top[m] = i;
		}
	}
	if (!calls || w <= 0 || (double)total < a->params.dataloader_share * (double)w)
		return;
	f = td_report_add(r, "dataloader", a->dev[best_dev].device);
	for (d = 0; d < a->ndev; d++)
		td_finding_claim_cause(a, f, d, CAUSE_DATALOADER);
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
	/* evidence: longest first, ties by time */
	for (k = 0; k < ntop; k++) {
		size_t m = k, j;
		for (j = k + 1; j < ntop; j++) {
			int64_t dj = td_ev_dur(td_trace_ev(t, top[j])), dm = td_ev_dur(td_trace_ev(t, top[m]));
			if (dj > dm || (dj == dm && top[j] < top[m]))
				m = j;
		}
		i = top[k];
		top[k] = top[m];
		top[m] = i;
	}
	for (k = 0; k < ntop && (int)k < a->params.evidence_max; k++) {
		const struct td_event *e = td_trace_ev(t, top[k]);
		int64_t busy = td_an_busy_between(a, best_dev, e->ts, td_ev_end(e));
		td_finding_evidence(f, e->ts, td_ev_dur(e), "__next__ took %s; GPU busy %.0f%% meanwhile",
				    td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)),
				    td_ev_dur(e) ? 100.0 * (double)busy / (double)td_ev_dur(e) : 0.0);
	}
	td_finding_value(f, "dataloader_ns", total);
	td_finding_value(f, "calls", (int64_t)calls);
	if (single)
		td_finding_fix(f, "%s", "The loader runs in the training process "
			       "(_SingleProcessDataLoaderIter, num_workers=0). Load in parallel: "
			       "DataLoader(dataset, batch_size=..., num_workers=8, pin_memory=True, "
			       "persistent_workers=True, prefetch_factor=4) - start with num_workers "
			       "near the CPU cores per GPU.");
	else
		td_finding_fix(f, "%s", "The worker processes cannot keep up. Raise num_workers and "
			       "prefetch_factor, set persistent_workers=True and pin_memory=True, and "
			       "profile Dataset.__getitem__ (decoding and augmentation are the usual "
			       "cost: move them to the GPU, e.g. torchvision.transforms.v2 on CUDA "
			       "tensors or NVIDIA DALI).");
}

const struct td_rule rule_dataloader = {
	.id = "dataloader",
	.title = "DataLoader time per step and the GPU idle it causes",
	.run = run,
};
