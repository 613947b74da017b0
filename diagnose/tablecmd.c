/* SPDX-License-Identifier: MIT */
#include "diagnose/tablecmd.h"

#include <stdlib.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"

void table_cmd_init(struct table_cmd *c)
{
	memset(c, 0, sizeof(*c));
	c->format = "text";
}

int table_cmd_load(struct table_cmd *c, const char *cmd, const char *path)
{
	static const char *const formats[] = {"text", "md", "json", "csv", NULL};
	static const char *const windows[] = {"steps", "all", NULL};
	int rc, top = 0;

	if (cli_one_of(cmd, "--format", c->format, formats) ||
	    (c->window && cli_one_of(cmd, "--window", c->window, windows)) ||
	    (c->top && cli_count(cmd, "--top", c->top, 1, 1000000000, &top)))
		return EXIT_USAGE;
	c->top_n = (size_t)top;
	c->window_all = c->window && !strcmp(c->window, "all");
	if ((rc = cli_config(c->cfgp, &c->cfg)) != EXIT_OK)
		return rc;
	if ((rc = cli_peaks(c->peaksp, &c->cfg)) != EXIT_OK) {
		td_config_free(&c->cfg);
		return rc;
	}
	td_trace_init(&c->t);
	if ((rc = cli_load(path, &c->t)) != EXIT_OK) {
		td_trace_free(&c->t);
		td_config_free(&c->cfg);
		return rc;
	}
	if ((rc = cli_capture(cmd, c->capturep, &c->t, &c->cap, &c->gmap)) != EXIT_OK) {
		td_trace_free(&c->t);
		td_config_free(&c->cfg);
		return rc;
	}
	td_analysis_run(&c->a, &c->t, &c->cfg);
	c->a.gmap = &c->gmap;
	c->loaded = 1;
	return EXIT_OK;
}

int table_cmd_sort(struct table_cmd *c, const char *cmd, struct td_table *t,
		   const char *const *aliases, const char *dflt)
{
	const char *want = c->sort ? c->sort : dflt;
	int col = td_table_col(t, want);
	size_t i;

	for (i = 0; col < 0 && aliases && aliases[i]; i += 2)
		if (!strcmp(aliases[i], want))
			col = td_table_col(t, aliases[i + 1]);
	if (col < 0) {
		fprintf(stderr, "tracedoc %s: --sort %s: not a column; one of:", cmd, want);
		for (i = 0; i < t->ncols; i++)
			fprintf(stderr, "%s %s", i ? "," : "", t->cols[i].id);
		for (i = 0; aliases && aliases[i]; i += 2)
			fprintf(stderr, ", %s", aliases[i]);
		fputc('\n', stderr);
		return EXIT_USAGE;
	}
	td_table_sort(t, (size_t)col);
	return EXIT_OK;
}

struct write_ctx {
	const struct td_table *t;
	const struct table_view *v;
};

static void render(FILE *f, const char *format, int color, const void *ctx)
{
	const struct write_ctx *w = ctx;

	(void)color;
	if (!strcmp(format, "json"))
		render_table_json(f, w->t, w->v);
	else if (!strcmp(format, "csv"))
		render_table_csv(f, w->t, w->v);
	else if (!strcmp(format, "md"))
		render_table_md(f, w->t, w->v);
	else
		render_table_text(f, w->t, w->v);
}

int table_cmd_write(struct table_cmd *c, const struct td_table *t, const char *title,
		    const char *footer)
{
	struct table_view v;
	struct write_ctx w = {t, &v};
	int people = !strcmp(c->format, "text") || !strcmp(c->format, "md");

	memset(&v, 0, sizeof(v));
	v.title = title;
	v.footer = footer;
	/* people read the top 15; programs get every row unless --top says otherwise */
	v.top = c->top_n ? c->top_n : people ? 15 : 0;
	v.wide = c->wide;
	return cli_write(c->outp, c->format, NULL, render, &w);
}

int table_cmd_end(struct table_cmd *c, struct td_table *t, struct cli_operands *ops, int rc)
{
	td_table_free(t);
	table_cmd_free(c);
	cli_operands_free(ops);
	return rc;
}

void table_cmd_free(struct table_cmd *c)
{
	if (c->loaded) {
		td_analysis_free(&c->a);
		td_trace_free(&c->t);
		td_graph_map_free(&c->gmap);
		td_config_free(&c->cfg);
	}
	c->loaded = 0;
}
