/* SPDX-License-Identifier: MIT */
/* `tracedoc diff` in text, Markdown and JSON (tracedoc.diff/1); its top rows for the gate's
 * Markdown. Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_DIFF_H
#define TD_DIAGNOSE_RENDER_DIFF_H

#include <stdio.h>

#include "tables/diff.h"

struct diff_ctx {
	const char *base_path, *cur_path;
	const struct td_diff *d;
	size_t top;                /* rows of the table shown; 0 all */
	int wide;
};

/* ctx: a struct diff_ctx; untyped so that the command picks one by format from a table
 * (cli_write_by). */
void render_diff_text(FILE *f, const void *ctx);
void render_diff_md(FILE *f, const void *ctx);
void render_diff_json(FILE *f, const void *ctx);
void render_diff_csv(FILE *f, const void *ctx);

#endif
