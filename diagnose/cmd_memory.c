/* SPDX-License-Identifier: MIT */
/* tracedoc memory FILE [SNAPSHOT_B] [--device-memory SIZE] [--format text|md|json] [-o FILE]
 *                 [--config FILE]
 * Device memory from a trace's [memory] samples, or from a caching-allocator snapshot; two
 * snapshots compared. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/out.h"
#include "diagnose/render_memory.h"
#include "diagnose/render_memory_diff.h"
#include "parser/input.h"
#include "config/config.h"

static void memory_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc memory FILE [B] [--device-memory SIZE] [--format text|md|json]\n"
		   "                       [-o FILE] [--config FILE]\n"
		   "  FILE  a trace recorded with profile_memory=True: per device the allocated and\n"
		   "        reserved peaks, what ran there, the capacity and headroom, allocated\n"
		   "        memory at each step, and the memory findings (near full, growing,\n"
		   "        fragmented); or a caching-allocator snapshot, the pickle of\n"
		   "        torch.cuda.memory._dump_snapshot() (nothing in it is run) or its dict\n"
		   "        as JSON: the peak, the allocation sites holding the most there, and\n"
		   "        at each out-of-memory what was live and why it failed, with the fix\n"
		   "  B     a second snapshot: the two compared, FILE the base: the peaks (allocated\n"
		   "        and reserved, replayed) and the allocation sites whose live bytes at\n"
		   "        the peak changed most\n"
		   "  --device-memory  the snapshot's device's memory (a snapshot does not say):\n"
		   "        bytes, or with KB MB GB TB (10^3...) or KiB MiB GiB TiB (2^10...),\n"
		   "        e.g. 81920MiB; a figure above it is called out as impossible\n");
}

static const struct cli_render mem_out[] = {
	{"json", render_memory_json}, {"md", render_memory_md}, {NULL, render_memory_text},
};

static const struct cli_render snap_out[] = {
	{"json", render_snapshot_json}, {"md", render_snapshot_md}, {NULL, render_snapshot_text},
};

static const struct cli_render diff_out[] = {
	{"json", render_snapdiff_json}, {"md", render_snapdiff_md}, {NULL, render_snapdiff_text},
};

/* path read as a snapshot into *snap (EXIT_OK), else the error printed: a trace named as one */
static int read_snapshot(const char *path, struct td_snapshot *snap)
{
	struct cli_doc d;
	char msg[1024];
	int rc;

	if ((rc = cli_doc_open(path, REPORT_DOC_MAX, &d, msg, sizeof(msg))) != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
		return rc;
	}
	if (d.kind != TD_SNIFF_SNAPSHOT) {
		cli_doc_close(&d);
		fprintf(stderr, "tracedoc memory: %s is not a caching-allocator snapshot: two files "
				"are compared only as snapshots (tracedoc diff compares two traces)\n",
			cli_shown(path, msg, sizeof(msg)));
		return EXIT_INPUT;
	}
	return cli_doc_snapshot(&d, snap);
}

/* --device-memory's value: bytes, or a number with a decimal (KB...) or binary (KiB...) unit;
 * -1 when it is none of these */
static int64_t size_arg(const char *v)
{
	static const struct {
		const char *unit;
		double mult;
	} units[] = {
		{"", 1}, {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
		{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
		{"TiB", 1099511627776.0},
	};
	char *end;
	double x;
	size_t k;

	if (!v || !*v || !(v[0] >= '0' && v[0] <= '9'))
		return -1;
	x = strtod(v, &end);
	for (k = 0; k < sizeof(units) / sizeof(units[0]); k++)
		if (!strcmp(end, units[k].unit)) {
			x *= units[k].mult;
			return x >= 1 && x < 9.2e18 ? (int64_t)x : -1;
		}
	return -1;
}

/* tracedoc memory A B */
static int compare(struct cli_std *s, int64_t cap)
{
	struct td_snapshot a, b;
	struct td_snap_diff d;
	int rc;

	if ((rc = read_snapshot(s->ops.v[0], &a)) != EXIT_OK)
		return rc;
	if ((rc = read_snapshot(s->ops.v[1], &b)) == EXIT_OK) {
		struct snapdiff_ctx c = {s->ops.v[0], s->ops.v[1], &d, cap};
		td_snapshot_diff(&a, &b, &d);
		rc = cli_write_by(s->outp, s->format, diff_out, &c);
		td_snap_diff_free(&d);
		td_snapshot_free(&b);
	}
	td_snapshot_free(&a);
	return rc;
}

/* cli_start with one operand or two (two snapshots compared); the rest as every command */
static int start(struct cli_std *s, int argc, char **argv, const struct cli_opt *opts,
		 const char *const *formats, const char *const *devmem, int64_t *cap)
{
	int rc = cli_parse("memory", argc, argv, opts, &s->ops, memory_usage);

	if (rc == EXIT_OK && *devmem && (*cap = size_arg(*devmem)) < 0) {
		fprintf(stderr, "tracedoc memory: --device-memory '%s': not a size (bytes, or a "
				"number with KB, MB, GB, TB, KiB, MiB, GiB or TiB: 81920MiB)\n", *devmem);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK && (s->ops.n < 1 || s->ops.n > 2)) {
		memory_usage(stderr);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK && cli_one_of("memory", "--format", s->format, formats))
		rc = EXIT_USAGE;
	if (rc == EXIT_OK && (rc = cli_config(s->cfgp, &s->cfg)) == EXIT_OK &&
	    (rc = cli_peaks(s->peaksp, &s->cfg)) != EXIT_OK)
		td_config_free(&s->cfg);
	if (rc != EXIT_OK)
		cli_operands_free(&s->ops);
	return rc;
}

int cmd_memory(int argc, char **argv)
{
	static const char *const formats[] = {"text", "md", "json", NULL};
	struct cli_std s = {.format = "text"};
	const char *devmem = NULL;
	int64_t cap = 0;
	const struct cli_opt opts[] = {CLI_STD_OPTS(&s), {"--device-memory", 0, &devmem, NULL},
				       {NULL, 0, NULL, NULL}};
	const char *path;
	struct cli_doc d;
	char msg[1024];
	int rc;

	rc = start(&s, argc, argv, opts, formats, &devmem, &cap);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (s.ops.n == 2)
		return cli_end(&s, compare(&s, cap));
	path = s.ops.v[0];
	if ((rc = cli_doc_open(path, REPORT_DOC_MAX, &d, msg, sizeof(msg))) != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
	} else if (d.kind == TD_SNIFF_SNAPSHOT) {
		struct td_snapshot snap;
		if ((rc = cli_doc_snapshot(&d, &snap)) == EXIT_OK) {
			struct snap_ctx c = {path, &snap, cap};
			rc = cli_write_by(s.outp, s.format, snap_out, &c);
			td_snapshot_free(&snap);
		}
	} else {
		struct td_trace t;
		struct td_analysis a;
		struct td_report r;
		struct td_mem_report m;
		td_trace_init(&t);
		if ((rc = cli_doc_trace(&d, &t)) == EXIT_OK) {
			struct mem_ctx c;
			td_analysis_run(&a, &t, &s.cfg);
			td_mem_report(&a, &m);
			td_report_init(&r);
			rule_memory.run(&a, &r);
			td_report_sort(&r);
			c.path = path;
			c.mem = &m;
			c.r = &r;
			rc = cli_write_by(s.outp, s.format, mem_out, &c);
			td_report_free(&r);
			td_mem_report_free(&m);
			td_analysis_free(&a);
		}
		td_trace_free(&t);
	}
	return cli_end(&s, rc);
}
