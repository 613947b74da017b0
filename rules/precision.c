/* SPDX-License-Identifier: MIT */
/* precision: FP32 matrix multiplies and convolutions (kernels whose names give fp32 operands:
 * volta_sgemm, scudnn, cuDNN's dgrad_engine<float, ...>, CUTLASS / xmma f32 without tf32,
 * Tensile's Cijk_..._S; fixes/precision.h) take rules.precision_share (25%) or more of a GPU's
 * compute time in its window, on a device whose table (config/peaks.h) shows its tensor cores
 * at twice its FP32 peak or more (V100 and Turing fp16, Ampere on tf32 / bf16, MI300X's
 * matrix cores). Kernels that already name a tensor-core type (h884, s1688, bf16, tf32,
 * Cijk_..._HHS) are not FP32. Where gpu-bound names these kernels already (its FP32 share
 * of a GPU-bound window) it adds nothing.
 * Its fix follows the device and the run: fp16 autocast and a GradScaler on Volta and Turing,
 * TF32 first and then bf16 on Ampere and later, bf16 on AMD; half / bf16 weights when
 * serving (fixes/entries.c). It is replayed: each of those kernels keeps 1 / factor of its
 * time, factor the lesser of the tensor-to-FP32 peak ratio and 2 - a conservative speed-up
 * for a kernel that runs at its compute roof, where a where line states it; the GPU-idle
 * parts of the step stay, so a host-bound step wins little, as its replay shows. Graded at
 * most medium: what a change of precision pays depends on the model's numerics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "common/sat.h"
#include "analysis/intervals.h"
#include "config/peaks.h"
#include "fixes/catalogue.h"
#include "fixes/precision.h"
#include "replay/replay.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

_Static_assert(TD_GEMM_FP32 == (int)TD_DT_FP32 && TD_GEMM_TF32 == (int)TD_DT_TF32 &&
	       TD_GEMM_FP8 == (int)TD_DT_FP8 && TD_GEMM_FP4 == (int)TD_DT_FP4 &&
	       TD_GEMM_NDT == (int)TD_DT_COUNT, "fixes/precision.h follows config/peaks.h");

#define FACTOR_MAX 2.0 /* the speed-up assumed at most: a GEMM-bound kernel's, conservatively */

/* whether gpu-bound has named the FP32 GEMMs on device dev already */
static int gpu_bound_has(const struct td_report *r, int32_t dev)
{
	size_t i, j;

	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		if (f->device != dev || strcmp(f->rule, "gpu-bound"))
			continue;
		for (j = 0; j < f->values.len; j++) {
			const struct td_value *v = &TD_VEC_AT(&f->values, struct td_value, j);
			if (!strcmp(v->key, "fp32_matmul_ns") && v->v > 0)
				return 1;
		}
	}
	return 0;
}

/* The replay's edits: each FP32 GEMM kernel in the window keeps 1 / factor of its time */
static void replay_edits(struct td_analysis *a, struct td_finding *f,
			 const struct td_dev_analysis *dv, const uint8_t *fp32, double factor)
{
	const struct td_trace *t = a->t;
	struct td_dev_events it;
	uint32_t e;

	if (!td_an_whatif(a))
		return;
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &e);) {
		const struct td_event *ev = td_trace_ev(t, e);
		struct td_rp_edit ed;
		if (ev->kind != TD_K_KERNEL || ev->ts < dv->win_start || ev->ts >= dv->win_end ||
		    ev->name > t->names.count || !fp32[ev->name])
			continue;
		ed = (struct td_rp_edit){TD_RP_FREE, td_dev_events_track(&it), ev->ts, ev->ts + 1,
					 (int64_t)((double)td_ev_dur(ev) / factor), 0};
		td_finding_edit(f, &ed);
	}
}

static void run_device(struct td_analysis *a, struct td_report *r, size_t d)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	const struct td_device *props = td_trace_find_device(t, dv->device);
	struct td_interval *comp, *comm;
	struct td_kernel_total *k = NULL;
	size_t ncomp, ncomm, m, i, named = 0;
	int64_t busy, fp32_ns = 0, freed = 0;
	uint64_t calls = 0;
	uint8_t *fp32;
	int tensor = -1, amd = t->rocm || a->ctx.vendor == TD_VENDOR_AMD, fp16_only;
	double ratio, factor;
	struct td_finding *f;
	char b1[32], b2[32], mk[600], fix[1600];
	enum td_mech mech;

	/* the tensor cores' best dtype for FP32 work: TF32 or bf16 from Ampere on (and AMD's
	 * matrix cores), fp16 on Volta and Turing */
	for (i = TD_DT_TF32; i <= TD_DT_FP16; i++)
		if (a->peaks.tflops[i] > 0 && (tensor < 0 || a->peaks.tflops[i] > a->peaks.tflops[tensor]))
			tensor = (int)i;
	if (tensor < 0 || a->peaks.tflops[TD_DT_FP32] <= 0)
		return;
	ratio = a->peaks.tflops[tensor] / a->peaks.tflops[TD_DT_FP32];
	if (ratio < 2 || gpu_bound_has(r, dv->device) ||
	    (!amd && props && props->has_props && props->cc_major < 7)) /* Pascal: no tensor cores */
		return;
	fp16_only = a->peaks.tflops[TD_DT_TF32] <= 0 && a->peaks.tflops[TD_DT_BF16] <= 0 &&
		    !(props && props->has_props && props->cc_major >= 8 && !amd);
	td_an_kernel_sets(a, dv->device, dv->win_start, dv->win_end, &comp, &ncomp, &comm, &ncomm);
	busy = td_intervals_total(comp, ncomp);
	free(comp);
	free(comm);
	if (busy <= 0)
		return;
	m = td_an_kernel_totals(a, d, &k);
	fp32 = td_calloc(t->names.count + 1, 1);
	for (i = 0; i < m; i++) {
		int mma, low;
		if (k[i].name <= t->names.count &&
		    td_gemm_kernel_dtype(td_trace_name(t, k[i].name), &mma, &low) &&
		    mma == TD_DT_FP32) {
			fp32[k[i].name] = 1;
			fp32_ns = td_sat_add(fp32_ns, k[i].ns);
			calls += k[i].calls;
		}
	}
	/* a material share of the compute, and 1% of the window at least */
	if ((double)fp32_ns < a->params.precision_share * (double)busy ||
	    (double)fp32_ns * 100 < (double)(dv->win_end - dv->win_start)) {
		free(fp32);
		free(k);
		return;
	}
	factor = ratio < FACTOR_MAX ? ratio : FACTOR_MAX;
	for (i = 0; i < m; i++)
		if (fp32[k[i].name])
			freed = td_sat_add(freed, k[i].ns - (int64_t)((double)k[i].ns / factor));
	f = td_report_add(r, "precision", dv->device);
	f->busy_ns = freed;
	f->count = calls;
	f->max_severity = SEV_MEDIUM; /* what it pays depends on the model's numerics */
	td_finding_value(f, "fp32_matmul_ns", fp32_ns);
	td_finding_value(f, "compute_busy_ns", busy);
	td_finding_title(f, "FP32 matrix multiplies and convolutions take %.0f%% of GPU %d's compute "
			 "(%s of %s) on %s, whose %s cores run %s at %.0fx its FP32 peak",
			 100.0 * (double)fp32_ns / (double)busy, dv->device,
			 td_fmt_dur(b1, sizeof(b1), fp32_ns), td_fmt_dur(b2, sizeof(b2), busy),
			 *a->peaks.device ? a->peaks.device : "a GPU", amd ? "matrix" : "tensor",
			 td_dtype_name((enum td_dtype)tensor),
			 ratio);
	for (i = 0; i < m && named < 3; i++)
		if (fp32[k[i].name]) {
			td_finding_where(f, "%s: %s in %llu calls (%.0f%% of the compute)",
					 td_mark(mk, sizeof(mk), td_trace_name(t, k[i].name)),
					 td_fmt_dur(b1, sizeof(b1), k[i].ns),
					 (unsigned long long)k[i].calls,
					 100.0 * (double)k[i].ns / (double)busy);
			named++;
		}
	td_finding_where(f, "replayed with each of those kernels at 1/%.1f of its time (%s less on "
			 "the GPU): the lesser of the %s-to-fp32 peak ratio (%.1fx, %.1f against %.1f "
			 "TFLOP/s) and %.0fx, what a GEMM-bound kernel gains at least; the step's GPU-idle "
			 "time stays", factor, td_fmt_dur(b1, sizeof(b1), freed),
			 td_dtype_name((enum td_dtype)tensor), ratio,
			 a->peaks.tflops[tensor],
			 a->peaks.tflops[TD_DT_FP32], FACTOR_MAX);
	replay_edits(a, f, dv, fp32, factor);
	/* Volta and Turing run fp16 only; Ampere and later TF32 and bf16, AMD bf16 */
	mech = fp16_only && !amd ? TD_FIX_FP32_MM_FP16 : TD_FIX_FP32_MM_BF16;
	td_finding_fix(f, "%s", td_fix_text(&a->ctx, mech, -1, td_fmt_dur(b1, sizeof(b1), fp32_ns),
					    fix, sizeof(fix)));
	free(fp32);
	free(k);
}

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t d;

	for (d = 0; d < a->ndev; d++)
		run_device(a, r, d);
}

const struct td_rule rule_precision = {
	.id = "precision",
	.title = "FP32 matrix multiplies on tensor cores: mixed precision or TF32 is the lever",
	.run = run,
};
