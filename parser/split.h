/* SPDX-License-Identifier: MIT */
#ifndef TD_PARSER_SPLIT_H
#define TD_PARSER_SPLIT_H

#include <stddef.h>

#include "common/error.h"

struct td_input;
struct td_trace;

/* The size of the blocks the input is cut into. Small, so that the bytes in flight - about
 * (jobs + 2) blocks and their records - stay a few percent of the model: measured on a 1 GB
 * trace with 2 threads, 8 MiB blocks peak at +64 MB over the sequential reader, 2 MiB at +6,
 * at the same speed; 1 MiB 6 MB below 2 MiB on the mix bench trace (stats: 116.4 -> 110.6 MB),
 * at the same speed, and 512 KiB no lower. */
#define TD_SPLIT_BLOCK ((size_t)1 << 20)

/* Reads the rest of `in` into t (not finalized) with `jobs` parsing threads over blocks of
 * about `block` bytes (0: TD_SPLIT_BLOCK); the trace is the one the sequential reader builds,
 * event for event, and errors and partial reads are reported as it reports them. Returns 0, a
 * TD_E* code with err filled, or 1 when no thread could be started (nothing was read: read
 * sequentially). progress is called on the reading thread as in struct td_load_opts. */
int td_split_load(struct td_input *in, struct td_trace *t, int jobs, size_t block,
		  void (*progress)(void *ctx, unsigned long long done, unsigned long long total),
		  void *pctx, unsigned long long total, struct td_error *err);

#endif
