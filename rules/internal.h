/* SPDX-License-Identifier: MIT */
/* Internal to rules/: pieces of the accounting that live in their own files. */
#ifndef TD_RULES_INTERNAL_H
#define TD_RULES_INTERNAL_H

#include <stdint.h>

struct td_analysis;

/* Finds the runtime calls that do one-off start-up work (startup.c): fills a->warm_ev. */
void td_an_detect_warmup(struct td_analysis *a);
/* The label of warm-up event ev: what kind of start-up work it is. */
uint32_t td_an_warm_label(struct td_analysis *a, uint32_t ev);

#endif
