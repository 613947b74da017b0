/* SPDX-License-Identifier: MIT */
/* The rules on the GPU's own work: gpu-bound's roofline and fusion on a generated H100 trace,
 * and precision on its V100 fixtures (FP32 GEMMs replayed at tensor-core speed, and the same
 * GEMM on the tensor cores already, its near miss). */
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

/* precision (fixtures/rules/make.py): a V100 whose volta_sgemm takes 500 of each step's 700 us
 * of compute, the host waiting for the GPU; replayed at half its time (the lesser of the 8x
 * fp16-to-fp32 peak ratio and 2x) the wait ends 250 us sooner a step. The same GEMM as
 * volta_h884gemm runs on the tensor cores already: nothing to say. */
static void test_precision(void **state)
{
	struct run x;
	const struct td_finding *f;
	(void)state;

	diagnose_path(th_fixture("rules/precision.json"), &x);
	check_invariants(&x, "precision.json");
	f = finding(&x, "precision", NULL);
	assert_non_null(f);
	assert_int_equal(td_finding_get(f, "fp32_matmul_ns"), 3 * 500000);
	assert_int_equal(td_finding_get(f, "compute_busy_ns"), 3 * 700000);
	assert_int_equal(f->busy_ns, 3 * 250000);
	assert_true(f->replayed);
	assert_int_equal(f->savings_ns, 3 * 250000);
	assert_non_null(strstr(f->fix, "torch.float16")); /* Volta: fp16, not bf16 or TF32 */
	assert_non_null(strstr(f->fix, "GradScaler"));
	assert_null(strstr(f->fix, "bfloat16"));
	assert_true(where_has(f, "1/2.0 of its time"));
	done(&x);

	diagnose_path(th_fixture("rules/precision-nearmiss.json"), &x);
	check_invariants(&x, "precision-nearmiss.json");
	assert_null(finding(&x, "precision", NULL));
	done(&x);
}

/* a trace file at path (a mkstemp template) on an H100, open after "traceEvents": [ */
static FILE *h100_trace(char *path)
{
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("{\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA H100 80GB HBM3\","
	      "\"computeMajor\":9,\"computeMinor\":0,\"numSms\":132}],\"traceEvents\":[", f);
	return f;
}

/* gpu-bound with shapes on an H100: the ops that lose the most against their roof, each with
 * its bound, and what moves the first (its dims off the tensor cores' tiles), then the kernel
 * profiler; the figures recomputed here from the shapes and the datasheet's peaks */
static void test_gpu_bound_roofline(void **state)
{
	char path[] = "/tmp/td-roof-XXXXXX";
	int s;
	FILE *f = h100_trace(path);
	struct run x;
	const struct td_finding *fd_;
	double mm_flops = 2.0 * 4096 * 4100 * 4096, roof_us = mm_flops / 989.5e12 * 1e6;
	double add_roof_us = 3.0 * 4096 * 4096 * 4 / 3.35e12 * 1e6;
	char want[200];

	(void)state;
	for (s = 0; s < 4; s++) {
		int t0 = s * 1200;
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
			   "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1200},", s, t0);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,"
			   "\"tid\":1,\"ts\":%d,\"dur\":20,\"args\":{\"Input Dims\":[[4096, 4100], "
			   "[4100, 4096]],\"Input type\":[\"c10::BFloat16\", \"c10::BFloat16\"]}},"
			   "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
			   "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}},"
			   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"sm90_xmma_gemm_bf16\",\"pid\":0,"
			   "\"tid\":7,\"ts\":%d,\"dur\":1000,\"args\":{\"correlation\":%d,\"device\":0,"
			   "\"stream\":7}},", t0 + 10, t0 + 12, 2 * s + 1, t0 + 20, 2 * s + 1);
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::add_\",\"pid\":1,"
			   "\"tid\":1,\"ts\":%d,\"dur\":20,\"args\":{\"Input Dims\":[[4096, 4096], "
			   "[4096, 4096], []],\"Input type\":[\"float\", \"float\", \"Scalar\"]}},"
			   "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\","
			   "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":5,\"args\":{\"correlation\":%d}},"
			   "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"add_kernel\",\"pid\":0,"
			   "\"tid\":7,\"ts\":%d,\"dur\":150,\"args\":{\"correlation\":%d,\"device\":0,"
			   "\"stream\":7}}%s", t0 + 40, t0 + 42, 2 * s + 2, t0 + 1025, 2 * s + 2,
			s == 3 ? "" : ",");
	}
	fputs("]}", f);
	fclose(f);
	diagnose_path(path, &x);
	check_invariants(&x, "gpu-bound roofline");
	fd_ = finding(&x, "gpu-bound", NULL);
	assert_non_null(fd_);
	snprintf(want, sizeof(want), "aten::mm loses the most against its roof (%.0f%% of it)",
		 100 * roof_us / 1000);
	if (!strstr(plain(fd_->title), want))
		fail_msg("title: %s; want %s", plain(fd_->title), want);
	snprintf(want, sizeof(want), "aten::mm (bf16 gemm, compute-bound): 4.0 ms at %.0f%% of its "
		 "roof", 100 * roof_us / 1000);
	if (!where_has(fd_, want))
		fail_msg("no where line %s", want);
	assert_true(where_has(fd_, "4 of 4 calls with dims off the tensor cores' tiles"));
	snprintf(want, sizeof(want), "aten::add_ (fp32 elementwise, memory-bound): 600.0 us at "
		 "%.0f%% of its roof", 100 * add_roof_us / 150);
	if (!where_has(fd_, want))
		fail_msg("no where line %s", want);
	assert_non_null(strstr(plain(fd_->fix), "multiples of 8"));
	assert_non_null(strstr(plain(fd_->fix), "ncu --kernel-name regex:"));
	done(&x);
	unlink(path);
}

/* a memory-bound chain (add, gelu, mul over one 4096 x 4096 fp32 tensor) fused, sized by its
 * bytes: its intermediates (add's and gelu's outputs) neither written nor read again, the
 * rest moved at the bandwidth the chain achieved */
static void test_gpu_bound_fusion(void **state)
{
	char path[] = "/tmp/td-fuse-XXXXXX";
	int s, k;
	FILE *f = h100_trace(path);
	struct run x;
	const struct td_finding *fd_;
	static const char *const ops[3][3] = {
		{"aten::add", "[[4096, 4096], [4096, 4096], []]", "[\"float\", \"float\", \"Scalar\"]"},
		{"aten::gelu", "[[4096, 4096]]", "[\"float\"]"},
		{"aten::mul", "[[4096, 4096], [4096, 4096]]", "[\"float\", \"float\"]"}};
	double t = 4096.0 * 4096 * 4, bytes = 3 * t + 2 * t + 3 * t, fused = bytes - 2 * t - 2 * t;
	int64_t keep = (int64_t)(900000.0 * fused / bytes);

	(void)state;
	for (s = 0; s < 4; s++) {
		int t0 = s * 1000;
		fprintf(f, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#%d\","
			   "\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":1000},", s, t0);
		for (k = 0; k < 3; k++) {
			int c = 3 * s + k + 1;
			fprintf(f, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":1,"
				   "\"tid\":1,\"ts\":%d,\"dur\":8,\"args\":{\"Input Dims\":%s,"
				   "\"Input type\":%s}},{\"ph\":\"X\",\"cat\":\"cuda_runtime\","
				   "\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":%d,"
				   "\"dur\":4,\"args\":{\"correlation\":%d}},{\"ph\":\"X\",\"cat\":"
				   "\"kernel\",\"name\":\"k%d\",\"pid\":0,\"tid\":7,\"ts\":%d,\"dur\":300,"
				   "\"args\":{\"correlation\":%d,\"device\":0,\"stream\":7}}%s",
				ops[k][0], t0 + 10 + 20 * k, ops[k][1], ops[k][2], t0 + 12 + 20 * k, c, k,
				t0 + 20 + 302 * k, c, s == 3 && k == 2 ? "" : ",");
		}
	}
	fputs("]}", f);
	fclose(f);
	diagnose_path(path, &x);
	check_invariants(&x, "gpu-bound fusion");
	fd_ = finding(&x, "gpu-bound", NULL);
	assert_non_null(fd_);
	assert_int_equal(td_finding_get(fd_, "fused_chain_ns"), 4 * (900000 - keep));
	assert_true(where_has(fd_, "a memory-bound chain of 3 ops, aten::add to aten::mul: 900.0 us"));
	assert_true(where_has(fd_, "450.0 us back at the bandwidth it achieved"));
	assert_non_null(strstr(plain(fd_->fix), "fuse them with torch.compile(model)"));
	done(&x);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_bound_roofline),
		cmocka_unit_test(test_gpu_bound_fusion),
		cmocka_unit_test(test_precision),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
