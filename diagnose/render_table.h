/* SPDX-License-Identifier: MIT */
/* A table (tables/table.h) in each format: text as key_averages prints it (times as
 * "1.234ms", within 100 columns unless wide), GitHub Markdown, CSV (RFC 4180, integer ns) and
 * JSON (the table's schema, its header facts, then rows keyed by column id). At most top rows
 * (0: all). Same input, same bytes. */
#ifndef TD_DIAGNOSE_RENDER_TABLE_H
#define TD_DIAGNOSE_RENDER_TABLE_H

#include <stdio.h>

#include "tables/table.h"

struct table_view {
	const char *title;   /* the first line of text and md ("tracedoc ops: FILE ...") */
	size_t top;          /* rows shown; 0: all */
	int wide;            /* text: every column, names whole */
	const char *footer;  /* text and md: a last line, or NULL */
};

void render_table_text(FILE *f, const struct td_table *t, const struct table_view *v);
void render_table_md(FILE *f, const struct td_table *t, const struct table_view *v);
void render_table_csv(FILE *f, const struct td_table *t, const struct table_view *v);
void render_table_json(FILE *f, const struct td_table *t, const struct table_view *v);
/* "rows_total" and the first n rows as "rows", into an open JSON object */
#include <yajl/yajl_gen.h>
void render_table_rows_json(yajl_gen g, const struct td_table *t, size_t n);
/* key_averages' time format: "850.000us", "1.234ms", "2.010s" (ns kept in JSON and CSV). */
const char *table_time(char *buf, size_t cap, int64_t ns);
/* Cell (r, c) as text, md and HTML show it ("--" for one the trace cannot give): in buf, or a
 * string of the table's. */
const char *table_cell_text(const struct td_table *t, size_t r, size_t c, char *buf, size_t cap);

#endif
