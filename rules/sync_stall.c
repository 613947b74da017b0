/* SPDX-License-Identifier: MIT */
/* sync-stall: host waits on the GPU - .item(), .cpu(), .tolist(), .numpy(), nonzero, boolean
 * indexing, cuda{Stream,Device,Event}Synchronize, synchronous cudaMemcpy and copies into
 * pageable memory - counted as the user's calls (one .item() is one sync) and grouped by call
 * site. Pageable uploads, whose stream sync PyTorch adds, are the transfer rule's. A sync
 * outside the steady state (e.g. the final cudaDeviceSynchronize) is not a stall.
 *
 * Sized by what removing the waits wins back: the host runs ahead by at most the time it was
 * blocked, so the GPU idle after each wait shrinks by up to that much; the rest of that bubble
 * is what the host did next (preprocessing, Python) and belongs to other findings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "analysis/blocking.h"
#include "analysis/loops.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

struct site {
	uint64_t calls;
	int64_t blocked, won;
	unsigned kinds;
};

/* the catalogue's mechanism for a kind of wait */
static enum td_mech mech_of(unsigned k)
{
	return (k & BK_ITEM) ? TD_FIX_SYNC_ITEM : (k & BK_NONZERO) ? TD_FIX_SYNC_NONZERO
	       : (k & BK_DTOH) ? TD_FIX_SYNC_DTOH : (k & BK_MEMCPY) ? TD_FIX_SYNC_MEMCPY
	       : (k & BK_USER) ? TD_FIX_SYNC_USER : TD_FIX_SYNC_EXPLICIT;
}

/* "cudaStreamSynchronize" or "cudaMemcpyAsync + cudaStreamSynchronize" */
static void calls_of(struct td_analysis *a, const struct td_block_unit *u, char *buf,
		     size_t cap)
{
	const struct td_trace *t = a->t;
	const char *f = td_an_name(a, td_trace_ev(t, u->first)->name);
	const char *l = td_an_name(a, td_trace_ev(t, u->last)->name);

	if (u->first == u->last)
		snprintf(buf, cap, "%s", f);
	else if (u->ncalls == 2)
		snprintf(buf, cap, "%s + %s", f, l);
	else
		snprintf(buf, cap, "%u calls from %s to %s", u->ncalls, f, l);
}

static void run_device(struct td_analysis *a, struct td_report *r, size_t d,
		       const struct td_block_unit *u, size_t nu)
{
	struct td_claims cl;
	struct site *sites;
	int64_t *won, blocked = 0;
	uint32_t nlabels = a->labels.count + 1, top[5];
	size_t i, ntop = 0, mine = 0, ev[8], nev = 0;
	unsigned kinds = 0;
	struct td_finding *f;
	char b1[32], b2[32], b3[32], title[1024], calls[256];
	int64_t cp_blocked = 0, cp_busy = 0; /* the synchronous copies: blocked, GPU busy then */

	for (i = 0; i < nu; i++)
		mine += u[i].dev == d && !(u[i].kinds & BK_HTOD);
	if (!mine)
		return;
	f = td_report_add(r, "sync-stall", a->dev[d].device);
	sites = td_calloc(nlabels, sizeof(*sites));
	won = td_calloc(nu, sizeof(*won));
	td_claims_init(&cl);
	for (i = 0; i < nu; i++)
		if (u[i].dev == d && !(u[i].kinds & BK_HTOD))
			td_claims_add_unit(a, &cl, &u[i], (uint32_t)i);
	td_finding_claim(a, f, d, &cl, won, nu);
	td_claims_free(&cl);
	{
		const struct td_block_unit **us = td_calloc(mine, sizeof(*us));
		size_t m = 0;
		for (i = 0; i < nu; i++)
			if (u[i].dev == d && !(u[i].kinds & BK_HTOD))
				us[m++] = &u[i];
		td_whatif_units(a, f, us, m);
		free(us);
	}
	for (i = 0; i < nu; i++) {
		struct site *s;
		if (u[i].dev != d || (u[i].kinds & BK_HTOD))
			continue;
		s = &sites[u[i].site];
		s->calls++;
		s->blocked += u[i].blocked;
		s->won += won[i];
		s->kinds |= u[i].kinds;
		blocked += u[i].blocked;
		if (u[i].kinds & BK_MEMCPY) {
			const struct td_event *e0 = td_trace_ev(a->t, u[i].first);
			cp_blocked += u[i].blocked;
			cp_busy += td_an_busy_between(a, d, e0->ts,
						      td_ev_end(td_trace_ev(a->t, u[i].last)));
		}
		/* keep the 8 longest waits */
		if (nev < 8) {
			ev[nev++] = i;
		} else {
			size_t m = 0, k;
			for (k = 1; k < nev; k++)
				if (u[ev[k]].blocked < u[ev[m]].blocked)
					m = k;
			if (u[i].blocked > u[ev[m]].blocked)
				ev[m] = i;
		}
	}
	f->count = mine;
	f->host_ns = blocked;
	f->frees_host = 1;
	/* the sites that hold the most, by GPU idle won back, then host time */
	for (;;) {
		uint32_t best = 0, s;
		for (s = 1; s < nlabels; s++) {
			size_t k;
			int taken = 0;
			for (k = 0; k < ntop; k++)
				taken |= top[k] == s;
			if (!sites[s].calls || taken)
				continue;
			if (!best || sites[s].won > sites[best].won ||
			    (sites[s].won == sites[best].won && sites[s].blocked > sites[best].blocked))
				best = s;
		}
		if (!best || ntop == 5)
			break;
		top[ntop++] = best;
	}
	snprintf(title, sizeof(title), "%zu host sync%s", mine, mine == 1 ? "" : "s");
	for (i = 0; i < ntop && i < 3; i++) {
		size_t len = strlen(title);
		snprintf(title + len, sizeof(title) - len, "%s%s (%llu)",
			 i == 0 ? " at " : i + 1 == ntop || i == 2 ? " and " : ", ",
			 td_an_label(a, top[i]), (unsigned long long)sites[top[i]].calls);
	}
	if (ntop > 3) {
		size_t len = strlen(title);
		snprintf(title + len, sizeof(title) - len, " and %zu more sites", ntop - 3);
	}
	/* what the GPU idles under the waits is observed; what removing them wins is the replay's
	 * (the host runs ahead into the next step's work) or, without one, that idle */
	td_finding_title(f, "%s block%s the host %s; the GPU idles %s under %s and after",
			 title, mine == 1 ? "s" : "", td_fmt_dur(b1, sizeof(b1), blocked),
			 td_fmt_dur(b2, sizeof(b2), f->idle_ns), mine == 1 ? "it" : "them");
	for (i = 0; i < ntop; i++) {
		struct site *s = &sites[top[i]];
		td_finding_where(f, "%s: %llu call%s, host blocked %s, GPU idle under them %s",
				 td_an_label(a, top[i]), (unsigned long long)s->calls,
				 s->calls == 1 ? "" : "s", td_fmt_dur(b1, sizeof(b1), s->blocked),
				 td_fmt_dur(b2, sizeof(b2), s->won));
		kinds |= s->kinds;
	}
	/* evidence: longest waits first, ties by time */
	for (i = 0; i < nev; i++) {
		size_t m = i, k, tmp;
		for (k = i + 1; k < nev; k++)
			if (u[ev[k]].blocked > u[ev[m]].blocked ||
			    (u[ev[k]].blocked == u[ev[m]].blocked && ev[k] < ev[m]))
				m = k;
		tmp = ev[i];
		ev[i] = ev[m];
		ev[m] = tmp;
	}
	for (i = 0; i < nev && (int)i < a->params.evidence_max; i++) {
		const struct td_block_unit *x = &u[ev[i]];
		const struct td_event *e = td_trace_ev(a->t, x->first);
		const char *site = td_an_label(a, x->site);
		calls_of(a, x, calls, sizeof(calls));
		td_finding_evidence(f, e->ts, td_ev_end(td_trace_ev(a->t, x->last)) - e->ts,
				    "%s blocked %s%s%s", calls, td_fmt_dur(b3, sizeof(b3), x->blocked),
				    strcmp(site, calls) ? " at " : "", strcmp(site, calls) ? site : "");
	}
	td_finding_value(f, "user_calls", (int64_t)mine);
	td_finding_value(f, "blocked_ns", blocked);
	{
		char fix[2400] = "", one[1200];
		static const unsigned order[] = {BK_ITEM, BK_NONZERO, BK_DTOH, BK_MEMCPY, BK_USER,
						 BK_EXPLICIT};
		size_t k, n = 0;
		/* a synchronous copy that waited with the GPU idle waited for nothing the trace
		 * shows: say so, and what to check, instead of "all queued work" */
		int waited_idle = (kinds & BK_MEMCPY) && cp_busy * 10 < cp_blocked;
		for (k = 0; k < sizeof(order) / sizeof(order[0]) && n < 2; k++) {
			if (!(kinds & order[k]) || (waited_idle && order[k] == BK_DTOH) ||
			    (order[k] == BK_EXPLICIT && (kinds & BK_MEMCPY)))
				continue; /* not what it waited for; a direct copy is no synchronize */
			if (order[k] == BK_MEMCPY && waited_idle)
				td_fix_text(&a->ctx, TD_FIX_SYNC_MEMCPY_IDLE, -1,
					    td_fmt_dur(b1, sizeof(b1), cp_blocked), one, sizeof(one));
			else
				td_fix_text(&a->ctx, mech_of(order[k]), -1, NULL, one, sizeof(one));
			if (n++)
				strncat(fix, " ", sizeof(fix) - strlen(fix) - 1);
			strncat(fix, one, sizeof(fix) - strlen(fix) - 1);
		}
		if (!n)
			td_fix_text(&a->ctx, TD_FIX_SYNC_EXPLICIT, -1, NULL, fix, sizeof(fix));
		td_finding_fix(f, "%s", fix);
	}
	free(sites);
	free(won);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_block_unit *u;
	size_t nu = td_an_block_units(a, &u), d, i, n = 0;
	struct td_block_unit *mine;

	if (!nu)
		return;
	/* the waits inside a loop over a tensor's elements are the element-loop rule's: its fix
	 * removes them with the loop */
	mine = td_malloc(nu * sizeof(*mine));
	for (i = 0; i < nu; i++)
		if (!td_an_in_elem_loop(a, td_trace_track_of(a->t, u[i].first),
					td_trace_ev(a->t, u[i].first)->ts))
			mine[n++] = u[i];
	for (d = 0; d < a->ndev && n; d++)
		run_device(a, r, d, mine, n);
	free(mine);
}

const struct td_rule rule_sync_stall = {
	.id = "sync-stall",
	.title = "Host waits on the GPU (.item(), .cpu(), synchronize, blocking copies)",
	.run = run,
};
