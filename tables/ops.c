/* SPDX-License-Identifier: MIT */
#include "tables/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "rules/names.h"
#include "tables/groups.h"

#define OPS_COLS(...) \
	{"name", "Name", TC_NAME, 1}, __VA_ARGS__ \
	{"self_cpu_pct", "Self CPU %", TC_PCT, 0}, {"self_cpu_ns", "Self CPU", TC_NS, 1}, \
	{"cpu_total_pct", "CPU total %", TC_PCT, 0}, {"cpu_total_ns", "CPU total", TC_NS, 1}, \
	{"cpu_avg_ns", "CPU time avg", TC_NS, 0}, {"self_cuda_ns", "Self CUDA", TC_NS, 1}, \
	{"self_cuda_pct", "Self CUDA %", TC_PCT, 1}, {"cuda_total_ns", "CUDA total", TC_NS, 1}, \
	{"cuda_avg_ns", "CUDA time avg", TC_NS, 0}, {"calls", "# of Calls", TC_COUNT, 1},

const struct td_col td_ops_cols[] = {OPS_COLS()};
const size_t td_ops_ncols = sizeof(td_ops_cols) / sizeof(td_ops_cols[0]);
static const struct td_col shape_cols[] = {OPS_COLS({"shape", "Input Shapes", TC_TEXT, 1},)};
static const struct td_col stack_cols[] = {OPS_COLS({"stack", "Source Location", TC_TEXT, 1},)};

const char *td_table_window(const struct td_analysis *a, int window_all, int64_t *from,
			    int64_t *to)
{
	if (!window_all && a->has_steps && a->nsteps) {
		*from = a->steps_start;
		*to = a->steps_end;
		return "steps";
	}
	if (!td_trace_span(a->t, from, to))
		*from = *to = 0;
	return "all";
}

static int is_op(unsigned kind)
{
	return kind == TD_K_CPU_OP || kind == TD_K_USER_ANNOTATION;
}

uint32_t td_op_parent(const struct td_trace *t, uint32_t ev)
{
	uint32_t p = td_trace_parent(t, ev);

	while (p != TD_NONE && !is_op(td_trace_ev(t, p)->kind))
		p = td_trace_parent(t, p);
	return p;
}

struct acc {
	uint32_t name, extra;      /* name id (0: ProfilerStep*), group text id in the table */
	uint64_t calls;
	int64_t self_cpu, cpu_total, self_cuda, cuda_total;
};

struct groups {
	struct td_groups map;
	struct acc *acc;
	size_t cap;
};

static uint32_t group_of(struct groups *g, uint32_t name, uint32_t extra)
{
	int added;
	uint32_t i = td_group(&g->map, name, extra, &added);

	if (added) {
		if (i == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 64;
			g->acc = td_realloc(g->acc, g->cap * sizeof(*g->acc));
		}
		memset(&g->acc[i], 0, sizeof(g->acc[0]));
		g->acc[i].name = name;
		g->acc[i].extra = extra;
	}
	return i;
}

void td_ops_table(const struct td_analysis *a, const struct td_ops_opts *o, struct td_table *out)
{
	const struct td_trace *t = a->t;
	size_t n = t->events.len, i, tr;
	uint32_t *grp = td_malloc((n ? n : 1) * sizeof(*grp));
	struct td_dev_events gpu;
	uint32_t g_ev;
	int64_t *self = td_malloc((n ? n : 1) * sizeof(*self));
	struct groups g;
	int64_t from, to, sum_self_cpu = 0, sum_self_cuda = 0;
	uint64_t unattributed = 0;
	const char *wname = td_table_window(a, o->window_all, &from, &to);

	memset(&g, 0, sizeof(g));
	td_table_init(out, "tracedoc.ops/1",
		      o->group == TD_GROUP_SHAPE ? shape_cols : o->group == TD_GROUP_STACK
		      ? stack_cols : td_ops_cols,
		      td_ops_ncols + (o->group != TD_GROUP_NAME));
	/* ops in the window: their group, duration, and self time (children taken off) */
	for (tr = 0; tr < t->tracks.len; tr++) {
		const struct td_track *k = td_trace_track(t, (uint32_t)tr);
		uint32_t e;
		if (k->is_gpu)
			continue;
		for (e = k->first; e < k->first + k->count; e++) {
			const struct td_event *ev = td_trace_ev(t, e);
			uint32_t name = ev->name, extra = 0, p;
			grp[e] = TD_NONE;
			if (!is_op(ev->kind) || ev->ts < from || ev->ts >= to)
				continue;
			if (td_an_class(a, name) & NC_STEP)
				name = 0; /* ProfilerStep#N: one row */
			if (o->group == TD_GROUP_SHAPE) {
				const struct td_op_args *oa = td_trace_op_args(t, e);
				extra = td_table_str(out, oa && oa->dims ? td_trace_name(t, oa->dims) : "");
			} else if (o->group == TD_GROUP_STACK) {
				char b[1100];
				extra = td_table_str(out, td_an_user_frame(a, e, b, sizeof(b)));
			}
			grp[e] = group_of(&g, name, extra);
			self[e] = td_ev_dur(ev);
			g.acc[grp[e]].calls++;
			g.acc[grp[e]].cpu_total += td_ev_dur(ev);
			p = td_op_parent(t, e);
			if (p != TD_NONE && grp[p] != TD_NONE) /* a parent earlier on this track */
				self[p] -= td_ev_dur(ev);
		}
	}
	for (tr = 0; tr < t->tracks.len; tr++) {
		const struct td_track *k = td_trace_track(t, (uint32_t)tr);
		uint32_t e;
		if (k->is_gpu)
			continue;
		for (e = k->first; e < k->first + k->count; e++)
			if (grp[e] != TD_NONE) /* overlapping children (bad data) take no more than all */
				g.acc[grp[e]].self_cpu += self[e] > 0 ? self[e] : 0;
	}
	/* GPU ops: to the op that launched them and every op around it */
	for (td_gpu_events_begin(&gpu, t); td_dev_events_next(&gpu, &g_ev);) {
		const struct td_event *ev = td_trace_ev(t, g_ev);
		uint32_t l, op;
		int64_t d = td_ev_dur(ev);
		if (!td_kind_is_gpu_op(ev->kind))
			continue;
		l = td_trace_launch(t, g_ev);
		op = l != TD_NONE ? td_op_parent(t, l) : TD_NONE;
		if (op == TD_NONE || grp[op] == TD_NONE) {
			unattributed += l == TD_NONE || op == TD_NONE;
			continue;
		}
		g.acc[grp[op]].self_cuda += d;
		for (; op != TD_NONE && grp[op] != TD_NONE; op = td_op_parent(t, op))
			g.acc[grp[op]].cuda_total += d;
	}
	for (i = 0; i < g.map.n; i++) {
		sum_self_cpu += g.acc[i].self_cpu;
		sum_self_cuda += g.acc[i].self_cuda;
	}
	for (i = 0; i < g.map.n; i++) {
		const struct acc *x = &g.acc[i];
		union td_cell *row = td_table_row(out);
		size_t c = 0;
		row[c++].s = td_table_name(out, x->name ? td_trace_name(t, x->name) : "ProfilerStep*");
		if (o->group != TD_GROUP_NAME)
			row[c++].s = x->extra;
		row[c++].f = sum_self_cpu ? (double)x->self_cpu / (double)sum_self_cpu : 0;
		row[c++].i = x->self_cpu;
		row[c++].f = sum_self_cpu ? (double)x->cpu_total / (double)sum_self_cpu : 0;
		row[c++].i = x->cpu_total;
		row[c++].i = x->calls ? x->cpu_total / (int64_t)x->calls : 0;
		row[c++].i = x->self_cuda;
		row[c++].f = sum_self_cuda ? (double)x->self_cuda / (double)sum_self_cuda : 0;
		row[c++].i = x->cuda_total;
		row[c++].i = x->calls ? x->cuda_total / (int64_t)x->calls : 0;
		row[c++].i = (int64_t)x->calls;
	}
	td_table_meta_str(out, "window", wname);
	td_table_meta_int(out, "window_start_ns", from);
	td_table_meta_int(out, "window_end_ns", to);
	td_table_meta_str(out, "group_by", o->group == TD_GROUP_SHAPE ? "shape"
			  : o->group == TD_GROUP_STACK ? "stack" : "name");
	td_table_meta_int(out, "self_cpu_total_ns", sum_self_cpu);
	td_table_meta_int(out, "self_cuda_total_ns", sum_self_cuda);
	td_table_meta_int(out, "gpu_ops_without_op", (int64_t)unattributed);
	td_groups_free(&g.map);
	free(g.acc);
	free(self);
	free(grp);
}
