/* SPDX-License-Identifier: MIT */
/* The MFU's GPU side (analysis/roofline.c's td_an_mfu reads the FLOPs from the ops): which
 * costed ops ran TF32 kernels, so their FP32 FLOPs are held to the TF32 peak, and how much of
 * the compute kernels' time the ops with known FLOPs launched - a graph replay's kernels carry
 * no op, so the MFU covers only the rest, and says so. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "analysis/internal.h"

/* A kernel whose name says TF32: "tf32" in it (cuBLAS's xmma and cutlass names, Inductor's),
 * or CUTLASS's "tensorop_s1688gemm" on FP32 operands (m16n8k8, TF32's mma shape; Turing's
 * s1688 kernels take fp16 and say "f16"/"fp16"). */
static int tf32_kernel(const char *n)
{
	const char *p;

	for (p = n; *p; p++)
		if (!strncasecmp(p, "tf32", 4))
			return 1;
	return strstr(n, "tensorop_s1688gemm") && !strstr(n, "f16") && !strstr(n, "fp16");
}

/* calls fn on each compute kernel (no collective) of every device that overlaps [ws, we) */
typedef void (*kernel_fn)(const struct td_analysis *a, uint32_t k, int64_t ns, void *ctx);
static void each_kernel(const struct td_analysis *a, int64_t ws, int64_t we, kernel_fn fn,
			void *ctx)
{
	const struct td_trace *t = a->t;
	struct td_dev_events it;
	size_t d;
	uint32_t k;

	for (d = 0; d < a->ndev; d++)
		for (td_dev_events_begin(&it, t, a->dev[d].device); td_dev_events_next(&it, &k);) {
			const struct td_event *e = td_trace_ev(t, k);
			int64_t s = e->ts > ws ? e->ts : ws, x = td_ev_end(e) < we ? td_ev_end(e) : we;
			if (e->kind != TD_K_KERNEL || x <= s ||
			    (a->name_class[e->name] & (NC_COMM | NC_IGNORE)))
				continue;
			fn(a, k, x - s, ctx);
		}
}

struct tf32_marks {
	uint8_t *mark;     /* per event (NULL until a TF32 kernel is met) */
	uint8_t *by_name;  /* per name: 0 not read yet, 1 TF32, 2 not (read once a name) */
};

static void mark_tf32(const struct td_analysis *a, uint32_t k, int64_t ns, void *ctx)
{
	struct tf32_marks *m = ctx;
	uint32_t p = td_trace_launch(a->t, k), name = td_trace_ev(a->t, k)->name;
	int depth = 0;

	(void)ns;
	if (!m->by_name[name])
		m->by_name[name] = tf32_kernel(td_trace_name(a->t, name)) ? 1 : 2;
	if (p == TD_NONE || m->by_name[name] != 1)
		return;
	if (!m->mark)
		m->mark = td_calloc(a->t->events.len ? a->t->events.len : 1, 1);
	for (; p != TD_NONE && depth < MAX_CHAIN; p = td_trace_parent(a->t, p), depth++)
		m->mark[p] = 1;
}

uint8_t *td_an_tf32_ops(const struct td_analysis *a, int64_t ws, int64_t we)
{
	struct tf32_marks m = {NULL, td_calloc(a->t->names.count + 1, 1)};

	each_kernel(a, ws, we, mark_tf32, &m);
	free(m.by_name);
	return m.mark;
}

struct cover {
	const struct td_costed *costed;
	size_t n;
	int64_t known, all, graph;
	uint8_t *graph_name;  /* per name: 0 not read yet, 1 a graph launch, 2 not */
	size_t hint;
};

/* whether host event l starts inside a costed op on its thread */
static int in_costed(const struct td_analysis *a, struct cover *c, uint32_t l)
{
	uint32_t tr = td_trace_track_of(a->t, l);
	int64_t ts = td_trace_ev(a->t, l)->ts;
	size_t lo;

	/* a stream's kernels come in launch order: searched from where the last search ended */
	TD_LOWER_BOUND_NEAR(lo, c->n, c->hint, c->costed[mid].track < tr ||
				 (c->costed[mid].track == tr && c->costed[mid].start <= ts));
	c->hint = lo;
	return lo > 0 && c->costed[lo - 1].track == tr && ts < c->costed[lo - 1].end;
}

static void cover_kernel(const struct td_analysis *a, uint32_t k, int64_t ns, void *ctx)
{
	struct cover *c = ctx;
	uint32_t l = td_trace_launch(a->t, k);

	c->all += ns;
	if (l != TD_NONE && in_costed(a, c, l))
		c->known += ns;
	else if (l != TD_NONE) {
		uint32_t name = td_trace_ev(a->t, l)->name;
		if (!c->graph_name[name])
			c->graph_name[name] = strstr(td_trace_name(a->t, name), "GraphLaunch") ? 1 : 2;
		if (c->graph_name[name] == 1)
			c->graph += ns;
	}
}

void td_an_flops_cover(const struct td_analysis *a, int64_t ws, int64_t we,
		       const struct td_costed *costed, size_t n, int64_t *known_ns,
		       int64_t *kernel_ns, int64_t *graph_ns)
{
	struct cover c = {costed, n, 0, 0, 0, td_calloc(a->t->names.count + 1, 1), 0};

	each_kernel(a, ws, we, cover_kernel, &c);
	free(c.graph_name);
	*known_ns = c.known;
	*kernel_ns = c.all;
	*graph_ns = c.graph;
}
