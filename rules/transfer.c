/* SPDX-License-Identifier: MIT */
/* transfer: copies between host and device. Memcpy by direction and memory kind with bytes and
 * achieved bandwidth; pageable host-to-device copies (fix: pin_memory + non_blocking); copies
 * to the host inside the loop; device-to-device copies (.contiguous(), dtype casts);
 * aten::to / copy_ per step; tensors created on the CPU and then moved (fix: device=). A
 * pageable copy call blocks the host until the stream drains and the staged copy ends; sized by
 * the GPU idle during those calls plus the host time they would free, bounded by the idle the
 * host's own work accounts for; create-then-move by the GPU idle inside those aten::to. */
#include <stdio.h>
#include <string.h>

#include "rules/rule.h"

struct kind_stat {
	uint64_t n, bytes;
	int64_t time;
};

static void run(struct td_analysis *a, struct td_report *r)
{
	const struct td_trace *t = a->t;
	struct kind_stat ks[6][6][6];
	struct kind_stat pageable_htod = {0, 0, 0};
	int64_t ws, we, w, host_blocked = 0, idle_in_calls = 0, move_idle = 0, move_time = 0;
	uint64_t to_ops = 0, moves = 0;
	uint32_t i, first_pageable = TD_NONE, first_move = TD_NONE, move_site = 0;
	size_t d0 = 0;
	int di, si, ti;
	struct td_finding *f;
	char b1[32], b2[32], b3[32];

	if (!a->ndev)
		return;
	ws = a->dev[0].win_start;
	we = a->dev[0].win_end;
	w = we - ws;
	memset(ks, 0, sizeof(ks));
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, i);
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		uint64_t bytes;
		uint32_t l;

		if (e->ts < ws || e->ts >= we)
			continue;
		if (e->kind == TD_K_CPU_OP && (td_an_class(a, e->name) & NC_TO_OP))
			to_ops++;
		/* created on the CPU, then moved: a creation op whose next sibling is aten::to */
		if (e->kind == TD_K_CPU_OP && (td_an_class(a, e->name) & NC_CREATE_OP)) {
			uint32_t p = td_trace_parent(t, i), k;
			const struct td_track *tr = td_trace_track(t, e->track);
			for (k = i + 1; k < tr->first + tr->count; k++) {
				const struct td_event *x = td_trace_ev(t, k);
				if (x->ts < td_ev_end(e))
					continue; /* inside the creation op */
				if (td_trace_parent(t, k) == p && x->kind == TD_K_CPU_OP &&
				    strcmp(td_trace_name(t, x->name), "aten::to") == 0) {
					int64_t busy = td_an_busy_between(a, 0, x->ts, td_ev_end(x));
					moves++;
					move_time += td_ev_dur(x);
					move_idle += td_ev_dur(x) - busy;
					if (first_move == TD_NONE) {
						first_move = k;
						move_site = td_an_site(a, i);
					}
				}
				break;
			}
		}
		if (e->kind != TD_K_MEMCPY)
			continue;
		td_memcpy_kind(td_trace_name(t, e->name), &dir, &src, &dst);
		bytes = TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
		ks[dir][src][dst].n++;
		ks[dir][src][dst].bytes += bytes;
		ks[dir][src][dst].time += td_ev_dur(e);
		if (dir == CD_HTOD && src == MK_PAGEABLE) {
			pageable_htod.n++;
			pageable_htod.bytes += bytes;
			pageable_htod.time += td_ev_dur(e);
			if (first_pageable == TD_NONE || td_ev_dur(e) > td_ev_dur(td_trace_ev(t, first_pageable)))
				first_pageable = i;
			if ((l = td_trace_launch(t, i)) != TD_NONE) {
				const struct td_event *c = td_trace_ev(t, l);
				size_t d;
				for (d = 0; d < a->ndev; d++)
					if (a->dev[d].device == td_trace_track(t, e->track)->device)
						d0 = d;
				host_blocked += td_ev_dur(c);
				idle_in_calls += td_ev_dur(c) -
						 td_an_busy_between(a, d0, c->ts, td_ev_end(c));
			}
		}
	}

	if (pageable_htod.n || ks[CD_DTOH][MK_DEVICE][MK_PAGEABLE].n ||
	    ks[CD_DTOH][MK_DEVICE][MK_PINNED].n || ks[CD_DTOD][MK_DEVICE][MK_DEVICE].n) {
		f = td_report_add(r, "transfer", a->dev[d0].device);
		/* a pinned, non_blocking copy returns at once: the GPU idle during the calls goes, and
		 * the host gets back the rest of the blocked time for its own work (the data loading
		 * or Python the GPU waits for), bounded by the idle those host causes account for */
		{
			int64_t host_idle = a->dev[d0].idle_by_cause[CAUSE_DATALOADER] +
					    a->dev[d0].idle_by_cause[CAUSE_HOST] +
					    a->dev[d0].idle_by_cause[CAUSE_NOTHING];
			int64_t freed = host_blocked - idle_in_calls;
			f->savings_ns = idle_in_calls + (freed < host_idle ? freed : host_idle);
		}
		f->count = pageable_htod.n;
		if (pageable_htod.n)
			td_finding_title(f, "%llu host-to-device copies from pageable memory (%.1f MB, %s "
					 "on the GPU) hold the host %s",
					 (unsigned long long)pageable_htod.n, (double)pageable_htod.bytes / 1e6,
					 td_fmt_dur(b1, sizeof(b1), pageable_htod.time),
					 td_fmt_dur(b2, sizeof(b2), host_blocked));
		else
			td_finding_title(f, "Copies between host and device: no pageable uploads; %llu "
					 "downloads, %llu device-to-device copies",
					 (unsigned long long)(ks[CD_DTOH][MK_DEVICE][MK_PAGEABLE].n +
							      ks[CD_DTOH][MK_DEVICE][MK_PINNED].n),
					 (unsigned long long)ks[CD_DTOD][MK_DEVICE][MK_DEVICE].n);
		for (di = 1; di < 6; di++)
			for (si = 0; si < 6; si++)
				for (ti = 0; ti < 6; ti++) {
					struct kind_stat *k = &ks[di][si][ti];
					if (!k->n)
						continue;
					td_finding_where(f, "%s %s -> %s: %llu copies, %.1f MB, %s, %.1f GB/s",
							 td_copy_dir_name((enum td_copy_dir)di),
							 td_mem_kind_name((enum td_mem_kind)si),
							 td_mem_kind_name((enum td_mem_kind)ti),
							 (unsigned long long)k->n, (double)k->bytes / 1e6,
							 td_fmt_dur(b1, sizeof(b1), k->time),
							 k->time ? (double)k->bytes / (double)k->time : 0.0);
				}
		if (to_ops)
			td_finding_where(f, "aten::to / _to_copy / copy_: %llu ops%s", (unsigned long long)to_ops,
					 a->nsteps ? "" : " in the trace");
		if (first_pageable != TD_NONE) {
			const struct td_event *e = td_trace_ev(t, first_pageable);
			uint32_t l = td_trace_launch(t, first_pageable);
			td_finding_evidence(f, e->ts, td_ev_dur(e), "%s, %.1f MB in %s (%.1f GB/s)%s%s",
					    td_trace_name(t, e->name),
					    (double)TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux) / 1e6,
					    td_fmt_dur(b1, sizeof(b1), td_ev_dur(e)),
					    td_ev_dur(e) ? (double)TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux) /
						    (double)td_ev_dur(e) : 0.0,
					    l != TD_NONE ? ", from " : "",
					    l != TD_NONE ? td_an_label(a, td_an_site(a, l)) : "");
		}
		if (pageable_htod.n)
			td_finding_fix(f, "%s", "Copy from pinned memory without blocking the host: "
				       "DataLoader(..., pin_memory=True) and batch.to(\"cuda\", "
				       "non_blocking=True) (or tensor.pin_memory() for tensors you build "
				       "yourself). The copy then overlaps compute and runs at full PCIe "
				       "bandwidth.");
		else
			td_finding_fix(f, "%s", "Keep data on the GPU across steps; copy results to the host "
				       "once, not per step; avoid .contiguous() and dtype casts in the hot "
				       "path where a view or the right dtype at creation would do.");
	}
	if (moves) {
		f = td_report_add(r, "transfer", a->dev[0].device);
		f->savings_ns = move_idle;
		f->count = moves;
		td_finding_title(f, "%llu tensors are created on the CPU and then moved to the GPU (%s "
				 "in aten::to)", (unsigned long long)moves,
				 td_fmt_dur(b3, sizeof(b3), move_time));
		td_finding_where(f, "%s", td_an_label(a, move_site));
		if (first_move != TD_NONE) {
			const struct td_event *e = td_trace_ev(t, first_move);
			td_finding_evidence(f, e->ts, td_ev_dur(e), "aten::to after creating on the CPU");
		}
		td_finding_fix(f, "%s", "Create the tensor where it is used: torch.zeros(shape, "
			       "device=\"cuda\") (likewise randn, ones, empty, full, arange) instead of "
			       "torch.zeros(shape).to(\"cuda\").");
	}
	(void)w;
}

const struct td_rule rule_transfer = {
	.id = "transfer",
	.title = "Host <-> device copies: pageable uploads, downloads, create-then-move",
	.run = run,
};
