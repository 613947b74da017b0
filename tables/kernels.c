/* SPDX-License-Identifier: MIT */
#include "tables/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sort.h"
#include "analysis/names.h"
#include "analysis/roofline.h"
#include "analysis/graphmap.h"
#include "tables/groups.h"
#include "tables/ops.h"

const struct td_col td_kernel_cols[] = {
	{"name", "Name", TC_NAME, 1, 0},           {"category", "Category", TC_TEXT, 3, 0},
	{"calls", "# of Calls", TC_COUNT, 1, 0},   {"total_ns", "Total", TC_NS, 1, 0},
	{"avg_ns", "Avg", TC_NS, 1, 0},            {"median_ns", "Median", TC_NS, 0, 0},
	{"stddev_ns", "Std dev", TC_NS, 0, 0},     {"min_ns", "Min", TC_NS, 0, 0},
	{"max_ns", "Max", TC_NS, 0, 0},            {"busy_pct", "GPU busy %", TC_PCT, 1, 0},
	{"stream", "Stream", TC_COUNT, 0, 0},      {"streams", "# streams", TC_COUNT, 0, 0},
	{"grid", "Grid", TC_TEXT, 0, 0},           {"block", "Block", TC_TEXT, 0, 0},
	{"registers", "Registers", TC_COUNT, 0, 0}, {"shared_mem_bytes", "Shared mem", TC_BYTES, 0, 0},
	{"occupancy_pct", "Est. occupancy", TC_PCT, 0, 0},
	{"top_op", "Launched by", TC_NAME, 2, 0},  {"top_op_calls", "# by it", TC_COUNT, 0, 0},
};
const size_t td_kernel_ncols = sizeof(td_kernel_cols) / sizeof(td_kernel_cols[0]);

struct kacc {
	uint32_t name;
	uint8_t kind;
	uint64_t calls;
	int64_t total, min, max;
	uint32_t top_op;           /* name id of the op that launched most, 0 none */
	uint64_t top_calls;
	int64_t stream;            /* the stream of most calls */
	uint64_t stream_calls, streams;
	uint32_t grid, block;      /* the most frequent (name ids, 0 none) */
	uint64_t grid_calls, block_calls;
	int32_t regs, smem;        /* the most over its calls, -1 none */
	int64_t occ_sum;           /* est. achieved occupancy % x 100, over occ_n calls */
	uint64_t occ_n;
	double cost_flops, cost_bytes; /* the share of its ops' costs (analysis/roofline.h) */
	int64_t cost_ns;           /* the time of the calls with one */
	int cost_dtype;
};

/* The most frequent value of b per row r (a, b as td_groups keys), its count in *best */
struct modes {
	struct td_groups g;
	uint32_t *row, *val;
	uint64_t *n;
	size_t cap;
};

static void mode_add(struct modes *m, uint32_t r, uint32_t v)
{
	int added;
	uint32_t i = td_group(&m->g, r, v, &added);

	if (added) {
		if (i == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 64;
			m->row = td_realloc(m->row, m->cap * sizeof(*m->row));
			m->val = td_realloc(m->val, m->cap * sizeof(*m->val));
			m->n = td_realloc(m->n, m->cap * sizeof(*m->n));
		}
		m->row[i] = r;
		m->val[i] = v;
		m->n[i] = 0;
	}
	m->n[i]++;
}

static void modes_free(struct modes *m)
{
	td_groups_free(&m->g);
	free(m->row);
	free(m->val);
	free(m->n);
}

/* The roofline's share of a kernel: the nearest op around its launch that the model has a
 * cost for (analysis/roofline.h) splits that cost over the kernels it launched, by their time. */
struct kcost {
	uint32_t row, op;          /* the kernel's row, its op's cost in the finder */
	int64_t d;
};
struct costs {
	struct td_cost_finder f;
	int64_t *kns;              /* per cost: its kernels' time in the window */
	size_t kns_cap;
	struct kcost *k;
	size_t nk, kcap;
};

static void cost_add(struct costs *c, const struct td_trace *t, uint32_t row, uint32_t launch,
		     int64_t d)
{
	uint32_t op = td_cost_find(&c->f, t, launch);

	if (op == UINT32_MAX)
		return;
	if (op >= c->kns_cap) {
		size_t old = c->kns_cap;
		c->kns_cap = c->f.cap;
		c->kns = td_realloc(c->kns, c->kns_cap * sizeof(*c->kns));
		memset(c->kns + old, 0, (c->kns_cap - old) * sizeof(*c->kns));
	}
	if (c->nk == c->kcap) {
		c->kcap = c->kcap ? 2 * c->kcap : 256;
		c->k = td_realloc(c->k, c->kcap * sizeof(*c->k));
	}
	c->k[c->nk++] = (struct kcost){row, op, d};
	c->kns[op] += d;
}

static const struct td_col roof_cols[] = { /* docs/roofline.md */
	{"achieved_tflops", "TFLOP/s", TC_REAL, 0, 2}, {"achieved_tbps", "TB/s", TC_REAL, 0, 3},
	{"intensity", "FLOP/B", TC_REAL, 0, 1},        {"bound", "Bound", TC_TEXT, 0, 0},
	{"pct_of_roofline", "% of roof", TC_PCT, 0, 0},
};

struct kdur {
	uint32_t row;
	int64_t d;
};
#define KDUR_LESS(a, b) ((a)->row < (b)->row || ((a)->row == (b)->row && (a)->d < (b)->d))
TD_DEFINE_SORT(sort_kdur, struct kdur, KDUR_LESS)

static const char *category(const struct td_analysis *a, const struct kacc *k, char *buf,
			    size_t cap)
{
	const char *n = td_trace_name(a->t, k->name);

	if (k->kind == TD_K_MEMSET)
		return "memset";
	if (k->kind == TD_K_MEMCPY) {
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		td_memcpy_kind(n, &dir, &src, &dst);
		snprintf(buf, cap, "memcpy %s", td_copy_dir_name(dir));
		return buf;
	}
	return td_an_class(a, k->name) & NC_COMM ? "communication" : "compute";
}

void td_kernels_table(const struct td_analysis *a, int window_all, struct td_table *out)
{
	const struct td_trace *t = a->t;
	struct td_groups byname, pairs;
	struct kacc *acc = NULL;
	uint64_t *pair_calls = NULL;
	uint32_t *pair_kernel = NULL, *pair_op = NULL;
	size_t cap = 0, pcap = 0, i, nd = 0, j;
	struct kdur *durs;
	struct modes streams, grids, blocks;
	struct td_dev_events gpu;
	uint32_t e;
	int64_t from, to, busy = 0;
	const char *wname = td_table_window(a, window_all, &from, &to);
	struct costs cs;
	int roof = a->peaks.tbps > 0, any_cost = 0;

	for (i = 0; i < t->devices.len; i++) /* a duration per GPU op: as many as the devices' */
		nd += TD_VEC_AT(&t->devices, struct td_device, i).ops;
	durs = td_malloc((nd ? nd : 1) * sizeof(*durs));
	nd = 0;
	memset(&byname, 0, sizeof(byname));
	memset(&pairs, 0, sizeof(pairs));
	memset(&streams, 0, sizeof(streams));
	memset(&grids, 0, sizeof(grids));
	memset(&blocks, 0, sizeof(blocks));
	memset(&cs, 0, sizeof(cs));
	if (roof)
		td_cost_finder_init(&cs.f, t);
	td_table_init(out, "tracedoc.kernels/1", td_kernel_cols, td_kernel_ncols);
	for (td_gpu_events_begin(&gpu, t); td_dev_events_next(&gpu, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		int64_t d = td_ev_dur(ev);
		uint32_t r, l, op, p, opname;
		const uint32_t *chain;
		size_t nch = 0;
		int added;
		if (!td_kind_is_gpu_op(ev->kind) || ev->ts < from || ev->ts >= to)
			continue;
		r = td_group(&byname, ev->name, 0, &added);
		if (added) {
			if (r == cap) {
				cap = cap ? cap * 2 : 64;
				acc = td_realloc(acc, cap * sizeof(*acc));
			}
			memset(&acc[r], 0, sizeof(acc[r]));
			acc[r].name = ev->name;
			acc[r].kind = ev->kind;
			acc[r].min = d;
			acc[r].regs = acc[r].smem = -1;
			acc[r].cost_dtype = -1;
		}
		durs[nd].row = r;
		durs[nd++].d = d;
		mode_add(&streams, r, (uint32_t)td_trace_track(t, td_dev_events_track(&gpu))->stream);
		if (ev->flags & TD_EF_LAUNCH) {
			const struct td_launch *ln = td_trace_launch_of(t, e);
			if (ln) {
				if (ln->grid)
					mode_add(&grids, r, ln->grid);
				if (ln->block)
					mode_add(&blocks, r, ln->block);
				if (ln->regs > acc[r].regs)
					acc[r].regs = ln->regs;
				if (ln->smem > acc[r].smem)
					acc[r].smem = ln->smem;
				if (ln->occ >= 0) {
					acc[r].occ_sum += ln->occ;
					acc[r].occ_n++;
				}
			}
		}
		acc[r].calls++;
		acc[r].total += d;
		if (d < acc[r].min)
			acc[r].min = d;
		if (d > acc[r].max)
			acc[r].max = d;
		l = td_trace_launch(t, e);
		op = l != TD_NONE ? td_op_parent(t, l) : TD_NONE;
		if ((chain = td_graph_map_ops(a->gmap, e, &nch)) != NULL) {
			opname = chain[0]; /* replayed: the op that captured it (--capture) */
		} else {
			if (op == TD_NONE)
				continue;
			if (roof && ev->kind == TD_K_KERNEL)
				cost_add(&cs, t, r, op, d);
			opname = td_trace_ev(t, op)->name;
		}
		p = td_group(&pairs, r, opname, &added);
		if (added) {
			if (p == pcap) {
				pcap = pcap ? pcap * 2 : 64;
				pair_calls = td_realloc(pair_calls, pcap * sizeof(*pair_calls));
				pair_kernel = td_realloc(pair_kernel, pcap * sizeof(*pair_kernel));
				pair_op = td_realloc(pair_op, pcap * sizeof(*pair_op));
			}
			pair_calls[p] = 0;
			pair_kernel[p] = r;
			pair_op[p] = opname;
		}
		pair_calls[p]++;
	}
	for (i = 0; i < pairs.n; i++) { /* the op that launched most; ties: the first seen */
		struct kacc *x = &acc[pair_kernel[i]];
		if (pair_calls[i] > x->top_calls) {
			x->top_calls = pair_calls[i];
			x->top_op = pair_op[i];
		}
	}
	for (i = 0; i < streams.g.n; i++) { /* the most frequent stream, grid, block */
		struct kacc *x = &acc[streams.row[i]];
		x->streams++;
		if (streams.n[i] > x->stream_calls) {
			x->stream_calls = streams.n[i];
			x->stream = (int32_t)streams.val[i];
		}
	}
	for (i = 0; i < grids.g.n; i++)
		if (grids.n[i] > acc[grids.row[i]].grid_calls) {
			acc[grids.row[i]].grid_calls = grids.n[i];
			acc[grids.row[i]].grid = grids.val[i];
		}
	for (i = 0; i < blocks.g.n; i++)
		if (blocks.n[i] > acc[blocks.row[i]].block_calls) {
			acc[blocks.row[i]].block_calls = blocks.n[i];
			acc[blocks.row[i]].block = blocks.val[i];
		}
	for (i = 0; i < cs.nk; i++) { /* each kernel's share of its op's cost, by its time */
		const struct kcost *k = &cs.k[i];
		const struct td_op_cost *o = &cs.f.cost[k->op];
		struct kacc *x = &acc[k->row];
		double share = cs.kns[k->op] > 0 ? (double)k->d / (double)cs.kns[k->op] : 0;
		x->cost_flops += (double)o->flops * share;
		x->cost_bytes += (double)o->bytes * share;
		x->cost_ns += k->d;
		if (x->cost_dtype < 0)
			x->cost_dtype = o->dtype;
		any_cost |= k->d > 0;
	}
	if (any_cost) { /* the roofline's columns */
		memcpy(out->own + out->ncols, roof_cols, sizeof(roof_cols));
		out->ncols += sizeof(roof_cols) / sizeof(roof_cols[0]);
	}
	sort_kdur(durs, nd);
	for (i = 0; i < t->devices.len; i++) { /* every device's busy time in the window */
		struct td_interval *iv;
		size_t m = td_trace_busy(t, TD_VEC_AT(&t->devices, struct td_device, i).id, from, to,
					 &iv);
		busy += td_intervals_total(iv, m);
		free(iv);
	}
	for (i = 0, j = 0; i < byname.n; i++) {
		const struct kacc *x = &acc[i];
		union td_cell *row = td_table_row(out);
		char cb[48];
		const struct kdur *v;
		size_t c = 0, k;
		long double mean, ss = 0;
		while (j < nd && durs[j].row < i)
			j++;
		v = &durs[j]; /* this row's durations, in order: x->calls of them */
		mean = (long double)x->total / (long double)x->calls;
		for (k = 0; k < x->calls; k++)
			ss += ((long double)v[k].d - mean) * ((long double)v[k].d - mean);
		row[c++].s = td_table_name(out, td_trace_name(t, x->name));
		row[c++].s = td_table_str(out, category(a, x, cb, sizeof(cb)));
		row[c++].i = (int64_t)x->calls;
		row[c++].i = x->total;
		row[c++].i = x->total / (int64_t)x->calls;
		row[c++].i = x->calls % 2 ? v[x->calls / 2].d
			: v[x->calls / 2 - 1].d / 2 + v[x->calls / 2].d / 2 +
			  (v[x->calls / 2 - 1].d % 2 + v[x->calls / 2].d % 2) / 2;
		/* the sample standard deviation (pandas' and HTA's), none for one call */
		row[c++].i = x->calls > 1 ? (int64_t)llroundl(sqrtl(ss / (long double)(x->calls - 1)))
					  : TD_CELL_NONE;
		row[c++].i = x->min;
		row[c++].i = x->max;
		row[c++].f = busy ? (double)x->total / (double)busy : 0;
		row[c++].i = x->stream;
		row[c++].i = (int64_t)x->streams;
		row[c++].s = x->grid ? td_table_str(out, td_trace_name(t, x->grid)) : 0; /* none */
		row[c++].s = x->block ? td_table_str(out, td_trace_name(t, x->block)) : 0;
		row[c++].i = x->regs >= 0 ? x->regs : TD_CELL_NONE;
		row[c++].i = x->smem >= 0 ? x->smem : TD_CELL_NONE;
		row[c++].f = x->occ_n ? (double)x->occ_sum / (double)x->occ_n / 10000.0 : NAN;
		row[c++].s = x->top_op ? td_table_name(out, td_trace_name(t, x->top_op))
				       : td_table_str(out, "");
		row[c++].i = (int64_t)x->top_calls;
		if (any_cost) {
			struct td_roof rf;
			int has = x->cost_ns > 0;
			int64_t fl = (int64_t)llround(x->cost_flops), by = (int64_t)llround(x->cost_bytes);
			td_roof_eval(&a->peaks, x->cost_dtype, fl, by, x->cost_ns, &rf);
			row[c++].f = has && fl > 0 ? rf.tflops : NAN;
			row[c++].f = has && by > 0 ? rf.tbps : NAN;
			row[c++].f = has && by > 0 ? rf.intensity : NAN;
			row[c++].s = has && rf.bound ? td_table_str(out, td_bound_name(rf.bound)) : 0;
			row[c++].f = has ? rf.pct : NAN;
		}
		j += x->calls;
	}
	td_table_meta_str(out, "window", wname);
	td_table_meta_int(out, "window_start_ns", from);
	td_table_meta_int(out, "window_end_ns", to);
	td_table_meta_int(out, "gpu_busy_ns", busy);
	if (a->gmap && (a->gmap->replayed || a->gmap->captures)) {
		/* the graph-replayed kernels, those given the capture's ops, their annotation's */
		td_table_meta_int(out, "graph_kernels", (int64_t)a->gmap->replayed);
		td_table_meta_int(out, "graph_kernels_from_capture", (int64_t)a->gmap->matched);
		td_table_meta_int(out, "graph_kernels_annotated", (int64_t)a->gmap->annotated);
	}
	td_groups_free(&byname);
	td_groups_free(&pairs);
	modes_free(&streams);
	modes_free(&grids);
	modes_free(&blocks);
	free(durs);
	free(acc);
	if (roof)
		td_cost_finder_free(&cs.f);
	free(cs.kns);
	free(cs.k);
	free(pair_calls);
	free(pair_kernel);
	free(pair_op);
}
