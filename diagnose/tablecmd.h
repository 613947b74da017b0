/* SPDX-License-Identifier: MIT */
/* What the table commands (ops, kernels) share: their common options, the trace loaded and
 * analysed, the sort column (by id or key_averages' name), and the table written in the
 * chosen format. */
#ifndef TD_DIAGNOSE_TABLECMD_H
#define TD_DIAGNOSE_TABLECMD_H

#include <stdio.h>

#include "diagnose/render_table.h"
#include "parser/trace.h"
#include "analysis/analysis.h"
#include "analysis/graphmap.h"
#include "config/config.h"
#include "tables/table.h"

struct table_cmd {
	const char *format, *outp, *cfgp, *sort, *top, *window, *peaksp;
	int wide;
	size_t top_n;              /* parsed: 0 all */
	int window_all;
	struct td_config cfg;
	struct td_trace t;
	struct td_analysis a;
	int loaded;
	const char *capturep;      /* --capture FILE: the capture trace of the same server */
	struct td_trace cap;
	struct td_graph_map gmap;
};

/* The shared options, for a cli_opt table: format, output, config, sort, top, window, wide,
 * peaks, capture. */
#define TABLE_CMD_OPTS(c) \
	{"--format", 0, &(c)->format, NULL}, {"--output", 'o', &(c)->outp, NULL}, \
	{"--config", 0, &(c)->cfgp, NULL}, {"--sort", 0, &(c)->sort, NULL}, \
	{"--top", 0, &(c)->top, NULL}, {"--window", 0, &(c)->window, NULL}, \
	{"--wide", 0, NULL, &(c)->wide}, {"--peaks", 0, &(c)->peaksp, NULL}, \
	{"--capture", 0, &(c)->capturep, NULL}

void table_cmd_init(struct table_cmd *c);
/* Checks the shared options and loads, analyses path. Returns EXIT_OK or the exit code (the
 * message printed). */
int table_cmd_load(struct table_cmd *c, const char *cmd, const char *path);
/* Sorts t by --sort (a column id, or an alias of aliases: {"cpu_time_total", "cpu_total_ns",
 * ..., NULL}), else by dflt. Returns EXIT_OK or EXIT_USAGE (the columns named). */
int table_cmd_sort(struct table_cmd *c, const char *cmd, struct td_table *t,
		   const char *const *aliases, const char *dflt);
/* Writes t in --format under title (text and md) with footer (or NULL): the top --top rows
 * (text and md: 15 unless given). */
int table_cmd_write(struct table_cmd *c, const struct td_table *t, const char *title,
		    const char *footer);
void table_cmd_free(struct table_cmd *c);
/* The command is done: t, c and ops freed; returns rc. */
struct cli_operands;
int table_cmd_end(struct table_cmd *c, struct td_table *t, struct cli_operands *ops, int rc);

#endif
