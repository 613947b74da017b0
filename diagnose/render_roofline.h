/* SPDX-License-Identifier: MIT */
/* The roofline chart of the HTML report: the ops table's rows with a cost as points
 * (arithmetic intensity on a log x axis, achieved TFLOP/s on a log y axis), the device's roof
 * drawn (the memory slope up to the ridge, then the compute ceiling of the dtype doing most of
 * the model's FLOPs), each point's figures on hover. Nothing when the peaks are unknown or no
 * op has both FLOPs and bytes. */
#ifndef TD_DIAGNOSE_RENDER_ROOFLINE_H
#define TD_DIAGNOSE_RENDER_ROOFLINE_H

#include <stdio.h>

struct td_analysis;
struct td_table;

/* ops: td_ops_table's rows (any order); text: the HTML escaper of the caller */
void render_roofline_html(FILE *f, const struct td_analysis *a, const struct td_table *ops,
			  void (*text)(FILE *f, const char *s));

#endif
