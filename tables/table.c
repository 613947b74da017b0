/* SPDX-License-Identifier: MIT */
#include "tables/table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"

void td_table_init(struct td_table *t, const char *schema, const struct td_col *cols, size_t n)
{
	memset(t, 0, sizeof(*t));
	t->schema = schema;
	if (n > TD_TABLE_MAXCOLS)
		n = TD_TABLE_MAXCOLS;
	memcpy(t->own, cols, n * sizeof(*cols));
	t->cols = t->own;
	t->ncols = n;
	td_vec_init(&t->cells, sizeof(union td_cell));
	td_strtab_init(&t->strs);
}

void td_table_free(struct td_table *t)
{
	td_vec_free(&t->cells);
	td_strtab_free(&t->strs);
	memset(t, 0, sizeof(*t));
}

union td_cell *td_table_row(struct td_table *t)
{
	size_t c;
	union td_cell *row;

	for (c = 0; c < t->ncols; c++)
		memset(td_vec_push(&t->cells), 0, sizeof(union td_cell));
	row = td_table_cell(t, t->nrows, 0);
	t->nrows++;
	return row;
}

uint32_t td_table_str(struct td_table *t, const char *s)
{
	return td_strtab_intern(&t->strs, s, strlen(s));
}

uint32_t td_table_name(struct td_table *t, const char *name)
{
	size_t n = strlen(name);
	char *m = td_malloc(n + 3);
	uint32_t id;

	td_mark(m, n + 3, name);
	id = td_strtab_intern(&t->strs, m, strlen(m));
	free(m);
	return id;
}

void td_table_meta_int(struct td_table *t, const char *key, int64_t v)
{
	if (t->nmeta < sizeof(t->meta) / sizeof(t->meta[0])) {
		t->meta[t->nmeta].key = key;
		t->meta[t->nmeta].is_int = 1;
		t->meta[t->nmeta++].i = v;
	}
}

void td_table_meta_str(struct td_table *t, const char *key, const char *s)
{
	if (t->nmeta < sizeof(t->meta) / sizeof(t->meta[0])) {
		t->meta[t->nmeta].key = key;
		t->meta[t->nmeta].is_int = 0;
		t->meta[t->nmeta++].s = td_table_text(t, td_table_str(t, s));
	}
}

const struct td_meta *td_table_meta(const struct td_table *t, const char *key)
{
	size_t i;

	for (i = 0; i < t->nmeta; i++)
		if (!strcmp(t->meta[i].key, key))
			return &t->meta[i];
	return NULL;
}

int td_table_col(const struct td_table *t, const char *id)
{
	size_t c;

	for (c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c].id, id))
			return (int)c;
	return -1;
}

/* qsort with the table as context, by way of an index array */
struct sort_ctx {
	const struct td_table *t;
	size_t col;
};

static int text_col(enum td_col_type ty)
{
	return ty == TC_NAME || ty == TC_TEXT;
}

static int cmp_rows(const struct sort_ctx *c, size_t a, size_t b)
{
	const struct td_table *t = c->t;
	size_t k;

	for (k = 0; k < 2; k++) {
		size_t col = k ? 0 : c->col;
		const union td_cell *x = td_table_cell(t, a, col), *y = td_table_cell(t, b, col);
		enum td_col_type ty = t->cols[col].type;
		int r = 0;
		if (text_col(ty))
			r = strcmp(td_table_text(t, x->s), td_table_text(t, y->s));
		else if (TD_COL_IS_F(ty)) /* NaN (none) below every value */
			r = isnan(x->f) ? !isnan(y->f) : isnan(y->f) ? -1 : x->f > y->f ? -1 : x->f < y->f;
		else if (ty == TC_SNS || ty == TC_SCOUNT) /* differences: by size, either sign */
			r = llabs(x->i) > llabs(y->i) ? -1 : llabs(x->i) < llabs(y->i) ? 1
				: x->i > y->i ? -1 : x->i < y->i;
		else
			r = x->i > y->i ? -1 : x->i < y->i;
		if (r)
			return r;
	}
	return a < b ? -1 : a > b;
}

/* merge sort of row indices: stable, no global state */
static void msort(const struct sort_ctx *c, size_t *v, size_t *tmp, size_t n)
{
	size_t m = n / 2, i = 0, j = m, k = 0;

	if (n < 2)
		return;
	msort(c, v, tmp, m);
	msort(c, v + m, tmp, n - m);
	while (i < m && j < n)
		tmp[k++] = cmp_rows(c, v[i], v[j]) <= 0 ? v[i++] : v[j++];
	while (i < m)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

void td_table_sort(struct td_table *t, size_t col)
{
	struct sort_ctx c = {t, col};
	size_t *idx = td_malloc((t->nrows ? t->nrows : 1) * sizeof(*idx));
	size_t *tmp = td_malloc((t->nrows ? t->nrows : 1) * sizeof(*tmp));
	union td_cell *old;
	size_t r;

	if (t->nrows < 2) {
		free(tmp);
		free(idx);
		return;
	}
	for (r = 0; r < t->nrows; r++)
		idx[r] = r;
	msort(&c, idx, tmp, t->nrows);
	old = td_malloc((t->nrows ? t->nrows : 1) * t->ncols * sizeof(*old));
	memcpy(old, t->cells.data, t->nrows * t->ncols * sizeof(*old));
	for (r = 0; r < t->nrows; r++)
		memcpy(td_table_cell(t, r, 0), old + idx[r] * t->ncols, t->ncols * sizeof(*old));
	free(old);
	free(tmp);
	free(idx);
}
