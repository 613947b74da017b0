/* SPDX-License-Identifier: MIT */
#include "tables/kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "rules/names.h"
#include "tables/groups.h"
#include "tables/ops.h"

const struct td_col td_kernel_cols[] = {
	{"name", "Name", TC_NAME, 1, 0},           {"category", "Category", TC_TEXT, 3, 0},
	{"calls", "# of Calls", TC_COUNT, 1, 0},   {"total_ns", "Total", TC_NS, 1, 0},
	{"avg_ns", "Avg", TC_NS, 1, 0},            {"min_ns", "Min", TC_NS, 0, 0},
	{"max_ns", "Max", TC_NS, 0, 0},            {"busy_pct", "GPU busy %", TC_PCT, 1, 0},
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
};

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
	size_t cap = 0, pcap = 0, i;
	struct td_dev_events gpu;
	uint32_t e;
	int64_t from, to, busy = 0;
	const char *wname = td_table_window(a, window_all, &from, &to);

	memset(&byname, 0, sizeof(byname));
	memset(&pairs, 0, sizeof(pairs));
	td_table_init(out, "tracedoc.kernels/1", td_kernel_cols, td_kernel_ncols);
	for (td_gpu_events_begin(&gpu, t); td_dev_events_next(&gpu, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		int64_t d = td_ev_dur(ev);
		uint32_t r, l, op, p;
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
		}
		acc[r].calls++;
		acc[r].total += d;
		if (d < acc[r].min)
			acc[r].min = d;
		if (d > acc[r].max)
			acc[r].max = d;
		l = td_trace_launch(t, e);
		op = l != TD_NONE ? td_op_parent(t, l) : TD_NONE;
		if (op == TD_NONE)
			continue;
		p = td_group(&pairs, r, td_trace_ev(t, op)->name, &added);
		if (added) {
			if (p == pcap) {
				pcap = pcap ? pcap * 2 : 64;
				pair_calls = td_realloc(pair_calls, pcap * sizeof(*pair_calls));
				pair_kernel = td_realloc(pair_kernel, pcap * sizeof(*pair_kernel));
				pair_op = td_realloc(pair_op, pcap * sizeof(*pair_op));
			}
			pair_calls[p] = 0;
			pair_kernel[p] = r;
			pair_op[p] = td_trace_ev(t, op)->name;
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
	for (i = 0; i < t->devices.len; i++) { /* every device's busy time in the window */
		struct td_interval *iv;
		size_t m = td_trace_busy(t, TD_VEC_AT(&t->devices, struct td_device, i).id, from, to,
					 &iv);
		busy += td_intervals_total(iv, m);
		free(iv);
	}
	for (i = 0; i < byname.n; i++) {
		const struct kacc *x = &acc[i];
		union td_cell *row = td_table_row(out);
		char cb[48];
		row[0].s = td_table_name(out, td_trace_name(t, x->name));
		row[1].s = td_table_str(out, category(a, x, cb, sizeof(cb)));
		row[2].i = (int64_t)x->calls;
		row[3].i = x->total;
		row[4].i = x->calls ? x->total / (int64_t)x->calls : 0;
		row[5].i = x->min;
		row[6].i = x->max;
		row[7].f = busy ? (double)x->total / (double)busy : 0;
		row[8].s = x->top_op ? td_table_name(out, td_trace_name(t, x->top_op))
				     : td_table_str(out, "");
		row[9].i = (int64_t)x->top_calls;
	}
	td_table_meta_str(out, "window", wname);
	td_table_meta_int(out, "window_start_ns", from);
	td_table_meta_int(out, "window_end_ns", to);
	td_table_meta_int(out, "gpu_busy_ns", busy);
	td_groups_free(&byname);
	td_groups_free(&pairs);
	free(acc);
	free(pair_calls);
	free(pair_kernel);
	free(pair_op);
}
