/* SPDX-License-Identifier: MIT */
/* `tracedoc memory A B` in text, Markdown and JSON (tracedoc.memory_diff/1). */
#include "diagnose/render_memory_diff.h"

#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/out.h"
#include "diagnose/render_memory.h"

/* a size, "-" when the device is not in that snapshot */
static const char *size_or(char *b, size_t cap, const struct td_snap_dev *d, int64_t v)
{
	return d ? td_fmt_bytes(b, cap, (double)v) : "-";
}

/* v - a with its sign; "-" unless both sides are there */
static const char *change(char *b, size_t cap, int both, int64_t a, int64_t v)
{
	char s[32];
	__extension__ __int128 x = (__int128)v - a;

	if (!both)
		return "-";
	td_fmt_bytes(s, sizeof(s), (double)(x < 0 ? -x : x));
	snprintf(b, cap, "%s%s", x < 0 ? "-" : x > 0 ? "+" : "", s);
	return b;
}

static void dev_name(char *b, size_t cap, int32_t d)
{
	snprintf(b, cap, d < 0 ? "host" : "GPU %d", d);
}

/* a category's live bytes at one side's peak (0 without the device) */
static int64_t cat_bytes(const struct td_snap_dev *d, unsigned c)
{
	return d ? d->cats.c[c].bytes : 0;
}

/* the categories at the peak in A and B and their change, those live on either side: a text
 * table, or Markdown's */
static void cat_rows(FILE *f, const struct td_snap_devdiff *x, int md)
{
	unsigned c;
	char b[3][40];

	for (c = 0; c < TD_SNAP_NCAT; c++) {
		int64_t a = cat_bytes(x->a, c), v = cat_bytes(x->b, c);
		if (!(x->a && x->a->cats.c[c].blocks) && !(x->b && x->b->cats.c[c].blocks))
			continue;
		char name[80];
		snprintf(name, sizeof(name), "%s (%s)", td_snap_cat_name(c), td_snap_cat_pytorch(c));
		fprintf(f, md ? "| %s | %s | %s | %s |\n" : "  %-34s %10s %10s %10s\n", name,
			size_or(b[0], sizeof(b[0]), x->a, a), size_or(b[1], sizeof(b[1]), x->b, v),
			change(b[2], sizeof(b[2]), x->a && x->b, a, v));
	}
}

/* a row per device: the peaks allocated and reserved in A and B, and the change */
static void dev_rows(FILE *f, const struct td_snap_diff *d, int md)
{
	size_t k;
	char b[7][40];

	for (k = 0; k < d->ndev; k++) {
		const struct td_snap_devdiff *x = &d->dev[k];
		const struct td_snap_dev *a = x->a, *c = x->b;
		dev_name(b[0], sizeof(b[0]), x->device);
		fprintf(f, md ? "| %s | %s | %s | %s | %s | %s | %s |\n"
			      : "%-7s %12s %12s %12s %12s %12s %12s\n", b[0],
			size_or(b[1], sizeof(b[1]), a, a ? a->peak : 0),
			size_or(b[2], sizeof(b[2]), c, c ? c->peak : 0),
			change(b[3], sizeof(b[3]), a && c, a ? a->peak : 0, c ? c->peak : 0),
			size_or(b[4], sizeof(b[4]), a, a ? a->peak_reserved : 0),
			size_or(b[5], sizeof(b[5]), c, c ? c->peak_reserved : 0),
			change(b[6], sizeof(b[6]), a && c, a ? a->peak_reserved : 0,
			       c ? c->peak_reserved : 0));
	}
}

/* each side's figures its device cannot hold (--device-memory), called out */
static void overs(FILE *f, const struct snapdiff_ctx *c, int md)
{
	size_t k;
	char b[40], name[80];

	for (k = 0; k < c->d->ndev; k++) {
		const struct td_snap_devdiff *x = &c->d->dev[k];
		dev_name(b, sizeof(b), x->device);
		snprintf(name, sizeof(name), "A's %s", b);
		if (x->a)
			render_snap_over(f, x->a, name, c->device_memory, md);
		snprintf(name, sizeof(name), "B's %s", b);
		if (x->b)
			render_snap_over(f, x->b, name, c->device_memory, md);
	}
}

void render_snapdiff_text(FILE *f, const void *ctx)
{
	const struct snapdiff_ctx *c = ctx;
	const struct td_snap_diff *d = c->d;
	char title[2600], b[4][40], m[1200];
	size_t k, i;

	snprintf(title, sizeof(title), "tracedoc memory: %s -> %s · two caching-allocator "
		 "snapshots, peaks replayed from each one's trace", c->path_a, c->path_b);
	out_text_wrap(f, title, 0, 2, 100);
	fputs("\n\n", f);
	fprintf(f, "%-7s %38s %38s\n", "", "peak allocated ------------------",
		"peak reserved -------------------");
	fprintf(f, "%-7s %12s %12s %12s %12s %12s %12s\n", "device", "A", "B", "change", "A", "B",
		"change");
	dev_rows(f, d, 0);
	overs(f, c, 0);
	for (k = 0; k < d->ndev; k++) {
		const struct td_snap_devdiff *x = &d->dev[k];
		dev_name(b[0], sizeof(b[0]), x->device);
		fprintf(f, "\n%s at the peak by category (PyTorch's memory profiler's):\n  %-34s %10s %10s %10s\n", b[0], "category",
			"A", "B", "change");
		cat_rows(f, x, 0);
		if (!x->nch) {
			fprintf(f, "\n%s: the same bytes from each allocation site at the peak\n", b[0]);
			continue;
		}
		fprintf(f, "\n%s: the allocation sites whose live bytes at the peak changed most%s\n",
			b[0], x->nch > TD_SNAP_SITES ? " (the largest 10)" : "");
		fprintf(f, "  %10s %10s %10s  %s\n", "change", "A", "B", "allocation site");
		for (i = 0; i < x->nch && i < TD_SNAP_SITES; i++) {
			const struct td_snap_change *s = &x->ch[i];
			int col = fprintf(f, "  %10s %10s %10s  ",
					  change(b[1], sizeof(b[1]), 1, s->a, s->b),
					  td_fmt_bytes(b[2], sizeof(b[2]), (double)s->a),
					  td_fmt_bytes(b[3], sizeof(b[3]), (double)s->b));
			out_text_wrap(f, td_mark(m, sizeof(m), s->site), col, col, 100);
			fputc('\n', f);
		}
	}
}

void render_snapdiff_md(FILE *f, const void *ctx)
{
	const struct snapdiff_ctx *c = ctx;
	const struct td_snap_diff *d = c->d;
	char b[4][40], m[1200];
	size_t k, i;

	fputs("### tracedoc memory: ", f);
	out_md(f, c->path_a);
	fputs(" → ", f);
	out_md(f, c->path_b);
	fputs(" (two caching-allocator snapshots)\n\n| device | peak allocated A | B | change | "
	      "peak reserved A | B | change |\n|---|---:|---:|---:|---:|---:|---:|\n", f);
	dev_rows(f, d, 1);
	overs(f, c, 1);
	for (k = 0; k < d->ndev; k++) {
		const struct td_snap_devdiff *x = &d->dev[k];
		dev_name(b[0], sizeof(b[0]), x->device);
		fprintf(f, "\n**%s at the peak by category**\n\n| category | A | B | change |\n"
			   "|---|---:|---:|---:|\n", b[0]);
		cat_rows(f, x, 1);
		if (!x->nch)
			continue;
		fprintf(f, "\n**%s: live bytes at the peak, the largest changes**\n\n| change | A | B "
			   "| allocation site |\n|---:|---:|---:|---|\n", b[0]);
		for (i = 0; i < x->nch && i < TD_SNAP_SITES; i++) {
			const struct td_snap_change *s = &x->ch[i];
			fprintf(f, "| %s | %s | %s | ", change(b[1], sizeof(b[1]), 1, s->a, s->b),
				td_fmt_bytes(b[2], sizeof(b[2]), (double)s->a),
				td_fmt_bytes(b[3], sizeof(b[3]), (double)s->b));
			out_md(f, td_mark(m, sizeof(m), s->site));
			fputs(" |\n", f);
		}
	}
}

/* one side's figures, or null when the device is not in that snapshot */
static void side_json(yajl_gen g, const char *k, const struct td_snap_dev *d, int64_t cap)
{
	out_json_key(g, k);
	if (!d) {
		yajl_gen_null(g);
		return;
	}
	yajl_gen_map_open(g);
	out_json_kint(g, "peak_allocated_bytes", d->peak);
	out_json_kint(g, "peak_reserved_bytes", d->peak_reserved);
	out_json_kint(g, "reserved_bytes", d->reserved);
	out_json_kint(g, "allocated_bytes", d->allocated);
	out_json_kint(g, "entries", (int64_t)d->events);
	render_snap_over_json(g, d, cap);
	out_json_key(g, "peak_category_bytes"); /* every category, live at the peak */
	yajl_gen_map_open(g);
	for (unsigned c = 0; c < TD_SNAP_NCAT; c++)
		out_json_kint(g, td_snap_cat_name(c), d->cats.c[c].bytes);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

void render_snapdiff_json(FILE *f, const void *ctx)
{
	const struct snapdiff_ctx *c = ctx;
	const struct td_snap_diff *d = c->d;
	yajl_gen g = out_json_new(f);
	size_t k, i;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.memory_diff/1");
	out_json_kstr(g, "base", c->path_a);
	out_json_kstr(g, "current", c->path_b);
	out_json_karray(g, "devices");
	for (k = 0; k < d->ndev; k++) {
		const struct td_snap_devdiff *x = &d->dev[k];
		yajl_gen_map_open(g);
		out_json_kint(g, "id", x->device);
		side_json(g, "base", x->a, c->device_memory);
		side_json(g, "current", x->b, c->device_memory);
		out_json_karray(g, "site_changes");
		for (i = 0; i < x->nch; i++) {
			const struct td_snap_change *s = &x->ch[i];
			yajl_gen_map_open(g);
			out_json_kstr(g, "site", s->site);
			out_json_kint(g, "base_bytes", s->a);
			out_json_kint(g, "current_bytes", s->b);
			out_json_kint(g, "base_blocks", (int64_t)s->blocks_a);
			out_json_kint(g, "current_blocks", (int64_t)s->blocks_b);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}
