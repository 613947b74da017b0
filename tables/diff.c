/* SPDX-License-Identifier: MIT */
#include "tables/diff.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "tables/groups.h"
#include "tables/kernels.h"
#include "tables/ops.h"

const struct td_col td_diff_cols[] = {
	{"kind", "Kind", TC_TEXT, 1, 0},                 {"name", "Name", TC_NAME, 1, 0},
	{"base_ns", "BASE/step", TC_NS, 1, 0},           {"current_ns", "CURRENT/step", TC_NS, 1, 0},
	{"change_ns", "Change/step", TC_SNS, 1, 0},      {"base_calls", "BASE calls", TC_COUNT, 0, 0},
	{"current_calls", "CURRENT calls", TC_COUNT, 0, 0}, {"status", "", TC_TEXT, 1, 0},
};
const size_t td_diff_ncols = sizeof(td_diff_cols) / sizeof(td_diff_cols[0]);

/* the phases of every device: the first one's always, another's when it was busy in them (as
 * the reports' phase tables) */
static void phases(const struct td_analysis *a, struct td_diff_side *s)
{
	size_t d, k, n;

	s->phases = a->ndev ? td_calloc(a->ndev * TD_PHASE_COUNT, sizeof(*s->phases)) : NULL;
	for (d = 0; d < a->ndev; d++) {
		struct td_phase_stat ps[TD_PHASE_COUNT];
		int64_t busy = 0;
		n = td_an_phase_stats(a, d, ps);
		for (k = 0; k < n; k++)
			busy += ps[k].busy_ns;
		if (d && !busy)
			continue;
		for (k = 0; k < n; k++) {
			struct td_diff_phase *p = &s->phases[s->nphases++];
			int64_t div = ps[k].count ? (int64_t)ps[k].count : 1;
			p->device = a->dev[d].device;
			p->phase = ps[k].phase;
			p->iters = ps[k].count;
			p->median_ns = ps[k].median_ns;
			p->busy_ns_per_iter = ps[k].busy_ns / div;
			p->comm_exposed_ns_per_iter = ps[k].comm_exposed_ns / div;
		}
	}
}

static void side(struct td_analysis *a, struct td_diff_side *s)
{
	size_t d, c;
	int64_t div;

	memset(s, 0, sizeof(*s));
	s->steps = a->nsteps;
	s->step_median_ns = td_an_median_step(a);
	div = s->steps ? (int64_t)s->steps : 1;
	for (d = 0; d < a->ndev; d++) {
		s->window_ns += a->dev[d].win_end - a->dev[d].win_start;
		s->busy_ns_per_step += a->dev[d].busy_ns / div;
		for (c = 0; c < CAUSE_COUNT; c++)
			s->idle_ns_per_step[c] += a->dev[d].idle_by_cause[c] / div;
	}
	if (!a->ndev && a->has_steps)
		s->window_ns = a->steps_end - a->steps_start;
	phases(a, s);
}

struct acc {
	uint32_t kind, name;       /* ids in the diff table's strings */
	int64_t base, cur;
	int64_t base_calls, cur_calls;
	int in_base, in_cur;
};

/* adds table t's rows (value column vcol, calls column ccol) to the accumulators */
static void add_rows(struct td_diff *d, struct td_groups *g, struct acc **acc, size_t *cap,
		     const struct td_table *t, const char *kind, int vcol, int ccol, int is_cur,
		     int64_t div)
{
	uint32_t k = td_table_str(&d->rows, kind);
	size_t r;

	for (r = 0; r < t->nrows; r++) {
		const char *name = td_table_text(t, td_table_cell(t, r, 0)->s);
		uint32_t id = td_table_str(&d->rows, name); /* marked as the source table has it */
		int added;
		uint32_t i = td_group(g, k, id, &added);
		struct acc *x;
		if (added) {
			if (i == *cap) {
				*cap = *cap ? *cap * 2 : 64;
				*acc = td_realloc(*acc, *cap * sizeof(**acc));
			}
			memset(&(*acc)[i], 0, sizeof(**acc));
			(*acc)[i].kind = k;
			(*acc)[i].name = id;
		}
		x = &(*acc)[i];
		if (is_cur) {
			x->cur += td_table_cell(t, r, (size_t)vcol)->i / div;
			x->cur_calls += td_table_cell(t, r, (size_t)ccol)->i;
			x->in_cur = 1;
		} else {
			x->base += td_table_cell(t, r, (size_t)vcol)->i / div;
			x->base_calls += td_table_cell(t, r, (size_t)ccol)->i;
			x->in_base = 1;
		}
	}
}

void td_diff_build(struct td_analysis *base, struct td_analysis *cur, struct td_diff *out)
{
	struct td_analysis *a[2] = {base, cur};
	struct td_groups g;
	struct acc *acc = NULL;
	size_t cap = 0, i, s;
	int64_t dstep, sum = 0;

	memset(out, 0, sizeof(*out));
	memset(&g, 0, sizeof(g));
	side(base, &out->base);
	side(cur, &out->cur);
	td_table_init(&out->rows, "tracedoc.diff/1", td_diff_cols, td_diff_ncols);
	for (s = 0; s < 2; s++) {
		struct td_ops_opts o = {0, TD_GROUP_NAME, 1, 0};
		struct td_table ops, ker;
		const struct td_diff_side *sd = s ? &out->cur : &out->base;
		int64_t div = sd->steps ? (int64_t)sd->steps : 1;
		td_ops_table(a[s], &o, &ops);
		td_kernels_table(a[s], 0, &ker);
		add_rows(out, &g, &acc, &cap, &ops, "op", td_table_col(&ops, "self_cpu_ns"),
			 td_table_col(&ops, "calls"), (int)s, div);
		add_rows(out, &g, &acc, &cap, &ker, "gpu", td_table_col(&ker, "total_ns"),
			 td_table_col(&ker, "calls"), (int)s, div);
		td_table_free(&ops);
		td_table_free(&ker);
	}
	for (i = 0; i < g.n; i++) {
		union td_cell *row = td_table_row(&out->rows);
		const struct acc *x = &acc[i];
		row[0].s = x->kind;
		row[1].s = x->name;
		row[2].i = x->base;
		row[3].i = x->cur;
		row[4].i = x->cur - x->base;
		row[5].i = x->base_calls;
		row[6].i = x->cur_calls;
		row[7].s = td_table_str(&out->rows, !x->in_base ? "added" : !x->in_cur ? "removed" : "");
	}
	td_table_sort(&out->rows, 4); /* by the size of the change */
	/* the rows that make up most of the step-time change: same sign, largest first, until
	 * they reach 80% of it */
	dstep = out->cur.step_median_ns - out->base.step_median_ns;
	for (i = 0; i < out->rows.nrows && out->nwhy < TD_DIFF_WHY && dstep; i++) {
		int64_t c = td_table_cell(&out->rows, i, 4)->i;
		if ((c > 0) != (dstep > 0) || !c)
			continue;
		out->why[out->nwhy++] = i;
		sum += c;
		if (llabs(sum) * 10 >= llabs(dstep) * 8)
			break;
	}
	out->why_ns = sum;
	td_table_meta_int(&out->rows, "base_steps", (int64_t)out->base.steps);
	td_table_meta_int(&out->rows, "current_steps", (int64_t)out->cur.steps);
	td_groups_free(&g);
	free(acc);
}

void td_diff_free(struct td_diff *d)
{
	td_table_free(&d->rows);
	free(d->base.phases);
	free(d->cur.phases);
	memset(d, 0, sizeof(*d));
}
