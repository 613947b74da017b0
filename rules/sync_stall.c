/* SPDX-License-Identifier: MIT */
/* sync-stall: host waits on the GPU - .item(), .cpu(), .tolist(), .numpy(), nonzero, boolean
 * indexing, cuda{Stream,Device,Event}Synchronize, synchronous cudaMemcpy and copies into
 * pageable memory - counted as the user's calls (one .item() is one sync) and grouped by call
 * site. Pageable uploads, whose stream sync PyTorch adds, are the transfer rule's. A sync
 * outside the steady state (e.g. the final cudaDeviceSynchronize) is not a stall.
 *
 * Sized by what removing the waits wins back: the host runs ahead by at most the time it was
 * blocked, so the GPU idle after each wait shrinks by up to that much; the rest of that bubble
 * is what the host did next (preprocessing, Python) and belongs to other findings.
 *
 * A read after which the host queues no GPU work in the window (the final result copied out,
 * then post-processed) wins nothing: what the host does next uses the data it reads, so it
 * starts after the copy however the copy is made. Its wait is claimed, not the bubble after
 * it, and the replay keeps it blocking.
 *
 * The fix for a value read (.item()) follows what the read is: a check on tensor values
 * (isnan().any(), an if on a tensor) is guarded, many reads a step from one site are a loop
 * over elements, one a step is a metric read every N steps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "fixes/catalogue.h"
#include "analysis/blocking.h"
#include "analysis/loops.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

#define BK_QUEUED_AFTER 0x80000000u /* a site's: one of its calls has GPU work queued after */
struct site {
	uint64_t calls, checks, last; /* ... of them a check on tensor values, the last read */
	int64_t blocked, won;
	unsigned kinds;
};

/* The start of the last runtime call that queues GPU work (a launch, a copy, a memset) on any
 * host thread before device index d's steady window ends; INT64_MIN for none. */
static int64_t last_queued(struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	int64_t q = INT64_MIN, end = a->dev[d].host_end;
	size_t j;
	uint32_t i;

	TD_FOR_KIND(t, TD_K_RUNTIME, j, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_RUNTIME && e->ts < end && e->ts > q &&
		    (td_an_class(a, e->name) & (NC_LAUNCH | NC_MEMCPY_CALL | NC_MEMSET_CALL)))
			q = e->ts;
	}
	return q;
}

static int is_name(const char *n, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(n, *set))
			return 1;
	return 0;
}

/* Whether unit u reads the answer of a check on tensor values: under bool() of a tensor
 * (aten::is_nonzero: an if or assert on it), torch.equal or allclose, or right after an
 * any/all/isnan/isinf/isfinite on its thread (the few events before its call). */
#define CHECK_LOOKBACK 32
static int is_check(struct td_analysis *a, const struct td_block_unit *u)
{
	static const char *const under[] = {"aten::is_nonzero", "aten::equal", "aten::allclose",
					    NULL};
	static const char *const before[] = {"aten::any", "aten::all", "aten::isnan",
					     "aten::isinf", "aten::isfinite", NULL};
	const struct td_trace *t = a->t;
	uint32_t p, k, first = td_trace_track(t, td_trace_track_of(t, u->first))->first;
	int depth;

	for (p = td_trace_parent(t, u->first), depth = 0; p != TD_NONE && depth < 256;
	     p = td_trace_parent(t, p), depth++)
		if (td_trace_ev(t, p)->kind == TD_K_CPU_OP &&
		    is_name(td_trace_name(t, td_trace_ev(t, p)->name), under))
			return 1;
	for (k = u->first; k > first && u->first - k < CHECK_LOOKBACK;) {
		const struct td_event *e = td_trace_ev(t, --k);
		if (e->kind == TD_K_CPU_OP && is_name(td_trace_name(t, e->name), before))
			return 1;
	}
	return 0;
}

/* The fix for reads of values (.item()) whose most telling site is s: a check guarded, a loop
 * over elements removed (16 reads a step or more from one site), or a read a step made
 * every N steps; the context's per-element flag set or cleared by that. */
#define LOOP_READS_PER_STEP 16
static void item_text(struct td_analysis *a, const struct site *s, char *buf, size_t cap)
{
	struct td_context c = a->ctx;
	uint64_t steps = a->has_steps && a->nsteps ? a->nsteps : 1;

	if (2 * s->checks >= s->calls) {
		td_fix_text(&c, TD_FIX_SYNC_CHECK, -1, NULL, buf, cap);
		return;
	}
	if (s->calls >= LOOP_READS_PER_STEP * steps)
		c.on |= TD_ON_ELEM_LOOP;
	else
		c.on &= ~(uint32_t)TD_ON_ELEM_LOOP;
	td_fix_text(&c, TD_FIX_SYNC_ITEM, -1, NULL, buf, cap);
}

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
	int64_t last_q = last_queued(a, d), last_blocked = 0; /* the last reads' */
	uint8_t *last;
	int by_blocked;

	for (i = 0; i < nu; i++)
		mine += u[i].dev == d && !(u[i].kinds & BK_HTOD);
	if (!mine)
		return;
	f = td_report_add(r, "sync-stall", a->dev[d].device);
	sites = td_calloc(nlabels, sizeof(*sites));
	won = td_calloc(nu, sizeof(*won));
	last = td_calloc(nu, 1);
	/* a site that also reads before GPU work is queued is a loop's: its last call is the
	 * window's edge, not a last read (the loop goes on past the window) */
	for (i = 0; i < nu; i++)
		if (u[i].dev == d && !(u[i].kinds & BK_HTOD) &&
		    last_q >= td_ev_end(td_trace_ev(a->t, u[i].last)))
			sites[u[i].site].kinds |= BK_QUEUED_AFTER;
	td_claims_init(&cl);
	for (i = 0; i < nu; i++) {
		if (u[i].dev != d || (u[i].kinds & BK_HTOD))
			continue;
		last[i] = !(sites[u[i].site].kinds & BK_QUEUED_AFTER);
		if (last[i])
			td_claims_add_wait(a, &cl, &u[i], (uint32_t)i);
		else
			td_claims_add_unit(a, &cl, &u[i], (uint32_t)i);
	}
	td_finding_claim(a, f, d, &cl, won, nu);
	td_claims_free(&cl);
	{
		const struct td_block_unit **us = td_calloc(mine, sizeof(*us));
		size_t m = 0;
		for (i = 0; i < nu; i++)
			if (u[i].dev == d && !(u[i].kinds & BK_HTOD) && !last[i])
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
		s->checks += (u[i].kinds & BK_ITEM) && is_check(a, &u[i]);
		s->last += last[i];
		last_blocked += last[i] ? u[i].blocked : 0;
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
	/* the sites that hold the most, by GPU idle won back, then host time; by host time where
	 * most of it is in last reads, which win nothing back but must be named */
	by_blocked = 2 * last_blocked > blocked;
	for (;;) {
		uint32_t best = 0, s;
		for (s = 1; s < nlabels; s++) {
			size_t k;
			int taken = 0;
			for (k = 0; k < ntop; k++)
				taken |= top[k] == s;
			if (!sites[s].calls || taken)
				continue;
			if (!best)
				best = s;
			else if (by_blocked && sites[s].blocked != sites[best].blocked)
				best = sites[s].blocked > sites[best].blocked ? s : best;
			else if (sites[s].won > sites[best].won ||
				 (sites[s].won == sites[best].won &&
				  sites[s].blocked > sites[best].blocked))
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
		char lastw[320] = "";
		if (s->last)
			snprintf(lastw, sizeof(lastw), "; %s the last read of the window: the host "
				 "queues no GPU work after it, so what follows uses what it waits for "
				 "and starts after it however the read is made (no saving)",
				 s->last == s->calls ? "it is" : "one is");
		td_finding_where(f, "%s: %llu call%s, host blocked %s, GPU idle under them %s%s",
				 td_an_label(a, top[i]), (unsigned long long)s->calls,
				 s->calls == 1 ? "" : "s", td_fmt_dur(b1, sizeof(b1), s->blocked),
				 td_fmt_dur(b2, sizeof(b2), s->won), lastw);
		kinds |= s->kinds & ~BK_QUEUED_AFTER;
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
		const struct site *item = NULL;
		/* a synchronous copy that waited with the GPU idle waited for nothing the trace
		 * shows: say so, and what to check, instead of "all queued work" */
		int waited_idle = (kinds & BK_MEMCPY) && cp_busy * 10 < cp_blocked;
		for (k = 0; k < ntop && !item; k++)
			if (sites[top[k]].kinds & BK_ITEM)
				item = &sites[top[k]];
		/* most of the waiting is in reads the host uses next: that first */
		if (2 * last_blocked > blocked) {
			td_fix_text(&a->ctx, TD_FIX_SYNC_LAST_READ, -1, NULL, fix, sizeof(fix));
			n++;
		}
		for (k = 0; k < sizeof(order) / sizeof(order[0]) && n < 2; k++) {
			/* after a last read, not the copy's own advice: it would not help */
			if (!(kinds & order[k]) || (waited_idle && order[k] == BK_DTOH) ||
			    (2 * last_blocked > blocked && !(order[k] & (BK_ITEM | BK_NONZERO))) ||
			    (order[k] == BK_EXPLICIT && (kinds & BK_MEMCPY)))
				continue; /* not what it waited for; a direct copy is no synchronize */
			if (order[k] == BK_MEMCPY && waited_idle)
				td_fix_text(&a->ctx, TD_FIX_SYNC_MEMCPY_IDLE, -1,
					    td_fmt_dur(b1, sizeof(b1), cp_blocked), one, sizeof(one));
			else if (order[k] == BK_ITEM && item)
				item_text(a, item, one, sizeof(one));
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
	free(last);
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
