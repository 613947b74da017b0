/* SPDX-License-Identifier: MIT */
/* The idle accounting and the rules: exact values on the rule fixtures (worked out in
 * fixtures/rules/make.py), near misses that must stay silent, invariants on every fixture and
 * real trace, and the acceptance checks on the real traces named in the diagnose issue. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parser/load.h"
#include "rules/rule.h"
#include "tests/helpers.h"

struct run {
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
};

static void diagnose_path(const char *path, struct run *x)
{
	struct td_error err;

	td_trace_init(&x->t);
	if (td_trace_load(path, NULL, &x->t, &err) != 0)
		fail_msg("%s: %s", path, err.msg);
	td_analysis_run(&x->a, &x->t, NULL);
	td_diagnose(&x->a, &x->r);
}

static void done(struct run *x)
{
	td_report_free(&x->r);
	td_analysis_free(&x->a);
	td_trace_free(&x->t);
}

static const struct td_finding *finding(const struct run *x, const char *rule, const char *in_title)
{
	size_t i;
	for (i = 0; i < x->r.findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&x->r.findings, struct td_finding, i);
		if (!strcmp(f->rule, rule) && (!in_title || strstr(f->title, in_title)))
			return f;
	}
	return NULL;
}

static const struct td_finding *nth(const struct run *x, size_t i)
{
	return i < x->r.findings.len ? &TD_VEC_AT(&x->r.findings, struct td_finding, i) : NULL;
}

static int where_has(const struct td_finding *f, const char *s)
{
	size_t i;
	for (i = 0; i < f->where.len; i++)
		if (strstr(TD_VEC_AT(&f->where, char *, i), s))
			return 1;
	return 0;
}

static int64_t idle_of(const struct run *x, enum td_cause c)
{
	return x->a.ndev ? x->a.dev[0].idle_by_cause[c] : 0;
}

/* Causes sum exactly to the idle total, busy + idle is the window, findings are ordered. */
static void check_invariants(const struct run *x, const char *what)
{
	size_t d, i;

	for (d = 0; d < x->a.ndev; d++) {
		const struct td_dev_analysis *dv = &x->a.dev[d];
		int64_t sum = 0, items = 0, gaps = 0;
		int c;
		for (c = 0; c < CAUSE_COUNT; c++)
			sum += dv->idle_by_cause[c];
		for (i = 0; i < dv->idle.len; i++)
			items += TD_VEC_AT(&dv->idle, struct td_idle_item, i).ns;
		for (i = 0; i < dv->ngaps; i++)
			gaps += dv->gaps[i].end - dv->gaps[i].start;
		if (sum != dv->idle_ns || items != dv->idle_ns || gaps != dv->idle_ns ||
		    dv->busy_ns + dv->idle_ns != dv->win_end - dv->win_start)
			fail_msg("%s GPU %d: idle %lld, by cause %lld, items %lld, gaps %lld, busy %lld, "
				 "window %lld", what, dv->device, (long long)dv->idle_ns, (long long)sum,
				 (long long)items, (long long)gaps, (long long)dv->busy_ns,
				 (long long)(dv->win_end - dv->win_start));
	}
	for (i = 1; i < x->r.findings.len; i++)
		assert_true(nth(x, i - 1)->savings_ns >= nth(x, i)->savings_ns);
	for (i = 0; i < x->r.findings.len; i++) {
		const struct td_finding *f = nth(x, i);
		assert_true(f->savings_ns >= 0);
		assert_true(f->severity == (f->savings_fraction >= 0.10 ? SEV_HIGH
			    : f->savings_fraction >= 0.03 ? SEV_MEDIUM
			    : f->savings_fraction >= 0.01 ? SEV_LOW : SEV_INFO));
		assert_non_null(f->title);
		assert_non_null(f->fix);
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
	assert_int_equal(f->savings_ns, 1600000);
	assert_int_equal(f->severity, SEV_HIGH);
	assert_int_equal(f->count, 4);
	assert_non_null(strstr(f->title, "40% of each step"));
	assert_non_null(strstr(f->fix, "num_workers"));
	f = finding(&x, "gpu-idle", NULL);
	assert_non_null(f);
	assert_int_equal(f->savings_ns, 160000);
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
	assert_int_equal(f->count, 6);            /* copy + synchronize, 3 steps */
	assert_int_equal(f->savings_ns, 330000);  /* idle from 602 us until the next launch at 712 */
	assert_int_equal(f->severity, SEV_HIGH);
	assert_true(where_has(f, "aten::item: 6 calls"));
	assert_non_null(strstr(f->fix, ".item()"));
	/* the cudaDeviceSynchronize after the last step is not a stall */
	for (i = 0; i < f->evidence.len; i++)
		assert_null(strstr(TD_VEC_AT(&f->evidence, struct td_evidence, i).text,
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
	assert_int_equal(f->count, 4);
	assert_int_equal(f->severity, SEV_HIGH);
	assert_true(where_has(f, "HtoD pageable -> device: 4 copies, 200.0 MB"));
	assert_non_null(strstr(f->fix, "pin_memory=True"));
	assert_non_null(strstr(f->fix, "non_blocking=True"));
	f = finding(&x, "transfer", "created on the CPU");
	assert_non_null(f);
	assert_int_equal(f->count, 2);
	assert_non_null(strstr(f->fix, "device=\"cuda\""));
	done(&x);

	diagnose_path(th_fixture("rules/transfer-nearmiss.json"), &x); /* pinned, made on device */
	check_invariants(&x, "transfer-nearmiss.json");
	assert_null(finding(&x, "transfer", NULL));
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
	assert_int_equal(f->savings_ns, 59 * 7000); /* 7 us between each of 60 kernels */
	assert_true(where_has(f, "per-parameter optimizer loop"));
	assert_non_null(strstr(f->fix, "fused=True"));
	/* gpu-idle does not count the same gaps again */
	assert_int_equal(finding(&x, "gpu-idle", NULL)->savings_ns, x.a.dev[0].idle_ns - 59 * 7000);
	done(&x);

	diagnose_path(th_fixture("rules/small-kernels-nearmiss.json"), &x); /* 50 us kernels */
	check_invariants(&x, "small-kernels-nearmiss.json");
	assert_null(finding(&x, "small-kernels", NULL));
	/* its kernels were queued long before they ran: the host is ahead, not CPU-bound (217 us
	 * of queued gaps; the first kernels, queued under 100 us before, add 19 us of latency) */
	assert_int_equal(td_an_idle_of(&x.a, 0, CAUSE_LAUNCH,
				       td_strtab_find(&x.a.labels, TD_LABEL_QUEUED_GAP,
						      sizeof(TD_LABEL_QUEUED_GAP) - 1)), 217000);
	assert_int_equal(x.a.dev[0].idle_by_cause[CAUSE_LAUNCH], 236000);
	assert_non_null(strstr(finding(&x, "gpu-idle", NULL)->fix, "The host is ahead"));
	done(&x);
}

static void test_no_gpu_and_mini(void **state)
{
	struct run x;
	(void)state;

	diagnose_path(th_fixture("rules/no-gpu.json"), &x);
	assert_int_equal(x.a.ndev, 0);
	assert_int_equal(x.r.findings.len, 0);
	done(&x);
	diagnose_path(th_fixture("mini-kineto.json"), &x);
	check_invariants(&x, "mini-kineto.json");
	done(&x);
	diagnose_path(th_fixture("legacy-autograd.json"), &x);
	check_invariants(&x, "legacy-autograd.json");
	done(&x);
}

static int real(const char *name, struct run *x)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", TD_SHARED_TRACES, name);
	diagnose_path(path, x);
	check_invariants(x, name);
	return 1;
}

static void test_real_acceptance(void **state)
{
	struct run x;
	const struct td_finding *f;
	size_t i;
	(void)state;

	if (!th_have_shared()) {
		fprintf(stderr, "SKIPPED: %s not found; real-trace checks need ../shared\n",
			TD_SHARED_TRACES);
		skip();
	}
	/* resnet50-nw0: the DataLoader first, sized by the idle it causes, fix names num_workers */
	real("resnet50-nw0.pt.trace.json.gz", &x);
	f = nth(&x, 0);
	assert_string_equal(f->rule, "dataloader");
	assert_true(f->savings_fraction > 0.2 && f->savings_fraction < 0.45);
	assert_non_null(strstr(f->fix, "num_workers"));
	done(&x);
	/* resnet50-nw4: no dataloader finding at medium or above */
	real("resnet50-nw4.pt.trace.json.gz", &x);
	f = finding(&x, "dataloader", NULL);
	assert_true(!f || f->severity < SEV_MEDIUM);
	done(&x);
	/* resnet-2080ti: dataloader and pageable uploads both high */
	real("resnet-2080ti.json.gz", &x);
	assert_int_equal(finding(&x, "dataloader", NULL)->severity, SEV_HIGH);
	assert_non_null(finding(&x, "transfer", "pageable"));
	assert_int_equal(finding(&x, "transfer", "pageable")->severity, SEV_HIGH);
	done(&x);
	/* dlrm-v100-rank1: sync-stall names aten::item and the blocking copies to the host */
	real("dlrm-v100-rank1.json.gz", &x);
	f = finding(&x, "sync-stall", NULL);
	assert_non_null(f);
	assert_true(where_has(f, "aten::item"));
	assert_true(where_has(f, "aten::copy_"));
	done(&x);
	/* v100-ns: GPU-bound, nothing high, the final cudaDeviceSynchronize is not a stall */
	real("v100-ns-rank0.pt.trace.json.gz", &x);
	assert_true((double)x.a.dev[0].busy_ns >=
		    0.95 * (double)(x.a.dev[0].win_end - x.a.dev[0].win_start));
	for (i = 0; i < x.r.findings.len; i++)
		assert_true(nth(&x, i)->severity < SEV_HIGH);
	assert_null(finding(&x, "sync-stall", NULL));
	done(&x);
	/* b200 eager decode: idle dominates, from host launch / Python; gpu-idle or small-kernels
	 * first */
	real("b200-eager-decode.json.gz", &x);
	assert_true(x.a.dev[0].idle_ns > x.a.dev[0].busy_ns);
	assert_true(idle_of(&x, CAUSE_HOST) + idle_of(&x, CAUSE_LAUNCH) > 8 * x.a.dev[0].idle_ns / 10);
	assert_true(!strcmp(nth(&x, 0)->rule, "gpu-idle") || !strcmp(nth(&x, 0)->rule, "small-kernels"));
	done(&x);
}

/* Invariants on every real trace (multi-device, ROCm, GPU-only, CPU-only, legacy). */
static void test_real_invariants(void **state)
{
	DIR *dp;
	struct dirent *de;
	int n = 0;
	(void)state;

	if (!th_have_shared())
		skip();
	dp = opendir(TD_SHARED_TRACES);
	assert_non_null(dp);
	while ((de = readdir(dp)) != NULL) {
		struct run x;
		if (!strstr(de->d_name, ".json"))
			continue;
		real(de->d_name, &x);
		done(&x);
		n++;
	}
	closedir(dp);
	assert_true(n >= 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dataloader),
		cmocka_unit_test(test_sync_stall),
		cmocka_unit_test(test_transfer),
		cmocka_unit_test(test_small_kernels),
		cmocka_unit_test(test_no_gpu_and_mini),
		cmocka_unit_test(test_real_acceptance),
		cmocka_unit_test(test_real_invariants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
