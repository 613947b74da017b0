/* SPDX-License-Identifier: MIT */
/* `tracedoc memory` in text, Markdown and JSON (tracedoc.memory/1). Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_MEMORY_H
#define TD_DIAGNOSE_RENDER_MEMORY_H

#include <stdio.h>

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
};

/* ctx: a struct mem_ctx for render_memory_*, a struct snap_ctx for render_snapshot_*; untyped
 * so that the command picks one by format from a table (cli_write_by). */
void render_memory_text(FILE *f, const void *ctx);
void render_memory_md(FILE *f, const void *ctx);
void render_memory_json(FILE *f, const void *ctx);
void render_snapshot_text(FILE *f, const void *ctx);
void render_snapshot_md(FILE *f, const void *ctx);
void render_snapshot_json(FILE *f, const void *ctx);

#endif
