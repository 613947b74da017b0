/* SPDX-License-Identifier: MIT */
/* `tracedoc memory` in text, Markdown and JSON (tracedoc.memory/1). Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_MEMORY_H
#define TD_DIAGNOSE_RENDER_MEMORY_H

#include <stdio.h>
#include <yajl/yajl_gen.h>

#include "rules/rule.h"
#include "tables/memory.h"
#include "tables/snapshot.h"

struct mem_ctx {
	const char *path;
	const struct td_mem_report *mem;
	const struct td_report *r;   /* the memory rule's findings */
};

struct snap_ctx {
	const char *path;
	const struct td_snapshot *snap;
	int64_t device_memory;       /* the device's memory, bytes (--device-memory); 0: unknown */
};

/* ctx: a struct mem_ctx for render_memory_*, a struct snap_ctx for render_snapshot_*; untyped
 * so that the command picks one by format from a table (cli_write_by). */
void render_memory_text(FILE *f, const void *ctx);
void render_memory_md(FILE *f, const void *ctx);
void render_memory_json(FILE *f, const void *ctx);
void render_snapshot_text(FILE *f, const void *ctx);
void render_snapshot_md(FILE *f, const void *ctx);
void render_snapshot_json(FILE *f, const void *ctx);
/* The figures of a snapshot's device d (named name) that a device of cap bytes cannot hold,
 * called out as impossible: a paragraph in text or Markdown (nothing when none), or the JSON
 * keys device_memory_bytes and above_device_memory[]. */
void render_snap_over(FILE *f, const struct td_snap_dev *d, const char *name, int64_t cap, int md);
void render_snap_over_json(yajl_gen g, const struct td_snap_dev *d, int64_t cap);

#endif
