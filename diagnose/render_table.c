/* SPDX-License-Identifier: MIT */
#include "diagnose/render_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "diagnose/out.h"

#define TEXT_WIDTH 100
#define NAME_ROOM 36  /* the name's least room before numbers make way */

const char *table_time(char *buf, size_t cap, int64_t ns)
{
	double us = (double)ns / 1000.0;
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

	if (a >= 1000000000)
		snprintf(buf, cap, "%.3fs", us / 1e6);
	else if (a >= 1000000)
		snprintf(buf, cap, "%.3fms", us / 1e3);
	else
		snprintf(buf, cap, "%.3fus", us);
	return buf;
}

static size_t nshown(const struct td_table *t, const struct table_view *v)
{
	return v->top && v->top < t->nrows ? v->top : t->nrows;
}

/* key_averages' memory format (profiler_util._format_memory): "37.53 Kb", "-12 b" */
static const char *mem_text(char *buf, size_t cap, int64_t b)
{
	static const char *const units[] = {"Gb", "Mb", "Kb"};
	double v = (double)b;
	int i;

	for (i = 0; i < 3; i++) {
		double u = (double)(1ll << (10 * (3 - i)));
		if (v >= u || v <= -u) {
			snprintf(buf, cap, "%.2f %s", v / u, units[i]);
			return buf;
		}
	}
	snprintf(buf, cap, "%lld b", (long long)b);
	return buf;
}

const char *table_cell_text(const struct td_table *t, size_t r, size_t c, char *buf, size_t cap)
{
	const union td_cell *x = td_table_cell(t, r, c);
	enum td_col_type ty = t->cols[c].type;

	if (TD_COL_IS_F(ty) ? isnan(x->f) : ty != TC_NAME && ty != TC_TEXT && x->i == TD_CELL_NONE)
		return "--";
	switch (ty) {
	case TC_NS:
		return table_time(buf, cap, x->i);
	case TC_SNS:
		if (!x->i)
			return "0";
		table_time(buf + 1, cap - 1, x->i < 0 ? -x->i : x->i);
		buf[0] = x->i < 0 ? '-' : '+';
		return buf;
	case TC_PCT:
		snprintf(buf, cap, "%.2f%%", 100.0 * x->f);
		return buf;
	case TC_REAL:
		snprintf(buf, cap, "%.*f", t->cols[c].scale, x->f);
		return buf;
	case TC_COUNT:
		snprintf(buf, cap, "%lld", (long long)x->i);
		return buf;
	case TC_SCOUNT:
		snprintf(buf, cap, x->i ? "%+lld" : "%lld", (long long)x->i);
		return buf;
	case TC_BYTES:
		return td_fmt_bytes(buf, cap, (double)x->i);
	case TC_MEM:
		return mem_text(buf, cap, x->i);
	case TC_FLOPS: { /* key_averages: '{0:8.3f}', "--" for none */
		double v = (double)x->i;
		int k;
		if (x->i <= 0)
			return "--";
		for (k = 0; k < t->cols[c].scale; k++)
			v /= 1000.0;
		snprintf(buf, cap, "%.3f", v);
		return buf;
	}
	default:
		return td_table_text(t, x->s);
	}
}
static int text_col(enum td_col_type ty)
{
	return ty == TC_NAME || ty == TC_TEXT;
}

/* characters (UTF-8 code points) in s */
static size_t width_of(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* The text of a name or text cell as the terminal shows it, shortened to max characters (0:
 * whole), malloc'd. */
static char *shown(const char *s, size_t max)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m)
		return td_strndup("", 0);
	out_text_name(m, s, max);
	fclose(m);
	return buf;
}

static void dashes(FILE *f, const size_t *w, const int *on, size_t ncols)
{
	size_t c, k;
	int first = 1;

	for (c = 0; c < ncols; c++) {
		if (!on[c])
			continue;
		if (!first)
			fputs("  ", f);
		for (k = 0; k < w[c]; k++)
			fputc('-', f);
		first = 0;
	}
	fputc('\n', f);
}

static void table_text(FILE *f, const struct td_table *t, const struct table_view *v);

/* the table as text, every line without trailing blanks (an empty last column leaves some) */
void render_table_text(FILE *f, const struct td_table *t, const struct table_view *v)
{
	char *buf = NULL, *p, *nl;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		table_text(f, t, v);
		return;
	}
	table_text(m, t, v);
	fclose(m);
	for (p = buf; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		char *e = nl;
		while (e > p && e[-1] == ' ')
			e--;
		fwrite(p, 1, (size_t)(e - p), f);
		fputc('\n', f);
	}
	fputs(p, f);
	free(buf);
}

static void table_text(FILE *f, const struct td_table *t, const struct table_view *v)
{
	size_t n = nshown(t, v), r, c, tc, used = 0, ntext = 0, last = 0;
	size_t *w = td_calloc(t->ncols, sizeof(*w)), *rooms = td_calloc(t->ncols, sizeof(*rooms));
	int *on = td_calloc(t->ncols, sizeof(*on));
	char **txt = td_calloc((n ? n : 1) * t->ncols, sizeof(*txt));
	char buf[64];

	if (v->title) {
		out_text_wrap(f, v->title, 0, 2, TEXT_WIDTH);
		fputs("\n\n", f);
	}
	for (c = 0; c < t->ncols; c++) { /* numeric columns: as wide as their widest value */
		on[c] = v->wide || t->cols[c].narrow;
		if (!on[c])
			continue;
		w[c] = strlen(t->cols[c].title);
		if (text_col(t->cols[c].type)) {
			ntext++;
			continue;
		}
		for (r = 0; r < n; r++) {
			size_t k = strlen(table_cell_text(t, r, c, buf, sizeof(buf)));
			if (k > w[c])
				w[c] = k;
		}
		used += w[c] + 2;
	}
	while (!v->wide && ntext && used + NAME_ROOM * ntext > TEXT_WIDTH) {
		/* the names keep their room: numbers of the lowest rank go first */
		size_t drop = t->ncols;
		for (c = 0; c < t->ncols; c++)
			if (on[c] && t->cols[c].narrow > 1 &&
			    (drop == t->ncols || t->cols[c].narrow >= t->cols[drop].narrow))
				drop = c;
		if (drop == t->ncols)
			break;
		for (c = 0; c < t->ncols; c++)
			if (on[c] && c != drop && t->cols[c].narrow == t->cols[drop].narrow) {
				on[c] = 0;
				if (text_col(t->cols[c].type))
					ntext--;
				else
					used -= w[c] + 2;
			}
		on[drop] = 0;
		if (text_col(t->cols[drop].type))
			ntext--;
		else
			used -= w[drop] + 2;
	}
	{ /* text columns share what is left of 100: other text as wide as it is (at most 45% of
	   * what is left, split between them), the names the rest */
		size_t left = used + 14 * ntext < TEXT_WIDTH ? TEXT_WIDTH - used - 2 * ntext
							      : 12 * ntext, others = 0, nnames = 0;
		for (c = 0; c < t->ncols; c++) {
			if (!on[c] || !text_col(t->cols[c].type))
				continue;
			if (t->cols[c].type == TC_NAME) {
				nnames++;
				continue;
			}
			tc = w[c];
			for (r = 0; r < n; r++) {
				size_t k = width_of(table_cell_text(t, r, c, buf, sizeof(buf)));
				if (k > tc)
					tc = k;
			}
			rooms[c] = left * 45 / 100 / (ntext - (nnames ? 1 : 0) ? ntext - (nnames ? 1 : 0)
										 : 1);
			if (nnames == 0 && ntext == 1)
				rooms[c] = left;
			if (tc < rooms[c])
				rooms[c] = tc;
			if (rooms[c] < w[c])
				rooms[c] = w[c];
			others += rooms[c];
		}
		for (c = 0, nnames = 0; c < t->ncols; c++)
			nnames += on[c] && t->cols[c].type == TC_NAME;
		for (c = 0, tc = 0; c < t->ncols; c++)
			if (on[c] && t->cols[c].type == TC_NAME) {
				/* the first name (the row's own) 60% when another shares the room */
				size_t all = left > others ? left - others : 12 * nnames;
				size_t room = nnames == 1 ? all : tc++ == 0 ? all * 60 / 100
					: all * 40 / 100 / (nnames - 1);
				rooms[c] = room > w[c] ? room : w[c];
			}
	}
	for (c = 0; c < t->ncols; c++) {
		size_t room = rooms[c], widest = w[c];
		if (!on[c] || !text_col(t->cols[c].type))
			continue;
		for (r = 0; r < n; r++) {
			char m[4200];
			const char *s = table_cell_text(t, r, c, buf, sizeof(buf));
			if (v->wide) { /* whole: without the marks that cap a name's length */
				char *u = td_unmark(s);
				txt[r * t->ncols + c] = shown(u, 0);
				free(u);
			} else { /* marked, so a long one is shortened in the middle as names are */
				txt[r * t->ncols + c] = shown(t->cols[c].type == TC_TEXT ?
							      td_mark(m, sizeof(m), s) : s, room);
			}
			if (width_of(txt[r * t->ncols + c]) > widest)
				widest = width_of(txt[r * t->ncols + c]);
		}
		w[c] = v->wide || widest < room ? widest : room;
	}
	for (c = 0; c < t->ncols; c++)
		if (on[c])
			last = c;
	dashes(f, w, on, t->ncols);
	for (c = 0, used = 0; c < t->ncols; c++) {
		if (!on[c])
			continue;
		if (text_col(t->cols[c].type) && c != last)
			fprintf(f, "%s%-*s", used++ ? "  " : "", (int)w[c], t->cols[c].title);
		else
			fprintf(f, "%s%*s", used++ ? "  " : "", (int)w[c], t->cols[c].title);
	}
	fputc('\n', f);
	dashes(f, w, on, t->ncols);
	for (c = 0; c < t->ncols; c++)
		if (on[c])
			last = c;
	for (r = 0; r < n; r++) {
		for (c = 0, used = 0; c < t->ncols; c++) {
			if (!on[c])
				continue;
			if (used++)
				fputs("  ", f);
			if (text_col(t->cols[c].type)) {
				const char *s = txt[r * t->ncols + c];
				size_t k = width_of(s);
				fputs(s, f);
				/* the last column needs no padding: no trailing blanks */
				for (; k < w[c] && c != last; k++)
					fputc(' ', f);
			} else {
				fprintf(f, "%*s", (int)w[c], table_cell_text(t, r, c, buf, sizeof(buf)));
			}
		}
		fputc('\n', f);
	}
	dashes(f, w, on, t->ncols);
	if (v->footer) {
		out_text_wrap(f, v->footer, 0, 2, TEXT_WIDTH);
		fputc('\n', f);
	}
	for (r = 0; r < n * t->ncols; r++)
		free(txt[r]);
	free(txt);
	free(on);
	free(rooms);
	free(w);
}

void render_table_md(FILE *f, const struct td_table *t, const struct table_view *v)
{
	size_t n = nshown(t, v), r, c;
	char buf[64];

	if (v->title) {
		fputs("### ", f);
		out_md(f, v->title);
		fputs("\n\n", f);
	}
	fputc('|', f);
	for (c = 0; c < t->ncols; c++)
		fprintf(f, " %s |", t->cols[c].title);
	fputs("\n|", f);
	for (c = 0; c < t->ncols; c++)
		fputs(text_col(t->cols[c].type) ? "---|" : "---:|", f);
	fputc('\n', f);
	for (r = 0; r < n; r++) {
		fputc('|', f);
		for (c = 0; c < t->ncols; c++) {
			fputc(' ', f);
			if (t->cols[c].type == TC_TEXT) { /* shapes and labels as code: [ and * stay */
				char m[4200];
				const char *s = table_cell_text(t, r, c, buf, sizeof(buf));
				if (*s)
					out_md(f, td_mark(m, sizeof(m), s));
			} else {
				out_md(f, table_cell_text(t, r, c, buf, sizeof(buf)));
			}
			fputs(" |", f);
		}
		fputc('\n', f);
	}
	if (v->footer) {
		fputc('\n', f);
		out_md(f, v->footer);
		fputc('\n', f);
	}
}

static void csv_field(FILE *f, const char *s)
{
	char *u = td_unmark(s);
	const char *p;
	int quote = strpbrk(u, ",\"\r\n") != NULL;

	if (quote)
		fputc('"', f);
	for (p = u; *p; p++) {
		if (*p == '"')
			fputc('"', f);
		fputc(*p, f);
	}
	if (quote)
		fputc('"', f);
	free(u);
}

void render_table_csv(FILE *f, const struct td_table *t, const struct table_view *v)
{
	size_t n = nshown(t, v), r, c;

	for (c = 0; c < t->ncols; c++)
		fprintf(f, "%s%s", c ? "," : "", t->cols[c].id);
	fputs("\r\n", f);
	for (r = 0; r < n; r++) {
		for (c = 0; c < t->ncols; c++) {
			const union td_cell *x = td_table_cell(t, r, c);
			if (c)
				fputc(',', f);
			if (text_col(t->cols[c].type))
				csv_field(f, td_table_text(t, x->s));
			else if (TD_COL_IS_F(t->cols[c].type)) {
				if (!isnan(x->f))
					fprintf(f, "%.6f", x->f);
			} else if (x->i != TD_CELL_NONE)
				fprintf(f, "%lld", (long long)x->i);
		}
		fputs("\r\n", f);
	}
}

void render_table_rows_json(yajl_gen g, const struct td_table *t, size_t n)
{
	size_t r, c;

	out_json_kint(g, "rows_total", (int64_t)t->nrows);
	out_json_karray(g, "rows");
	for (r = 0; r < n; r++) {
		yajl_gen_map_open(g);
		for (c = 0; c < t->ncols; c++) {
			const union td_cell *x = td_table_cell(t, r, c);
			if (TD_COL_IS_F(t->cols[c].type) ? isnan(x->f) : text_col(t->cols[c].type)
			    ? x->s == 0 : x->i == TD_CELL_NONE)
				continue; /* the trace cannot give it */
			out_json_key(g, t->cols[c].id);
			if (text_col(t->cols[c].type))
				out_json_str(g, td_table_text(t, x->s));
			else if (TD_COL_IS_F(t->cols[c].type))
				out_json_fixed(g, x->f, 6);
			else
				out_json_int(g, x->i);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void render_table_json(FILE *f, const struct td_table *t, const struct table_view *v)
{
	yajl_gen g = out_json_new(f);
	size_t n = nshown(t, v), m;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", t->schema);
	for (m = 0; m < t->nmeta; m++) {
		out_json_key(g, t->meta[m].key);
		if (t->meta[m].is_int)
			out_json_int(g, t->meta[m].i);
		else
			out_json_str(g, t->meta[m].s);
	}
	render_table_rows_json(g, t, n);
	out_json_end(g, f);
}
