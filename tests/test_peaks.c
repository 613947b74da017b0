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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_doc_agrees),
		cmocka_unit_test(test_trace_names),
		cmocka_unit_test(test_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
