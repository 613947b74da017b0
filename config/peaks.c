/* SPDX-License-Identifier: MIT */
#include "config/peaks.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <yajl/yajl_tree.h>

/* Dense TFLOP/s: fp64, fp32, tf32, bf16, fp16, fp8, fp4; TB/s. docs/roofline.md cites each
 * row's datasheet (tests/test_peaks.c checks the two agree). The more specific names first. */
const struct td_peak_row td_peak_rows[] = {
	/* NVIDIA */
	{"Tesla V100S PCIe", "V100S", {8.2, 16.4, 0, 0, 130, 0, 0}, 1.134},
	{"Tesla V100 PCIe", "V100-PCIE|V100 PCIe", {7, 14, 0, 0, 112, 0, 0}, 0.9},
	{"Tesla V100 SXM2", "V100-SXM2|V100 SXM2|V100-DGXS|V100", {7.8, 15.7, 0, 0, 125, 0, 0}, 0.9},
	{"Tesla T4", "Tesla T4|NVIDIA T4$", {0, 8.1, 0, 0, 65, 0, 0}, 0.32},
	{"Quadro GP100", "GP100", {5.2, 10.3, 0, 0, 20.7, 0, 0}, 0.717},
	{"GeForce RTX 2080 Ti", "RTX 2080 Ti", {0, 13.4, 0, 0, 53.8, 0, 0}, 0.616},
	{"GeForce RTX 3070 Ti", "RTX 3070 Ti", {0, 21.7, 21.7, 43.5, 43.5, 0, 0}, 0.608},
	{"GeForce RTX 3080", "RTX 3080$", {0, 29.8, 29.8, 59.5, 59.5, 0, 0}, 0.76},
	{"GeForce RTX 3090", "RTX 3090$", {0, 35.6, 35.6, 71, 71, 0, 0}, 0.936},
	{"GeForce RTX 4070 Ti", "RTX 4070 Ti$", {0, 40.1, 40.1, 80.2, 80.2, 320.7, 0}, 0.504},
	{"RTX 5000 Ada", "RTX 5000 Ada Generation$", {0, 65.3, 130.6, 261.1, 261.1, 522.2, 0}, 0.576},
	{"A100 SXM4 80GB", "A100-SXM4-80GB|A100-SXM-80GB|A100 SXM4 80GB",
	 {19.5, 19.5, 156, 312, 312, 0, 0}, 2.039},
	{"A100 PCIe 80GB", "A100 80GB PCIe|A100-PCIE-80GB", {19.5, 19.5, 156, 312, 312, 0, 0}, 1.935},
	{"A100 PCIe 40GB", "A100-PCIE-40GB|A100 PCIe 40GB", {19.5, 19.5, 156, 312, 312, 0, 0}, 1.555},
	{"A100 SXM4 40GB", "A100-SXM4-40GB|A100-PG509-200|A100-SXM-40GB|A100",
	 {19.5, 19.5, 156, 312, 312, 0, 0}, 1.555},
	{"H100 PCIe", "H100 PCIe", {51, 51, 378, 756, 756, 1513, 0}, 2.0},
	{"H100 NVL", "H100 NVL", {60, 60, 417.5, 835.5, 835.5, 1670.5, 0}, 3.9},
	{"H100 SXM", "H100", {67, 67, 494.5, 989.5, 989.5, 1979, 0}, 3.35},
	{"H200 NVL", "H200 NVL", {60, 60, 417.5, 835.5, 835.5, 1670.5, 0}, 4.8},
	{"H200 SXM", "H200", {67, 67, 494.5, 989.5, 989.5, 1979, 0}, 4.8},
	{"B300", "B300", {1.25, 75, 1125, 2250, 2250, 4500, 13500}, 8.0},
	{"B200", "B200", {37, 75, 1125, 2250, 2250, 4500, 9000}, 8.0},
	{"GB10", "GB10", {0, 31, 0, 125, 125, 250, 500}, 0.273},
	/* AMD; an MI250X / MI250 row is one of its two dies */
	{"AMD Instinct MI210", "MI210", {45.3, 45.3, 0, 181, 181, 0, 0}, 1.6384},
	{"AMD Instinct MI250X (one GCD)", "MI250X", {47.85, 47.85, 0, 191.5, 191.5, 0, 0}, 1.6384},
	{"AMD Instinct MI250 (one GCD)", "MI250", {45.25, 45.25, 0, 181.05, 181.05, 0, 0}, 1.6384},
	{"AMD Instinct MI300X", "MI300X", {163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 0}, 5.3},
	{"AMD Instinct MI325X", "MI325X", {163.4, 163.4, 653.7, 1307.4, 1307.4, 2614.9, 0}, 6.0},
	{"AMD Instinct MI355X", "MI355X", {78.6, 157.3, 0, 2516.6, 2516.6, 5033.2, 10066.3}, 8.0},
};
const size_t td_npeak_rows = sizeof(td_peak_rows) / sizeof(td_peak_rows[0]);

static const char *const dtype_names[TD_DT_COUNT] = {"fp64", "fp32", "tf32", "bf16", "fp16",
						     "fp8", "fp4"};

const char *td_dtype_name(enum td_dtype d)
{
	return (unsigned)d < TD_DT_COUNT ? dtype_names[d] : "";
}

int td_dtype_of(const char *name)
{
	int i;

	for (i = 0; name && i < TD_DT_COUNT; i++)
		if (!strcmp(name, dtype_names[i]))
			return i;
	return -1;
}

/* whether name holds one of match's '|'-separated parts (a '$' one at its end) */
static int matches(const char *name, const char *match)
{
	size_t nlen = strlen(name);

	while (*match) {
		const char *end = strchr(match, '|');
		size_t len = end ? (size_t)(end - match) : strlen(match), i, k;
		int anchored = len && match[len - 1] == '$';
		if (anchored)
			len--;
		for (i = 0; len && i + len <= nlen; i++) {
			if (anchored && i + len != nlen)
				continue;
			for (k = 0; k < len && tolower((unsigned char)name[i + k]) ==
						 tolower((unsigned char)match[k]); k++)
				;
			if (k == len)
				return 1;
		}
		if (!end)
			break;
		match = end + 1;
	}
	return 0;
}

static const struct td_peak_row *by_part(const char *part)
{
	size_t i;

	for (i = 0; i < td_npeak_rows; i++)
		if (!strcmp(td_peak_rows[i].part, part))
			return &td_peak_rows[i];
	return NULL;
}

const struct td_peak_row *td_peaks_find(const char *name, int cc_major, int cc_minor,
					int units, int64_t total_mem)
{
	size_t i;

	for (i = 0; name && *name && i < td_npeak_rows; i++)
		if (matches(name, td_peak_rows[i].match))
			return &td_peak_rows[i];
	/* ROCm writes the gfx version as the compute capability; a name that says nothing
	 * ("", "AMD Radeon Graphics") leaves the version, the CUs and the memory */
	if (name && *name && !matches(name, "AMD|Radeon"))
		return NULL;
	if (cc_major == 9 && cc_minor == 4 && units == 304) /* gfx942: 192 GB or 256 GB */
		return by_part(total_mem > 220000000000LL ? "AMD Instinct MI325X"
						       : "AMD Instinct MI300X");
	if (cc_major == 9 && cc_minor == 5 && units == 256) /* gfx950 */
		return by_part("AMD Instinct MI355X");
	if (cc_major == 9 && cc_minor == 0 && units == 110) /* gfx90a: a die of an MI250X */
		return by_part("AMD Instinct MI250X (one GCD)");
	if (cc_major == 9 && cc_minor == 0 && units == 104) /* an MI210, or a die of an MI250 */
		return by_part("AMD Instinct MI210");
	return NULL;
}

void td_peaks_from_row(const struct td_peak_row *row, struct td_peaks *out)
{
	memset(out, 0, sizeof(*out));
	if (!row)
		return;
	snprintf(out->device, sizeof(out->device), "%s", row->part);
	memcpy(out->tflops, row->tflops, sizeof(out->tflops));
	out->tbps = row->tbps;
}

/* 0 (none), or from 0.001 to 1e7: a figure no roof's arithmetic can overflow */
static int figure(yajl_val v, const char *path, double *out, struct td_error *err)
{
	double x = YAJL_IS_NUMBER(v) ? YAJL_GET_DOUBLE(v) : -1;

	if (!(x == 0 || (x >= 0.001 && x <= 1e7)))
		return td_error_set(err, TD_EINVAL, "%s: expected 0 (none) or a number from 0.001 "
				    "to 1e7", path);
	*out = YAJL_GET_DOUBLE(v);
	return 0;
}

int td_peaks_parse(const char *json, struct td_peaks *out, struct td_error *err)
{
	char ebuf[256], path[64];
	yajl_val root = yajl_tree_parse(json, ebuf, sizeof(ebuf));
	struct td_peaks p = *out;
	size_t i, j;
	int rc = 0;

	if (!root)
		return td_error_set(err, TD_EINVAL, "not JSON: %.200s", ebuf);
	if (!YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return td_error_set(err, TD_EINVAL, "expected an object with \"device\", \"tbps\" "
				    "and \"tflops\"");
	}
	for (i = 0; !rc && i < root->u.object.len; i++) {
		const char *k = root->u.object.keys[i] ? root->u.object.keys[i] : "";
		yajl_val v = root->u.object.values[i];
		if (!strcmp(k, "device")) {
			if (!YAJL_IS_STRING(v))
				rc = td_error_set(err, TD_EINVAL, "device: expected a string");
			else
				snprintf(p.device, sizeof(p.device), "%s", YAJL_GET_STRING(v));
		} else if (!strcmp(k, "tbps")) {
			rc = figure(v, "tbps", &p.tbps, err);
		} else if (!strcmp(k, "tflops") && YAJL_IS_OBJECT(v)) {
			for (j = 0; !rc && j < v->u.object.len; j++) {
				const char *key = v->u.object.keys[j] ? v->u.object.keys[j] : "";
				int d = td_dtype_of(key);
				snprintf(path, sizeof(path), "tflops.%.40s", key);
				if (d < 0)
					rc = td_error_set(err, TD_EINVAL, "%s: not a dtype; one of "
							  "fp64, fp32, tf32, bf16, fp16, fp8, fp4",
							  path);
				else
					rc = figure(v->u.object.values[j], path, &p.tflops[d], err);
			}
		} else if (!strcmp(k, "tflops")) {
			rc = td_error_set(err, TD_EINVAL, "tflops: expected an object of dtypes");
		} else {
			rc = td_error_set(err, TD_EINVAL, "%.60s: unknown key; one of device, tbps, "
					  "tflops", k);
		}
	}
	yajl_tree_free(root);
	if (rc)
		return rc;
	p.from_file = 1;
	*out = p;
	return 0;
}
