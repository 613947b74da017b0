/* SPDX-License-Identifier: MIT */
/* The idle accounting and the rules on their fixtures: exact values (worked out in
 * fixtures/rules/make.py), near misses that must stay silent, invariants on every fixture
 * (tests/test_rules_cases.c: the cases across rules and the real traces). */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "parser/load.h"
#include "analysis/metrics.h"
#include "rules/rule.h"
#include "sizing/whatif.h"
#include "analysis/flops.h"
#include "tests/helpers.h"
#include "tests/rules_run.h"

/* The registry (rules/report.c) lists the rules in the order of their ids in the config
 * (config/ids.c), which knows them by id alone. */
static void test_registry(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; td_rules[i] && td_rule_ids[i]; i++) {
		assert_string_equal(td_rules[i]->id, td_rule_ids[i]);
		assert_ptr_equal(td_rule_find(td_rule_ids[i]), td_rules[i]);
		assert_true(td_rule_known(td_rules[i]->id));
	}
	assert_null(td_rules[i]);
	assert_null(td_rule_ids[i]);
	assert_false(td_rule_known("sync_stall"));
	assert_string_equal(td_rule_nearest("sync_stall"), "sync-stall");
}

/* Claims (rules/claims.c): candidates in order are taken as they come, others sorted first -
 * both give the same claims. Every other gap claimed by finding 1, in order and then in
 * reverse, on two analyses of one trace; then the whole window by finding 2, which gets the
 * rest: each gap claimed whole by one finding (its segments joined), the two alternating. */
static void test_claims(void **state)
{
	struct run x[2];
	int64_t got[2][2], odd = 0;
	size_t i, k;
	(void)state;

	for (k = 0; k < 2; k++) {
		struct td_error err;
		struct td_dev_analysis *dv;
		struct td_claims c;
		td_trace_init(&x[k].t);
		if (td_trace_load(th_fixture("rules/dataloader.json"), NULL, &x[k].t, &err) != 0)
			fail_msg("%s", err.msg);
		td_analysis_run(&x[k].a, &x[k].t, NULL);
		dv = &x[k].a.dev[0];
		assert_true(dv->ngaps >= 4);
		td_claims_init(&c);
		for (i = 0; i < dv->ngaps; i++) {
			size_t g = k ? dv->ngaps - 1 - i : i;
			if (g % 2)
				td_claims_add(&c, dv->gaps[g].start, dv->gaps[g].end, CAUSE_COUNT, 0);
		}
		got[k][0] = td_claims_commit(&x[k].a, 0, &c, 1, NULL, 0);
		td_claims_add(&c, dv->win_start, dv->win_end, CAUSE_COUNT, 0);
		got[k][1] = td_claims_commit(&x[k].a, 0, &c, 2, NULL, 0);
		td_claims_free(&c);
	}
	for (i = 1; i < x[0].a.dev[0].ngaps; i += 2)
		odd += x[0].a.dev[0].gaps[i].end - x[0].a.dev[0].gaps[i].start;
	assert_int_equal(got[0][0], odd);
	assert_int_equal(got[0][1], x[0].a.dev[0].idle_ns - odd);
	assert_int_equal(got[1][0], got[0][0]);
	assert_int_equal(got[1][1], got[0][1]);
	assert_int_equal(x[0].a.dev[0].claims.len, x[0].a.dev[0].ngaps);
	assert_int_equal(x[1].a.dev[0].claims.len, x[0].a.dev[0].claims.len);
	for (i = 0; i < x[0].a.dev[0].claims.len; i++) {
		const struct td_claim *a = &TD_VEC_AT(&x[0].a.dev[0].claims, struct td_claim, i);
		const struct td_claim *b = &TD_VEC_AT(&x[1].a.dev[0].claims, struct td_claim, i);
		assert_int_equal(a->start, x[0].a.dev[0].gaps[i].start);
		assert_int_equal(a->end, x[0].a.dev[0].gaps[i].end);
		assert_int_equal(a->owner, i % 2 ? 1 : 2);
		assert_int_equal(b->start, a->start);
		assert_int_equal(b->end, a->end);
		assert_int_equal(b->owner, a->owner);
	}
	for (k = 0; k < 2; k++) {
		td_analysis_free(&x[k].a);
		td_trace_free(&x[k].t);
	}
}

static void test_dataloader(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/dataloader.json"), &x);
	check_invariants(&x, "dataloader.json");
	/* per step: 400 us in __next__, 10 + 2 us of host work, 5 + 3 us launching; 4 steps */
	assert_int_equal(x.a.dev[0].idle_ns, 1760000);
	assert_int_equal(idle_of(&x, CAUSE_DATALOADER), 1600000);
	assert_int_equal(idle_of(&x, CAUSE_HOST), 128000);
	assert_int_equal(idle_of(&x, CAUSE_LAUNCH), 32000);
	f = nth(&x, 0);
	assert_string_equal(f->rule, "dataloader");
	/* replayed: each 400 us __next__ shrinks to the 50 us a fetched batch still costs (the
	 * floor: the fixture uploads nothing), and the host-bound steps shrink by the rest */
	assert_true(f->replayed);
	assert_int_equal(f->savings_ns, 4 * 350000);
	assert_int_equal(f->severity, SEV_HIGH);
	assert_int_equal(f->count, 4);
	assert_non_null(strstr(plain(f->title), "40% of the steady-state steps"));
	assert_non_null(strstr(plain(f->title), "400.0 us per step, mean"));
	assert_non_null(strstr(f->fix, "num_workers"));
	/* gpu-idle claims the host work and the launches (160 us); its fix, the host's work
	 * moved off the step, is bounded by that work removed: the launches stay */
	f = finding(&x, "gpu-idle", NULL);
	assert_non_null(f);
	assert_int_equal(f->idle_ns, 160000);
	assert_true(f->bounded);
	assert_int_equal(f->savings_ns, idle_of(&x, CAUSE_HOST));
	assert_int_equal(f->severity, SEV_MEDIUM);
	done(&x);

	diagnose_path(th_fixture("rules/dataloader-nearmiss.json"), &x); /* 3% of the step */
	check_invariants(&x, "dataloader-nearmiss.json");
	assert_null(finding(&x, "dataloader", NULL));
	done(&x);
}

static void test_sync_stall(void **state)
{
	struct run x;
	const struct td_finding *f;
	size_t i;
	(void)state;

	diagnose_path(th_fixture("rules/sync.json"), &x);
	check_invariants(&x, "sync.json");
	assert_int_equal(idle_of(&x, CAUSE_TRANSFER), 3 * 48000); /* in cudaMemcpyAsync */
	assert_int_equal(idle_of(&x, CAUSE_SYNC), 3 * 47000);     /* in cudaStreamSynchronize */
	f = finding(&x, "sync-stall", NULL);
	assert_non_null(f);
	assert_int_equal(f->count, 3);            /* one .item() (copy + synchronize) per step */
	assert_int_equal(f->host_ns, 3 * 665000); /* 618 us in the copy, 47 in the sync */
	/* per step: the idle in the copy (48 us) and the sync (47 us), then the bubble after the
	 * wait up to the next launch at T+712: 14 us, within the 665 us the host was blocked */
	assert_int_equal(f->idle_ns, 3 * 109000);
	/* replayed: .item() [T+30, T+700) goes (one 4 us launch instead), so each add kernel
	 * follows its gemm and the next step's gemm follows it, the GPU back to back: 3 x (580 +
	 * 180) us, done at 2300 instead of the last step's 3000 */
	assert_true(f->replayed);
	assert_int_equal(f->savings_ns, 700000);
	assert_int_equal(f->severity, SEV_HIGH);
	assert_true(where_has(f, "aten::item: 3 calls"));
	assert_non_null(strstr(plain(f->title), "at aten::item (3)"));
	assert_non_null(strstr(f->fix, ".item()"));
	/* the cudaDeviceSynchronize after the last step is not a stall */
	for (i = 0; i < f->evidence.len; i++)
		assert_null(strstr(plain(TD_VEC_AT(&f->evidence, struct td_evidence, i).text),
				   "cudaDeviceSynchronize"));
	done(&x);

	diagnose_path(th_fixture("rules/sync-nearmiss.json"), &x);
	check_invariants(&x, "sync-nearmiss.json");
	assert_null(finding(&x, "sync-stall", NULL));
	done(&x);
}

static void test_transfer(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/transfer.json"), &x);
	check_invariants(&x, "transfer.json");
	f = finding(&x, "transfer", "pageable");
	assert_non_null(f);
	assert_int_equal(f->severity, SEV_HIGH);
	assert_true(where_has(f, "HtoD pageable -> device: 4 copies, 200.0 MB"));
	assert_non_null(strstr(f->fix, "pin_memory=True"));
	assert_non_null(strstr(f->fix, "non_blocking=True"));
	/* the blocked cudaMemcpyAsync of the 100 MB upload; the 400 B one moves a tensor created
	 * on the CPU, which the create-then-move finding owns */
	assert_int_equal(f->host_ns, 2 * 480000);
	assert_int_equal(f->count, 2);
	f = finding(&x, "transfer", "created on the CPU");
	assert_non_null(f);
	assert_int_equal(f->count, 2);
	/* aten::zeros [T+520, T+530) and aten::to [T+531, T+560), with the copy busy 5 us */
	assert_int_equal(f->idle_ns, 2 * 35000);
	assert_non_null(strstr(f->fix, "device=\"cuda\""));
	/* replayed: each creation and its aten::to (with its copy) go, one launch in their place;
	 * each step's host work after them moves up by the 40 us less that launch, the second
	 * step by both steps' (the blocking copy's own replayed tail goes too) */
	assert_true(f->replayed);
	assert_int_equal(f->edits.len, 2);
	{
		const struct td_rp_edit *e = f->edits.data;
		int64_t t0 = td_trace_ev(&x.t, 0)->ts, launch = td_an_whatif(&x.a)->launch_cost;
		assert_int_equal(e[0].kind, TD_RP_REMOVE);
		assert_int_equal(e[0].from - t0, 520000);
		assert_int_equal(e[0].to - t0, 560000);
		assert_int_equal(e[1].from - e[0].from, 2000000);
		assert_int_equal(e[0].residual, launch);
		assert_true(launch > 0 && launch < 40000);
		assert_true(f->savings_ns >= 2 * (40000 - launch));
	}
	done(&x);

	diagnose_path(th_fixture("rules/transfer-nearmiss.json"), &x); /* pinned, made on device */
	check_invariants(&x, "transfer-nearmiss.json");
	assert_null(finding(&x, "transfer", NULL));
	/* below the transfer rule's thresholds, its idle is gpu-idle's, mostly the blocking copy:
	 * bounded by the copy calls waiting no more - each step's cudaMemcpyAsync, blocked 480 us,
	 * then costs what a copy call costs alone (5 us), and the step 475 us less */
	f = finding(&x, "gpu-idle", NULL);
	assert_non_null(f);
	assert_int_equal(f->bound.len, 2);
	{
		const struct td_rp_edit *e = f->bound.data;
		int64_t t0 = td_trace_ev(&x.t, 0)->ts;
		assert_int_equal(e[0].kind, TD_RP_COST);
		assert_int_equal(e[0].from - t0, 20000);
		assert_int_equal(e[1].from - t0, 2020000);
		assert_int_equal(e[0].residual, td_an_whatif(&x.a)->g.copy_cost);
	}
	assert_true(f->bounded);
	assert_int_equal(f->bound_ns, 2 * 475000);
	assert_int_equal(f->savings_ns, 2 * 475000);
	done(&x);
}

static void test_small_kernels(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/small-kernels.json"), &x);
	check_invariants(&x, "small-kernels.json");
	f = finding(&x, "small-kernels", NULL);
	assert_non_null(f);
	assert_int_equal(f->count, 60);
	assert_int_equal(f->idle_ns, 59 * 7000); /* 7 us between each of 60 kernels */
	/* replayed: fused, the 60 kernels need one launch; the loop's own host work (aten::add_
	 * less its 4 us launch) stays, so the loop ends 59 x 4 us sooner, not 59 x 7 */
	assert_true(f->replayed);
	assert_int_equal(f->savings_ns, 59 * 4000);
	assert_true(where_has(f, "per-parameter optimizer loop, Adam"));
	assert_non_null(strstr(f->fix, "torch.optim.Adam(params, ..., fused=True)"));
	/* gpu-idle does not count the same gaps again; its bound, the host's work removed, wins
	 * what of them the host held (the launches' share stays) */
	f = finding(&x, "gpu-idle", NULL);
	assert_int_equal(f->idle_ns, x.a.dev[0].idle_ns - 59 * 7000);
	assert_true(f->bounded);
	assert_int_equal(f->savings_ns, td_finding_get(f, "host_ns"));
	assert_int_equal(f->savings_ns, f->idle_ns - td_finding_get(f, "launch_ns"));
	done(&x);

	diagnose_path(th_fixture("rules/small-kernels-nearmiss.json"), &x); /* 50 us kernels */
	check_invariants(&x, "small-kernels-nearmiss.json");
	assert_null(finding(&x, "small-kernels", NULL));
	/* kernel i runs [106 + 57i, +50) and was launched by 105 + 10i: from the second on, each
	 * waits 7 us behind the one before, already queued: the host is ahead, not CPU-bound */
	assert_int_equal(td_an_idle_of(&x.a, 0, CAUSE_LAUNCH,
				       td_strtab_find(&x.a.labels, TD_LABEL_QUEUED_GAP,
						      sizeof(TD_LABEL_QUEUED_GAP) - 1)), 59 * 7000);
	assert_non_null(strstr(finding(&x, "gpu-idle", NULL)->fix, "The host is ahead"));
	done(&x);
}

/* Eager vLLM decode (fixtures/rules/graph-launch.json): per iteration 20 kernels of 3 us, each
 * after 24 us of Python and a 5 us launch, then a blocking 4-byte copy; the iterations 650 us
 * apart. The fix is the engine's graphs, replayed: the 20 launches and the Python between them
 * become one launch (5 us), the kernels run back to back (60 us), the copy follows them, and
 * the 30 us before the copy and the 35 us after it stay: 105 us an iteration. The window is
 * the five execute_model iterations (no ProfilerStep#: the engine's own frames), from the first
 * one's start (0 us) to the last copy's end (3238 us); replayed it shrinks to five iterations
 * of 105 us, give or take the last copy's few us. */
#define GRAPH_ITERS_AFTER(f) (3238 * 1000 - (f)->savings_ns)
static void test_graph_replay(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/graph-launch.json"), &x);
	check_invariants(&x, "graph-launch.json");
	f = finding(&x, "gpu-idle", NULL);
	assert_non_null(f);
	assert_non_null(strstr(f->fix, "drop enforce_eager=True"));
	assert_true(f->replayed);
	assert_int_equal(x.a.nsteps, 5);
	assert_true(GRAPH_ITERS_AFTER(f) >= 5 * 105000 && GRAPH_ITERS_AFTER(f) <= 5 * 105000 + 5000);
	done(&x);
	/* the same with each iteration's 11th kernel a device-to-device copy that does not wait:
	 * a graph captures it too, so the run does not break there - the same figure (it broke
	 * at every copy before: 20 launches in two runs) */
	diagnose_path(th_fixture("rules/graph-launch-dtod.json"), &x);
	check_invariants(&x, "graph-launch-dtod.json");
	f = finding(&x, "gpu-idle", NULL);
	assert_non_null(f);
	assert_true(f->replayed);
	assert_int_equal(x.a.nsteps, 5);
	assert_true(GRAPH_ITERS_AFTER(f) >= 5 * 105000 && GRAPH_ITERS_AFTER(f) <= 5 * 105000 + 5000);
	done(&x);
}

static void test_warmup(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	/* step 1 holds a 1500 us cudaStreamCreateWithFlags and a 2000 us first launch */
	diagnose_path(th_fixture("rules/warmup.json"), &x);
	check_invariants(&x, "warmup.json");
	assert_int_equal(idle_of(&x, CAUSE_WARMUP), 3500000);
	assert_int_equal(x.a.warm_steps, 0);
	f = finding(&x, "warmup", NULL);
	assert_non_null(f);
	/* replayed without them: the stream's creation goes, the first launch costs one launch
	 * (the median call, 5 us); 3.5 ms of the 30 ms window is no mostly start-up trace: a
	 * one-off, no per-step saving, after the steady-state findings */
	assert_true(f->replayed);
	assert_int_equal(f->replay_ns, 3500000 - 5000);
	assert_int_equal(f->risk, 3);
	assert_int_equal(f->savings_ns, 0);
	assert_int_equal(f->count, 2);
	assert_non_null(strstr(plain(f->title), "a first cudaLaunchKernel 2.0 ms"));
	assert_non_null(strstr(plain(f->title), "cudaStreamCreateWithFlags 1.5 ms"));
	assert_true(where_has(f, "lazy module loading: first cudaLaunchKernel of a kernel: 2.0 ms"));
	assert_non_null(strstr(f->fix, "torch.profiler.schedule(wait=1, warmup=2, active=3)"));
	assert_non_null(strstr(f->fix, "CUDA_MODULE_LOADING=EAGER"));
	/* nothing of it is launch overhead */
	assert_int_equal(idle_of(&x, CAUSE_LAUNCH), 25000); /* 3 x (5 + 5) - 5: calls and latency */
	done(&x);

	/* the first call of any API that does no GPU work is start-up when slow: a 3 ms
	 * cudaGetDeviceProperties_v2 and a 2 ms occupancy query in step 1 (5 us later); the slow
	 * first cudaEventSynchronize waits for the GPU and is not. Without them the second launch
	 * moves up 5 ms: its kernel follows the first one's at 516 instead of 5046 us */
	diagnose_path(th_fixture("rules/warmup-first-call.json"), &x);
	check_invariants(&x, "warmup-first-call.json");
	f = finding(&x, "warmup", NULL);
	assert_non_null(f);
	assert_int_equal(f->count, 2);
	assert_non_null(strstr(plain(f->title), "cudaGetDeviceProperties_v2 3.0 ms"));
	assert_non_null(strstr(plain(f->title), "cudaOccupancyMaxActiveBlocksPerMultiprocessor 2.0 ms"));
	assert_true(f->replayed);
	assert_int_equal(f->replay_ns, (5046 - 516) * 1000); /* a one-off: no per-step saving */
	assert_non_null(finding(&x, "sync-stall", NULL));
	done(&x);

	/* a first launch on the model's own thread begun 4 ms before the window and returning
	 * 2005 us into it: start-up is the part inside (the GPU idles 2005 us under it, the 5 us
	 * after it is launch latency), told as such, and the call is said to have begun before */
	diagnose_path(th_fixture("rules/warmup-clipped.json"), &x);
	check_invariants(&x, "warmup-clipped.json");
	assert_int_equal(idle_of(&x, CAUSE_WARMUP), 2005000);
	f = finding(&x, "warmup", NULL);
	assert_non_null(f);
	assert_int_equal(f->idle_ns, 2005000);
	assert_non_null(strstr(plain(f->title), "a first cudaLaunchKernel 2.0 ms (of 6.0 ms)"));
	assert_int_equal(f->evidence.len, 1);
	assert_non_null(strstr(TD_VEC_AT(&f->evidence, struct td_evidence, 0).text, "took 6.0 ms, "
			       "2.0 ms of it inside the window (GPU idle 2.0 ms meanwhile, in the "
			       "window)"));
	assert_true(f->replayed);
	assert_int_equal(f->replay_ns, 2005000);
	done(&x);

	/* 500 us and 200 us: slow, but not start-up (under 1 ms, under 50x the median launch) */
	diagnose_path(th_fixture("rules/warmup-nearmiss.json"), &x);
	check_invariants(&x, "warmup-nearmiss.json");
	assert_null(finding(&x, "warmup", NULL));
	assert_int_equal(idle_of(&x, CAUSE_WARMUP), 0);
	done(&x);

	/* a 40 ms first step, 4x the 10 ms median, is left out of the steady state */
	diagnose_path(th_fixture("rules/warmup-step.json"), &x);
	check_invariants(&x, "warmup-step.json");
	assert_int_equal(x.a.warm_steps, 1);
	assert_int_equal(x.a.warm_end - x.a.warm_start, 40000000);
	assert_int_equal(x.a.nsteps, 4);
	assert_int_equal(x.a.dev[0].win_start, 40000000);
	assert_int_equal(idle_of(&x, CAUSE_WARMUP), 0); /* its compile frame is outside */
	done(&x);

	/* 25 ms (2.5x) stays in; its compile frame [2000, 22000) holds the GPU from the end of
	 * the kernel at 5010 (the idle it claims), but without it the host's 4 ms after it move
	 * up too: the next kernel starts 20 ms sooner, at 6010 instead of 26010 */
	diagnose_path(th_fixture("rules/warmup-step-nearmiss.json"), &x);
	check_invariants(&x, "warmup-step-nearmiss.json");
	assert_int_equal(x.a.warm_steps, 0);
	assert_int_equal(x.a.nsteps, 5);
	f = finding(&x, "warmup", NULL);
	assert_non_null(f);
	assert_int_equal(f->idle_ns, 22000000 - 5010000);
	assert_true(f->replayed);
	assert_int_equal(f->replay_ns, 20000000);
	assert_non_null(strstr(f->fix, "TORCHINDUCTOR_CACHE_DIR"));
	done(&x);
}

static void test_communication(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	/* a training step whose groups say what they are (DeviceMesh: mesh_tp, mesh_dp): two
	 * exposed tensor-parallel all-reduces of 800 us a step, one data-parallel of 300 us; the
	 * tensor-parallel group waits most, so its fix is picked, not DDP's buckets */
	diagnose_path(th_fixture("rules/communication-tp.json"), &x);
	check_invariants(&x, "communication-tp.json");
	assert_int_equal(x.a.ctx.par, (1u << TD_PAR_TP) | (1u << TD_PAR_DP));
	f = finding(&x, "communication", NULL);
	assert_non_null(f);
	assert_true(where_has(f, "process group 1 (tensor parallel, 4 ranks): 1.6 ms exposed per step"));
	assert_true(where_has(f, "process group 2 (data parallel, 2 ranks)"));
	assert_non_null(strstr(f->fix, "tensor-parallel group"));
	assert_non_null(strstr(f->fix, "_micro_pipeline_tp"));
	assert_null(strstr(f->fix, "bucket_cap_mb"));
	done(&x);

	/* the same collectives served (vLLM, no backward) with no group description: tensor
	 * parallelism is inferred from all-reduce in a forward-only run, said as inferred, and
	 * picks the serving fix - no gradients, no buckets */
	diagnose_path(th_fixture("rules/communication-tp-inferred.json"), &x);
	check_invariants(&x, "communication-tp-inferred.json");
	assert_int_equal(x.a.ctx.run, TD_RUN_INFERENCE);
	assert_int_equal(x.a.ctx.par, 0);
	assert_int_equal(x.a.ctx.par_inferred, 1u << TD_PAR_TP);
	f = finding(&x, "communication", NULL);
	assert_non_null(f);
	assert_true(where_has(f, "tensor parallel, inferred from all-reduce in a run with no "
			      "backward"));
	assert_non_null(strstr(f->fix, "Tensor-parallel all-reduce in the forward pass"));
	assert_null(strstr(f->fix, "gradient"));
	done(&x);

	/* the training step again with no group description: the two all-reduces under the
	 * module's forward reduce activations - tensor parallel, inferred, and their group (1)
	 * waits most, so the tensor-parallel fix is picked; the gradient all-reduce under the
	 * autograd node stays the gradients' (its group 2 is not said to be tensor parallel) */
	diagnose_path(th_fixture("rules/communication-tp-train-inferred.json"), &x);
	check_invariants(&x, "communication-tp-train-inferred.json");
	assert_int_equal(x.a.ctx.run, TD_RUN_TRAINING);
	assert_int_equal(x.a.ctx.par, 0);
	assert_int_equal(x.a.ctx.par_inferred, 1u << TD_PAR_TP);
	assert_int_equal(x.a.ctx.fwd_ar, 6);
	assert_int_equal(x.a.ctx.bwd_ar, 3);
	assert_string_equal(td_trace_name(&x.t, x.a.ctx.tp_pg), "1");
	{
		int inferred;
		uint32_t dp = 0, i;
		for (i = 1; i <= x.t.names.count && !dp; i++)
			if (!strcmp(td_trace_name(&x.t, i), "2"))
				dp = i;
		assert_int_not_equal(dp, 0);
		assert_int_equal(td_par_of_group(&x.a.ctx, TD_PAR_UNKNOWN, TD_COLL_ALL_REDUCE, dp,
						 &inferred), TD_PAR_UNKNOWN);
	}
	f = finding(&x, "communication", NULL);
	assert_non_null(f);
	assert_true(where_has(f, "tensor parallel, inferred from all-reduce in the forward pass "
			      "of a training step"));
	assert_true(where_has(f, "process group 1 (tensor parallel (inferred), 4 ranks): 1.6 ms "
			      "exposed per step in 6 collectives"));
	assert_true(where_has(f, "process group 2 (2 ranks): 233.3 us exposed per step"));
	assert_non_null(strstr(f->fix, "tensor-parallel group"));
	assert_null(strstr(f->fix, "bucket_cap_mb"));
	done(&x);

	/* the same step as a mixture of experts on DeepEP (its dispatch and combine, no c10d
	 * args): the MoE token exchange is an all-to-all, expert parallel by inference - not the
	 * custom all-reduce of tensor parallelism; DeepEP runs, so it is not advised, and the
	 * where names the largest kernel's share, not the first kernel for all */
	diagnose_path(th_fixture("rules/communication-ep-deepep.json"), &x);
	check_invariants(&x, "communication-ep-deepep.json");
	assert_int_equal(x.a.ctx.engine, TD_ENGINE_VLLM);
	assert_true(x.a.ctx.on & TD_ON_DEEPEP);
	assert_false(x.a.ctx.on & TD_ON_CUSTOM_AR);
	assert_int_equal(x.a.ctx.coll[TD_COLL_CUSTOM], 0);
	assert_int_equal(x.a.ctx.coll[TD_COLL_ALL_TO_ALL], 2); /* kernel names */
	assert_int_equal(x.a.ctx.par_inferred, 1u << TD_PAR_EP);
	f = finding(&x, "communication", NULL);
	assert_non_null(f);
	assert_true(where_has(f, "expert parallel, inferred from all-to-all beside "
			      "mixture-of-experts kernels"));
	assert_true(where_has(f, "all-to-all: 1.8 ms exposed per step"));
	assert_true(where_has(f, "9 collective kernels, 5.7 ms in total, 62.5% of the window; "
			      "the largest share void deep_ep::internode_ll::dispatch<false, 8, "
			      "7168>(void*): 5 kernels, 3.0 ms"));
	assert_non_null(strstr(f->fix, "vLLM's expert-parallel all-to-all"));
	assert_non_null(strstr(f->fix, "--enable-eplb"));
	assert_null(strstr(f->fix, "Tensor-parallel"));
	assert_null(strstr(f->fix, "dispatch with DeepEP"));
	done(&x);

	/* per step: the all-reduce [T+1600, T+2600) under compute [T+100, T+2100): 500 us hidden,
	 * 500 exposed; the next kernel waits for it 100 us with the device idle. The host launches
	 * each step's work by T+75 and nothing until the next step at T+4000 (untraced host work,
	 * the GPU done at T+3700): the host holds the steps, so with the collective free neither
	 * ends sooner - the idle and the exposed time it claims are off the critical path, a note */
	diagnose_path(th_fixture("rules/communication.json"), &x);
	check_invariants(&x, "communication.json");
	assert_int_equal(idle_of(&x, CAUSE_COMM), 200000);
	f = finding(&x, "communication", NULL);
	assert_non_null(f);
	assert_int_equal(td_finding_get(f, "comm_ns"), 2000000);
	assert_int_equal(td_finding_get(f, "overlap_ns"), 1000000);
	assert_int_equal(td_finding_get(f, "exposed_ns"), 1000000);
	assert_int_equal(f->busy_ns, 1000000);
	assert_int_equal(f->idle_ns, 200000);
	assert_true(f->risk == 2 && f->bounded && f->bound_ns == 0 && f->savings_ns == 0);
	assert_int_equal(f->count, 2);
	/* 4 MB each in 1 ms: 4 GB/s */
	assert_int_equal(td_finding_get(f, "collective_bytes"), 8000000);
	assert_true(where_has(f, "median 4.00 GB/s"));
	assert_non_null(strstr(plain(f->title), "500.0 us per step exposed of 1.0 ms per step"));
	/* one all-reduce per step, each in its own process group: 500 us exposed in each */
	assert_int_equal(td_finding_get(f, "process_groups"), 2);
	assert_int_equal(td_finding_get(f, "exposed_top_group_ns"), 500000);
	assert_true(where_has(f, "process group 0 (2 ranks): 250.0 us exposed per step in 1 "
			      "collective"));
	assert_true(where_has(f, "process group 1 (8 ranks): 250.0 us exposed per step"));
	done(&x);

	diagnose_path(th_fixture("rules/communication-nearmiss.json"), &x); /* all hidden */
	check_invariants(&x, "communication-nearmiss.json");
	assert_null(finding(&x, "communication", NULL));
	assert_int_equal(idle_of(&x, CAUSE_COMM), 0);
	done(&x);
}

static void test_allocator(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/allocator.json"), &x); /* 296 us in cudaMalloc per step */
	check_invariants(&x, "allocator.json");
	f = finding(&x, "allocator", NULL);
	assert_non_null(f);
	assert_int_equal(f->savings_ns, 3 * 296000);
	assert_int_equal(f->count, 3);
	assert_true(where_has(f, "aten::empty: 3 calls"));
	assert_non_null(strstr(f->fix, "expandable_segments:True"));
	assert_non_null(strstr(f->fix, "empty_cache"));
	done(&x);

	/* 40 cudaMalloc + cudaFree in every one of 3 steps, each free between two launches: the
	 * cache is off (a pool emptied now and then frees in a burst) */
	diagnose_path(th_fixture("rules/allocator-no-caching.json"), &x);
	check_invariants(&x, "allocator-no-caching.json");
	f = finding(&x, "allocator", NULL);
	assert_non_null(f);
	assert_int_equal(f->count, 240);
	assert_int_equal(td_finding_get(f, "caching_off"), 1);
	assert_true(where_has(f, "40-40 device allocations a step"));
	assert_non_null(strstr(f->fix, "PYTORCH_NO_CUDA_MEMORY_CACHING=1"));
	assert_null(strstr(f->fix, "empty_cache"));
	done(&x);
	/* the same 40 a step, the frees in one burst at the step's end: a pool emptied */
	diagnose_path(th_fixture("rules/allocator-burst.json"), &x);
	check_invariants(&x, "allocator-burst.json");
	f = finding(&x, "allocator", NULL);
	assert_non_null(f);
	assert_int_equal(td_finding_get(f, "caching_off"), 0);
	assert_non_null(strstr(f->fix, "empty_cache"));
	done(&x);
	/* the 296 us allocations above are 1 a step: a pool emptied, not the cache off */
	diagnose_path(th_fixture("rules/allocator.json"), &x);
	assert_int_equal(td_finding_get(finding(&x, "allocator", NULL), "caching_off"), 0);
	done(&x);

	diagnose_path(th_fixture("rules/allocator-nearmiss.json"), &x); /* served by the cache */
	check_invariants(&x, "allocator-nearmiss.json");
	assert_null(finding(&x, "allocator", NULL));
	done(&x);
}

static void test_memory(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	/* 76 of 80 GB reserved; 256 MiB more allocated at each step boundary */
	diagnose_path(th_fixture("rules/memory.json"), &x);
	check_invariants(&x, "memory.json");
	f = finding(&x, "memory", "close to out of memory");
	assert_non_null(f);
	assert_true(f->risk);
	assert_int_equal(f->severity, SEV_MEDIUM); /* 95% */
	assert_int_equal(td_finding_get(f, "peak_reserved_bytes"), 76000000000ll);
	assert_int_equal(td_finding_get(f, "capacity_bytes"), 80000000000ll);
	/* the peak: step 4's allocation, 60 GB + 3 x 256 MiB + 12 GB, inside aten::linear */
	assert_int_equal(td_finding_get(f, "peak_allocated_bytes"),
			 60000000000ll + 3 * (256ll << 20) + 12000000000ll);
	assert_true(where_has(f, "aten::linear"));
	assert_true(where_has(f, "step 4"));
	assert_non_null(strstr(f->fix, "expandable_segments:True"));
	f = finding(&x, "memory", "grows every step");
	assert_non_null(f);
	assert_int_equal(td_finding_get(f, "growth_bytes_per_step"), 256ll << 20);
	assert_int_equal(td_finding_get(f, "growth_bytes"), 4 * (256ll << 20));
	assert_non_null(strstr(f->fix, "loss.item()"));
	assert_null(finding(&x, "memory", "fragmentation"));
	assert_true(x.r.findings.len >= 3);
	assert_false(nth(&x, 0)->risk); /* the time finding first */
	done(&x);

	diagnose_path(th_fixture("rules/memory-nearmiss.json"), &x); /* half full, nothing kept */
	check_invariants(&x, "memory-nearmiss.json");
	assert_null(finding(&x, "memory", NULL));
	done(&x);

	diagnose_path(th_fixture("rules/memory-fragmented.json"), &x); /* 64 GB for 42 GB */
	check_invariants(&x, "memory-fragmented.json");
	f = finding(&x, "memory", "fragmentation");
	assert_non_null(f);
	assert_int_equal(f->severity, SEV_LOW);
	assert_int_equal(td_finding_get(f, "reserved_bytes"), 64000000000ll);
	assert_int_equal(td_finding_get(f, "allocated_bytes"), 42000000000ll);
	assert_null(finding(&x, "memory", "close to out of memory")); /* 80% */
	assert_null(finding(&x, "memory", "grows"));
	done(&x);
}

static void test_gpu_bound(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	/* 900 of each 1000 us step computing on an sm_90 GPU, each step ending in a synchronize:
	 * the GPU holds the steps, and the change replayed wins what it removes */
	diagnose_path(th_fixture("rules/gpu-bound-sync.json"), &x);
	check_invariants(&x, "gpu-bound-sync.json");
	f = finding(&x, "gpu-bound", NULL);
	assert_non_null(f);
	assert_true(f->replayed && !f->risk);
	assert_int_equal(f->busy_ns, 3 * (300000 + 50000 + 50000));
	assert_int_equal(f->savings_ns, f->busy_ns);
	assert_int_equal(f->severity, SEV_MEDIUM); /* 40% of the window, graded at most medium */
	done(&x);

	/* the same steps paced by the host (untraced host time until the next step, no wait for
	 * the GPU): faster kernels leave the GPU waiting longer - a note off the critical path */
	diagnose_path(th_fixture("rules/gpu-bound.json"), &x);
	check_invariants(&x, "gpu-bound.json");
	f = finding(&x, "gpu-bound", NULL);
	assert_non_null(f);
	assert_true(f->risk == 2 && f->offpath && f->replayed && f->savings_ns == 0);
	assert_true(where_has(f, "the window does not shrink"));
	assert_non_null(strstr(f->fix, "Nothing to win here now: replayed with its fix"));
	assert_int_equal(td_finding_get(f, "compute_busy_ns"), 3 * 900000);
	assert_int_equal(td_finding_get(f, "fp32_matmul_ns"), 3 * 600000);
	assert_int_equal(td_finding_get(f, "layout_ns"), 3 * 50000);
	assert_int_equal(td_finding_get(f, "softmax_ns"), 3 * 100000);
	/* half the FP32 GEMM, all the transposes, half the softmax */
	assert_int_equal(f->busy_ns, 3 * (300000 + 50000 + 50000));
	assert_int_equal(f->idle_ns, 0);
	/* a bf16 GEMM runs beside the FP32 ones: reduced precision is on, not to be advised */
	assert_true(x.a.ctx.on & TD_ON_BF16);
	assert_non_null(strstr(f->fix, "outside the autocast region"));
	assert_null(strstr(f->fix, "torch.autocast"));
	assert_non_null(strstr(f->fix, "allow_tf32"));
	assert_non_null(strstr(f->fix, "channels_last"));
	assert_non_null(strstr(f->fix, "scaled_dot_product_attention"));
	assert_non_null(strstr(f->fix, "ncu --kernel-name regex:'ampere_sgemm_128x64_nn'"));
	assert_true(where_has(f, "FP32 matmul"));
	done(&x);

	diagnose_path(th_fixture("rules/gpu-bound-nearmiss.json"), &x); /* 720 of 1000 us */
	check_invariants(&x, "gpu-bound-nearmiss.json");
	assert_null(finding(&x, "gpu-bound", NULL));
	done(&x);
}

/* untraced-wait: a stream told to wait on an event at the trace's start holds the GPU idle
 * until 200000 (fixtures/rules/make.py): that idle is the finding's, not the blocking copy's;
 * the same wait in the middle of a run (queued.json, step 2) is not taken for one. */
static void test_untraced_wait(void **state)
{
	struct run x;
	const struct td_finding *f;

	(void)state;
	diagnose_path(th_fixture("rules/untraced-wait.json"), &x);
	check_invariants(&x, "untraced-wait.json");
	f = nth(&x, 0);
	assert_non_null(f);
	assert_string_equal(f->rule, "untraced-wait");
	assert_int_equal(td_finding_get(f, "untraced_wait_ns"), 199950000);
	assert_int_equal(f->idle_ns, 199950000); /* from the launch (45) to 200000, less 5 us of latency */
	assert_true(where_has(f, "cudaStreamWaitEvent"));
	assert_null(finding(&x, "transfer", NULL));
	done(&x);
	diagnose_path(th_fixture("rules/queued.json"), &x);
	assert_null(finding(&x, "untraced-wait", NULL));
	done(&x);
}

/* element-loop: per step a loop of 100 iterations (fixtures/rules/make.py): aten::select, then
 * aten::item waiting for a 4-byte copy, from T+705 to T+3696. The loop is the finding, sized by
 * removing it (one iteration's 29.9 us kept), and its waits are not sync-stall's; 40
 * iterations are fewer than a loop's 64: the waits stay sync-stall's. */
static void test_element_loop(void **state)
{
	struct run x;
	const struct td_finding *f;

	(void)state;
	diagnose_path(th_fixture("rules/element-loop.json"), &x);
	check_invariants(&x, "element-loop.json");
	f = nth(&x, 0);
	assert_non_null(f);
	assert_string_equal(f->rule, "element-loop");
	assert_int_equal(td_finding_get(f, "iterations"), 200);
	assert_int_equal(td_finding_get(f, "loops"), 2);
	assert_int_equal(td_finding_get(f, "syncs"), 200);
	assert_int_equal(f->host_ns, 2 * (2991000 - 29910));
	assert_true(f->replayed);
	/* the replay removes the loops: what they held, less the op kept, within 1% */
	assert_true(f->savings_ns >= f->host_ns * 99 / 100 && f->savings_ns <= 2 * 2991000);
	assert_true(where_has(f, "aten::select, aten::item"));
	assert_null(finding(&x, "sync-stall", NULL));
	done(&x);
	diagnose_path(th_fixture("rules/element-loop-nearmiss.json"), &x);
	check_invariants(&x, "element-loop-nearmiss.json");
	assert_null(finding(&x, "element-loop", NULL));
	assert_non_null(finding(&x, "sync-stall", NULL));
	done(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registry),
		cmocka_unit_test(test_claims),
		cmocka_unit_test(test_dataloader),
		cmocka_unit_test(test_sync_stall),
		cmocka_unit_test(test_transfer),
		cmocka_unit_test(test_small_kernels),
		cmocka_unit_test(test_graph_replay),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_communication),
		cmocka_unit_test(test_allocator),
		cmocka_unit_test(test_memory),
		cmocka_unit_test(test_gpu_bound),
		cmocka_unit_test(test_untraced_wait),
		cmocka_unit_test(test_element_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
