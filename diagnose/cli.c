/* SPDX-License-Identifier: MIT */
/* What the commands share above loading one trace: writing a command's output, the config, a
 * job's ranks loaded with their messages, a trace loaded and analysed for a replay. Below
 * every cmd_*.c and tablecmd.c, so no command calls another or main.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/error.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/jobload.h"
#include "diagnose/msg.h"
#include "diagnose/out.h"
#include "parser/trace.h"
#include "analysis/analysis.h"
#include "analysis/graphmap.h"
#include "config/config.h"
#include "sizing/whatif.h"

int cli_write(const char *outp, const char *format, const char *color,
	      void (*fn)(FILE *f, const char *format, int color, const void *ctx), const void *ctx)
{
	struct out_file of;
	int use_color;

	if (out_open(&of, outp) != 0) {
		cli_cannot_write(outp, errno);
		return EXIT_INTERNAL;
	}
	use_color = color && (!strcmp(color, "always") ||
			      (!strcmp(color, "auto") && (!outp || !strcmp(outp, "-")) &&
			       !strcmp(format, "text") && out_use_color(of.f)));
	fn(of.f, format, use_color, ctx);
	if (out_close(&of, 1) != 0) {
		cli_cannot_write(outp ? outp : "stdout", errno);
		return EXIT_INTERNAL;
	}
	return EXIT_OK;
}

struct by_format {
	const struct cli_render *r;
	const void *ctx;
};

static void render_by(FILE *f, const char *format, int color, const void *ctx)
{
	const struct by_format *b = ctx;
	const struct cli_render *r = b->r;

	(void)color;
	while (r->format && strcmp(r->format, format))
		r++;
	r->fn(f, b->ctx);
}

int cli_write_by(const char *outp, const char *format, const struct cli_render *r,
		 const void *ctx)
{
	struct by_format b = {r, ctx};

	return cli_write(outp, format, NULL, render_by, &b);
}

#define CONFIG_DOC_MAX (16u << 20)

/* path's text (a pipe, - included), read once whatever it is; NULL with the error printed */
static char *small_doc_text(const char *path)
{
	struct cli_doc d;
	char msg[1024], *json;

	if (cli_doc_open(path, CONFIG_DOC_MAX, &d, msg, sizeof(msg)) != EXIT_OK ||
	    !(json = cli_doc_text(&d, CONFIG_DOC_MAX, msg, sizeof(msg)))) {
		cli_doc_close(&d);
		fprintf(stderr, "tracedoc: %s\n", msg);
		return NULL;
	}
	cli_doc_close(&d);
	return json;
}

int cli_config(const char *path, struct td_config *cfg)
{
	struct td_error err;
	char msg[1024], *json;
	int rc;

	td_config_default(cfg);
	if (!path)
		return EXIT_OK;
	/* read once, whatever it is (a pipe, -), and as a config whatever its keys */
	if (!(json = small_doc_text(path))) {
		td_config_free(cfg);
		return EXIT_USAGE;
	}
	memset(&err, 0, sizeof(err));
	rc = td_config_parse(cfg, json, &err);
	free(json);
	if (rc != 0) {
		fprintf(stderr, "tracedoc: %s: %s\n", cli_shown(path, msg, sizeof(msg)), err.msg);
		td_config_free(cfg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_peaks(const char *path, struct td_config *cfg)
{
	struct td_error err;
	struct td_peaks p;
	char msg[1024], *json;

	if (!path)
		return EXIT_OK;
	if (!(json = small_doc_text(path)))
		return EXIT_USAGE;
	memset(&err, 0, sizeof(err));
	memset(&p, 0, sizeof(p));
	if (td_peaks_parse(json, &p, &err) != 0) {
		fprintf(stderr, "tracedoc: %s: %s\n", cli_shown(path, msg, sizeof(msg)), err.msg);
		free(json);
		return EXIT_USAGE;
	}
	free(cfg->peaks_json);
	cfg->peaks_json = json;
	return EXIT_OK;
}

int cli_start(const char *cmd, struct cli_std *s, int argc, char **argv,
	      const struct cli_opt *opts, void (*usage)(FILE *), int want,
	      const char *const *formats)
{
	int rc = cli_parse_exactly(cmd, argc, argv, opts, &s->ops, usage, want);

	if (rc != EXIT_OK)
		return rc;
	if ((formats && cli_one_of(cmd, "--format", s->format, formats)) ||
	    (rc = cli_config(s->cfgp, &s->cfg)) != EXIT_OK) {
		cli_operands_free(&s->ops);
		return rc ? rc : EXIT_USAGE;
	}
	if ((rc = cli_peaks(s->peaksp, &s->cfg)) != EXIT_OK) {
		td_config_free(&s->cfg);
		cli_operands_free(&s->ops);
		return rc;
	}
	return EXIT_OK;
}

int cli_end(struct cli_std *s, int rc)
{
	td_config_free(&s->cfg);
	cli_operands_free(&s->ops);
	return rc;
}

int cli_is_ranks(const char *path)
{
	struct stat st;

	if (!strcmp(path, "-"))
		return 0;
	if (stat(path, &st) != 0) /* a glob the shell left alone; else the reader says why */
		return strpbrk(path, "*?[") != NULL;
	return S_ISDIR(st.st_mode);
}

int cli_load_job_doc(const char *cmd, struct cli_doc *d, int jobs, struct td_config *cfg,
		     struct td_job *j)
{
	struct td_summary *s;
	struct td_error err;
	char msg[1024];

	if (d->regular) { /* read as any rank is */
		const char *path = d->path;
		cli_doc_close(d);
		return cli_load_job(cmd, &path, 1, jobs, cfg, j);
	}
	td_job_init(j);
	s = td_calloc(1, sizeof(*s));
	if (jobin_summary_text(d, s, msg, sizeof(msg)) != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
		free(s); /* all zero */
		return EXIT_INPUT;
	}
	memset(&err, 0, sizeof(err));
	if (td_job_build(j, s, 1, cfg, &err) != 0) {
		cli_error(cmd, err.msg);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_load_job(const char *cmd, const char *const *args, size_t nargs, int jobs,
		 struct td_config *cfg, struct td_job *j)
{
	struct job_inputs in;
	struct td_error err;
	char msg[1024], *warn[64];
	size_t nwarn = 64, i;
	int rc;

	td_job_init(j);
	if ((rc = jobin_expand(args, nargs, &in, msg, sizeof(msg))) != EXIT_OK) {
		fprintf(stderr, "tracedoc %s: %s\n", cmd, msg);
		return rc;
	}
	memset(&err, 0, sizeof(err));
	rc = jobin_load(&in, jobs > 0 ? jobs : cli_cores(), cfg, j, warn, &nwarn, &err);
	for (i = 0; i < nwarn; i++) {
		fprintf(stderr, "tracedoc: warning: ");
		out_text_wrap(stderr, warn[i], 19, 2, 100);
		fputc('\n', stderr);
		free(warn[i]);
	}
	for (i = 0; i < j->errors.len; i++) { /* each unreadable rank, with its position */
		fprintf(stderr, "tracedoc: ");
		out_text_wrap(stderr, TD_VEC_AT(&j->errors, struct td_job_error, i).message, 10, 2, 100);
		fputc('\n', stderr);
	}
	jobin_free(&in);
	if (rc == EXIT_USAGE) {
		cli_error(cmd, err.msg);
		return rc;
	}
	if (!j->n) {
		fprintf(stderr, "tracedoc %s: no rank could be read\n", cmd);
		return rc != EXIT_OK ? rc : EXIT_INPUT;
	}
	if (j->errors.len)
		fprintf(stderr, "tracedoc %s: %zu of %zu rank files could not be read; the report covers "
				"the rest\n", cmd, j->errors.len, j->errors.len + j->n);
	return rc;
}

int cli_load_replayable(const char *cmd, const char *path, struct td_config *cfg,
			struct td_trace *t, struct td_analysis *a)
{
	int rc;

	if (cli_is_ranks(path)) { /* a rank's replay does not know the others */
		fprintf(stderr, "tracedoc %s: %s holds a job's ranks; %s replays one trace at a time "
			"(one rank's file)\n", cmd, path, cmd);
		return EXIT_USAGE;
	}
	td_trace_init(t);
	if ((rc = cli_load(path, t)) != EXIT_OK) {
		td_trace_free(t);
		return rc;
	}
	td_analysis_run_jobs(a, t, cfg, cli_threads());
	return EXIT_OK;
}

int cli_capture(const char *cmd, const char *path, struct td_trace *t, struct td_trace *cap,
		struct td_graph_map *m)
{
	char shown[512];
	const char *other = "";
	int rc;

	if (!path) { /* the trace's own captures and graph annotations, if any: nothing said */
		td_graph_map_build(m, t, t);
		return EXIT_OK;
	}
	td_trace_init(cap);
	if ((rc = cli_load(path, cap)) != EXIT_OK) {
		td_trace_free(cap);
		return rc;
	}
	td_graph_map_build(m, t, cap);
	if (cap->rocm != t->rocm) /* hip* calls on one side only: another machine */
		other = cap->rocm ? " (the capture is a ROCm trace, this one a CUDA one)"
				  : " (the capture is a CUDA trace, this one a ROCm one)";
	td_trace_free(cap); /* the map holds the ops' names in t's own strings */
	cli_shown(path, shown, sizeof(shown));
	if (!m->captures)
		fprintf(stderr, "tracedoc %s: --capture %s holds no graph capture (no "
				"StreamBeginCapture .. EndCapture): no kernel attributed\n", cmd, shown);
	else if (!m->replayed)
		fprintf(stderr, "tracedoc %s: --capture %s: the trace replays no graph (no kernel of "
				"a cudaGraphLaunch / hipGraphLaunch)\n", cmd, shown);
	else
		fprintf(stderr, "tracedoc %s: --capture %s: %llu of %llu graph-replayed kernels (%llu "
				"graph launches) attributed to the ops that captured them (%llu "
				"captures of %llu kernel launches)%s%s%s\n", cmd, shown,
			(unsigned long long)m->matched, (unsigned long long)m->replayed,
			(unsigned long long)m->launches, (unsigned long long)m->captures,
			(unsigned long long)m->captured,
			m->matched + m->ambiguous < m->replayed
			? "; the rest match no capture's kernels (a capture of another server, "
			  "model or batch size?) and stay with the op around their graph launch" : "",
			m->ambiguous ? "; some match several captures with other ops: left "
				       "unattributed" : "", m->matched < m->replayed ? other : "");
	return EXIT_OK;
}
