/* SPDX-License-Identifier: MIT */
/* The analysis's replay graph (sizing/internal.h): built from the trace with the runtime
 * calls' roles from their name classes, the DataLoader's gates, the windows it is measured
 * by. Below the rest of sizing/: it calls none of it. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/names.h"
#include "sizing/whatif.h"
#include "sizing/internal.h"

uint32_t td_whatif_step_track(const struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	if (a->has_steps && t->steps.len) {
		uint32_t tr = td_trace_track_of(t, TD_VEC_AT(&t->steps, struct td_step, 0).event);
		if (!a->whatif || a->whatif->g.track_first[tr] != TD_NONE)
			return tr;
	}
	return a->dev[d].host_track;
}

int64_t td_whatif_busy(struct td_analysis *a, size_t d, const struct td_rp_times *r)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	return td_replay_busy(&a->whatif->g, r, td_whatif_step_track(a, d), dv->host_start,
			      dv->host_end, dv->device);
}

int64_t td_whatif_win(struct td_analysis *a, size_t d, const struct td_rp_times *r)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	return td_replay_window(&a->whatif->g, r, td_whatif_step_track(a, d), dv->host_start,
				dv->host_end, dv->device);
}

size_t td_whatif_dev_index(const struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	const struct td_device *dv = d < a->ndev ? td_trace_find_device(t, a->dev[d].device) : NULL;

	return dv ? (size_t)(dv - (const struct td_device *)t->devices.data) : 0;
}

size_t td_whatif_main_device(const struct td_analysis *a)
{
	size_t d, best = 0;

	for (d = 1; d < a->ndev; d++)
		if (a->dev[d].ops_in_window > a->dev[best].ops_in_window)
			best = d;
	return best;
}

/* A DataLoader with workers hands the loop batches the workers made at their own pace: where
 * __next__ waited for one, the loop's work after it cannot start earlier than it did, whatever
 * fix speeds up the loop elsewhere (only the loader's own fix moves it). A wait is a span longer
 * than twice the shortest (a batch that was ready: what receiving one costs) where the shortest
 * stands out (a quarter of the median or less). Where none does, the spans are waits when the
 * shortest is LOADER_WAIT_NS or more (receiving a batch takes far less; spans alike and short
 * are receiving, as dlrm-v100-rank1's 81-118 us) and they keep the workers' pace (paced()). In
 * the main process (num_workers=0) the loading is the loop's own host work, which moves with
 * it: no gate. */
#define LOADER_WAIT_NS 1000000
#define PACE_MIN_PAIRS 4

struct dl_span {
	uint32_t track;
	int64_t ts, end;
};
#define DL_SPAN_LESS(x, y)                                                                   \
	((x)->track != (y)->track ? (x)->track < (y)->track : (x)->ts < (y)->ts)
TD_DEFINE_SORT(sort_dl_spans, struct dl_span, DL_SPAN_LESS)

/* Whether spans (sorted by thread, then time) that all waited end at the workers' pace, not
 * the loop's. A wait for a batch made at the workers' pace ends when that batch is ready, so it
 * takes up whatever the loop's own work before it varied by: the loop's work from one __next__
 * to the next (rest) plus the next __next__ varies far less than the two do apart. A fixed
 * cost of receiving each batch adds its own variation to the loop's: var(rest + next) /
 * (var(rest) + var(next)) is near 0 for a wait (0.00-0.01 on gen_trace --workers-us) and near 1
 * for a cost (0.7-1.2 on gen_trace's receiving, demo-train's included). Too few pairs, or none
 * that varies, cannot tell the two apart: they are taken for waits, as the length says. */
static int paced(const struct dl_span *s, size_t n)
{
	double sr = 0, sn = 0, srr = 0, snn = 0, sss = 0, ss = 0, m, vr, vn, vs;
	size_t i, k = 0;

	for (i = 1; i < n; i++) {
		double r, nx;
		if (s[i].track != s[i - 1].track || s[i].ts < s[i - 1].end)
			continue;
		r = (double)(s[i].ts - s[i - 1].end);
		nx = (double)(s[i].end - s[i].ts);
		sr += r;
		sn += nx;
		ss += r + nx;
		srr += r * r;
		snn += nx * nx;
		sss += (r + nx) * (r + nx);
		k++;
	}
	if (k < PACE_MIN_PAIRS)
		return 1;
	m = (double)k;
	vr = srr / m - (sr / m) * (sr / m);
	vn = snn / m - (sn / m) * (sn / m);
	vs = sss / m - (ss / m) * (ss / m);
	if (!(vr + vn > 0))
		return 1;
	return vs < 0.5 * (vr + vn);
}

static void loader_gates(const struct td_analysis *a, struct td_replay *g)
{
	const struct td_trace *t = a->t;
	struct td_vec spans; /* struct dl_span: the worker loaders' outermost spans */
	int64_t shortest = INT64_MAX, *dur, med;
	struct dl_span *s;
	size_t i, n;
	int all;

	td_vec_init(&spans, sizeof(struct dl_span));
	for (i = 0; i < t->events.len; i++) {
		const struct td_event *e = td_trace_ev(t, (uint32_t)i);
		struct dl_span *p;
		if (!(a->name_class[e->name] & NC_DATALOADER) ||
		    (a->name_class[e->name] & NC_SINGLE_PROC_DL) ||
		    !td_an_outer_dataloader(a, (uint32_t)i))
			continue;
		p = td_vec_push(&spans);
		p->track = td_trace_track_of(t, (uint32_t)i);
		p->ts = e->ts;
		p->end = td_ev_end(e);
		if (td_ev_dur(e) < shortest)
			shortest = td_ev_dur(e);
	}
	n = spans.len;
	s = spans.data;
	if (!n) {
		td_vec_free(&spans);
		return;
	}
	dur = td_calloc(n + 1, sizeof(*dur));
	for (i = 0; i < n; i++)
		dur[i] = s[i].end - s[i].ts;
	med = td_median_i64(dur, n);
	free(dur);
	sort_dl_spans(s, n);
	all = shortest > med / 4; /* none stands out (shortest * 4 > med, without overflow) */
	if (all && (shortest < LOADER_WAIT_NS || !paced(s, n)))
		n = 0;
	for (i = 0; i < n; i++)
		if (all || s[i].end - s[i].ts - shortest > shortest)
			td_replay_gate(g, s[i].track, s[i].ts, s[i].end);
	td_vec_free(&spans);
}

/* The graph of a's trace into w, with what it needs of the analysis: the names' classes only
 * (so that it can be built while the rest of the analysis runs); w->built when it has host
 * calls and GPU ops to replay. */
void td_whatif_build(const struct td_analysis *a, struct td_whatif *w)
{
	size_t sj;
	const struct td_trace *t = a->t;
	uint8_t *role;
	size_t i;

	role = td_calloc(t->names.count + 2, 1);
	for (i = 1; i <= t->names.count; i++) {
		uint32_t c = a->name_class[i];
		if ((c & NC_SYNC_CALL) ||
		    ((c & NC_ALLOC) && strstr(td_trace_name(t, (uint32_t)i), "Free")))
			role[i] = TD_RP_WAIT; /* cudaFree / hipFree synchronize the device */
		else if (c & (NC_MEMCPY_CALL | NC_MEMSET_CALL))
			role[i] = TD_RP_COPY;
		else { /* a copy op: its direction over the host link and its host memory */
			enum td_copy_dir dir;
			enum td_mem_kind src, dst, host;
			td_memcpy_kind(td_trace_name(t, (uint32_t)i), &dir, &src, &dst);
			host = dir == CD_HTOD ? src : dst;
			if (dir == CD_HTOD || dir == CD_DTOH)
				role[i] = (uint8_t)((dir == CD_HTOD ? TD_RP_OP_HTOD : TD_RP_OP_DTOH) |
						    (host == MK_PAGEABLE ? TD_RP_OP_PAGEABLE
						     : host == MK_PINNED ? TD_RP_OP_PINNED : 0));
		}
	}
	{
		struct td_vec v;
		td_vec_init(&v, sizeof(int64_t));
		TD_FOR_KIND(t, TD_K_RUNTIME, sj, i) {
			const struct td_event *e = td_trace_ev(t, (uint32_t)i);
			if (e->kind == TD_K_RUNTIME && (a->name_class[e->name] & NC_LAUNCH))
				*(int64_t *)td_vec_push(&v) = td_ev_dur(e);
		}
		w->launch_cost = v.len ? td_median_i64(v.data, v.len) : 5000;
		td_vec_free(&v);
	}
	if (td_replay_build(&w->g, t, role) == 0 && w->g.nhost && w->g.n > w->g.nhost) {
		/* the link's pinned bandwidth the trace has no pinned copies to show: the table's */
		for (i = 0; i < w->g.ndev && i < t->devices.len; i++) {
			const struct td_device *dv = &TD_VEC_AT(&t->devices, struct td_device, i);
			int64_t bw = td_host_link_mbps(dv->name ? td_trace_name(t, dv->name) : NULL);
			if (!w->g.dev[i].pinned[0])
				w->g.dev[i].pinned[0] = bw;
			if (!w->g.dev[i].pinned[1])
				w->g.dev[i].pinned[1] = bw;
		}
		loader_gates(a, &w->g);
		w->copy_on_compute = td_calloc(w->g.nhost / 8 + 1, 1);
		w->on_device = td_calloc(w->g.nhost / 8 + 1, 1);
		for (i = 0; i < t->tracks.len; i++) { /* each stream's ops, a lane at a time */
			uint32_t f = w->g.track_first[i], end, k;
			int kern = 0;
			if (f == TD_NONE || !td_trace_track(t, (uint32_t)i)->is_gpu)
				continue;
			end = f + w->g.track_count[i];
			for (k = f; k < end && !kern; k++)
				kern = td_rp_event(&w->g, k)->kind == TD_K_KERNEL;
			for (k = f; k < end; k++) {
				const struct td_event *op = td_rp_event(&w->g, k);
				uint32_t h = w->g.src[k];
				/* a copy call whose copy runs on a stream that runs kernels */
				if (op->kind == TD_K_MEMCPY && h != TD_NONE && kern &&
				    (w->g.fl[h] & TD_RPF_COPY))
					w->copy_on_compute[h >> 3] |= (uint8_t)(1u << (h & 7));
				/* a device-side copy or a memset, from a call that does not wait */
				if (h != TD_NONE && !td_rp_syncs(&w->g, h) &&
				    (op->kind == TD_K_MEMSET ||
				     (op->kind == TD_K_MEMCPY &&
				      !(role[op->name] & (TD_RP_OP_HTOD | TD_RP_OP_DTOH)))))
					w->on_device[h >> 3] |= (uint8_t)(1u << (h & 7));
			}
		}
		/* as sized: the unexplained delays stay */
		w->g.keep_unexplained = 1;
		w->built = 1;
	}
	free(role);
}

/* How many replays run at once: as many as the jobs, while their times (9 bytes a node) fit
 * in half the memory the trace's events take, or 16 MiB where that is more - beside the
 * events and the graph, the run's peak stays near the reader's (on the 1 GB bench trace, two
 * at once: 23 MB of 61 MB). */
int td_whatif_replays_at_once(const struct td_analysis *a, int jobs, size_t tasks)
{
	size_t budget = a->t->events.len * sizeof(struct td_event) / 2, fit;

	if (budget < (16u << 20))
		budget = 16u << 20;
	fit = budget / (9 * (a->whatif->g.n + 1));
	if (jobs > 16)
		jobs = 16;
	if ((size_t)jobs > fit)
		jobs = fit ? (int)fit : 1;
	if ((size_t)jobs > tasks)
		jobs = tasks ? (int)tasks : 1;
	return jobs;
}
