/* SPDX-License-Identifier: MIT */
#include "tables/ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sat.h"
#include "common/sort.h"
#include "analysis/names.h"
#include "analysis/flops.h"
#include "analysis/roofline.h"
#include "analysis/graphmap.h"
#include "tables/groups.h"

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

/* Names key_averages leaves out (torch/autograd/profiler.py, _filter_name): their time stays
 * in the op around them. */
static const char *const filtered_names[] = {
	"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
	"profiler::_record_function_enter_new", "profiler::_record_function_exit",
	"aten::is_leaf", "aten::output_nr", "aten::_version",
};
#define NFILTERED (sizeof(filtered_names) / sizeof(filtered_names[0]))

enum row_kind { ROW_OP, ROW_RUNTIME, ROW_GPU };
static const char *const kind_names[] = {"op", "runtime", "gpu"};

struct acc {
	uint32_t name, extra;      /* name id (0: ProfilerStep*), group text id in the table */
	uint8_t kind, maybe_flops;
	uint64_t calls;
	int64_t self_cpu, cpu_total, self_cuda, cuda_total;
	int64_t mem[2], self_mem[2]; /* [0] host, [1] device */
	int64_t flops;             /* -1: no call with a formula */
	int64_t cost_flops, cost_bytes; /* the roofline's model (analysis/roofline.h), over the
				    * calls it has a cost for */
	int64_t cost_ns;           /* the GPU time of those calls' kernels */
	int cost_dtype;            /* the first such call's dtype */
	uint64_t cost_calls;
};

struct groups {
	struct td_groups map;
	struct acc *acc;
	size_t cap;
};

static uint32_t group_of(struct groups *g, uint32_t name, uint32_t extra, enum row_kind kind,
			 const char *text)
{
	int added;
	/* key_averages keeps a GPU activity apart from a CPU event of its name (a kernel and the
	 * Inductor range that launches it) */
	uint32_t i = td_group(&g->map, kind == ROW_GPU ? name | 0x80000000u : name, extra, &added);

	if (added) {
		if (i == g->cap) {
			g->cap = g->cap ? g->cap * 2 : 64;
			g->acc = td_realloc(g->acc, g->cap * sizeof(*g->acc));
		}
		memset(&g->acc[i], 0, sizeof(g->acc[0]));
		g->acc[i].name = name;
		g->acc[i].extra = extra;
		g->acc[i].kind = (uint8_t)kind;
		g->acc[i].flops = -1;
		g->acc[i].cost_dtype = -1;
		g->acc[i].maybe_flops = kind == ROW_OP && td_op_has_flops(text);
	}
	return i;
}

struct ctx {
	const struct td_analysis *a;
	const struct td_trace *t;
	const struct td_ops_opts *o;
	int64_t from, to;
	uint32_t filtered[NFILTERED];
	uint32_t *grp;             /* per event: its row's group, TD_NONE when not a row */
	uint32_t *up;              /* per host event: set_up() */
};

static int filtered(const struct ctx *c, uint32_t name)
{
	size_t i;

	for (i = 0; i < NFILTERED; i++)
		if (c->filtered[i] && c->filtered[i] == name)
			return 1;
	return 0;
}

/* a host event that can be a row: an op, an annotation, and unless folded a runtime call */
static int row_kind(const struct ctx *c, const struct td_event *ev)
{
	return is_op(ev->kind) || (ev->kind == TD_K_RUNTIME && !c->o->fold_runtime);
}

static int rowish(const struct ctx *c, uint32_t e)
{
	const struct td_event *ev = td_trace_ev(c->t, e);

	return row_kind(c, ev) && !filtered(c, ev->name);
}

/* c->up[e]: the innermost row-kind event around e that ends after it (memoized, events in
 * track order: parents first) */
static void set_up(const struct ctx *c, uint32_t e)
{
	int64_t end = td_ev_end(td_trace_ev(c->t, e));
	uint32_t q = td_trace_parent(c->t, e);

	while (q != TD_NONE) {
		if (!rowish(c, q))
			q = td_trace_parent(c->t, q);
		else if (td_ev_end(td_trace_ev(c->t, q)) > end)
			break;
		else
			q = c->up[q]; /* ends with e: the first around it that ends later */
	}
	c->up[e] = q;
}

/* the innermost host event around ev that can be a row (Python frames, other spans and the
 * names left out skipped), or TD_NONE; as EventList._populate_cpu_children nests, one that
 * starts where another ends (an instant at a call's end, two instants at one time) is not in
 * it: past such a one, c->up jumps to the first that ends later, so a pile of instants at one
 * time costs O(1) each */
static uint32_t row_parent(const struct ctx *c, uint32_t ev)
{
	int64_t ts = td_trace_ev(c->t, ev)->ts;
	uint32_t p = td_trace_parent(c->t, ev);

	while (p != TD_NONE) {
		if (!rowish(c, p))
			p = td_trace_parent(c->t, p);
		else if (c->o->fold_runtime || ts < td_ev_end(td_trace_ev(c->t, p)))
			return p;
		else
			p = c->up[p];
	}
	return TD_NONE;
}

/* per host event */
#define F_ROW 0x01      /* a row's event: in the window, of a row kind, not left out */
#define F_DUP 0x02      /* nested alone in a row of its name: no row of its own */
#define F_REPLACED 0x04 /* holds such a one */
#define F_CHILD1 0x08   /* rows nested in it: 0, 1 or 2+ (F_NCHILD) */
#define F_NCHILD 0x18
#define F_COST 0x20     /* the roofline's model has a cost for it */

/* the name key_averages groups by: ProfilerStep#N as ProfilerStep* (id 0) */
static uint32_t row_name(const struct ctx *c, uint32_t e)
{
	uint32_t name = td_trace_ev(c->t, e)->name;

	return td_an_class(c->a, name) & NC_STEP ? 0 : name;
}

static uint32_t extra_of(struct ctx *c, struct td_table *out, uint32_t e)
{
	if (c->o->group == TD_GROUP_SHAPE) {
		const struct td_op_args *oa = td_kind_on_gpu_track(td_trace_ev(c->t, e)->kind) ? NULL
			: td_trace_op_args(c->t, e);
		return td_table_str(out, oa && oa->dims ? td_trace_name(c->t, oa->dims) : "");
	}
	if (c->o->group == TD_GROUP_STACK) {
		char b[1100];
		return td_table_str(out, td_kind_on_gpu_track(td_trace_ev(c->t, e)->kind) ? ""
				    : td_an_user_frame(c->a, e, b, sizeof(b)));
	}
	return 0;
}

/* [memory] samples to the rows around them, as key_averages counts them: an event holds the
 * samples from its start to its end, both included, of any thread (MemRecordsAcc.in_interval
 * in torch/autograd/profiler.py), or with memory_own_thread only of its own thread. By prefix
 * sums over each group's samples in time order (one group of all, or one per thread), so a row
 * costs two binary searches however many samples or instants pile up at one time. */
static void attribute_memory(const struct ctx *c, int64_t *mem[2])
{
	const struct td_trace *t = c->t;
	int own = c->o->memory_own_thread;
	size_t ntr = t->tracks.len, nm = t->mem.len, i, tr;
	size_t ng = own ? ntr : 1; /* groups of samples */
	size_t *first = td_calloc(ng + 1, sizeof(*first));
	int64_t *ts = td_malloc((nm ? nm : 1) * sizeof(*ts));
	int64_t *sum[2];
	size_t *at = td_malloc((ng ? ng : 1) * sizeof(*at));

	sum[0] = td_calloc(nm + ng + 1, sizeof(*sum[0])); /* a leading 0 per group */
	sum[1] = td_calloc(nm + ng + 1, sizeof(*sum[1]));
	for (i = 0; i < nm; i++) { /* the samples by group, each group's in time order */
		uint32_t k = own ? TD_VEC_AT(&t->mem, struct td_mem_sample, i).track : 0;
		if (k < ng)
			first[k + 1]++;
	}
	for (tr = 0; tr < ng; tr++)
		first[tr + 1] += first[tr];
	memcpy(at, first, ng * sizeof(*at));
	for (i = 0; i < nm; i++) { /* t->mem is by time: each group's run stays in order */
		const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample, i);
		uint32_t k = own ? m->track : 0;
		size_t j;
		int d;
		if (k >= ng)
			continue;
		j = at[k]++;
		ts[j] = m->ts;
		for (d = 0; d < 2; d++) /* sum[d][j + k + 1]: the group's samples to j */
			sum[d][j + k + 1] = d == (m->device >= 0) ? td_mem_get(m, TD_MEM_BYTES) : 0;
	}
	for (tr = 0; tr < ng; tr++) {
		size_t n = first[tr + 1] - first[tr], base = first[tr] + tr, i2; /* sum[base] = 0 */
		int d;
		for (d = 0; d < 2; d++)
			for (i2 = 1; i2 <= n; i2++)
				sum[d][base + i2] = td_sat_add(sum[d][base + i2], sum[d][base + i2 - 1]);
	}
	for (tr = 0; tr < ntr; tr++) {
		const struct td_track *k = td_trace_track(t, (uint32_t)tr);
		size_t g = own ? tr : 0, lo0 = first[g], n = first[g + 1] - lo0, base = lo0 + g;
		uint32_t e;
		int d;
		if (!n)
			continue;
		for (e = k->first; e < k->first + k->count; e++) {
			const struct td_event *ev = td_trace_ev(t, e);
			int64_t end = td_ev_end(ev);
			size_t lo, hi;
			const int64_t *v = ts + lo0;
			if (c->grp[e] == TD_NONE)
				continue;
			TD_LOWER_BOUND(lo, n, v[mid] < ev->ts);   /* the first at or after the start */
			TD_LOWER_BOUND(hi, n, v[mid] <= end);     /* the first after the end */
			for (d = 0; d < 2; d++)
				mem[d][e] = td_sat_sub(sum[d][base + hi], sum[d][base + lo]);
		}
	}
	free(sum[0]);
	free(sum[1]);
	free(at);
	free(ts);
	free(first);
}

/* the columns present, in key_averages' order */
static size_t columns(struct td_col *cols, const struct td_ops_opts *o, int gpu, int mem_host,
		      int mem_dev, int flops, int roof)
{
	size_t n = 0;
#define COL(...) cols[n++] = (struct td_col){__VA_ARGS__, 0}
	COL("name", "Name", TC_NAME, 1);
	if (!o->fold_runtime) /* folded, every row is an op */
		COL("kind", "Kind", TC_TEXT, 0);
	COL("self_cpu_pct", "Self CPU %", TC_PCT, 0);
	COL("self_cpu_ns", "Self CPU", TC_NS, 1);
	COL("cpu_total_pct", "CPU total %", TC_PCT, 0);
	COL("cpu_total_ns", "CPU total", TC_NS, gpu ? 2 : 1);
	COL("cpu_avg_ns", "CPU time avg", TC_NS, 0);
	if (gpu) {
		COL("self_cuda_ns", "Self CUDA", TC_NS, 1);
		COL("self_cuda_pct", "Self CUDA %", TC_PCT, 3);
		COL("cuda_total_ns", "CUDA total", TC_NS, 1);
		COL("cuda_avg_ns", "CUDA time avg", TC_NS, 0);
	}
	if (mem_host) {
		COL("cpu_mem_bytes", "CPU Mem", TC_MEM, 5);
		COL("self_cpu_mem_bytes", "Self CPU Mem", TC_MEM, 5);
	}
	if (mem_dev) {
		COL("cuda_mem_bytes", "CUDA Mem", TC_MEM, 6);
		COL("self_cuda_mem_bytes", "Self CUDA Mem", TC_MEM, 6);
	}
	COL("calls", "# of Calls", TC_COUNT, 1);
	if (o->group == TD_GROUP_SHAPE)
		COL("shape", "Input Shapes", TC_TEXT, 1);
	else if (o->group == TD_GROUP_STACK)
		COL("stack", "Source Location", TC_TEXT, 1);
	if (flops)
		COL("flops", "Total FLOPs", TC_FLOPS, 4);
	if (roof) { /* docs/roofline.md */
		COL("achieved_tflops", "TFLOP/s", TC_REAL, 0);
		cols[n - 1].scale = 2;
		COL("achieved_tbps", "TB/s", TC_REAL, 0);
		cols[n - 1].scale = 3;
		COL("intensity", "FLOP/B", TC_REAL, 0);
		cols[n - 1].scale = 1;
		COL("bound", "Bound", TC_TEXT, 0);
		COL("pct_of_roofline", "% of roof", TC_PCT, 0);
	}
#undef COL
	return n;
}

/* a mean to the nearest ns, a half to even: as key_averages' float mean prints ("%.3f" of
 * 3.0625 us is 3.062) */
static int64_t avg(int64_t total, uint64_t calls)
{
	__int128 q, r;

	if (!calls)
		return 0;
	q = (__int128)total / (__int128)calls;
	r = (__int128)total % (__int128)calls;
	if (r < 0) { /* a negative total (overlapping children): toward -inf first */
		q--;
		r += (__int128)calls;
	}
	if (2 * r > (__int128)calls || (2 * r == (__int128)calls && (q & 1)))
		q++;
	return (int64_t)q;
}

/* key_averages' FLOPs unit: by the smallest total (profiler_util.auto_scale_flops) */
static void flops_unit(struct td_col *c, int64_t min)
{
	static const char *const titles[] = {"Total FLOPs", "Total KFLOPs", "Total MFLOPs",
					     "Total GFLOPs", "Total TFLOPs", "Total PFLOPs"};
	int s = 0;

	while (s < 5 && min >= 1000) {
		min /= 1000;
		s++;
	}
	c->title = titles[s];
	c->scale = s;
}

/* A graph-replayed kernel of d ns (event ev) to the ops that captured it (the capture's,
 * analysis/graphmap.h): its self time to the innermost, its total to each op of the chain
 * once, then to the ops around its graph launch (op, its parents) as an eager launch's */
#define CHAIN_MAX 128
static void captured_ops(struct groups *g, const struct td_trace *t,
			 const struct td_graph_map *m, uint32_t ev, int64_t d, uint32_t op,
			 const uint32_t *par, const uint32_t *grp, const uint8_t *fl)
{
	uint32_t seen[CHAIN_MAX];
	size_t n = 0, k, j, ns = 0;
	const uint32_t *chain = td_graph_map_ops(m, ev, &n);

	for (k = 0; k < n && ns < CHAIN_MAX; k++) {
		uint32_t gi = group_of(g, chain[k], 0, ROW_OP, td_trace_name(t, chain[k]));
		for (j = 0; j < ns && seen[j] != gi; j++)
			;
		if (j < ns)
			continue; /* a module nested in one of its name: counted once */
		seen[ns++] = gi;
		if (!k)
			g->acc[gi].self_cuda = td_sat_add(g->acc[gi].self_cuda, d);
		g->acc[gi].cuda_total = td_sat_add(g->acc[gi].cuda_total, d);
	}
	if (op != TD_NONE && (fl[op] & F_DUP))
		op = par[op];
	for (; op != TD_NONE && ns < CHAIN_MAX; op = par[op]) {
		if (grp[op] == TD_NONE)
			break;
		for (j = 0; j < ns && seen[j] != grp[op]; j++)
			;
		if (j == ns) {
			seen[ns++] = grp[op];
			g->acc[grp[op]].cuda_total = td_sat_add(g->acc[grp[op]].cuda_total, d);
		}
	}
}

void td_ops_table(const struct td_analysis *a, const struct td_ops_opts *o, struct td_table *out)
{
	const struct td_trace *t = a->t;
	size_t n = t->events.len, i, tr, ncols;
	struct ctx c;
	struct td_dev_events gpu, host;
	uint32_t g_ev, e;
	int64_t *self = td_malloc((n ? n : 1) * sizeof(*self));
	uint32_t *par = td_malloc((n ? n : 1) * sizeof(*par));
	uint8_t *fl = td_calloc(n ? n : 1, sizeof(*fl));
	int64_t *mem[2] = {NULL, NULL}, min_flops = INT64_MAX;
	struct groups g;
	struct td_col cols[TD_TABLE_MAXCOLS];
	int64_t sum_self_cpu = 0, sum_self_cuda = 0;
	uint64_t unattributed = 0, ngpu = 0;
	int mem_host = 0, mem_dev = 0, any_dims = 0, any_cost = 0;
	/* the roofline's columns: a device with peaks, ops with GPU time */
	int roof = a->peaks.tbps > 0;
	struct td_op_cost cost;
	const char *wname;

	memset(&c, 0, sizeof(c));
	memset(&g, 0, sizeof(g));
	c.a = a;
	c.t = t;
	c.o = o;
	c.grp = td_malloc((n ? n : 1) * sizeof(*c.grp));
	c.up = td_malloc((n ? n : 1) * sizeof(*c.up));
	wname = td_table_window(a, o->window_all, &c.from, &c.to);
	for (i = 0; i < NFILTERED; i++)
		c.filtered[i] = td_strtab_find(&t->names, filtered_names[i],
					       strlen(filtered_names[i]));
	for (i = 0; i < t->devices.len; i++)
		ngpu += TD_VEC_AT(&t->devices, struct td_device, i).ops;
	for (i = 0; i < t->mem.len; i++) {
		const struct td_mem_sample *m = &TD_VEC_AT(&t->mem, struct td_mem_sample, i);
		mem_host |= m->device < 0;
		mem_dev |= m->device >= 0;
	}
	/* a table with placeholder columns first: the strings (groups' texts) go in it */
	td_table_init(out, "tracedoc.ops/1", cols, columns(cols, o, ngpu > 0, mem_host, mem_dev,
							    0, 0));
	/* the rows' host events in the window, and the row each is nested in */
	for (td_host_events_begin(&host, t); td_dev_events_next(&host, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		uint32_t p;
		fl[e] = 0;
		par[e] = TD_NONE;
		set_up(&c, e);
		if (!row_kind(&c, ev) || ev->ts < c.from || ev->ts >= c.to ||
		    filtered(&c, ev->name))
			continue;
		fl[e] = F_ROW;
		p = row_parent(&c, e);
		if (p != TD_NONE && (fl[p] & F_ROW)) { /* a parent earlier on this track */
			par[e] = p;
			if ((fl[p] & F_NCHILD) != F_NCHILD)
				fl[p] = (uint8_t)(fl[p] + F_CHILD1);
		}
	}
	/* key_averages drops a row nested alone in one of its name (EventList._remove_dup_nodes):
	 * its children and kernels go to the parent, whose own kernels it replaces */
	for (tr = 0; tr < t->tracks.len; tr++) {
		const struct td_track *k = td_trace_track(t, (uint32_t)tr);
		uint32_t p;
		if (k->is_gpu)
			continue;
		if (k->is_gpu || o->fold_runtime) /* folded: tracedoc's own table, every op a row */
			continue;
		for (e = k->first; e < k->first + k->count; e++)
			if ((fl[e] & F_ROW) && (p = par[e]) != TD_NONE &&
			    (fl[p] & F_NCHILD) == F_CHILD1 && row_name(&c, e) == row_name(&c, p)) {
				fl[e] |= F_DUP;
				fl[p] |= F_REPLACED;
			}
		for (e = k->first; e < k->first + k->count; e++) /* parents come first */
			if ((p = par[e]) != TD_NONE && (fl[p] & F_DUP))
				par[e] = par[p];
	}
	/* each row's group, calls, times and FLOPs */
	for (td_host_events_begin(&host, t); td_dev_events_next(&host, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		const struct td_op_args *oa;
		uint32_t name = row_name(&c, e);
		struct acc *x;
		c.grp[e] = TD_NONE;
		if ((fl[e] & (F_ROW | F_DUP)) != F_ROW)
			continue;
		c.grp[e] = group_of(&g, name, extra_of(&c, out, e), ev->kind == TD_K_RUNTIME
				    ? ROW_RUNTIME : ROW_OP, td_trace_name(t, name));
		x = &g.acc[c.grp[e]];
		self[e] = td_ev_dur(ev);
		x->calls++;
		x->cpu_total = td_sat_add(x->cpu_total, td_ev_dur(ev));
		oa = is_op(ev->kind) ? td_trace_op_args(t, e) : NULL;
		any_dims |= oa && oa->dims;
		if (x->maybe_flops && oa && oa->dims) {
			int64_t f = td_op_flops(td_trace_name(t, name), td_trace_name(t, oa->dims),
						oa->concrete ? td_trace_name(t, oa->concrete) : NULL);
			if (f >= 0)
				x->flops = td_sat_add(x->flops < 0 ? 0 : x->flops, f);
		}
		if (roof && oa && td_event_cost(t, e, &cost)) {
			fl[e] |= F_COST;
			x->cost_flops = td_sat_add(x->cost_flops, cost.flops);
			x->cost_bytes = td_sat_add(x->cost_bytes, cost.bytes);
			if (!x->cost_calls++)
				x->cost_dtype = cost.dtype;
		}
		if (par[e] != TD_NONE)
			self[par[e]] -= td_ev_dur(ev);
	}
	if (t->mem.len) {
		mem[0] = td_calloc(n ? n : 1, sizeof(*mem[0]));
		mem[1] = td_calloc(n ? n : 1, sizeof(*mem[1]));
		attribute_memory(&c, mem);
	}
	for (td_host_events_begin(&host, t); td_dev_events_next(&host, &e);) {
		struct acc *x;
		uint32_t p = par[e];
		int d;
		if (c.grp[e] == TD_NONE)
			continue;
		x = &g.acc[c.grp[e]];
		/* children that overlap (a microsecond clock cuts them so) can take more than
		 * all: key_averages keeps the negative self time; folded, it is 0 */
		x->self_cpu += self[e] > 0 || !o->fold_runtime ? self[e] : 0;
		if (!mem[0])
			continue;
		for (d = 0; d < 2; d++) {
			x->mem[d] = td_sat_add(x->mem[d], mem[d][e]);
			x->self_mem[d] = td_sat_add(x->self_mem[d], mem[d][e]);
			if (p != TD_NONE)
				g.acc[c.grp[p]].self_mem[d] =
					td_sat_sub(g.acc[c.grp[p]].self_mem[d], mem[d][e]);
		}
	}
	/* GPU ops: to the op that launched them and every op around it; rows of their own; a
	 * graph-replayed kernel to the ops that captured it, then those around its graph launch */
	for (td_gpu_events_begin(&gpu, t); td_dev_events_next(&gpu, &g_ev);) {
		const struct td_event *ev = td_trace_ev(t, g_ev);
		uint32_t l, op;
		size_t nch = 0;
		int64_t d = td_ev_dur(ev);
		if (!td_kind_is_gpu_op(ev->kind))
			continue;
		l = td_trace_launch(t, g_ev);
		op = l != TD_NONE ? td_op_parent(t, l) : TD_NONE;
		if (!o->fold_runtime) {
			int64_t at = l != TD_NONE ? td_trace_ev(t, l)->ts : ev->ts;
			if (at >= c.from && at < c.to) {
				uint32_t gi = group_of(&g, ev->name, extra_of(&c, out, g_ev), ROW_GPU, "");
				struct acc *x = &g.acc[gi]; /* after group_of, which may move g.acc */
				x->calls++;
				x->self_cuda = td_sat_add(x->self_cuda, d);
				x->cuda_total = td_sat_add(x->cuda_total, d);
			}
		}
		if (td_graph_map_ops(a->gmap, g_ev, &nch)) {
			int64_t at = l != TD_NONE ? td_trace_ev(t, l)->ts : ev->ts;
			if (at >= c.from && at < c.to)
				captured_ops(&g, t, a->gmap, g_ev, d, op, par, c.grp, fl);
			continue;
		}
		if (op != TD_NONE && (fl[op] & F_REPLACED))
			continue; /* its kernels are those of the op of its name nested in it */
		if (op != TD_NONE && (fl[op] & F_DUP))
			op = par[op]; /* the row that took its place */
		if (op == TD_NONE || c.grp[op] == TD_NONE) {
			unattributed += l == TD_NONE || op == TD_NONE;
			continue;
		}
		g.acc[c.grp[op]].self_cuda += d;
		for (; op != TD_NONE; op = par[op]) {
			g.acc[c.grp[op]].cuda_total += d;
			if (fl[op] & F_COST)
				g.acc[c.grp[op]].cost_ns += d;
		}
	}
	for (i = 0; i < g.map.n; i++) {
		any_cost |= g.acc[i].cost_calls && g.acc[i].cost_ns > 0;
		sum_self_cpu = td_sat_add(sum_self_cpu, g.acc[i].self_cpu);
		/* key_averages: Self CUDA % is of the GPU activities' rows (of the ops' when folded) */
		if (o->fold_runtime || g.acc[i].kind == ROW_GPU)
			sum_self_cuda = td_sat_add(sum_self_cuda, g.acc[i].self_cuda);
		if (g.acc[i].flops > 0 && g.acc[i].flops < min_flops)
			min_flops = g.acc[i].flops;
	}
	/* the real columns: FLOPs when an op had a formula and its shapes */
	ncols = columns(cols, o, ngpu > 0, mem_host, mem_dev, any_dims && min_flops != INT64_MAX,
			any_cost);
	if (min_flops != INT64_MAX && any_dims)
		flops_unit(&cols[ncols - (any_cost ? 6 : 1)], min_flops);
	memcpy(out->own, cols, ncols * sizeof(*cols));
	out->ncols = ncols;
	for (i = 0; i < g.map.n; i++) {
		const struct acc *x = &g.acc[i];
		union td_cell *row = td_table_row(out);
		size_t k = 0;
		row[k++].s = td_table_name(out, x->name ? td_trace_name(t, x->name) : "ProfilerStep*");
		if (!o->fold_runtime)
			row[k++].s = td_table_str(out, kind_names[x->kind]);
		row[k++].f = sum_self_cpu ? (double)x->self_cpu / (double)sum_self_cpu : 0;
		row[k++].i = x->self_cpu;
		row[k++].f = sum_self_cpu ? (double)x->cpu_total / (double)sum_self_cpu : 0;
		row[k++].i = x->cpu_total;
		row[k++].i = x->kind != ROW_GPU ? avg(x->cpu_total, x->calls) : 0;
		if (ngpu) {
			row[k++].i = x->self_cuda;
			row[k++].f = sum_self_cuda ? (double)x->self_cuda / (double)sum_self_cuda : 0;
			row[k++].i = x->cuda_total;
			row[k++].i = avg(x->cuda_total, x->calls);
		}
		if (mem_host) {
			row[k++].i = x->mem[0];
			row[k++].i = x->self_mem[0];
		}
		if (mem_dev) {
			row[k++].i = x->mem[1];
			row[k++].i = x->self_mem[1];
		}
		row[k++].i = (int64_t)x->calls;
		if (o->group != TD_GROUP_NAME)
			row[k++].s = x->extra;
		if (any_dims && min_flops != INT64_MAX)
			row[k++].i = x->flops >= 0 ? x->flops : TD_CELL_NONE;
		if (any_cost) {
			struct td_roof r;
			int has = x->cost_calls && x->cost_ns > 0;
			td_roof_eval(&a->peaks, x->cost_dtype, x->cost_flops, x->cost_bytes, x->cost_ns,
				     &r);
			row[k++].f = has && x->cost_flops > 0 ? r.tflops : NAN;
			row[k++].f = has && x->cost_bytes > 0 ? r.tbps : NAN;
			row[k++].f = has && x->cost_bytes > 0 ? r.intensity : NAN;
			row[k++].s = has && r.bound ? td_table_str(out, td_bound_name(r.bound)) : 0;
			row[k++].f = has ? r.pct : NAN;
		}
	}
	td_table_meta_str(out, "window", wname);
	td_table_meta_int(out, "window_start_ns", c.from);
	td_table_meta_int(out, "window_end_ns", c.to);
	td_table_meta_str(out, "group_by", o->group == TD_GROUP_SHAPE ? "shape"
			  : o->group == TD_GROUP_STACK ? "stack" : "name");
	td_table_meta_str(out, "runtime_calls", o->fold_runtime ? "folded" : "rows");
	td_table_meta_int(out, "self_cpu_total_ns", sum_self_cpu);
	td_table_meta_int(out, "self_cuda_total_ns", sum_self_cuda);
	td_table_meta_int(out, "gpu_ops_without_op", (int64_t)unattributed);
	if (a->gmap && (a->gmap->replayed || a->gmap->captures)) {
		/* the graph-replayed kernels, those given the capture's ops, their annotation's */
		td_table_meta_int(out, "graph_kernels", (int64_t)a->gmap->replayed);
		td_table_meta_int(out, "graph_kernels_from_capture", (int64_t)a->gmap->matched);
		td_table_meta_int(out, "graph_kernels_annotated", (int64_t)a->gmap->annotated);
	}
	td_groups_free(&g.map);
	free(g.acc);
	free(mem[0]);
	free(mem[1]);
	free(self);
	free(par);
	free(fl);
	free(c.grp);
	free(c.up);
}
