/* SPDX-License-Identifier: MIT */
/* tracedoc check's output (diagnose/render_check.h). */
#include "diagnose/render_check.h"

#include <string.h>

#include "analysis/check.h"
#include "diagnose/msg.h"
#include "diagnose/out.h"

static void fmt_ts(char *b, size_t cap, int64_t ts)
{
	if (ts)
		snprintf(b, cap, "at %.3f ms: ", (double)ts / 1e6);
	else
		b[0] = '\0';
}

void render_check_text(FILE *f, const void *ctx)
{
	const struct check_ctx *x = ctx;
	const struct td_health *c = x->c;
	char line[512], b[64];
	size_t i, k;

	td_health_line(c, line, sizeof(line));
	fprintf(f, "%s\nhealth ", cli_shown(x->path, b, sizeof(b)));
	out_text_wrap(f, line, 7, 2, 100);
	fputc('\n', f);
	for (i = 0; i < c->n; i++) {
		const struct td_health_rule *r = &c->rules[i];
		fprintf(f, "%s%-4s %-36s %9llu checked %8llu violated  [%s]\n", i ? "" : "\n",
			r->violations ? (r->level == TD_HEALTH_RED ? "FAIL" : r->level ==
					 TD_HEALTH_YELLOW ? "WARN" : "NOTE") : "ok", r->rule,
			(unsigned long long)r->checked, (unsigned long long)r->violations, r->source);
		if (!r->violations)
			continue;
		fputs("     weakens: ", f);
		out_text_wrap(f, r->weakens, 14, 7, 100);
		fputc('\n', f);
		for (k = 0; k < r->nex; k++) {
			fmt_ts(b, sizeof(b), r->ex[k].ts);
			fprintf(f, "     - %s", b);
			out_text_name(f, r->ex[k].text, 200);
			fputc('\n', f);
		}
	}
}

void render_check_md(FILE *f, const void *ctx)
{
	const struct check_ctx *x = ctx;
	const struct td_health *c = x->c;
	char line[512], b[64];
	size_t i, k;

	td_health_line(c, line, sizeof(line));
	fputs("# tracedoc check: ", f);
	out_md(f, cli_shown(x->path, b, sizeof(b)));
	fputs("\n\n**health** ", f);
	out_md(f, line);
	fputs("\n\n| rule | source | checked | violations | weakens |\n|---|---|---:|---:|---|\n", f);
	for (i = 0; i < c->n; i++) {
		const struct td_health_rule *r = &c->rules[i];
		fprintf(f, "| `%s` | %s | %llu | %llu | ", r->rule, r->source,
			(unsigned long long)r->checked, (unsigned long long)r->violations);
		if (r->violations)
			out_md(f, r->weakens);
		fputs(" |\n", f);
	}
	for (i = 0; i < c->n; i++) {
		const struct td_health_rule *r = &c->rules[i];
		if (!r->nex)
			continue;
		fprintf(f, "\n## `%s`\n\n", r->rule);
		for (k = 0; k < r->nex; k++) {
			fmt_ts(b, sizeof(b), r->ex[k].ts);
			fputs("- ", f);
			out_md(f, b);
			out_md(f, r->ex[k].text);
			fputc('\n', f);
		}
	}
}

void render_check_json_rules(yajl_gen g, const struct td_health *c)
{
	char line[512];
	size_t i, k;

	td_health_line(c, line, sizeof(line));
	out_json_kstr(g, "health", td_health_level_name(c->health));
	out_json_kstr(g, "health_line", line);
	out_json_karray(g, "rules");
	for (i = 0; i < c->n; i++) {
		const struct td_health_rule *r = &c->rules[i];
		yajl_gen_map_open(g);
		out_json_kstr(g, "rule", r->rule);
		out_json_kstr(g, "source", r->source);
		out_json_kint(g, "checked", (int64_t)r->checked);
		out_json_kint(g, "violations", (int64_t)r->violations);
		out_json_kstr(g, "level", r->violations ? td_health_level_name(r->level) : "green");
		out_json_kstr(g, "checks", r->what);
		out_json_kstr_or_null(g, "weakens", r->violations ? r->weakens : NULL);
		if (!strcmp(r->rule, "graph_launch_share"))
			out_json_kfixed(g, "share", r->share, 4);
		out_json_karray(g, "examples");
		for (k = 0; k < r->nex; k++) {
			yajl_gen_map_open(g);
			out_json_kint(g, "ts_ns", r->ex[k].ts);
			out_json_kstr(g, "what", r->ex[k].text);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
}

void render_check_json(FILE *f, const void *ctx)
{
	const struct check_ctx *x = ctx;
	yajl_gen g = out_json_new(f);

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.check/1");
	out_json_kstr(g, "source", x->path);
	render_check_json_rules(g, x->c);
	out_json_end(g, f);
}
