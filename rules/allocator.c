/* SPDX-License-Identifier: MIT */
/* allocator: cudaMalloc / cudaFree / hipMalloc / hipFree (and host-pinned allocations) in the
 * steady state, where PyTorch's caching allocator should serve every request from its pool:
 * calls, host time, call sites and the GPU idle while the host is in them. Every step
 * allocating and freeing 32 or more tensors through the driver, each freed between launches,
 * is the cache switched off (PYTORCH_NO_CUDA_MEMORY_CACHING=1), not a pool emptied now and
 * then. Start-up allocations are the warmup rule's, and calls that stop in the window's first
 * half are the pool filling up, as are device allocations with no free in a trace with no
 * repeated step (one cold pass). Sized by replaying the trace without the
 * calls (and their waits), else by the idle (the allocator cause). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "fixes/catalogue.h"
#include "replay/replay.h"
#include "rules/rule.h"

struct site {
	uint64_t calls;
	int64_t time;
};

#define NO_CACHE_MIN 32 /* device allocations and frees in every step: no pool serves them */

#define U64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_u64, uint64_t, U64_LESS)

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t sj;
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
		uint64_t *per_alloc, *per_free, dev_frees = 0, dev_allocs = 0, interleaved = 0;
		struct td_track_cursor cur = {0, 0, 0};
		uint32_t cur_track = UINT32_MAX;
		int launched = 0;

		if (!dv->idle_by_cause[CAUSE_ALLOC])
			continue;
		{ /* a caching allocator fills its pool in the first iterations and then stops
		   * calling the driver: calls that all end in the window's first half are that
		   * (start-up, the warmup and startup rules' to tell), not churn in the steady
		   * state - which calls on to the end (resnet-2080ti's 39 calls in its first two
		   * of 30 iterations; hipfree-mi300x's in every one) */
			int64_t last = INT64_MIN;
			TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
				const struct td_event *e = td_trace_ev(t, i);
				if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_ALLOC) &&
				    td_an_in_host_window(a, d, e->ts) && !td_an_is_warm(a, i) &&
				    td_an_dev_of_host(a, i, TD_NONE) == d && td_ev_end(e) > last)
					last = td_ev_end(e);
			}
			if (last == INT64_MIN ||
			    2 * (last - dv->host_start) < dv->host_end - dv->host_start)
				continue;
		}
		per_alloc = td_calloc(2 * a->nsteps + 2, sizeof(uint64_t));
		per_free = per_alloc + a->nsteps + 1;
		/* sites are labels: intern them all first, then count */
		TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
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
			if (td_trace_track_at(t, &cur, (uint32_t)i) != cur_track) {
				cur_track = cur.track; /* events come track by track, in time */
				launched = 0;
			}
			if (e->kind == TD_K_RUNTIME && (td_an_class(a, e->name) & NC_LAUNCH))
				launched = 1;
			if (e->kind != TD_K_RUNTIME || !(td_an_class(a, e->name) & NC_ALLOC) ||
			    !td_an_in_host_window(a, d, e->ts) || td_an_is_warm(a, i) ||
			    td_an_dev_of_host(a, i, TD_NONE) != d)
				continue;
			s = td_an_site(a, i);
			{ /* the fix replayed: the call goes, its wait with it */
				struct td_rp_edit ed = {TD_RP_REMOVE, cur_track, e->ts, td_ev_end(e), 0, 0};
				td_vec_push(&edits);
				TD_VEC_AT(&edits, struct td_rp_edit, edits.len - 1) = ed;
			}
			sites[s].calls++;
			sites[s].time += td_ev_dur(e);
			calls++;
			frees += strstr(td_trace_name(t, e->name), "Free") != NULL;
			{ /* device allocations and frees per step (not the host's pinned ones) */
				const char *n = td_trace_name(t, e->name);
				size_t st = strstr(n, "Host") ? SIZE_MAX : td_an_step_of(a, e->ts);
				if (st != SIZE_MAX)
					(strstr(n, "Free") ? per_free : per_alloc)[st]++;
				if (!strstr(n, "Free") && !strstr(n, "Host"))
					dev_allocs++;
				if (strstr(n, "Free") && !strstr(n, "Host")) {
					/* a tensor's memory freed as it dies, between the launches (a
					 * few together, a quarter or more right after one), not
					 * a pool emptied in one burst */
					dev_frees++;
					interleaved += launched;
					launched = 0;
				}
			}
			time += td_ev_dur(e);
			nev = td_an_keep_longest(t, ev, nev, 8, i);
		}
		/* no repeated step, device allocations and no free: the caching allocator filling
		 * its pool for the first time (one cold pass), neither bypassed nor emptied - that
		 * returns memory (frees) or allocates again step after step; the caching host allocator
		 * fills its pinned pool so too */
		if (a->nsteps < 2 && !frees) {
			td_vec_free(&edits);
			free(per_alloc);
			free(sites);
			continue;
		}
		f = td_report_add(r, "allocator", dv->device);
		td_finding_claim_cause(a, f, d, CAUSE_ALLOC);
		for (k = 0; k < edits.len; k++)
			td_finding_edit(f, &TD_VEC_AT(&edits, struct td_rp_edit, k));
		td_vec_free(&edits);
		f->count = calls;
		f->host_ns = time;
		td_finding_title(f, "%llu device allocation call%s (%s) in the steady "
				 "state hold the host %s; the GPU idles %s under them",
				 (unsigned long long)calls, calls == 1 ? "" : "s",
				 a->ctx.vendor == TD_VENDOR_AMD ? "hipMalloc/hipFree"
								: "cudaMalloc/cudaFree",
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
		td_an_longest_first(t, ev, nev);
		for (k = 0; k < nev && (int)k < a->params.evidence_max; k++) {
			const struct td_event *e = td_trace_ev(t, ev[k]);
			td_finding_evidence(f, e->ts, td_ev_dur(e), "%s took %s",
					    td_an_name(a, e->name), td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)));
		}
		td_finding_value(f, "calls", (int64_t)calls);
		td_finding_value(f, "host_ns", time);
		{
			uint64_t amin = UINT64_MAX, fmin = UINT64_MAX, amed = 0, amax = 0;
			for (k = 0; k < a->nsteps; k++) {
				amin = per_alloc[k] < amin ? per_alloc[k] : amin;
				fmin = per_free[k] < fmin ? per_free[k] : fmin;
				amax = per_alloc[k] > amax ? per_alloc[k] : amax;
			}
			if (a->nsteps) {
				sort_u64(per_alloc, a->nsteps);
				amed = per_alloc[a->nsteps / 2];
			}
			/* without steps: as many as four steps would make, over the window */
			int nosteps = a->nsteps < 2 && dev_allocs >= 4 * NO_CACHE_MIN &&
				      dev_frees >= 4 * NO_CACHE_MIN;
			if (((a->nsteps >= 2 && amin >= NO_CACHE_MIN && fmin >= NO_CACHE_MIN) ||
			     nosteps) && 4 * interleaved >= dev_frees) {
				char why[200], fix[1600];
				/* every step allocates and frees its tensors through the driver, each
				 * freed between launches as it dies: nothing is cached at all, which is
				 * what the switch that turns the cache off does */
				if (nosteps) {
					amin = dev_allocs < dev_frees ? dev_allocs : dev_frees;
					fmin = amin;
					td_finding_where(f, "the window allocates and frees through the "
							 "driver all along: %llu device allocations, %llu "
							 "frees, each freed between launches as it dies",
							 (unsigned long long)dev_allocs,
							 (unsigned long long)dev_frees);
				} else
				td_finding_where(f, "every step allocates and frees through the driver: "
						 "%llu-%llu device allocations a step (median %llu), at "
						 "least %llu frees", (unsigned long long)amin,
						 (unsigned long long)amax, (unsigned long long)amed,
						 (unsigned long long)fmin);
				td_finding_value(f, "caching_off", 1);
				snprintf(why, sizeof(why), "%llu or more %s and %s %s, each tensor "
					 "freed as it dies%s%s%s", (unsigned long long)(amin < fmin ? amin
											: fmin),
					 td_fix_token(&a->ctx, TD_TOK_MALLOC),
					 td_fix_token(&a->ctx, TD_TOK_FREE),
					 nosteps ? "over the window" : "a step", frees ? "; " : "",
					 frees ? td_fix_token(&a->ctx, TD_TOK_FREE) : "",
					 frees ? " also synchronizes the device" : "");
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_ALLOC_NO_CACHE, -1,
								    why, fix, sizeof(fix)));
			} else {
				char why[80], fix[1600];
				snprintf(why, sizeof(why), "%s%s%s", frees ? " (" : "",
					 frees ? td_fix_token(&a->ctx, TD_TOK_FREE) : "",
					 frees ? " also synchronizes the device)" : "");
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_ALLOC_CHURN, -1, why,
								    fix, sizeof(fix)));
			}
		}
		free(per_alloc);
		free(sites);
	}
}

const struct td_rule rule_allocator = {
	.id = "allocator",
	.title = "Device memory allocation calls in the steady state",
	.run = run,
};
