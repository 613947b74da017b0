/* SPDX-License-Identifier: MIT */
/* gpu-idle: how busy each device is over the window and per step, its largest gaps with their
 * causes, and sustained low-utilization stretches. Sized by the idle time that no more specific
 * rule claims (host CPU work, untraced time, dependencies, the allocator, launch overhead
 * outside small-kernel runs). */
#include <stdio.h>
#include <stdlib.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "rules/rule.h"

#define GAP_LESS(x, y) ((x)->end - (x)->start > (y)->end - (y)->start || \
	((x)->end - (x)->start == (y)->end - (y)->start && (x)->start < (y)->start))
TD_DEFINE_SORT(sort_gaps_by_len, struct td_gap, GAP_LESS)

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

static void step_busy(struct td_analysis *a, size_t d, struct td_finding *f)
{
	size_t n = a->nsteps, i;
	int64_t *pm;

	if (n < 2)
		return;
	pm = td_malloc(n * sizeof(*pm));
	for (i = 0; i < n; i++) {
		const struct td_interval *s = &a->steps[i];
		int64_t len = s->end - s->start;
		pm[i] = len > 0 ? td_an_busy_between(a, d, s->start, s->end) * 1000 / len : 0;
	}
	sort_i64(pm, n);
	td_finding_where(f, "busy per step: min %.1f%%, median %.1f%%, max %.1f%% over %zu steps",
			 (double)pm[0] / 10, (double)pm[(n - 1) / 2] / 10, (double)pm[n - 1] / 10, n);
	free(pm);
}

static void low_util(struct td_analysis *a, size_t d, struct td_finding *f)
{
	const struct td_dev_analysis *dv = &a->dev[d];
	int chunks = a->params.util_chunks, i, run = 0, listed = 0;
	int64_t w = dv->win_end - dv->win_start, run_start = 0, run_busy = 0;
	char b1[32];

	if (chunks < 2 || w < chunks)
		return;
	for (i = 0; i <= chunks && listed < 2; i++) {
		int64_t s = dv->win_start + w * i / chunks, e = dv->win_start + w * (i + 1) / chunks;
		int64_t busy = i < chunks ? td_an_busy_between(a, d, s, e) : 0;
		int low = i < chunks && (double)busy < a->params.low_util * (double)(e - s);
		if (low) {
			if (!run)
				run_start = s, run_busy = 0;
			run++;
			run_busy += busy;
		} else if (run >= 3) {
			int64_t len = s - run_start;
			td_finding_evidence(f, run_start, len, "low utilization for %s: %.0f%% busy",
					    td_fmt_dur(b1, sizeof(b1), len),
					    100.0 * (double)run_busy / (double)len);
			listed++;
			run = 0;
		} else {
			run = 0;
		}
	}
}

static void run(struct td_analysis *a, struct td_report *r)
{
	size_t d, i;
	char b1[32], b2[32], b3[32];

	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		int64_t w = dv->win_end - dv->win_start, claimed, mine, shown = 0, queued;
		struct td_gap *gaps;
		struct td_finding *f;
		enum td_cause top = CAUSE_HOST;
		static const enum td_cause causes[] = {CAUSE_HOST, CAUSE_NOTHING, CAUSE_DEPENDENCY,
						       CAUSE_ALLOC, CAUSE_LAUNCH};

		if (w <= 0 || dv->idle_ns <= 0)
			continue;
		mine = 0;
		for (i = 0; i < sizeof(causes) / sizeof(causes[0]); i++) {
			mine += dv->idle_by_cause[causes[i]];
			if (dv->idle_by_cause[causes[i]] > dv->idle_by_cause[top])
				top = causes[i];
		}
		/* launch gaps inside small-kernel runs belong to the small-kernels finding */
		claimed = dv->run_gap_ns < mine ? dv->run_gap_ns : mine;
		f = td_report_add(r, "gpu-idle", dv->device);
		f->savings_ns = mine - claimed;
		f->count = dv->ngaps;
		td_finding_title(f, "GPU %d is idle %.0f%% of the window (%s of %s); %s of it is %s and "
				 "other time no other finding covers", dv->device,
				 100.0 * (double)dv->idle_ns / (double)w,
				 td_fmt_dur(b1, sizeof(b1), dv->idle_ns), td_fmt_dur(b2, sizeof(b2), w),
				 td_fmt_dur(b3, sizeof(b3), f->savings_ns), td_cause_title(top));
		for (i = 0; i < dv->idle.len && shown < 5; i++) {
			const struct td_idle_item *it = &TD_VEC_AT(&dv->idle, struct td_idle_item, i);
			size_t c;
			int ours = 0;
			for (c = 0; c < sizeof(causes) / sizeof(causes[0]); c++)
				ours |= it->cause == causes[c];
			if (!ours)
				continue;
			td_finding_where(f, "%s: %s (%s idle)", td_cause_title((enum td_cause)it->cause),
					 it->what ? td_an_label(a, it->what) : "-",
					 td_fmt_dur(b1, sizeof(b1), it->ns));
			shown++;
		}
		step_busy(a, d, f);
		/* the largest gaps, longest first */
		gaps = td_malloc((dv->ngaps ? dv->ngaps : 1) * sizeof(*gaps));
		for (i = 0; i < dv->ngaps; i++)
			gaps[i] = dv->gaps[i];
		sort_gaps_by_len(gaps, dv->ngaps);
		for (i = 0; i < dv->ngaps && (int)i < a->params.evidence_max; i++) {
			if (gaps[i].end - gaps[i].start < a->params.gap_report_ns)
				break;
			td_finding_evidence(f, gaps[i].start, gaps[i].end - gaps[i].start,
					    "gap of %s: %s%s%s", td_fmt_dur(b1, sizeof(b1),
					    gaps[i].end - gaps[i].start),
					    td_cause_title((enum td_cause)gaps[i].cause),
					    gaps[i].what ? ", " : "",
					    gaps[i].what ? td_an_label(a, gaps[i].what) : "");
		}
		free(gaps);
		low_util(a, d, f);
		queued = td_an_idle_of(a, d, CAUSE_LAUNCH,
				       td_strtab_find(&a->labels, TD_LABEL_QUEUED_GAP,
						      sizeof(TD_LABEL_QUEUED_GAP) - 1));
		if (top == CAUSE_LAUNCH && 2 * queued > dv->idle_by_cause[CAUSE_LAUNCH]) {
			/* the ops were already queued: the host is ahead, the GPU idles between them */
			td_finding_fix(f, "%s", "The host is ahead: the ops were already queued and the GPU "
				       "idles between them (per-kernel launch overhead on the device). Fewer, "
				       "larger kernels win it back: torch.compile(model) fuses small ops, "
				       "and CUDA Graphs (mode=\"reduce-overhead\", or torch.cuda.CUDAGraph) "
				       "launch a whole step at once.");
			continue;
		}
		switch (top) {
		case CAUSE_NOTHING:
			td_finding_fix(f, "%s", "The launching thread recorded nothing while the GPU waited: "
				       "the time goes to code the profiler does not see (another thread, "
				       "the GIL, I/O, logging). Profile with "
				       "torch.profiler.profile(with_stack=True) to see the Python frames, "
				       "and move that work out of the training step.");
			break;
		case CAUSE_DEPENDENCY:
			td_finding_fix(f, "%s", "Ops were queued but waited on another stream, event or "
				       "device (e.g. NCCL collectives or a side stream): overlap the "
				       "communication with compute, check for a straggler rank, and avoid "
				       "cross-stream waits inside the step.");
			break;
		case CAUSE_ALLOC:
			td_finding_fix(f, "%s", "The host is in cudaMalloc/cudaFree: let PyTorch's caching "
				       "allocator reuse memory (avoid torch.cuda.empty_cache() in the loop; "
				       "keep tensor shapes stable; PYTORCH_CUDA_ALLOC_CONF="
				       "expandable_segments:True).");
			break;
		default:
			td_finding_fix(f, "%s", "The GPU waits for the host to launch work: the step is "
				       "CPU-bound. Cut Python per step (no per-item loops over tensors, "
				       "precompute outside the loop), compile the model "
				       "(torch.compile(model, mode=\"reduce-overhead\") also uses CUDA "
				       "Graphs), or raise the batch size so each launch does more work.");
			break;
		}
	}
}

const struct td_rule rule_gpu_idle = {
	.id = "gpu-idle",
	.title = "GPU idle time, per step, largest gaps and low-utilization windows",
	.run = run,
};
