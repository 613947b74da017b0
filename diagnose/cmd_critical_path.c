/* SPDX-License-Identifier: MIT */
/* tracedoc critical-path TRACE [--format text|md|json] [-o FILE] [--config FILE]
 * The path through the replay graph that holds each steady-state step, by category. */
#include <stdio.h>
#include <stdlib.h>

#include "analysis/analysis.h"
#include "diagnose/cli.h"
#include "diagnose/render_critpath.h"
#include "common/alloc.h"
#include "parser/trace.h"
#include "rules/rule.h"
#include "sizing/critpath.h"

/* Each finding's fix: its saving, and the path inside its evidence. */
static struct cp_fix *fixes_of(const struct td_report *r, const struct td_critpath *cp,
			       size_t *n)
{
	struct cp_fix *fx = td_calloc(r->findings.len + 1, sizeof(*fx));
	size_t i, k;

	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		struct td_interval *iv = td_malloc((f->evidence.len + 1) * sizeof(*iv));
		for (k = 0; k < f->evidence.len; k++) {
			const struct td_evidence *e = &TD_VEC_AT(&f->evidence, struct td_evidence, k);
			iv[k].start = e->ts;
			iv[k].end = e->ts + (e->dur > 0 ? e->dur : 0);
		}
		fx[i].rule = f->rule;
		fx[i].title = f->title;
		fx[i].savings_ns = f->savings_ns;
		fx[i].replayed = f->replayed;
		fx[i].on_path_ns = f->evidence.len ? td_critpath_within(cp, iv, f->evidence.len, NULL)
						   : -1;
		free(iv);
	}
	*n = r->findings.len;
	return fx;
}

static void critpath_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc critical-path TRACE [--format text|md|json] [-o FILE] "
		   "[--config FILE]\n"
		   "  TRACE  one trace (a rank's): per steady-state step, the path through the\n"
		   "         replay's dependency graph from the step's end back to its start, its\n"
		   "         time by category (cpu, launch, data_loading, gpu_compute,\n"
		   "         communication, copies, waits, kernel_delay; adding up to the step) and\n"
		   "         the longest pieces with their ops\n");
}

static const struct cli_render cp_out[] = {
	{"json", render_critpath_json}, {"md", render_critpath_md}, {NULL, render_critpath_text},
};

int cmd_critical_path(int argc, char **argv)
{
	static const char *const formats[] = {"text", "md", "json", NULL};
	struct cli_std s = {.format = "text"};
	const struct cli_opt opts[] = {CLI_STD_OPTS(&s), {NULL, 0, NULL, NULL}};
	struct td_trace t;
	struct td_analysis a;
	struct td_critpath cp;
	int rc;

	rc = cli_start("critical-path", &s, argc, argv, opts, critpath_usage, 1, formats);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if ((rc = cli_load_replayable("critical-path", s.ops.v[0], &s.cfg, &t, &a)) != EXIT_OK)
		return cli_end(&s, rc);
	if (td_critpath(&a, &cp) != 0) {
		fprintf(stderr, "tracedoc critical-path: %s has no host calls and GPU work to follow\n",
			s.ops.v[0]);
		rc = EXIT_INPUT;
	} else {
		struct td_report r;
		struct critpath_ctx x = {s.ops.v[0], &t, &cp, NULL, 0};
		struct cp_fix *fx;
		td_diagnose(&a, &r);
		fx = fixes_of(&r, &cp, &x.nfixes);
		x.fixes = fx;
		rc = cli_write_by(s.outp, s.format, cp_out, &x);
		free(fx);
		td_report_free(&r);
	}
	td_critpath_free(&cp);
	td_analysis_free(&a);
	td_trace_free(&t);
	return cli_end(&s, rc);
}
