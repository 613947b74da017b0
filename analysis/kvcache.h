/* SPDX-License-Identifier: MIT */
/* A serving engine's KV-cache reservation, from the trace's memory events (profile_memory):
 * the memory allocated on a device under the engine's KV-cache allocation frame (vLLM's
 * gpu_model_runner initialize_kv_cache / _allocate_kv_cache_tensors / V0's _init_cache_engine,
 * SGLang's init_memory_pool / its token-to-KV pool's _create_buffers), on that frame's thread,
 * and the device's reserved memory before and after it. Not the memory profiling that sizes
 * it (determine_available_memory, profile_run: allocated and freed again). Library code. */
#ifndef TD_ANALYSIS_KVCACHE_H
#define TD_ANALYSIS_KVCACHE_H

#include <stdint.h>

#include "analysis/analysis.h"

struct td_kv_cache {
	uint32_t frame;            /* the outermost allocation frame (event), TD_NONE: none */
	int32_t device;            /* the device its memory went to */
	uint64_t allocations;      /* allocations under it on that device */
	int64_t bytes;             /* what they allocated, less what it freed again */
	int64_t reserved_before;   /* the device's reserved memory at its start (-1: unknown) */
	int64_t reserved_after;    /* ... at its end (-1: unknown) */
	int64_t allocated_after;   /* the device's allocated memory at its end (-1: unknown) */
	int complete;              /* the memory events cover the frame (one at or before its
				    * start on the device): the reservation is all there */
};

/* Fills kv; returns 1 when the trace shows a KV-cache allocation frame with memory under it. */
int td_an_kv_cache(const struct td_analysis *a, struct td_kv_cache *kv);

#endif
