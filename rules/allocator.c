/* SPDX-License-Identifier: MIT */
/* allocator: cudaMalloc / cudaFree / hipMalloc / hipFree (and host-pinned allocations) in the
 * steady state, where PyTorch's caching allocator should serve every request from its pool:
 * calls, host time, call sites and the GPU idle while the host is in them. Start-up
 * allocations are the warmup rule's. Sized by that idle (the allocator cause). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "replay/replay.h"
#include "rules/rule.h"

struct site {
	uint64_t calls;
	int64_t time;
};

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	size_t d;
	char b1[32], b2[32];

	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		struct td_finding *f;
		struct site *sites;
		uint32_t nlabels, i, top[5], ev[8];
		size_t ntop = 0, nev = 0, k;
		uint64_t calls = 0, frees = 0;
		int64_t time = 0;
		struct td_vec edits;

		if (!dv->idle_by_cause[CAUSE_ALLOC])
			continue;
		/* sites are labels: intern them all first, then count */
		for (i = 0; i < t->events.len; i++) {
			const struct td_event *e = td_trace_ev(t, i);
			if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_ALLOC) &&
			    td_an_in_host_window(a, d, e->ts) && !td_an_is_warm(a, i) &&
			    td_an_dev_of_host(a, i, TD_NONE) == d)
				td_an_site(a, i);
		}
		nlabels = a->labels.count + 1;
		sites = td_calloc(nlabels, sizeof(*sites));
		td_vec_init(&edits, sizeof(struct td_rp_edit));
		for (i = 0; i < t->events.len; i++) {
			const struct td_event *e = td_trace_ev(t, i);
			uint32_t s;
			if (e->kind != TD_K_RUNTIME || !(td_an_class(a, e->name) & NC_ALLOC) ||
			    !td_an_in_host_window(a, d, e->ts) || td_an_is_warm(a, i) ||
			    td_an_dev_of_host(a, i, TD_NONE) != d)
				continue;
			s = td_an_site(a, i);
			{ /* the fix replayed: the call goes, its wait with it */
				struct td_rp_edit ed = {TD_RP_REMOVE, e->track, e->ts, td_ev_end(e), 0, 0};
				td_vec_push(&edits);
				TD_VEC_AT(&edits, struct td_rp_edit, edits.len - 1) = ed;
			}
			sites[s].calls++;
			sites[s].time += td_ev_dur(e);
			calls++;
			frees += strstr(td_trace_name(t, e->name), "Free") != NULL;
			time += td_ev_dur(e);
			if (nev < 8) {
				ev[nev++] = i;
			} else {
				size_t m = 0;
				for (k = 1; k < nev; k++)
					if (td_ev_dur(td_trace_ev(t, ev[k])) < td_ev_dur(td_trace_ev(t, ev[m])))
						m = k;
				if (td_ev_dur(e) > td_ev_dur(td_trace_ev(t, ev[m])))
					ev[m] = i;
			}
		}
		f = td_report_add(r, "allocator", dv->device);
		td_finding_claim_cause(a, f, d, CAUSE_ALLOC);
		for (k = 0; k < edits.len; k++)
			td_finding_edit(f, &TD_VEC_AT(&edits, struct td_rp_edit, k));
		td_vec_free(&edits);
		f->count = calls;
		f->host_ns = time;
		td_finding_title(f, "%llu device allocation call%s (cudaMalloc/cudaFree) in the steady "
				 "state hold the host %s; the GPU idles %s under them",
				 (unsigned long long)calls, calls == 1 ? "" : "s",
				 td_fmt_dur(b1, sizeof(b1), time), td_fmt_dur(b2, sizeof(b2), f->idle_ns));
		while (ntop < 5) {
			uint32_t best = 0, s;
			for (s = 1; s < nlabels; s++) {
				int taken = 0;
				for (k = 0; k < ntop; k++)
					taken |= top[k] == s;
				if (!taken && sites[s].calls && (!best || sites[s].time > sites[best].time))
					best = s;
			}
			if (!best)
				break;
			top[ntop++] = best;
			td_finding_where(f, "%s: %llu call%s, %s", td_an_label(a, best),
					 (unsigned long long)sites[best].calls,
					 sites[best].calls == 1 ? "" : "s",
					 td_fmt_dur(b1, sizeof(b1), sites[best].time));
		}
		for (k = 0; k < nev; k++) { /* longest first, ties by time */
			size_t m = k, j;
			uint32_t tmp;
			for (j = k + 1; j < nev; j++) {
				int64_t dj = td_ev_dur(td_trace_ev(t, ev[j])), dm = td_ev_dur(td_trace_ev(t, ev[m]));
				if (dj > dm || (dj == dm && ev[j] < ev[m]))
					m = j;
			}
			tmp = ev[k];
			ev[k] = ev[m];
			ev[m] = tmp;
		}
		for (k = 0; k < nev && (int)k < a->params.evidence_max; k++) {
			const struct td_event *e = td_trace_ev(t, ev[k]);
			td_finding_evidence(f, e->ts, td_ev_dur(e), "%s took %s",
					    td_an_name(a, e->name), td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)));
		}
		td_finding_value(f, "calls", (int64_t)calls);
		td_finding_value(f, "host_ns", time);
		td_finding_fix(f, "PyTorch's caching allocator is being bypassed or emptied, so each "
			       "step asks the driver for memory again%s. Remove torch.cuda.empty_cache() "
			       "(and explicit gc.collect()) from the loop, set %s=expandable_segments:True, "
			       "keep tensor shapes static (pad variable lengths to a few bucket sizes), and "
			       "preallocate buffers that are reused every step.",
			       frees ? " (cudaFree also synchronizes the device)" : "",
			       td_fix_token(&a->ctx, TD_TOK_ALLOC_CONF));
		free(sites);
	}
}

const struct td_rule rule_allocator = {
	.id = "allocator",
	.title = "Device memory allocation calls in the steady state",
	.run = run,
};
