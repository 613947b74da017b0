/* SPDX-License-Identifier: MIT */
/* `tracedoc memory A B`: two caching-allocator snapshots compared, in text, Markdown and JSON
 * (tracedoc.memory_diff/1). Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_MEMORY_DIFF_H
#define TD_DIAGNOSE_RENDER_MEMORY_DIFF_H

#include <stdio.h>

#include "tables/snapshot_diff.h"

struct snapdiff_ctx {
	const char *path_a, *path_b;
	const struct td_snap_diff *d;
	int64_t device_memory;       /* the device's memory, bytes (--device-memory); 0: unknown */
};

/* ctx: a struct snapdiff_ctx (untyped for cli_write_by's table) */
void render_snapdiff_text(FILE *f, const void *ctx);
void render_snapdiff_md(FILE *f, const void *ctx);
void render_snapdiff_json(FILE *f, const void *ctx);

#endif
