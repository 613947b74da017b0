/* SPDX-License-Identifier: MIT */
/* The devices' roofs (config/peaks.c): the compiled table against docs/roofline.md's cited
 * table row by row, the names real traces give their devices found, the ROCm devices without
 * one found by gfx version and CUs, and the --peaks file's overlay and its errors. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config/peaks.h"
#include "analysis/roofline.h"

#define DOC TD_FIXTURES "/../docs/roofline.md"

/* the cells of a markdown table row "| a | b |", trimmed, in cells[] (at most max) */
static int cells_of(char *line, char **cells, int max)
{
	int n = 0;
	char *p = line, *bar;

	if (*p++ != '|')
		return 0;
	while (n < max && (bar = strchr(p, '|'))) {
		char *s = p, *e = bar;
		while (*s == ' ')
			s++;
		while (e > s && e[-1] == ' ')
			e--;
		*e = 0;
		cells[n++] = s;
		p = bar + 1;
	}
	return n;
}

static double figure(const char *s)
{
	return !strcmp(s, "\xe2\x80\x94") ? 0 : atof(s); /* "—": none */
}

static void test_doc_agrees(void **state)
{
	FILE *f = fopen(DOC, "r");
	char line[2048], *c[16];
	size_t i, rows = 0;
	int seen[64] = {0};

	(void)state;
	assert_non_null(f);
	assert_true(td_npeak_rows <= 64);
	while (fgets(line, sizeof(line), f)) {
		const struct td_peak_row *r = NULL;
		char names[256];
		int d;
		line[strcspn(line, "\n")] = 0;
		if (cells_of(line, c, 16) != 12 || !strcmp(c[0], "part") || !strncmp(c[0], "---", 3))
			continue;
		for (i = 0; i < td_npeak_rows && !r; i++)
			if (!strcmp(td_peak_rows[i].part, c[0])) {
				r = &td_peak_rows[i];
				seen[i]++;
			}
		if (!r)
			fail_msg("docs/roofline.md row %s: not in the compiled table", c[0]);
		/* the names: the doc's ", " for the table's "|" */
		snprintf(names, sizeof(names), "%s", r->match);
		for (i = 0; names[i]; i++)
			if (names[i] == '|')
				names[i] = ',';
		{
			char want[256];
			size_t k = 0;
			for (i = 0; c[1][i] && k + 1 < sizeof(want); i++)
				if (!(c[1][i] == ' ' && i && c[1][i - 1] == ','))
					want[k++] = c[1][i];
			want[k] = 0;
			if (strcmp(want, names))
				fail_msg("%s: names %s in the doc, %s compiled", c[0], want, names);
		}
		for (d = 0; d < TD_DT_COUNT; d++)
			if (fabs(figure(c[2 + d]) - r->tflops[d]) > 1e-9)
				fail_msg("%s %s: %s in the doc, %g compiled", c[0],
					 td_dtype_name((enum td_dtype)d), c[2 + d], r->tflops[d]);
		if (fabs(figure(c[9]) - r->tbps) > 1e-9)
			fail_msg("%s TB/s: %s in the doc, %g compiled", c[0], c[9], r->tbps);
		assert_true(!strcmp(c[10], "dense") || !strcmp(c[10], "sparse/2"));
		assert_non_null(strstr(c[11], "https://")); /* a cited source */
		rows++;
	}
	fclose(f);
	for (i = 0; i < td_npeak_rows; i++)
		if (seen[i] != 1)
			fail_msg("compiled row %s: %d rows in docs/roofline.md", td_peak_rows[i].part,
				 seen[i]);
	assert_int_equal(rows, td_npeak_rows);
}

static const char *part(const char *name, int maj, int min, int units, int64_t mem)
{
	const struct td_peak_row *r = td_peaks_find(name, maj, min, units, mem);
	return r ? r->part : "";
}

/* every name the shared traces' deviceProperties carry, and the datasheets' parts */
static void test_trace_names(void **state)
{
	(void)state;
	assert_string_equal(part("NVIDIA A100-PG509-200", 8, 0, 108, 0), "A100 SXM4 40GB");
	assert_string_equal(part("NVIDIA A100-SXM4-80GB", 8, 0, 108, 0), "A100 SXM4 80GB");
	assert_string_equal(part("NVIDIA A100 80GB PCIe", 8, 0, 108, 0), "A100 PCIe 80GB");
	assert_string_equal(part("NVIDIA B200", 10, 0, 148, 0), "B200");
	assert_string_equal(part("NVIDIA B300 SXM6 AC", 10, 3, 148, 0), "B300");
	assert_string_equal(part("NVIDIA GB10", 12, 1, 48, 0), "GB10");
	assert_string_equal(part("Tesla V100-SXM2-32GB", 7, 0, 80, 0), "Tesla V100 SXM2");
	assert_string_equal(part("Tesla V100-SXM2-16GB", 7, 0, 80, 0), "Tesla V100 SXM2");
	assert_string_equal(part("Tesla V100-DGXS-32GB", 7, 0, 80, 0), "Tesla V100 SXM2");
	assert_string_equal(part("Tesla V100-PCIE-16GB", 7, 0, 80, 0), "Tesla V100 PCIe");
	assert_string_equal(part("Tesla V100S-PCIE-32GB", 7, 0, 80, 0), "Tesla V100S PCIe");
	assert_string_equal(part("Quadro GP100", 6, 0, 56, 0), "Quadro GP100");
	assert_string_equal(part("NVIDIA GeForce RTX 2080 Ti", 7, 5, 68, 0), "GeForce RTX 2080 Ti");
	assert_string_equal(part("NVIDIA GeForce RTX 3080", 8, 6, 68, 0), "GeForce RTX 3080");
	assert_string_equal(part("NVIDIA GeForce RTX 3080 Ti", 8, 6, 80, 0), ""); /* not a 3080 */
	assert_string_equal(part("NVIDIA H100 80GB HBM3", 9, 0, 132, 0), "H100 SXM");
	assert_string_equal(part("NVIDIA H100 PCIe", 9, 0, 114, 0), "H100 PCIe");
	assert_string_equal(part("NVIDIA H100 NVL", 9, 0, 132, 0), "H100 NVL");
	assert_string_equal(part("NVIDIA H200", 9, 0, 132, 0), "H200 SXM");
	assert_string_equal(part("NVIDIA H200 NVL", 9, 0, 132, 0), "H200 NVL");
	assert_string_equal(part("Tesla T4", 7, 5, 40, 0), "Tesla T4");
	assert_string_equal(part("NVIDIA RTX 5000 Ada Generation", 8, 9, 100, 0), "RTX 5000 Ada");
	assert_string_equal(part("AMD Instinct MI300X", 9, 4, 304, 0), "AMD Instinct MI300X");
	assert_string_equal(part("AMD Instinct MI325X", 9, 4, 304, 0), "AMD Instinct MI325X");
	assert_string_equal(part("AMD Instinct MI210", 9, 0, 104, 0), "AMD Instinct MI210");
	assert_string_equal(part("AMD Instinct MI250X", 9, 0, 110, 0),
			    "AMD Instinct MI250X (one GCD)");
	assert_string_equal(part("AMD Instinct MI250X / MI250", 9, 0, 110, 0),
			    "AMD Instinct MI250X (one GCD)");
	assert_string_equal(part("AMD Instinct MI355X", 9, 5, 256, 0), "AMD Instinct MI355X");
	/* ROCm without a name: gfx version, CUs, memory */
	assert_string_equal(part("", 9, 4, 304, 206141652992LL), "AMD Instinct MI300X");
	assert_string_equal(part(NULL, 9, 4, 304, 274877906944LL), "AMD Instinct MI325X");
	assert_string_equal(part("AMD Radeon Graphics", 9, 0, 104, 68702699520LL),
			    "AMD Instinct MI210");
	assert_string_equal(part("AMD Radeon Graphics", 9, 0, 110, 0),
			    "AMD Instinct MI250X (one GCD)");
	assert_string_equal(part("", 9, 5, 256, 0), "AMD Instinct MI355X");
	/* unknown: an NVIDIA part the table lacks gets nothing, not a guess by cc */
	assert_string_equal(part("NVIDIA GeForce GTX 1080", 6, 1, 20, 0), "");
	assert_string_equal(part("", 8, 0, 108, 0), "");
}

static void test_file(void **state)
{
	struct td_peaks p;
	struct td_error err;

	(void)state;
	td_peaks_from_row(td_peaks_find("NVIDIA H200", 9, 0, 132, 0), &p);
	assert_string_equal(p.device, "H200 SXM");
	assert_true(fabs(p.tflops[TD_DT_BF16] - 989.5) < 1e-9 && fabs(p.tbps - 4.8) < 1e-9);
	memset(&err, 0, sizeof(err));
	assert_int_equal(td_peaks_parse("{\"device\": \"capped\", \"tbps\": 4,"
					" \"tflops\": {\"bf16\": 800}}", &p, &err), 0);
	assert_string_equal(p.device, "capped");
	assert_true(fabs(p.tflops[TD_DT_BF16] - 800) < 1e-9);
	assert_true(fabs(p.tflops[TD_DT_FP8] - 1979) < 1e-9); /* the table's, kept */
	assert_true(fabs(p.tbps - 4) < 1e-9 && p.from_file);
	/* errors name the key; out untouched */
	assert_int_equal(td_peaks_parse("{\"tflops\": {\"int8\": 5}}", &p, &err), TD_EINVAL);
	assert_non_null(strstr(err.msg, "tflops.int8"));
	assert_int_equal(td_peaks_parse("{\"tbps\": -1}", &p, &err), TD_EINVAL);
	assert_int_equal(td_peaks_parse("{\"tbps\": 1e-300}", &p, &err), TD_EINVAL);
	assert_non_null(strstr(err.msg, "tbps"));
	assert_int_equal(td_peaks_parse("{\"tbps\": \"3\"}", &p, &err), TD_EINVAL);
	assert_int_equal(td_peaks_parse("{\"roof\": 3}", &p, &err), TD_EINVAL);
	assert_non_null(strstr(err.msg, "roof"));
	assert_int_equal(td_peaks_parse("[1]", &p, &err), TD_EINVAL);
	assert_int_equal(td_peaks_parse("{", &p, &err), TD_EINVAL);
	assert_int_equal(td_peaks_parse("{\"tflops\": 5}", &p, &err), TD_EINVAL);
	assert_true(fabs(p.tbps - 4) < 1e-9 && fabs(p.tflops[TD_DT_BF16] - 800) < 1e-9);
	assert_int_equal(td_dtype_of("tf32"), TD_DT_TF32);
	assert_int_equal(td_dtype_of("int8"), -1);
}

/* the cost model (analysis/roofline.h) against torch.utils.flop_counter's formulas and the
 * bytes worked out by hand */
static void test_op_cost(void **state)
{
	struct td_op_cost c;
	struct td_roof r;
	struct td_peaks pk;
	static const char bf4[] = "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
				  "\"c10::BFloat16\", \"c10::BFloat16\", \"float\"]";

	(void)state;
	/* sdpa forward: 4 b h s_q s_kv d; q, k, v and the output */
	assert_true(td_op_cost("aten::_scaled_dot_product_flash_attention",
			       "[[2, 8, 128, 64], [2, 8, 256, 64], [2, 8, 256, 64], [], []]",
			       "[\"c10::BFloat16\", \"c10::BFloat16\", \"c10::BFloat16\", "
			       "\"Scalar\", \"Scalar\"]", NULL, &c));
	assert_int_equal(c.flops, 4LL * 2 * 8 * 128 * 256 * 64);
	assert_int_equal(c.bytes, 2LL * (2 * 8 * 128 * 64 * 2 + 2 * 8 * 256 * 64 * 2));
	assert_int_equal(c.cls, TD_OPC_ATTENTION);
	assert_int_equal(c.dtype, TD_DT_BF16);
	/* backward: 2 b h s_q s_kv (3 d + 2 d_v) (flop_counter's five bmms) */
	assert_true(td_op_cost("aten::_scaled_dot_product_flash_attention_backward",
			       "[[2, 8, 128, 64], [2, 8, 128, 64], [2, 8, 256, 64], [2, 8, 256, 64], "
			       "[2, 8, 128, 64], [2, 8, 128]]", bf4, NULL, &c));
	assert_int_equal(c.flops, 2LL * 2 * 8 * 128 * 256 * (3 * 64 + 2 * 64));
	/* convolution_backward: grad_input only (mask [True, False, False]): one forward */
	assert_true(td_op_cost("aten::convolution_backward",
			       "[[4, 16, 8, 8], [4, 8, 8, 8], [16, 8, 3, 3], [], [], [], [], [], [], [], []]",
			       "[\"float\", \"float\", \"float\"]",
			       "[\"\", \"\", \"\", \"[0]\", \"[1, 1]\", \"[1, 1]\", \"[1, 1]\", "
			       "\"False\", \"[0, 0]\", \"1\", \"[True, False, False]\"]", &c));
	assert_int_equal(c.flops, 2LL * 4 * 16 * 8 * 3 * 3 * 8 * 8);
	assert_int_equal(c.bytes, 4LL * (4 * 16 * 64 + 4 * 8 * 64 + 16 * 8 * 9) + 4 * (4 * 8 * 64));
	/* conv2d, stride 2 padding 1: the output 4 x 4 */
	assert_true(td_op_cost("aten::conv2d", "[[1, 8, 8, 8], [16, 8, 3, 3], [], [], [], [], []]",
			       "[\"float\", \"float\"]",
			       "[\"\", \"\", \"\", \"[2, 2]\", \"[1, 1]\", \"[1, 1]\", \"1\"]", &c));
	assert_int_equal(c.flops, 2LL * 16 * 8 * 9 * 16);
	/* in place: inputs once, input 0 written back; the Scalar is no tensor */
	assert_true(td_op_cost("aten::add_", "[[4, 4], [4, 4], []]",
			       "[\"float\", \"float\", \"Scalar\"]", NULL, &c));
	assert_int_equal(c.flops, 16);
	assert_int_equal(c.bytes, 3 * 64);
	/* a copy: source and destination at their dtypes; a broadcast add writes the broadcast */
	assert_true(td_op_cost("aten::copy_", "[[4, 4], [4, 4], []]",
			       "[\"c10::BFloat16\", \"float\", \"Scalar\"]", NULL, &c));
	assert_int_equal(c.flops, 0);
	assert_int_equal(c.bytes, 32 + 64);
	assert_true(td_op_cost("aten::mul", "[[4, 1], [1, 8]]", "[\"float\", \"float\"]", NULL,
			       &c));
	assert_int_equal(c.bytes, 16 + 32 + 128);
	/* linear: rows x k x n; 7 rows do not fill a tile */
	assert_true(td_op_cost("aten::linear", "[[7, 4096], [1024, 4096], [1024]]", bf4, NULL, &c));
	assert_int_equal(c.flops, 2LL * 7 * 4096 * 1024);
	assert_int_equal(c.align, 1);
	assert_true(td_op_cost("aten::matmul", "[[2, 64, 128], [128, 256]]", bf4, NULL, &c));
	assert_int_equal(c.flops, 2LL * 2 * 64 * 128 * 256);
	assert_int_equal(c.align, 64);
	/* no model, mismatched shapes, not shapes */
	assert_false(td_op_cost("aten::einsum", "[[], [2, 3]]", bf4, NULL, &c));
	assert_false(td_op_cost("aten::mm", "[[4, 5], [6, 7]]", bf4, NULL, &c));
	assert_false(td_op_cost("aten::mm", "nonsense", bf4, NULL, &c));
	assert_false(td_op_cost("aten::conv2d", "[[1, 8, 8, 8], [16, 8, 3, 3]]", bf4, NULL, &c));
	/* the roof: an A100's bf16 GEMM at half its peak; a copy against the bandwidth */
	td_peaks_from_row(td_peaks_find("NVIDIA A100-SXM4-80GB", 8, 0, 108, 0), &pk);
	td_roof_eval(&pk, TD_DT_BF16, 312000000000LL, 1000000, 2000000, &r); /* 312 GFLOP, 2 ms */
	assert_int_equal(r.bound, TD_BOUND_COMPUTE);
	assert_true(fabs(r.tflops - 156) < 1e-9 && fabs(r.pct - 0.5) < 1e-9);
	assert_int_equal(r.roof_ns, 1000000);
	td_roof_eval(&pk, TD_DT_FP32, 0, 2039000000LL, 2000000, &r); /* 2.039 GB in 2 ms */
	assert_int_equal(r.bound, TD_BOUND_MEMORY);
	assert_true(fabs(r.tbps - 1.0195) < 1e-9 && fabs(r.pct - 0.5) < 1e-9);
	/* bf16 on a part without it runs at fp16 (V100), an unknown dtype at fp32 */
	td_peaks_from_row(td_peaks_find("Tesla V100-SXM2-16GB", 7, 0, 80, 0), &pk);
	td_roof_eval(&pk, TD_DT_BF16, 125000000000LL, 1, 1000000, &r);
	assert_true(fabs(r.peak_tflops - 125) < 1e-9 && fabs(r.pct - 1) < 1e-9);
	td_roof_eval(&pk, -1, 15700000000LL, 1, 1000000, &r);
	assert_true(fabs(r.peak_tflops - 15.7) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_agrees),
		cmocka_unit_test(test_trace_names),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_op_cost),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
