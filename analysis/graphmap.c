/* SPDX-License-Identifier: MIT */
/* Graph-replayed kernels to the ops that captured them (analysis/graphmap.h). */
#include "analysis/graphmap.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "common/vec.h"

/* a kernel launch call under capture: its kernel's name (an id in the replay trace's strtab;
 * 0 when the replay has no kernel of that name), whether the call named one, its op chain */
struct cap_launch {
	uint32_t name, chain;      /* chain: 1 + offset in the map's pool, 0: no op */
	uint32_t named, pos;       /* pos: its place in the region */
};
struct region {
	size_t first, n;           /* its launches in the launch array */
	int named;                 /* every launch names its kernel */
};
/* a replayed kernel: the graph launch call that replayed it, when it ran */
struct rk {
	uint32_t launch, ev, name, pos;
	int64_t ts;
};

#define LAUNCH_LESS(x, y) ((x)->name < (y)->name || ((x)->name == (y)->name && (x)->pos < (y)->pos))
TD_DEFINE_SORT(sort_launch, struct cap_launch, LAUNCH_LESS)
#define RK_LESS(x, y) ((x)->launch < (y)->launch || ((x)->launch == (y)->launch && \
		       ((x)->ts < (y)->ts || ((x)->ts == (y)->ts && (x)->ev < (y)->ev))))
TD_DEFINE_SORT(sort_rk, struct rk, RK_LESS)
#define RK_NAME_LESS(x, y) ((x)->name < (y)->name || ((x)->name == (y)->name && (x)->pos < (y)->pos))
TD_DEFINE_SORT(sort_rk_name, struct rk, RK_NAME_LESS)
#define LN_LESS(x, y) ((x)->corr < (y)->corr)
TD_DEFINE_SORT(sort_ln, struct td_launch_name, LN_LESS)
#define KM_LESS(x, y) ((x)->track < (y)->track || ((x)->track == (y)->track && \
		       ((x)->ts < (y)->ts || ((x)->ts == (y)->ts && (x)->corr < (y)->corr))))
TD_DEFINE_SORT(sort_km, struct td_kernel_mark, KM_LESS)

/* the replayed kernels ks[0..n) no capture gave ops: their own annotation's name, if any */
static void annotations(struct td_graph_map *m, const struct td_trace *t, const struct rk *ks,
			size_t n)
{
	size_t nm = t->kernel_marks.len, i, lo;
	struct td_kernel_mark *v;

	if (!nm)
		return;
	v = td_malloc(nm * sizeof(*v));
	memcpy(v, t->kernel_marks.data, nm * sizeof(*v));
	sort_km(v, nm);
	for (i = 0; i < n; i++) {
		uint32_t tr = td_trace_track_of(t, ks[i].ev), corr = td_trace_ev(t, ks[i].ev)->corr;
		int64_t ts = ks[i].ts;
		if (m->chain[ks[i].ev])
			continue;
		TD_LOWER_BOUND(lo, nm, v[mid].track < tr || (v[mid].track == tr &&
			       (v[mid].ts < ts || (v[mid].ts == ts && v[mid].corr < corr))));
		if (lo >= nm || v[lo].track != tr || v[lo].ts != ts || v[lo].corr != corr)
			continue;
		if (m->npool + 2 > m->cap) {
			m->cap = m->cap ? m->cap * 2 : 256;
			m->pool = td_realloc(m->pool, m->cap * sizeof(*m->pool));
		}
		m->pool[m->npool] = 1;
		m->pool[m->npool + 1] = v[lo].name;
		m->chain[ks[i].ev] = (uint32_t)m->npool + 1;
		m->npool += 2;
		m->annotated++;
	}
	free(v);
}

static int starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

/* a runtime call that launches one kernel (not a graph) */
static int kernel_launch(const char *n)
{
	return !strstr(n, "Graph") &&
	       (starts(n, "cudaLaunch") || starts(n, "__cudaLaunch") || starts(n, "cuLaunch") ||
		starts(n, "hipLaunch") || starts(n, "hipModuleLaunch") ||
		starts(n, "hipExtModuleLaunch") || starts(n, "hipExtLaunch"));
}

static int graph_launch(const char *n)
{
	return starts(n, "cudaGraphLaunch") || starts(n, "cuGraphLaunch") ||
	       starts(n, "hipGraphLaunch");
}

/* the op chain of capture launch call ev: the ops around it that began inside the capture
 * (from begin_ts: the ops around the capture call itself are the harness's), their names in
 * the replay's strtab, stored in the pool; 0 when there are none */
static uint32_t chain_of(struct td_graph_map *m, struct td_trace *replay,
			 const struct td_trace *cap, uint32_t ev, int64_t begin_ts)
{
	size_t at = m->npool, n = 0;
	uint32_t p;

	for (p = td_trace_parent(cap, ev); p != TD_NONE; p = td_trace_parent(cap, p)) {
		const struct td_event *e = td_trace_ev(cap, p);
		const char *s;
		if (e->ts < begin_ts)
			break;
		if (e->kind != TD_K_CPU_OP && e->kind != TD_K_USER_ANNOTATION)
			continue;
		if (m->npool + 2 > m->cap) {
			m->cap = m->cap ? m->cap * 2 : 256;
			m->pool = td_realloc(m->pool, m->cap * sizeof(*m->pool));
		}
		if (!n++)
			m->npool++; /* the length, written below */
		s = td_trace_name(cap, e->name);
		m->pool[m->npool++] = replay == cap ? e->name
				      : td_strtab_intern(&replay->names, s, strlen(s));
	}
	if (!n)
		return 0;
	m->pool[at] = (uint32_t)n;
	return (uint32_t)at + 1;
}

/* the kernel name launch call ev recorded, as a replay strtab id in *name; 0 when it named none */
static int launch_name(const struct td_trace *replay, const struct td_trace *cap,
		       const struct td_launch_name *ln, size_t nln, uint32_t ev, uint32_t *name)
{
	uint32_t corr = td_trace_ev(cap, ev)->corr;
	size_t lo;
	const char *s;

	TD_LOWER_BOUND(lo, nln, ln[mid].corr < corr);
	if (lo >= nln || ln[lo].corr != corr)
		return 0;
	s = td_trace_name(cap, ln[lo].name);
	*name = replay == cap ? ln[lo].name : td_strtab_find(&replay->names, s, strlen(s));
	return 1;
}

/* the capture regions of cap and their kernel launch calls */
static void regions(struct td_graph_map *m, struct td_trace *replay, const struct td_trace *cap,
		    struct td_vec *regs, struct td_vec *launches)
{
	struct td_launch_name *ln = NULL;
	size_t nln = cap->launch_names.len, tr, k;
	/* per name: 1 begins a capture, 2 ends one, 3 launches a kernel */
	uint8_t *kind = td_calloc(cap->names.count + 1, 1);
	int any = 0;

	for (k = 1; k <= cap->names.count; k++) {
		const char *n = td_trace_name(cap, (uint32_t)k);
		kind[k] = strstr(n, "BeginCapture") ? 1 : strstr(n, "EndCapture") ? 2
			: kernel_launch(n) ? 3 : 0;
		any |= kind[k] == 1;
	}
	if (!any) { /* no capture: no pass over the events */
		free(kind);
		return;
	}
	if (nln) {
		ln = td_malloc(nln * sizeof(*ln));
		memcpy(ln, cap->launch_names.data, nln * sizeof(*ln));
		sort_ln(ln, nln);
	}
	for (tr = 0; tr < cap->tracks.len; tr++) {
		const struct td_track *t = td_trace_track(cap, (uint32_t)tr);
		size_t end = (size_t)t->first + t->count, begin = SIZE_MAX;
		if (t->is_gpu)
			continue;
		for (k = t->first; k < end; k++) {
			const struct td_event *e = td_trace_ev(cap, (uint32_t)k);
			if (e->kind != TD_K_RUNTIME)
				continue;
			if (kind[e->name] == 1) {
				begin = k;
			} else if (kind[e->name] == 2 && begin != SIZE_MAX) {
				struct region *r = td_vec_push(regs);
				size_t j;
				int64_t bts = td_trace_ev(cap, (uint32_t)begin)->ts;
				r->first = launches->len;
				r->named = 1;
				for (j = begin + 1; j < k; j++) {
					const struct td_event *x = td_trace_ev(cap, (uint32_t)j);
					struct cap_launch *c;
					if (x->kind != TD_K_RUNTIME || kind[x->name] != 3)
						continue;
					c = td_vec_push(launches);
					c->pos = (uint32_t)(launches->len - 1 - r->first);
					c->name = 0;
					c->named = (uint32_t)launch_name(replay, cap, ln, nln,
									 (uint32_t)j, &c->name);
					r->named &= (int)c->named;
					c->chain = chain_of(m, replay, cap, (uint32_t)j, bts);
				}
				r->n = launches->len - r->first;
				m->captured += r->n;
				begin = SIZE_MAX;
			}
		}
	}
	m->captures = regs->len;
	free(ln);
	free(kind);
	/* a named region's launches by (name, position): the k-th of a name found at once */
	for (k = 0; k < regs->len; k++) {
		struct region *r = &TD_VEC_AT(regs, struct region, k);
		if (r->named)
			sort_launch(&TD_VEC_AT(launches, struct cap_launch, r->first), r->n);
	}
}

/* 1 when chains x and y (pool offsets + 1) hold the same names */
static int same_chain(const struct td_graph_map *m, uint32_t x, uint32_t y)
{
	if (!x || !y)
		return x == y;
	return m->pool[x - 1] == m->pool[y - 1] &&
	       !memcmp(&m->pool[x], &m->pool[y], m->pool[x - 1] * sizeof(*m->pool));
}

/* 1 when region r fits the replayed kernels k[0..n) (sorted by (name, order) when r is named,
 * else in time order): as many launches, and a named region's names the kernels' */
static int matches(const struct region *r, const struct cap_launch *l, const struct rk *k,
		   size_t n)
{
	size_t i;

	if (r->n != n)
		return 0;
	if (r->named)
		for (i = 0; i < n; i++)
			if (l[i].name != k[i].name)
				return 0;
	return 1;
}

/* one graph launch's kernels k[0..n), in time order: matched to the first region that fits,
 * when every other one that fits gives each kernel the same ops */
static void match_group(struct td_graph_map *m, const struct td_vec *regs,
			const struct td_vec *launches, struct rk *k, size_t n)
{
	struct rk *by_name = td_malloc(n * sizeof(*by_name));
	size_t *at = td_malloc(n * sizeof(*at)); /* kernel i's place among them by name */
	const struct cap_launch *L = launches->data;
	size_t i, r, found = SIZE_MAX;
	int ambiguous = 0;

	for (i = 0; i < n; i++) {
		by_name[i] = k[i];
		by_name[i].pos = (uint32_t)i;
	}
	sort_rk_name(by_name, n);
	for (i = 0; i < n; i++)
		at[by_name[i].pos] = i;
	for (r = 0; r < regs->len && !ambiguous; r++) {
		const struct region *g = &TD_VEC_AT(regs, struct region, r);
		if (!matches(g, &L[g->first], g->named ? by_name : k, n))
			continue;
		if (found == SIZE_MAX) {
			found = r;
			continue;
		}
		for (i = 0; i < n && !ambiguous; i++) {
			/* the launch each region gives kernel k[i] */
			const struct region *f = &TD_VEC_AT(regs, struct region, found);
			size_t fi = f->named ? at[i] : i, gi = g->named ? at[i] : i;
			ambiguous = !same_chain(m, L[f->first + fi].chain, L[g->first + gi].chain);
		}
	}
	if (ambiguous) {
		m->ambiguous += n;
	} else if (found != SIZE_MAX) {
		const struct region *f = &TD_VEC_AT(regs, struct region, found);
		const struct rk *fk = f->named ? by_name : k;
		for (i = 0; i < n; i++)
			if ((m->chain[fk[i].ev] = L[f->first + i].chain))
				m->matched++;
	}
	free(at);
	free(by_name);
}

void td_graph_map_build(struct td_graph_map *m, struct td_trace *replay,
			const struct td_trace *cap)
{
	struct td_vec regs, launches, ks;
	struct td_dev_events it;
	uint8_t *is_graph;
	uint32_t k;
	size_t i, j;

	memset(m, 0, sizeof(*m));
	td_vec_init(&regs, sizeof(struct region));
	td_vec_init(&launches, sizeof(struct cap_launch));
	td_vec_init(&ks, sizeof(struct rk));
	if (cap)
		regions(m, replay, cap, &regs, &launches);
	is_graph = td_calloc(replay->names.count + 1, 1);
	for (i = 1, j = 0; i <= replay->names.count; i++)
		j |= is_graph[i] = (uint8_t)graph_launch(td_trace_name(replay, (uint32_t)i));
	for (td_gpu_events_begin(&it, replay); j && td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(replay, k);
		uint32_t l;
		struct rk *x;
		if (e->kind != TD_K_KERNEL || (l = td_trace_launch(replay, k)) == TD_NONE ||
		    !is_graph[td_trace_ev(replay, l)->name])
			continue;
		x = td_vec_push(&ks);
		x->launch = l;
		x->ev = k;
		x->name = e->name;
		x->ts = e->ts;
		x->pos = 0;
	}
	free(is_graph);
	if (ks.len) { /* a chain per event only when a graph replayed kernels */
		m->n = replay->events.len;
		m->chain = td_calloc(m->n, sizeof(*m->chain));
	}
	sort_rk(ks.data, ks.len);
	m->replayed = ks.len;
	for (i = 0; i < ks.len; i = j) {
		struct rk *v = ks.data;
		for (j = i + 1; j < ks.len && v[j].launch == v[i].launch; j++)
			;
		m->launches++;
		if (regs.len)
			match_group(m, &regs, &launches, &v[i], j - i);
	}
	annotations(m, replay, ks.data, ks.len);
	td_vec_free(&regs);
	td_vec_free(&launches);
	td_vec_free(&ks);
}

void td_graph_map_free(struct td_graph_map *m)
{
	free(m->chain);
	free(m->pool);
	memset(m, 0, sizeof(*m));
}
