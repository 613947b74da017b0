/* SPDX-License-Identifier: MIT */
/* A table of rows, the shape `ops`, `kernels` and `diff` print: typed columns (a name, times in
 * integer ns, percentages, counts, bytes), rows of cells, and a few header facts (the window, the
 * grouping) for the JSON form. Built by tables/ops.c and friends, printed by diagnose/
 * render_table.c in each format. Library code: never prints. Ownership: td_table_free(). */
#ifndef TD_TABLES_TABLE_H
#define TD_TABLES_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/vec.h"

enum td_col_type {
	TC_NAME,   /* a name from the trace (marked, common/fmt.h) */
	TC_TEXT,   /* other text (a category, a shape) */
	TC_NS,     /* a time, integer ns */
	TC_PCT,    /* a fraction 0..1, shown as a percentage */
	TC_COUNT,  /* an integer count */
	TC_BYTES,  /* bytes */
	TC_SNS,    /* a signed time difference, ns */
	TC_SCOUNT, /* a signed count difference */
	TC_MEM,    /* signed bytes, as key_averages prints memory: "37.53 Kb", "-12 b" */
	TC_FLOPS,  /* a count of floating-point operations, shown divided by 1000^scale */
	TC_REAL,   /* a real number (f), shown with `scale` decimals; NaN: none */
};

/* Whether a column's cells are doubles (f): percentages and reals */
#define TD_COL_IS_F(ty) ((ty) == TC_PCT || (ty) == TC_REAL)

/* A numeric cell the trace cannot give (a FLOP count of an op without a formula): "--" in text
 * and md, empty in csv, no key in JSON; sorts below every value. A percentage: NaN; a text:
 * string id 0 ("" in text). */
#define TD_CELL_NONE INT64_MIN
#define TD_TABLE_MAXCOLS 24

struct td_col {
	const char *id;     /* JSON key and --sort name: "self_cpu_ns" */
	const char *title;  /* heading, as key_averages spells it: "Self CPU" */
	enum td_col_type type;
	int narrow;         /* in the 100-column text form: 0 only with --wide, 1 always, 2 and up
			     * while the names keep room (the highest dropped first) */
	int scale;          /* TC_FLOPS: shown divided by 1000^scale */
};

union td_cell {
	int64_t i;
	double f;
	uint32_t s;         /* id in the table's strings */
};

struct td_meta {
	const char *key;
	int is_int;
	int64_t i;
	const char *s;      /* static or in the table's strings */
};

struct td_table {
	const char *schema;        /* "tracedoc.ops/1" */
	const struct td_col *cols; /* = own */
	size_t ncols;
	struct td_col own[TD_TABLE_MAXCOLS];
	struct td_vec cells;       /* union td_cell, ncols per row */
	size_t nrows;
	struct td_strtab strs;
	struct td_meta meta[12];   /* header facts, in order */
	size_t nmeta;
};

/* cols are copied (at most TD_TABLE_MAXCOLS) */
void td_table_init(struct td_table *t, const char *schema, const struct td_col *cols, size_t n);
void td_table_free(struct td_table *t);
/* Appends a row of zeroed cells; returns it (valid until the next row). */
union td_cell *td_table_row(struct td_table *t);
static inline union td_cell *td_table_cell(const struct td_table *t, size_t row, size_t col)
{
	return (union td_cell *)t->cells.data + row * t->ncols + col;
}
uint32_t td_table_str(struct td_table *t, const char *s);
/* The id of name marked as a name from the trace (common/fmt.h), whatever its length. */
uint32_t td_table_name(struct td_table *t, const char *name);
static inline const char *td_table_text(const struct td_table *t, uint32_t id)
{
	return td_strtab_str(&t->strs, id);
}
void td_table_meta_int(struct td_table *t, const char *key, int64_t v);
void td_table_meta_str(struct td_table *t, const char *key, const char *s);
/* The header fact named key, or NULL. */
const struct td_meta *td_table_meta(const struct td_table *t, const char *key);
/* Index of the column with id `id`, or -1. */
int td_table_col(const struct td_table *t, const char *id);
/* Sorts rows by column col, largest first (names: A to Z), ties by the first column. */
void td_table_sort(struct td_table *t, size_t col);

#endif
