/* SPDX-License-Identifier: MIT */
/* transfer: copies between host and device. Memcpy by direction and memory kind with bytes and
 * achieved bandwidth; pageable host-to-device copies, which block the host until the stream
 * drains and the staged copy ends (PyTorch adds a stream sync; fix: pin_memory +
 * non_blocking); tensors created on the CPU and then moved (fix: device=).
 *
 * A pageable upload is sized like a sync: the host would have run ahead by the time it was
 * blocked, so the GPU idle after it shrinks by up to that much (the blocked time itself is
 * reported as host time freed). Create-then-move is sized by the GPU idle during the creating
 * op and the copy: the fix removes both from the host's critical path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "fixes/catalogue.h"
#include "analysis/blocking.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

struct kind_stat {
	uint64_t n, bytes;
	int64_t time;
	int64_t pinned;  /* pageable uploads: their time from pinned memory, as the replay has it */
};

static void copy_stats(struct td_analysis *a, size_t d, struct td_finding *f,
		       struct kind_stat *pageable)
{
	size_t sj;
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct kind_stat ks[6][6][6];
	uint64_t to_ops = 0;
	uint32_t i;
	struct td_track_cursor cur = {0, 0, 0};
	int di, si, ti;
	char b1[32], b2[32];

	const struct td_whatif *w = td_an_whatif(a);
	size_t gd = td_whatif_dev_index(a, d);

	memset(ks, 0, sizeof(ks));
	memset(pageable, 0, sizeof(*pageable));
	TD_FOR_KIND(t, TD_K_CPU_OP, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		if (e->kind == TD_K_CPU_OP && (td_an_class(a, e->name) & NC_TO_OP) &&
		    td_an_in_host_window(a, d, e->ts))
			to_ops++;
	}
	TD_FOR_KIND(t, TD_K_MEMCPY, sj, i) {
		const struct td_event *e = td_trace_ev(t, i);
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		uint64_t bytes;

		if (e->kind != TD_K_MEMCPY ||
		    td_trace_track(t, td_trace_track_at(t, &cur, i))->device != dv->device ||
		    e->ts < dv->win_start || e->ts >= dv->win_end)
			continue;
		td_memcpy_kind(td_trace_name(t, e->name), &dir, &src, &dst);
		bytes = TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
		ks[dir][src][dst].n++;
		ks[dir][src][dst].bytes += bytes;
		ks[dir][src][dst].time += td_ev_dur(e);
		ks[dir][src][dst].pinned += w ? td_rp_pinned_time(&w->g, gd, dir == CD_DTOH, bytes,
								    td_ev_dur(e))
					      : td_ev_dur(e);
	}
	*pageable = ks[CD_HTOD][MK_PAGEABLE][MK_DEVICE];
	for (si = 0; si < 6; si++) /* pageable uploads of any destination */
		if (si != MK_DEVICE) {
			pageable->n += ks[CD_HTOD][MK_PAGEABLE][si].n;
			pageable->bytes += ks[CD_HTOD][MK_PAGEABLE][si].bytes;
			pageable->time += ks[CD_HTOD][MK_PAGEABLE][si].time;
			pageable->pinned += ks[CD_HTOD][MK_PAGEABLE][si].pinned;
		}
	if (!f)
		return;
	for (di = 1; di < 6; di++)
		for (si = 0; si < 6; si++)
			for (ti = 0; ti < 6; ti++) {
				struct kind_stat *k = &ks[di][si][ti];
				if (!k->n)
					continue;
				td_finding_where(f, "%s %s -> %s: %llu cop%s, %s, %s, %.1f GB/s",
						 td_copy_dir_name((enum td_copy_dir)di),
						 td_mem_kind_name((enum td_mem_kind)si),
						 td_mem_kind_name((enum td_mem_kind)ti),
						 (unsigned long long)k->n, k->n == 1 ? "y" : "ies",
						 td_fmt_bytes(b2, sizeof(b2), (double)k->bytes),
						 td_fmt_dur(b1, sizeof(b1), k->time),
						 k->time ? (double)k->bytes / (double)k->time : 0.0);
			}
	if (to_ops)
		td_finding_where(f, "aten::to / _to_copy / copy_: %llu op%s%s", (unsigned long long)to_ops,
				 to_ops == 1 ? "" : "s", a->nsteps ? "" : " in the window");
}

/* 1 when a unit's call is inside one of the aten::to that move a CPU-created tensor */
static int in_move(const struct td_analysis *a, const struct td_block_unit *u,
		   const uint32_t *moves, size_t nmoves)
{
	uint32_t e = td_trace_parent(a->t, u->first);
	int depth;

	for (depth = 0; e != TD_NONE && depth < 8; e = td_trace_parent(a->t, e), depth++) {
		size_t lo;

		TD_LOWER_BOUND(lo, nmoves, moves[mid] < e);
		if (lo < nmoves && moves[lo] == e)
			return 1;
	}
	return 0;
}

static void pageable_uploads(struct td_analysis *a, struct td_report *r, size_t d,
			     const struct td_block_unit *u, size_t nu, const uint32_t *moves,
			     size_t nmoves)
{
	const struct td_trace *t = a->t;
	struct td_claims cl;
	struct kind_stat pg;
	struct td_finding *f;
	int64_t blocked = 0;
	size_t i, n = 0, longest = SIZE_MAX;
	char b1[32], b2[32], b3[32];

	for (i = 0; i < nu; i++) {
		if (u[i].dev != d || !(u[i].kinds & BK_HTOD) || in_move(a, &u[i], moves, nmoves))
			continue;
		n++;
		blocked += u[i].blocked;
		if (longest == SIZE_MAX || u[i].blocked > u[longest].blocked)
			longest = i;
	}
	if (!n)
		return;
	f = td_report_add(r, "transfer", a->dev[d].device);
	td_claims_init(&cl);
	{
		const struct td_block_unit **mine = td_calloc(n, sizeof(*mine));
		size_t m = 0;
		for (i = 0; i < nu; i++)
			if (u[i].dev == d && (u[i].kinds & BK_HTOD) &&
			    !in_move(a, &u[i], moves, nmoves)) {
				td_claims_add_unit(a, &cl, &u[i], 0);
				mine[m++] = &u[i];
			}
		td_finding_claim(a, f, d, &cl, NULL, 0);
		td_whatif_units(a, f, mine, m);
		free(mine);
	}
	td_claims_free(&cl);
	f->host_ns = blocked;
	f->count = n;
	copy_stats(a, d, NULL, &pg);
	{
		char sz[64];
		if (pg.bytes)
			td_fmt_bytes(sz, sizeof(sz), (double)pg.bytes);
		else
			snprintf(sz, sizeof(sz), "sizes not recorded");
		td_finding_title(f, "%zu host-to-device cop%s from pageable memory (%s, %s on the GPU) "
				 "block%s the host %s and run at the pageable rate; %s of GPU idle around "
				 "them", n, n == 1 ? "y" : "ies", sz, td_fmt_dur(b1, sizeof(b1), pg.time),
				 n == 1 ? "s" : "", td_fmt_dur(b2, sizeof(b2), blocked),
				 td_fmt_dur(b3, sizeof(b3), f->idle_ns));
	}
	copy_stats(a, d, f, &pg);
	{
		const struct td_whatif *w = td_an_whatif(a);
		const struct td_rp_dev *rd = w ? &w->g.dev[td_whatif_dev_index(a, d)] : NULL;
		if (rd && rd->pinned[0] > 0 && pg.pinned < pg.time - pg.time / 20) { /* 5% or more */
			f->busy_ns = pg.time - pg.pinned; /* the GPU time the pinned rate removes */
			td_finding_where(f, "from pinned memory: %s of those copies in %s, at %.1f GB/s "
					 "(%s)", td_fmt_dur(b1, sizeof(b1), pg.time),
					 td_fmt_dur(b2, sizeof(b2), pg.pinned),
					 (double)rd->pinned[0] / 1000.0,
					 (rd->pinned_measured & 1) ? "the trace's pinned copies"
					 : "the device's host link, from a table");
		}
	}
	if (longest != SIZE_MAX && u[longest].copy != TD_NONE) {
		const struct td_event *e = td_trace_ev(t, u[longest].copy);
		uint64_t bytes = TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
		const struct td_event *c0 = td_trace_ev(t, u[longest].first);
		const char *call = td_an_name(a, c0->name), *at = td_an_label(a, u[longest].site);
		int same = !strcmp(call, at); /* no op above the call: its own name */
		td_finding_evidence(f, c0->ts, td_ev_end(td_trace_ev(t, u[longest].last)) - c0->ts,
				    "%s%s%s blocked the host %s; its %s, %s copy ran %s on the GPU "
				    "(%.1f GB/s)", call, same ? "" : " at ", same ? "" : at,
				    td_fmt_dur(b1, sizeof(b1), u[longest].blocked), td_an_name(a, e->name),
				    td_fmt_bytes(b3, sizeof(b3), (double)bytes),
				    td_fmt_dur(b2, sizeof(b2), td_ev_dur(e)),
				    td_ev_dur(e) ? (double)bytes / (double)td_ev_dur(e) : 0.0);
	}
	td_finding_value(f, "pageable_copies", (int64_t)n);
	td_finding_value(f, "blocked_ns", blocked);
	{ /* uploads that all end in the window's first half, none after: made once at start-up
	   * (a model's weights moved to the GPU), a one-off, not a cost of every step */
		const struct td_dev_analysis *dv = &a->dev[d];
		int64_t last = INT64_MIN;
		for (i = 0; i < nu; i++)
			if (u[i].dev == d && (u[i].kinds & BK_HTOD) && !in_move(a, &u[i], moves, nmoves) &&
			    td_ev_end(td_trace_ev(t, u[i].last)) > last)
				last = td_ev_end(td_trace_ev(t, u[i].last));
		/* one step (the window is that step) tells no start-up from its own upload */
		if (a->nsteps != 1 && 2 * (last - dv->host_start) < dv->host_end - dv->host_start) {
			f->risk = 3;
			f->severity = SEV_LOW;
			td_finding_where(f, "one-off: every one of them ends in the window's first half "
					 "and none follows - an upload made once at start-up (a model's "
					 "weights moved to the GPU), not a cost of each step");
		}
	}
	{
		char fix[1200], side[700] = "";
		/* on the compute stream the fix is replayed on a side stream too: say so */
		if (td_whatif_side_stream(f))
			td_fix_text(&a->ctx, TD_FIX_UPLOAD_SIDE_STREAM, -1, NULL, side, sizeof(side));
		td_finding_fix(f, "%s%s%s", td_fix_text(&a->ctx, TD_FIX_PAGEABLE_UPLOAD, -1, NULL,
							fix, sizeof(fix)),
			       *side ? " " : "", side);
	}
}

/* 1 when op k (on its thread's track) copies to the device: a memcpy call inside it. A trace
 * with no runtime calls cannot say: then any aten::to counts. */
static int copies_to_device(const struct td_analysis *a, uint32_t k)
{
	const struct td_trace *t = a->t;
	const struct td_event *x = td_trace_ev(t, k);
	const struct td_track *tr = td_trace_track(t, td_trace_track_of(t, k));
	uint32_t j;

	if (!t->by_kind[TD_K_RUNTIME])
		return 1;
	for (j = k + 1; j < tr->first + tr->count && td_trace_ev(t, j)->ts < td_ev_end(x); j++) {
		const struct td_event *c = td_trace_ev(t, j);
		if (c->kind == TD_K_RUNTIME && (td_an_class(a, c->name) & NC_MEMCPY_CALL))
			return 1;
	}
	return 0;
}

/* The fix of tensors created on the CPU then moved (device= at creation), as f's edits: each
 * creation op and its aten::to removed from the host's thread with their copy, one launch (a
 * fill kernel, or the device allocator's call) left in their place - where the replay holds
 * that thread. */
static void create_move_edits(struct td_analysis *a, struct td_finding *f,
			      struct td_vec *edits)
{
	const struct td_whatif *w = td_an_whatif(a);
	size_t i;

	if (!w)
		return;
	for (i = 0; i < edits->len; i++)
		if (w->g.track_first[TD_VEC_AT(edits, struct td_rp_edit, i).track] == TD_NONE)
			return;
	for (i = 0; i < edits->len; i++) {
		TD_VEC_AT(edits, struct td_rp_edit, i).residual = w->launch_cost;
		td_finding_edit(f, &TD_VEC_AT(edits, struct td_rp_edit, i));
	}
}

/* Tensors created on the CPU then moved: a creation op whose next sibling is an aten::to that
 * copies to the device (not a dtype cast, nor the DataLoader rebuilding a batch it received:
 * aten::empty then an aten::to of nothing). Their aten::to events go to *moves (sorted). */
static void create_then_move(struct td_analysis *a, struct td_report *r, size_t d,
			     const uint32_t *creates, size_t ncreates, struct td_vec *moves_out)
{
	const struct td_trace *t = a->t;
	struct td_claims cl;
	struct td_vec edits;  /* struct td_rp_edit: the fix, per tensor */
	struct td_finding *f = NULL;
	uint64_t moves = 0;
	int64_t create_time = 0, move_time = 0;
	uint32_t i, first = TD_NONE, site = 0;
	size_t ci;
	char b1[32], b2[32], b3[32];

	td_claims_init(&cl);
	td_vec_init(&edits, sizeof(struct td_rp_edit));
	for (ci = 0; ci < ncreates; ci++) {
		const struct td_event *e = td_trace_ev(t, creates[ci]);
		uint32_t p, k;
		const struct td_track *tr;
		i = creates[ci];
		if (!td_an_in_host_window(a, d, e->ts) || td_an_dev_of_host(a, i, TD_NONE) != d)
			continue;
		p = td_trace_parent(t, i);
		tr = td_trace_track(t, td_trace_track_of(t, i));
		for (k = i + 1; k < tr->first + tr->count; k++) {
			const struct td_event *x = td_trace_ev(t, k);
			if (x->ts < td_ev_end(e))
				continue; /* inside the creation op */
			if (td_trace_parent(t, k) == p && x->kind == TD_K_CPU_OP &&
			    strcmp(td_trace_name(t, x->name), "aten::to") == 0 &&
			    copies_to_device(a, k)) {
				*(uint32_t *)td_vec_push(moves_out) = k;
				moves++;
				create_time += td_ev_dur(e);
				move_time += td_ev_dur(x);
				td_claims_add(&cl, e->ts, td_ev_end(x), CAUSE_COUNT, 0);
				{ /* the fix replayed: creation and copy go, one launch (a fill on the
				   * device, or its allocation) in their place */
					struct td_rp_edit *ed = td_vec_push(&edits);
					*ed = (struct td_rp_edit){TD_RP_REMOVE, td_trace_track_of(t, i),
								  e->ts, td_ev_end(x), 0, 0};
				}
				if (first == TD_NONE) {
					first = i;
					site = td_an_site(a, i);
				}
			}
			break;
		}
	}
	if (moves) {
		f = td_report_add(r, "transfer", a->dev[d].device);
		td_finding_claim(a, f, d, &cl, NULL, 0);
		f->count = moves;
		f->host_ns = create_time + move_time;
		td_finding_title(f, "%llu tensor%s created on the CPU and then moved to the GPU: %s "
				 "creating them, %s in aten::to; the GPU idles %s meanwhile",
				 (unsigned long long)moves, moves == 1 ? " is" : "s are",
				 td_fmt_dur(b1, sizeof(b1), create_time), td_fmt_dur(b2, sizeof(b2), move_time),
				 td_fmt_dur(b3, sizeof(b3), f->idle_ns));
		td_finding_where(f, "%s, then aten::to", td_an_label(a, site));
		{
			const struct td_event *e = td_trace_ev(t, first);
			td_finding_evidence(f, e->ts, td_ev_dur(e), "%s on the CPU, then aten::to",
					    td_an_name(a, e->name));
		}
		create_move_edits(a, f, &edits);
		td_finding_value(f, "moves", (int64_t)moves);
		td_finding_value(f, "create_ns", create_time);
		td_finding_value(f, "move_ns", move_time);
		{
			char fix[600];
			td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_CREATE_MOVE, -1, NULL, fix,
							   sizeof(fix)));
		}
	}
	td_claims_free(&cl);
	td_vec_free(&edits);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t sj;
	const struct td_block_unit *u;
	size_t nu = td_an_block_units(a, &u), d;
	struct td_vec creates;
	uint32_t i;

	/* the creation ops, once for every device */
	td_vec_init(&creates, sizeof(uint32_t));
	TD_FOR_KIND(a->t, TD_K_CPU_OP, sj, i) {
		const struct td_event *e = td_trace_ev(a->t, i);
		if (e->kind == TD_K_CPU_OP && (td_an_class(a, e->name) & NC_CREATE_OP))
			*(uint32_t *)td_vec_push(&creates) = i;
	}
	for (d = 0; d < a->ndev; d++) {
		struct td_vec moves;
		td_vec_init(&moves, sizeof(uint32_t));
		/* a freshly created tensor's upload is fixed by creating it on the device, not by
		 * pinning: create-then-move claims first and owns those uploads */
		create_then_move(a, r, d, creates.data, creates.len, &moves);
		pageable_uploads(a, r, d, u, nu, moves.data, moves.len);
		td_vec_free(&moves);
	}
	td_vec_free(&creates);
}

const struct td_rule rule_transfer = {
	.id = "transfer",
	.title = "Host <-> device copies: pageable uploads, create-then-move",
	.run = run,
};
