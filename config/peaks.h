/* SPDX-License-Identifier: MIT */
/* A device's roof: its dense (no 2:4 sparsity) peak TFLOP/s per dtype and its memory
 * bandwidth, from the vendors' datasheets (docs/roofline.md cites each figure), found by the
 * name a trace gives the device (deviceProperties' "NVIDIA H200", "AMD Instinct MI300X"), or
 * where a ROCm trace names none ("", "AMD Radeon Graphics") by its gfx version and compute
 * units. A figure is the highest dense rate that dtype reaches (tensor / matrix cores where
 * the part has them: FP64 on A100 is its 19.5 FP64 tensor rate, FP32 on AMD its matrix rate;
 * FP32 on NVIDIA is the CUDA cores', TF32 its own). An MI250X / MI250 appears to PyTorch as
 * two devices, one per die (GCD): its row holds one die's half. A JSON file (--peaks) can
 * set or override them:
 *   {"device": "my part", "tbps": 3.35, "tflops": {"bf16": 989.5, "fp32": 67}}
 * Library code: never prints. */
#ifndef TD_CONFIG_PEAKS_H
#define TD_CONFIG_PEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

enum td_dtype { TD_DT_FP64, TD_DT_FP32, TD_DT_TF32, TD_DT_BF16, TD_DT_FP16, TD_DT_FP8,
		TD_DT_FP4, TD_DT_COUNT };

struct td_peaks {
	char device[64];               /* the part: the table's name or the file's; "" unknown */
	double tflops[TD_DT_COUNT];    /* dense; 0: none known */
	double tbps;                   /* memory bandwidth, TB/s (10^12 bytes/s); 0: unknown */
	int from_file;                 /* some figure came from --peaks */
};

/* One row of the compiled table. match: '|'-separated parts of a device name, matched
 * case-insensitively anywhere in it ("H100 PCIe"), or at its end when they end in '$'. */
struct td_peak_row {
	const char *part, *match;
	double tflops[TD_DT_COUNT];
	double tbps;
};
extern const struct td_peak_row td_peak_rows[];
extern const size_t td_npeak_rows;

/* "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4" */
const char *td_dtype_name(enum td_dtype d);
/* The dtype named so, or -1. */
int td_dtype_of(const char *name);

/* The row for a device by its name (NULL or "" when the trace has none) or else, for a ROCm
 * device, its gfx version (cc_major.cc_minor: 9.0 gfx90a, 9.4 gfx942, 9.5 gfx950), compute
 * units and memory; NULL when unknown. */
const struct td_peak_row *td_peaks_find(const char *name, int cc_major, int cc_minor,
					int units, int64_t total_mem);
/* out set from a row (zeroed when row is NULL). */
void td_peaks_from_row(const struct td_peak_row *row, struct td_peaks *out);
/* A --peaks file's JSON overlaid on out: every figure it names replaces the table's. Returns
 * 0, or TD_EINVAL with err naming the key and what it wants. */
int td_peaks_parse(const char *json, struct td_peaks *out, struct td_error *err);

#endif
