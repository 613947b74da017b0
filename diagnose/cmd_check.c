/* SPDX-License-Identifier: MIT */
/* tracedoc check TRACE [--format text|md|json] [-o FILE] [--config FILE]
 * Can this trace be trusted: PyTorch's trace validator rules and tracedoc's own, each with
 * what it found and which findings that weakens. */
#include <stdio.h>

#include "analysis/check.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/render_check.h"
#include "parser/trace.h"

static void check_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc check TRACE [--format text|md|json] [-o FILE] [--config FILE]\n"
		   "  TRACE  a profiler trace: PyTorch's six trace validator rules\n"
		   "         (torch/profiler/_trace_validator.py, the same names and counts) and\n"
		   "         tracedoc's own (records lost, the window cut, ops without their launch\n"
		   "         or External id, stacks, shapes, memory or sync records left out, clock\n"
		   "         causality, the device time behind graph launches); each flag says which\n"
		   "         findings it weakens. The health: green, yellow or red.\n");
}

static const struct cli_render check_out[] = {
	{"json", render_check_json}, {"md", render_check_md}, {NULL, render_check_text},
};

int cmd_check(int argc, char **argv)
{
	static const char *const formats[] = {"text", "md", "json", NULL};
	struct cli_std s = {.format = "text"};
	const struct cli_opt opts[] = {CLI_STD_OPTS(&s), {NULL, 0, NULL, NULL}};
	struct cli_doc d;
	struct td_trace t;
	char msg[1024];
	int rc;

	rc = cli_start("check", &s, argc, argv, opts, check_usage, 1, formats);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if ((rc = cli_doc_open(s.ops.v[0], REPORT_DOC_MAX, &d, msg, sizeof(msg))) != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
		return cli_end(&s, rc);
	}
	td_trace_init(&t);
	if ((rc = cli_doc_trace(&d, &t)) == EXIT_OK) {
		static struct td_health c; /* large: off the stack */
		struct check_ctx x;
		td_health_run(&t, &c);
		x.path = s.ops.v[0];
		x.c = &c;
		rc = cli_write_by(s.outp, s.format, check_out, &x);
	}
	td_trace_free(&t);
	return cli_end(&s, rc);
}
