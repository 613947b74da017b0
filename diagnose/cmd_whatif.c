/* SPDX-License-Identifier: MIT */
/* tracedoc whatif TRACE [--fix RULE,...] [--format text|json] [-o FILE] [--config FILE]: the
 * fixes diagnose replays, one at a time and together. Savings of separate fixes do not add
 * up: the combined replay says what they win together and the step time to expect. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/out.h"
#include "config/config.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

struct whatif_ctx {
	const char *path;
	struct td_analysis *a;
	const struct td_report *r;
	size_t dev;                 /* the device whose window is replayed */
	const struct td_finding **fx; /* the replayed fixes chosen, in the report's order */
	size_t nfx;
	int64_t base, measured;     /* the window replayed as recorded, and measured */
	int64_t together;           /* the window replayed with every chosen fix; -1: none */
	size_t steps;
};

static void whatif_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc whatif TRACE [--fix RULE,...] [--format text|json] [-o FILE]\n"
		   "                       [--config FILE]\n"
		   "  replays the trace with each fix diagnose sizes by replay, one at a time and\n"
		   "  all together: what each wins, and the step time to expect with all of them\n"
		   "  --fix  only these rules' fixes (e.g. dataloader,sync-stall)\n");
}

/* 1 when rule is in the comma-separated list (NULL: every rule). */
static int chosen(const char *list, const char *rule)
{
	size_t n = strlen(rule);
	const char *p = list;

	if (!list)
		return 1;
	while ((p = strstr(p, rule)) != NULL) {
		if ((p == list || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

static int64_t per_step(const struct whatif_ctx *c, int64_t ns)
{
	return c->steps ? ns / (int64_t)c->steps : ns;
}

static void out_json(FILE *f, const void *ctx)
{
	const struct whatif_ctx *c = ctx;
	yajl_gen g = out_json_new(f);
	size_t i;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.whatif/1");
	out_json_kstr(g, "trace", c->path);
	out_json_kint(g, "device", c->a->ndev ? c->a->dev[c->dev].device : -1);
	out_json_kint(g, "steps", (int64_t)c->steps);
	out_json_kint(g, "window_measured_ns", c->measured);
	out_json_kint(g, "window_replayed_ns", c->base);
	out_json_karray(g, "fixes");
	for (i = 0; i < c->nfx; i++) {
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", c->fx[i]->rule);
		out_json_kstr(g, "title", c->fx[i]->title);
		out_json_kint(g, "saves_ns", c->fx[i]->replay_ns);
		out_json_kint(g, "saves_per_step_ns", per_step(c, c->fx[i]->replay_ns));
		out_json_kint(g, "window_after_ns", c->base - c->fx[i]->replay_ns);
		if (c->fx[i]->after) { /* what it wins once that fix is in */
			out_json_kstr(g, "after", c->fx[i]->after);
			out_json_kint(g, "saves_after_ns", c->fx[i]->after_ns);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_key(g, "together");
	if (c->together < 0) {
		yajl_gen_null(g);
	} else {
		yajl_gen_map_open(g);
		out_json_kint(g, "saves_ns", c->base - c->together);
		out_json_kint(g, "saves_per_step_ns", per_step(c, c->base - c->together));
		out_json_kint(g, "window_after_ns", c->together);
		out_json_kint(g, "step_after_ns", per_step(c, c->together));
		yajl_gen_map_close(g);
	}
	out_json_karray(g, "not_replayed");
	for (i = 0; i < c->r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&c->r->findings, struct td_finding, i);
		if (fd->replayed || fd->risk)
			continue;
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", fd->rule);
		out_json_kint(g, "est_savings_ns", fd->savings_ns);
		out_json_kstr(g, "sizing", fd->bounded ? "bound" : "idle");
		if (fd->after) /* sized after that fix, as the report's finding is */
			out_json_kstr(g, "sized_after", fd->after);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}

static void out_text(FILE *f, const void *ctx)
{
	const struct whatif_ctx *c = ctx;
	char b1[32], b2[32], b3[32], line[2048] = "";
	size_t i, n = 0;
	int bound;

	fprintf(f, "whatif     ");
	out_text_name(f, c->path, 0);
	fputc('\n', f);
	if (c->base < 0) {
		fprintf(f, "nothing to replay: the trace has no runtime calls or no GPU ops\n");
		return;
	}
	fprintf(f, "window     %s replayed as recorded (measured %s)", td_fmt_dur(b1, sizeof(b1),
		c->base), td_fmt_dur(b2, sizeof(b2), c->measured));
	if (c->steps)
		fprintf(f, ", %zu steps: %s per step", c->steps,
			td_fmt_dur(b3, sizeof(b3), per_step(c, c->base)));
	fputc('\n', f);
	if (!c->nfx) {
		fprintf(f, "no finding's fix is replayed in this trace\n");
	} else {
		fprintf(f, "\n  %-28s %12s %12s %12s\n", "fix", "saves", c->steps ? "per step" : "",
			c->steps ? "step after" : "window after");
		for (i = 0; i <= c->nfx; i++) {
			char label[64];
			int64_t won;
			if (i == c->nfx && (c->nfx < 2 || c->together < 0))
				break;
			if (i < c->nfx) {
				snprintf(label, sizeof(label), "%s", c->fx[i]->rule);
				won = c->fx[i]->replay_ns;
			} else {
				snprintf(label, sizeof(label), "all %zu together", c->nfx);
				won = c->base - c->together;
			}
			fprintf(f, "  %-28s %12s %12s %12s", label, td_fmt_dur(b1, sizeof(b1), won),
				c->steps ? td_fmt_dur(b2, sizeof(b2), per_step(c, won)) : "",
				td_fmt_dur(b3, sizeof(b3), per_step(c, c->base - won)));
			if (i < c->nfx && c->fx[i]->after) /* alone it frees time the loop waits */
				fprintf(f, "   %s after the %s fix", td_fmt_dur(b1, sizeof(b1),
									c->fx[i]->after_ns),
					c->fx[i]->after);
			fputc('\n', f);
		}
	}
	for (i = 0, bound = 0; i < c->r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&c->r->findings, struct td_finding, i);
		bound |= !fd->replayed && !fd->risk && fd->bounded;
	}
	for (i = 0; i < c->r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&c->r->findings, struct td_finding, i);
		size_t len = strlen(line);
		if (fd->replayed || fd->risk)
			continue;
		snprintf(line + len, sizeof(line) - len, "%s%s %s%s%s%s%s", n++ ? ", " :
			 bound ? "not replayed (sized by the GPU idle they claim, or at most what the "
				 "replay without their mechanism wins): "
			       : "not replayed (sized by the GPU idle they claim): ", fd->rule,
			 td_fmt_dur(b1, sizeof(b1), fd->savings_ns), fd->bounded ? " at most" : "",
			 fd->after ? " after the " : "", fd->after ? fd->after : "",
			 fd->after ? " fix" : "");
	}
	if (n) {
		fputc('\n', f);
		out_text_wrap(f, line, 0, 2, 100);
		fputc('\n', f);
	}
}

static const struct cli_render render[] = {{"json", out_json}, {NULL, out_text}};

/* The chosen replayed fixes of the main device, and the replay of all of them at once. */
static void replay_all(struct whatif_ctx *c, const char *fix)
{
	struct td_vec ed;
	size_t i;

	c->fx = td_calloc(c->r->findings.len + 1, sizeof(*c->fx));
	td_vec_init(&ed, sizeof(struct td_rp_edit));
	for (i = 0; i < c->r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&c->r->findings, struct td_finding, i);
		size_t k;
		if (!fd->replayed || td_an_dev_index(c->a, fd->device) != (int)c->dev ||
		    !chosen(fix, fd->rule))
			continue;
		c->fx[c->nfx++] = fd;
		for (k = 0; k < fd->edits.len; k++)
			*(struct td_rp_edit *)td_vec_push(&ed) =
				TD_VEC_AT(&fd->edits, struct td_rp_edit, k);
	}
	c->together = c->nfx ? td_whatif_window(c->a, c->dev, ed.data, ed.len) : -1;
	td_vec_free(&ed);
}

int cmd_whatif(int argc, char **argv)
{
	const char *fix = NULL;
	static const char *const formats[] = {"text", "json", NULL};
	struct cli_std s = {.format = "text"};
	const struct cli_opt opts[] = {
		CLI_STD_OPTS(&s), {"--fix", 0, &fix, NULL}, {NULL, 0, NULL, NULL},
	};
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	struct whatif_ctx c;
	int rc;

	rc = cli_start("whatif", &s, argc, argv, opts, whatif_usage, 1, formats);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (fix) { /* every name a rule's */
		char *dup = td_strndup(fix, strlen(fix)), *tok, *save = NULL;
		for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!td_rule_known(tok)) {
				const char *near = td_rule_nearest(tok);
				fprintf(stderr, "tracedoc whatif: --fix: no rule '%s'%s%s%s\n", tok,
					near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
				rc = EXIT_USAGE;
			}
		free(dup);
		if (rc != EXIT_OK)
			return cli_end(&s, rc);
	}
	if ((rc = cli_load_replayable("whatif", s.ops.v[0], &s.cfg, &t, &a)) == EXIT_OK) {
		td_diagnose(&a, &r);
		memset(&c, 0, sizeof(c));
		c.path = s.ops.v[0];
		c.a = &a;
		c.r = &r;
		c.dev = a.ndev ? td_whatif_main_device(&a) : 0;
		c.base = a.ndev ? td_whatif_base(&a, c.dev) : -1;
		c.measured = a.ndev ? td_whatif_measured(&a, c.dev) : -1;
		c.steps = td_an_steps(&a);
		c.together = -1;
		if (c.base >= 0)
			replay_all(&c, fix);
		rc = cli_write_by(s.outp, s.format, render, &c);
		free(c.fx);
		td_report_free(&r);
		td_analysis_free(&a);
		td_trace_free(&t);
	}
	return cli_end(&s, rc);
}
