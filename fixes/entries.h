/* SPDX-License-Identifier: MIT */
/* What the fix catalogue's entry tables (fixes/entries.c, fixes/entries_comm.c) are written
 * with: short names for the contexts an entry needs. */
#ifndef TD_FIXES_ENTRIES_H
#define TD_FIXES_ENTRIES_H

#include "fixes/catalogue.h"

#define NV TD_VENDOR_NVIDIA
#define AMD TD_VENDOR_AMD
#define ANY_V TD_VENDOR_UNKNOWN
#define TRAIN TD_RUN_TRAINING
#define INFER TD_RUN_INFERENCE
#define ANY_R TD_RUN_UNKNOWN
#define ANY_E 0u
#define VLLM (1u << TD_ENGINE_VLLM)
#define SGLANG (1u << TD_ENGINE_SGLANG)
#define TGI (1u << TD_ENGINE_TGI)
#define TRTLLM (1u << TD_ENGINE_TRTLLM)

#endif
