/* SPDX-License-Identifier: MIT */
/* gpu-bound: a device whose compute kernels keep it busy rules.gpu_bound_busy (85%) of its
 * window or more has no idle to win back; the lever is the kernels. Names the kernels that hold
 * the time and what their names show a known change pays for:
 *   FP32 GEMMs / convolutions on a GPU with tensor cores (compute capability 7 or more):
 *     mixed precision, or TF32 from compute capability 8; about half their time back;
 *   layout transposes (nchwToNhwc...): channels_last; all their time back;
 *   many small elementwise kernels (15% of the busy time or more): torch.compile fuses them;
 *     about half their time back;
 *   an eager softmax (5% or more): scaled_dot_product_attention; about half its time back.
 * The GPU time those changes remove (busy_ns), at most one change per kernel, is replayed
 * (the kernels at half their time, the transposes gone): what the window wins where the GPU
 * holds the step - where the host or the launch queue holds it instead, less, and nothing at
 * all makes it a note off the critical path. Graded at most medium (what a change pays depends
 * on the model's numerics); without a named change it is advice, kept without a time figure.
 * Where the ops have shapes and the device its peaks (analysis/roofline.h), it names the ops
 * that lose the most time against their roof, each with its dtype, bound and share of the
 * roof, and what moves the first: TF32 / bf16 for an FP32 GEMM, dims that fill the tensor
 * cores' tiles, fusion for memory-bound ops (advice: not replayed); and it fuses
 * memory-bound chains sized by their bytes (fuse_chains: replayed, docs/accounting.md).
 * Its fix ends with the Nsight Compute command for the top kernel, the next step of the
 * profiling workflow. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sat.h"
#include "common/sort.h"
#include "analysis/intervals.h"
#include "analysis/names.h"
#include "analysis/roofline.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"
#include "replay/replay.h"

/* the longest kernel-name prefix a profiler command is given (see the fix below) */
#define RE_MAX 64

enum kcat { K_OTHER, K_FP32_MM, K_LAYOUT, K_ELEMENTWISE, K_SOFTMAX, K_NCAT };


static int has(const char *s, const char *p)
{
	return strstr(s, p) != NULL;
}

/* The architecture a kernel's name says it was built for, as 10 x major + minor (80 for
 * "sm80_xmma...", "cutlass_80_wmma...", "..._sm75_..."; 120 for "MainloopSm120"), 0 when it
 * says none. A token is "sm" (or "Sm" after a lower-case letter, CamelCase) or "cutlass_",
 * then 2 or 3 digits, then no digit or letter; *at: where the token is. */
static int kernel_arch(const char *n, const char **at)
{
	const char *p;

	for (p = n; *p; p++) {
		const char *q = NULL;
		int v = 0, nd = 0;
		if ((p[0] == 's' && p[1] == 'm' && (p == n || !isalnum((unsigned char)p[-1]))) ||
		    (p[0] == 'S' && p[1] == 'm' && p > n && islower((unsigned char)p[-1])))
			q = p + 2;
		else if (!strncmp(p, "cutlass_", 8))
			q = p + 8;
		if (!q)
			continue;
		while (isdigit((unsigned char)q[nd]) && nd < 4)
			v = v * 10 + (q[nd] - '0'), nd++;
		if ((nd == 2 || nd == 3) && !isalnum((unsigned char)q[nd])) {
			*at = p;
			return v;
		}
	}
	return 0;
}

static enum kcat category(const char *n, int tensor_cores)
{
	if (has(n, "ToNhwc") || has(n, "ToNchw") || has(n, "nchwToNhwc") || has(n, "nhwcToNchw"))
		return K_LAYOUT;
	if (tensor_cores && (has(n, "sgemm") || has(n, "scudnn") ||
			     ((has(n, "gemm") || has(n, "conv") || has(n, "dgrad") ||
			       has(n, "wgrad") || has(n, "engine")) && has(n, "<float,"))))
		return K_FP32_MM;
	if (has(n, "oftmax") || has(n, "oftMax"))
		return K_SOFTMAX;
	if (has(n, "elementwise_kernel"))
		return K_ELEMENTWISE;
	return K_OTHER;
}

/* The change replayed: each kernel it applies to keeps half its time (a layout transpose
 * none), as the figure assumes; what that wins is the window's, the host and the launch queue
 * keeping the step where the GPU no longer does. */
static void replay_edits(struct td_analysis *a, struct td_finding *f,
			 const struct td_dev_analysis *dv, const struct td_kernel_total *k,
			 const uint8_t *kc, size_t m,
			 const int64_t *cat_ns)
{
	const struct td_trace *t = a->t;
	struct td_dev_events it;
	uint8_t *cat;
	uint32_t e;
	size_t i;

	if (!td_an_whatif(a))
		return;
	cat = td_calloc(t->names.count + 2, 1);
	for (i = 0; i < m; i++)
		cat[k[i].name] = kc[i];
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		struct td_rp_edit ed;
		if (ev->kind != TD_K_KERNEL || ev->ts < dv->win_start || ev->ts >= dv->win_end ||
		    !cat[ev->name] || !cat_ns[cat[ev->name]])
			continue;
		ed = (struct td_rp_edit){TD_RP_FREE, td_dev_events_track(&it), ev->ts, ev->ts + 1,
					 cat[ev->name] == K_LAYOUT ? 0
					 : td_ev_dur(ev) - td_ev_dur(ev) / 2, 0};
		td_finding_edit(f, &ed);
	}
	free(cat);
}

/* "where" lines: each op that loses the most against its roof */
static void roof_where(const struct td_analysis *a, struct td_finding *f,
		       const struct td_roof_op *ro, size_t n)
{
	char mk[600], b1[32], b2[32], mis[96];
	int64_t lost = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		mis[0] = 0;
		if (ro[i].misaligned && ro[i].roof.bound == TD_BOUND_COMPUTE)
			snprintf(mis, sizeof(mis), "; %llu of %llu calls with dims off the tensor "
				 "cores' tiles", (unsigned long long)ro[i].misaligned,
				 (unsigned long long)ro[i].calls);
		td_finding_where(f, "%s (%s %s, %s-bound): %s at %.0f%% of its roof, %s lost against "
				 "it%s", td_mark(mk, sizeof(mk), td_trace_name(a->t, ro[i].name)),
				 td_dtype_name((enum td_dtype)(ro[i].dtype < 0 ? TD_DT_FP32 : ro[i].dtype)),
				 td_op_class_name(ro[i].cls), td_bound_name(ro[i].roof.bound),
				 td_fmt_dur(b1, sizeof(b1), ro[i].ns), 100 * ro[i].roof.pct,
				 td_fmt_dur(b2, sizeof(b2), ro[i].lost_ns), mis);
		lost += ro[i].lost_ns;
	}
	if (n)
		td_finding_value(f, "roof_lost_ns", lost);
}

/* The fix sentence for what moves the op that loses the most against its roof, appended to
 * buf; returns its length. An FP32 GEMM's is the category's below when that one is named. */
static size_t roof_fix(const struct td_analysis *a, const struct td_roof_op *ro, size_t n,
		       const int64_t *cat_ns, int ampere, int64_t fused_ns, char *buf, size_t cap)
{
	const struct td_roof_op *top = n ? &ro[0] : NULL;
	char arg[400], mk[300], b1[32];
	int gemm = top && (top->cls == TD_OPC_GEMM || top->cls == TD_OPC_CONV);
	enum td_mech mech;
	size_t i, o = 0;
	int len;

	if (gemm && top->roof.bound == TD_BOUND_COMPUTE && top->misaligned * 2 >= top->calls) {
		snprintf(arg, sizeof(arg), "%s: %llu of %llu calls",
			 td_mark(mk, sizeof(mk), td_trace_name(a->t, top->name)),
			 (unsigned long long)top->misaligned, (unsigned long long)top->calls);
		mech = TD_FIX_GEMM_ALIGN;
	} else if (gemm && (top->dtype == TD_DT_FP32 || top->dtype < 0) && !cat_ns[K_FP32_MM] &&
		   (a->peaks.tflops[TD_DT_TF32] > 0 || a->peaks.tflops[TD_DT_FP16] > 0)) {
		td_fmt_dur(arg, sizeof(arg), top->ns);
		mech = ampere || a->peaks.tflops[TD_DT_TF32] > 0 ? TD_FIX_FP32_MM_BF16
								 : TD_FIX_FP32_MM_FP16;
	} else if (fused_ns) { /* the chains fused, sized above */
		snprintf(arg, sizeof(arg), "Memory-bound chains of ops write and read their "
			 "intermediates again: fused, they move only their inputs and outputs, %s less",
			 td_fmt_dur(b1, sizeof(b1), fused_ns));
		mech = TD_FIX_ELEMENTWISE;
	} else if (top && !gemm && top->roof.bound == TD_BOUND_MEMORY &&
		   top->cls != TD_OPC_ATTENTION && top->cls != TD_OPC_TRITON &&
		   !cat_ns[K_ELEMENTWISE]) { /* Triton launches are fused already */
		int64_t lost = 0;
		o = (size_t)snprintf(arg, sizeof(arg), "Memory-bound ops ");
		for (i = 0; i < n; i++) /* the memory-bound ones among those named */
			if (ro[i].roof.bound == TD_BOUND_MEMORY && ro[i].cls != TD_OPC_GEMM &&
			    ro[i].cls != TD_OPC_CONV && ro[i].cls != TD_OPC_ATTENTION &&
			    ro[i].cls != TD_OPC_TRITON) {
				len = snprintf(arg + o, sizeof(arg) - o, "%s%s", o > 17 ? ", " : "",
					       td_mark(mk, sizeof(mk), td_trace_name(a->t, ro[i].name)));
				o = len > 0 && (size_t)len < sizeof(arg) - o ? o + (size_t)len : o;
				lost += ro[i].lost_ns;
			}
		snprintf(arg + o, sizeof(arg) - o, " lose %s against the bandwidth, each reading "
			 "and writing its tensors again", td_fmt_dur(b1, sizeof(b1), lost));
		mech = TD_FIX_ELEMENTWISE; /* "...: fuse them with torch.compile(model)." */
	} else {
		return 0;
	}
	td_fix_text(&a->ctx, mech, -1, arg, buf, cap);
	o = strlen(buf);
	if (o + 1 < cap) {
		buf[o++] = ' ';
		buf[o] = 0;
	}
	return o;
}

/* Memory-bound chains fused, sized by bytes: consecutive kernels on a stream whose ops are
 * memory-bound (norm, softmax, elementwise, copy: their intensity under the device's ridge),
 * each reading first what the one before wrote (as many elements) and starting within
 * CHAIN_GAP_NS of its end (one region's work, queued together). Fused, the chain moves its
 * bytes less each intermediate written and read again, at the bandwidth the chain achieved:
 * its kernels keep bytes_fused / bytes of their time, back to back with one launch (TD_RP_FUSE
 * over the chain, TD_RP_FREE on each kernel). Returns the GPU time removed; where the largest
 * chain's figures, its ops and the bytes, go to *where_buf. */
#define CHAIN_GAP_NS 10000

static int64_t fuse_chains(struct td_analysis *a, struct td_finding *f,
			   const struct td_dev_analysis *dv, char *where_buf, size_t cap)
{
	const struct td_trace *t = a->t;
	struct td_cost_finder cf;
	struct td_dev_events it;
	double ridge = a->peaks.tflops[TD_DT_FP32] > 0 && a->peaks.tbps > 0
		? a->peaks.tflops[TD_DT_FP32] / a->peaks.tbps : 0;
	int64_t saved = 0, best = 0;
	uint32_t e, track = TD_NONE, first = TD_NONE, prev_op = UINT32_MAX, last = TD_NONE;
	uint32_t first_op = UINT32_MAX;
	int64_t bytes = 0, fused = 0, ns = 0;
	size_t len = 0;

	if (a->peaks.tbps <= 0)
		return 0;
	td_cost_finder_init(&cf, t);
	for (td_dev_events_begin(&it, t, dv->device);; ) {
		int more = td_dev_events_next(&it, &e);
		const struct td_event *ev = more ? td_trace_ev(t, e) : NULL;
		uint32_t l, op = UINT32_MAX, tr = more ? td_dev_events_track(&it) : TD_NONE;
		const struct td_op_cost *c = NULL;
		if (more && ev->kind == TD_K_KERNEL && ev->ts >= dv->win_start &&
		    ev->ts < dv->win_end && (l = td_trace_launch(t, e)) != TD_NONE &&
		    (op = td_cost_find(&cf, t, l)) != UINT32_MAX) {
			c = &cf.cost[op];
			if (c->out_bytes <= 0 || c->cls == TD_OPC_GEMM || c->cls == TD_OPC_CONV ||
			    c->cls == TD_OPC_ATTENTION || c->cls == TD_OPC_REDUCTION ||
			    (double)c->flops > ridge * (double)c->bytes)
				c = NULL; /* not memory-bound */
		}
		/* the chain goes on: the same stream, the next op, reading what the last wrote */
		if (c && tr == track && op != prev_op && len &&
		    c->in_elems == cf.cost[prev_op].out_elems &&
		    ev->ts - td_ev_end(td_trace_ev(t, last)) <= CHAIN_GAP_NS) {
			bytes = td_sat_add(bytes, c->bytes);
			fused = td_sat_sub(td_sat_add(fused, c->bytes),
					   td_sat_mul(2, cf.cost[prev_op].out_bytes));
			ns += td_ev_dur(ev);
			len++;
			prev_op = op;
			last = e;
			continue;
		}
		if (c && tr == track && op == prev_op && len &&
		    ev->ts - td_ev_end(td_trace_ev(t, last)) <= CHAIN_GAP_NS) { /* its next kernel */
			ns += td_ev_dur(ev);
			last = e;
			continue;
		}
		if (len >= 2 && fused > 0 && fused < bytes) { /* a chain ends: fuse it */
			int64_t keep = (int64_t)((double)ns * (double)fused / (double)bytes);
			uint32_t k;
			saved += ns - keep;
			if (ns - keep > best) {
				char b1[32], b2[32], b3[32], b4[32], m1[300], m2[300];
				best = ns - keep;
				snprintf(where_buf, cap, "a memory-bound chain of %zu ops, %s to %s: %s "
					 "moving %s, fused %s: %s back at the bandwidth it achieved", len,
					 td_mark(m1, sizeof(m1), td_trace_name(t, td_trace_ev(t,
						 cf.ev[first_op])->name)),
					 td_mark(m2, sizeof(m2), td_trace_name(t, td_trace_ev(t,
						 cf.ev[prev_op])->name)),
					 td_fmt_dur(b1, sizeof(b1), ns), td_fmt_bytes(b2, sizeof(b2),
					 (double)bytes), td_fmt_bytes(b3, sizeof(b3), (double)fused),
					 td_fmt_dur(b4, sizeof(b4), ns - keep));
			}
			if (td_an_whatif(a)) {
				struct td_rp_edit ed = {TD_RP_FUSE, track, td_trace_ev(t, first)->ts,
							td_trace_ev(t, last)->ts + 1, 0, 0};
				td_finding_edit(f, &ed);
				for (k = first; k <= last; k++) {
					const struct td_event *x = td_trace_ev(t, k);
					if (x->kind != TD_K_KERNEL)
						continue;
					ed = (struct td_rp_edit){TD_RP_FREE, track, x->ts, x->ts + 1,
								 (int64_t)((double)td_ev_dur(x) *
									   (double)fused / (double)bytes), 0};
					td_finding_edit(f, &ed);
				}
			}
		}
		if (!more)
			break;
		/* a chain may start here */
		len = c ? 1 : 0;
		track = tr;
		first = last = e;
		prev_op = first_op = op;
		bytes = fused = c ? c->bytes : 0;
		ns = c ? td_ev_dur(ev) : 0;
	}
	td_cost_finder_free(&cf);
	return saved;
}

static void run_device(struct td_analysis *a, struct td_report *r, size_t d, int64_t outside)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_device *props = NULL;
	struct td_interval *comp, *comm;
	size_t ncomp, ncomm, i, m;
	int64_t window = dv->win_end - dv->win_start, busy, cat_ns[K_NCAT] = {0}, save = 0;
	uint64_t cat_calls[K_NCAT] = {0};
	struct td_kernel_total *k = NULL;
	uint8_t *kc;
	int tc, ampere;
	struct td_finding *f;
	char b1[32], b2[32], mk[600], roofline[800] = "", fused_where[400] = "";
	int64_t fused_ns = 0;
	struct td_roof_op *ro = NULL;
	size_t nro = 0, nlost = 0;
	int64_t old_ns = 0;
	int dev_arch = 0, old_arch = 0;
	char old_what[160] = "", old_name[128] = "";

	props = td_trace_find_device(t, dv->device);
	tc = props && props->has_props && props->cc_major >= 7 && !t->rocm;
	ampere = tc && props->cc_major >= 8;
	td_an_kernel_sets(a, dv->device, dv->win_start, dv->win_end, &comp, &ncomp, &comm, &ncomm);
	busy = td_intervals_total(comp, ncomp);
	free(comp);
	free(comm);
	window -= outside < window ? outside : 0;
	if (window <= 0 || (double)busy < a->params.gpu_bound_busy * (double)window)
		return;
	/* compute kernels in the window, totalled by name, each in its category */
	m = td_an_kernel_totals(a, d, &k);
	kc = td_malloc((m ? m : 1) * sizeof(*kc));
	for (i = 0; i < m; i++) {
		kc[i] = (uint8_t)category(td_trace_name(t, k[i].name), tc);
		cat_ns[kc[i]] += k[i].ns;
		cat_calls[kc[i]] += k[i].calls;
	}
	/* kernels built for an older architecture than the device's (a major version below:
	 * the library had none for this one and fell back), 5% of the compute or more */
	if (props && props->has_props && !t->rocm && props->cc_major > 0)
		dev_arch = props->cc_major * 10 + props->cc_minor;
	for (i = 0; i < m && dev_arch; i++) {
		const char *n = td_trace_name(t, k[i].name), *at = NULL;
		int ka = kernel_arch(n, &at);
		if (!ka || ka / 10 >= props->cc_major)
			continue;
		if (!old_ns) { /* its name: the identifier that holds the token */
			const char *s = at, *e = at;
			while (s > n && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
				s--;
			while (isalnum((unsigned char)*e) || *e == '_')
				e++;
			snprintf(old_name, sizeof(old_name), "%.*s", (int)(e - s < 120 ? e - s : 120), s);
			old_arch = ka;
		}
		old_ns += k[i].ns;
	}
	if (old_ns * 100 < busy * 5)
		old_ns = 0;
	else
		snprintf(old_what, sizeof(old_what), "%s (%.0f%% of the compute), built for SM%d on "
			 "this SM%d GPU", td_fmt_dur(b1, sizeof(b1), old_ns),
			 100.0 * (double)old_ns / (double)busy, old_arch, dev_arch);
	/* what a named change wins back */
	if (cat_ns[K_ELEMENTWISE] * 100 < busy * 15 || cat_calls[K_ELEMENTWISE] < 100)
		cat_ns[K_ELEMENTWISE] = 0;
	if (cat_ns[K_SOFTMAX] * 100 < busy * 5)
		cat_ns[K_SOFTMAX] = 0;
	if (cat_ns[K_FP32_MM] * 100 < busy * 5)
		cat_ns[K_FP32_MM] = 0;
	save = cat_ns[K_FP32_MM] / 2 + cat_ns[K_LAYOUT] + cat_ns[K_ELEMENTWISE] / 2 +
	       cat_ns[K_SOFTMAX] / 2;
	f = td_report_add(r, "gpu-bound", dv->device);
	/* memory-bound chains fused, sized by bytes, where no named change covers them */
	if (!cat_ns[K_ELEMENTWISE] && !cat_ns[K_SOFTMAX])
		fused_ns = fuse_chains(a, f, dv, fused_where, sizeof(fused_where));
	save += fused_ns;
	f->busy_ns = save;
	f->count = m;
	f->max_severity = SEV_MEDIUM; /* how much a change pays depends on the model's numerics */
	if (!save)
		f->risk = 2, f->severity = SEV_INFO; /* advice: no change named, no time figure */
	td_finding_value(f, "compute_busy_ns", busy);
	td_finding_value(f, "fp32_matmul_ns", cat_ns[K_FP32_MM]);
	td_finding_value(f, "layout_ns", cat_ns[K_LAYOUT]);
	td_finding_value(f, "elementwise_ns", cat_ns[K_ELEMENTWISE]);
	td_finding_value(f, "softmax_ns", cat_ns[K_SOFTMAX]);
	if (fused_ns)
		td_finding_value(f, "fused_chain_ns", fused_ns);
	if (old_ns)
		td_finding_value(f, "old_arch_ns", old_ns);
	/* the ops that lose the most against their roof: 1% of the compute or more, three */
	nro = td_an_roof_ops(a, d, &ro);
	while (nlost < nro && nlost < 3 && ro[nlost].lost_ns > 0 && ro[nlost].lost_ns * 100 >= busy)
		nlost++;
	if (nlost)
		snprintf(roofline, sizeof(roofline), "; %s loses the most against its roof (%.0f%% "
			 "of it)", td_mark(mk, sizeof(mk), td_trace_name(t, ro[0].name)),
			 100 * ro[0].roof.pct);
	td_finding_title(f, "GPU %d is busy computing %.0f%% of the window (%s of %s%s)%s",
			 dv->device, 100.0 * (double)busy / (double)window,
			 td_fmt_dur(b1, sizeof(b1), busy), td_fmt_dur(b2, sizeof(b2), window),
			 outside ? " left once the start-up and untraced waits above are out" : "",
			 save ? ": faster kernels are the lever, where the GPU holds the step"
			 : old_ns ? "; part of it runs in kernels built for an older GPU architecture"
			 : nlost ? roofline : "; nothing in their names points to a known change");
	if (save)
		replay_edits(a, f, dv, k, kc, m, cat_ns);
	{ /* per change, its biggest kernel */
		static const char *const what[K_NCAT] = {NULL, "FP32 matmul / convolution",
			"layout transposes", "elementwise", "softmax"};
		int c;
		for (c = 1; c < K_NCAT; c++) {
			if (!cat_ns[c])
				continue;
			for (i = 0; i < m && kc[i] != c; i++)
				;
			td_finding_where(f, "%s: %s in %llu calls, the largest %s", what[c],
					 td_fmt_dur(b1, sizeof(b1), cat_ns[c]),
					 (unsigned long long)cat_calls[c],
					 td_mark(mk, sizeof(mk), td_trace_name(t, k[i].name)));
		}
	}
	if (old_ns)
		td_finding_where(f, "built for an older architecture: %s; the largest %s",
				 old_what, td_mark(mk, sizeof(mk), old_name));
	for (i = 0; i < m && i < 5; i++)
		td_finding_where(f, "%s: %s in %llu calls (%.0f%% of the compute)",
				 td_mark(mk, sizeof(mk), td_trace_name(t, k[i].name)),
				 td_fmt_dur(b1, sizeof(b1), k[i].ns), (unsigned long long)k[i].calls,
				 100.0 * (double)k[i].ns / (double)busy);
	roof_where(a, f, ro, nlost);
	if (fused_ns)
		td_finding_where(f, "%s", fused_where);
	{
		char fix[2400], re[200];
		size_t o = 0;
		const char *top = m ? td_trace_name(t, k[0].name) : "";
		size_t j;
		static const struct {
			int cat;
			enum td_mech mech;
		} part[] = {{K_FP32_MM, TD_FIX_FP32_MM_BF16}, {K_LAYOUT, TD_FIX_LAYOUT},
			    {K_ELEMENTWISE, TD_FIX_ELEMENTWISE}, {K_SOFTMAX, TD_FIX_SOFTMAX}};
		char one[1200], arg[96];
		if (nlost || fused_ns) /* what moves the op that loses the most */
			o += roof_fix(a, ro, nlost, cat_ns, ampere, fused_ns, fix, sizeof(fix));
		for (j = 0; j < sizeof(part) / sizeof(part[0]) && o < sizeof(fix); j++) {
			int c = part[j].cat;
			if (!cat_ns[c])
				continue;
			td_fmt_dur(b1, sizeof(b1), cat_ns[c]);
			if (c == K_ELEMENTWISE)
				snprintf(arg, sizeof(arg), "%llu small elementwise kernels take %s",
					 (unsigned long long)cat_calls[c], b1);
			else
				snprintf(arg, sizeof(arg), "%s", b1);
			/* bf16 and TF32 from Ampere on; Volta and Turing run fp16 */
			td_fix_text(&a->ctx, c == K_FP32_MM && !ampere ? TD_FIX_FP32_MM_FP16
				    : part[j].mech, -1, arg, one, sizeof(one));
			o += (size_t)snprintf(fix + o, sizeof(fix) - o, "%s ", one);
		}
		/* the top kernel's name as a regex: its identifier, up to the first template or
		 * argument list, without regex metacharacters; at most RE_MAX characters, a prefix
		 * both profilers match (a mangled or Tensile name runs to 200), so the command
		 * stays one token the report can print within its width */
		{
			const char *p = strncmp(top, "void ", 5) ? top : top + 5; /* skip the return type */
			for (j = 0; p[j] && j < RE_MAX && j + 1 < sizeof(re) && !strchr("<( ", p[j]); j++)
				re[j] = strchr(".*+?[]{}|^$\\", p[j]) ? '.' : p[j];
			re[j] = '\0';
		}
		if (old_ns && o < sizeof(fix)) {
			td_fix_text(&a->ctx, TD_FIX_OLD_ARCH, -1, old_what, one, sizeof(one));
			o += (size_t)snprintf(fix + o, sizeof(fix) - o, "%s", one);
		}
		if (!o) /* no change named: the profiler's "Then ..." follows what the finding saw */
			o = (size_t)snprintf(fix, sizeof(fix), "The GPU's own kernels hold the step, and "
					     "their names point to no known change. ");
		if (o < sizeof(fix)) /* the vendor's kernel profiler (fixes/catalogue.c) */
			td_fix_text(&a->ctx, TD_FIX_KERNEL_PROFILE, -1, re, fix + o, sizeof(fix) - o);
		td_finding_fix(f, "%s", fix);
	}
	free(k);
	free(kc);
	free(ro);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	int64_t *outside = td_calloc(a->ndev ? a->ndev : 1, sizeof(*outside));
	size_t d, i;

	/* per device, the GPU idle the findings before this one hold as not the run's (a wait on
	 * work from before the trace, start-up): left out of the window a busy share is of */
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		int k = f->outside ? td_an_dev_index(a, f->device) : -1;
		if (k >= 0)
			outside[k] += f->idle_ns;
	}
	for (d = 0; d < a->ndev; d++)
		run_device(a, r, d, outside[d]);
	free(outside);
}

const struct td_rule rule_gpu_bound = {
	.id = "gpu-bound",
	.title = "The GPU is busy computing: the kernels are the lever",
	.run = run,
};
