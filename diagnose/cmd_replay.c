/* SPDX-License-Identifier: MIT */
/* tracedoc replay TRACE [--format text|json] [-o FILE] [--config FILE]: the trace replayed as
 * recorded through its dependency graph (replay/replay.h), against the trace: step by step,
 * over the steady-state window, and the start delays nothing in the trace explains. How far
 * to trust the savings diagnose replays. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/out.h"
#include "config/config.h"
#include "sizing/whatif.h"

struct replay_ctx {
	const char *path;
	struct td_analysis *a;
	const struct td_rp_report *rep;
	const struct td_whatif *w;
};

static void replay_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc replay TRACE [--format text|json] [-o FILE] [--config FILE]\n"
		   "  replays the trace through its dependency graph (launches, streams, waits,\n"
		   "  threads) with a modelled launch latency, and prints the measured and the\n"
		   "  replayed step times, the error and the GPU start delays the trace does not\n"
		   "  explain: how far the savings diagnose replays can be trusted\n");
}

static const char *delay_name(const struct td_replay *g, const struct td_rp_delay *d)
{
	return td_trace_name(g->t, td_rp_event(g, d->node)->name);
}

/* The replay's model of the report's device. */
static const struct td_rp_dev *main_dev(const struct replay_ctx *c)
{
	size_t i = td_whatif_dev_index(c->a, c->rep->device);
	return &c->w->g.dev[i < c->w->g.ndev ? i : 0];
}

static void out_json(FILE *f, const void *ctx)
{
	const struct replay_ctx *c = ctx;
	yajl_gen g = out_json_new(f);
	const struct td_rp_report *r = c->rep;
	const struct td_replay *gr = c->w ? &c->w->g : NULL;
	size_t i;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.replay/1");
	out_json_kstr(g, "trace", c->path);
	out_json_kbool(g, "replayed", gr != NULL);
	out_json_karray(g, "steps");
	for (i = 0; i < r->nsteps; i++) {
		yajl_gen_map_open(g);
		out_json_kint(g, "step", r->steps[i].number);
		out_json_kint(g, "measured_ns", r->steps[i].measured_ns);
		out_json_kint(g, "replayed_ns", r->steps[i].replayed_ns);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_kint(g, "window_measured_ns", r->window_measured_ns);
	out_json_kint(g, "window_replayed_ns", r->window_replayed_ns);
	out_json_kfixed(g, "window_error", r->window_error, 6);
	out_json_kfixed(g, "median_step_error", r->median_step_error, 6);
	out_json_kint(g, "unexplained_delay_ns", gr ? gr->unexplained_ns : 0);
	out_json_kint(g, "staging_ns", gr ? gr->staging_ns : 0);
	if (gr) {
		out_json_kmap(g, "graph");
		out_json_kint(g, "host_calls", (int64_t)gr->nhost);
		out_json_kint(g, "gpu_ops", (int64_t)(gr->n - gr->nhost));
		out_json_kint(g, "waits", (int64_t)gr->waits);
		out_json_kint(g, "blocking_copies", (int64_t)gr->blocking_copies);
		out_json_kint(g, "cross_stream", (int64_t)gr->cross_edges);
		out_json_kint(g, "forks", (int64_t)gr->forks);
		out_json_kint(g, "joins", (int64_t)gr->joins);
		out_json_kint(g, "loader_waits", (int64_t)gr->gates.len);
		out_json_kint(g, "copy_engine", (int64_t)gr->engine_edges);
		out_json_kint(g, "launch_queue", (int64_t)gr->queue_edges);
		out_json_kint(g, "blocked_launches", (int64_t)gr->blocked_launches);
		out_json_kint(g, "launch_queue_depth", gr->ndev ? main_dev(c)->queue_depth : 0);
		out_json_kint(g, "wait_tail_ns", gr->tail);
		yajl_gen_map_close(g);
		if (gr->ndev) { /* the host link of the main device, as a pinned copy is replayed */
			const struct td_rp_dev *dv = main_dev(c);
			out_json_kmap(g, "pinned_mb_per_s");
			out_json_kint(g, "htod", dv->pinned[0]);
			out_json_kint(g, "dtoh", dv->pinned[1]);
			out_json_kstr(g, "htod_from", (dv->pinned_measured & 1) ? "trace" : "table");
			out_json_kstr(g, "dtoh_from", (dv->pinned_measured & 2) ? "trace" : "table");
			yajl_gen_map_close(g);
		}
		out_json_karray(g, "delays");
		for (i = 0; i < gr->ndelays; i++) {
			const struct td_event *e = td_rp_event(gr, gr->delays[i].node);
			yajl_gen_map_open(g);
			out_json_kstr(g, "name", delay_name(gr, &gr->delays[i]));
			out_json_kint(g, "ts_ns", e->ts);
			out_json_kint(g, "delay_ns", gr->delays[i].ns);
			yajl_gen_map_close(g);
		}
		yajl_gen_array_close(g);
	}
	out_json_end(g, f);
}

static void out_text(FILE *f, const void *ctx)
{
	const struct replay_ctx *c = ctx;
	const struct td_rp_report *r = c->rep;
	const struct td_replay *g = c->w ? &c->w->g : NULL;
	char b1[32], b2[32], b3[32], line[512];
	size_t i;

	fprintf(f, "replay     ");
	out_text_name(f, c->path, 0);
	fputc('\n', f);
	if (!g) {
		fprintf(f, "nothing to replay: the trace has no runtime calls or no GPU ops\n");
		return;
	}
	snprintf(line, sizeof(line), "%zu host calls, %zu GPU ops; %llu waits, %llu blocking "
		 "copies, %llu other-stream edges, %llu copy-engine edges, %llu forks, %llu joins",
		 g->nhost, g->n - g->nhost, (unsigned long long)g->waits,
		 (unsigned long long)g->blocking_copies, (unsigned long long)g->cross_edges,
		 (unsigned long long)g->engine_edges, (unsigned long long)g->forks,
		 (unsigned long long)g->joins);
	if (g->gates.len) { /* the loop held where it waited for the workers' batches */
		size_t o = strlen(line);
		snprintf(line + o, sizeof(line) - o, ", %zu waits for the DataLoader's workers",
			 g->gates.len);
	}
	if (g->queue_edges) { /* launches held by a full launch queue */
		size_t o = strlen(line);
		snprintf(line + o, sizeof(line) - o, "; a launch queue %lld ops deep (%llu launches "
			 "blocked on it)", (long long)main_dev(c)->queue_depth,
			 (unsigned long long)g->blocked_launches);
	}
	fputs("graph      ", f);
	out_text_wrap(f, line, 11, 11, 100);
	fputc('\n', f);
	if (r->nsteps) {
		fprintf(f, "\n  step    measured    replayed    error\n");
		for (i = 0; i < r->nsteps; i++) {
			const struct td_rp_step *s = &r->steps[i];
			fprintf(f, "%6lld  %10s  %10s  %+6.1f%%\n", (long long)s->number,
				td_fmt_dur(b1, sizeof(b1), s->measured_ns),
				td_fmt_dur(b2, sizeof(b2), s->replayed_ns),
				s->measured_ns ? 100.0 * (double)(s->replayed_ns - s->measured_ns) /
						 (double)s->measured_ns
					       : 0.0);
		}
		fputc('\n', f);
	}
	fprintf(f, "window     %s measured, %s replayed (%+.1f%%)", td_fmt_dur(b1, sizeof(b1),
		r->window_measured_ns), td_fmt_dur(b2, sizeof(b2), r->window_replayed_ns),
		100.0 * r->window_error);
	if (r->nsteps)
		fprintf(f, "; median step error %.1f%%", 100.0 * r->median_step_error);
	fputc('\n', f);
	if (g->staging_ns) {
		snprintf(line, sizeof(line), "%s: pageable copies started late while the host staged "
			 "them (kept in the replay)", td_fmt_dur(b1, sizeof(b1), g->staging_ns));
		fputs("staging    ", f);
		out_text_wrap(f, line, 11, 11, 100);
		fputc('\n', f);
	}
	if (g->pageable_copies) {
		const struct td_rp_dev *dv = main_dev(c);
		static const char *const from[] = {"a table of host links, by the device's name",
						   "the trace's pinned copies"};
		int up = dv->pinned_measured & 1, down = (dv->pinned_measured >> 1) & 1;
		if (up == down)
			snprintf(line, sizeof(line), "%llu pageable cop%s; made pinned, one would run at "
				 "%.1f GB/s to the device and %.1f GB/s back (%s)",
				 (unsigned long long)g->pageable_copies,
				 g->pageable_copies == 1 ? "y" : "ies", (double)dv->pinned[0] / 1000.0,
				 (double)dv->pinned[1] / 1000.0, from[up]);
		else
			snprintf(line, sizeof(line), "%llu pageable cop%s; made pinned, one would run at "
				 "%.1f GB/s to the device (%s) and %.1f GB/s back (%s)",
				 (unsigned long long)g->pageable_copies,
				 g->pageable_copies == 1 ? "y" : "ies", (double)dv->pinned[0] / 1000.0,
				 from[up], (double)dv->pinned[1] / 1000.0, from[down]);
		fputs("pinned     ", f);
		out_text_wrap(f, line, 11, 11, 100);
		fputc('\n', f);
	}
	if (!g->unexplained_ns) {
		fprintf(f, "unexplained start delay: none\n");
		return;
	}
	snprintf(line, sizeof(line), "unexplained start delay %s: GPU work that started later than "
		 "its launch, its stream and the other streams allow (an event or work outside the "
		 "trace, a cold first launch); largest:", td_fmt_dur(b1, sizeof(b1), g->unexplained_ns));
	out_text_wrap(f, line, 0, 2, 100);
	fputc('\n', f);
	for (i = 0; i < g->ndelays && i < 8; i++) {
		const struct td_event *e = td_rp_event(g, g->delays[i].node);
		fprintf(f, "  %9s  ts %s  ", td_fmt_dur(b2, sizeof(b2), g->delays[i].ns),
			td_fmt_ts(b3, sizeof(b3), e->ts));
		out_text_name(f, delay_name(g, &g->delays[i]), 60);
		fputc('\n', f);
	}
}

static const struct cli_render render[] = {{"json", out_json}, {NULL, out_text}};

int cmd_replay(int argc, char **argv)
{
	static const char *const formats[] = {"text", "json", NULL};
	struct cli_std s = {.format = "text"};
	const struct cli_opt opts[] = {CLI_STD_OPTS(&s), {NULL, 0, NULL, NULL}};
	struct td_trace t;
	struct td_analysis a;
	struct td_rp_report rep;
	struct replay_ctx c;
	int rc;

	rc = cli_start("replay", &s, argc, argv, opts, replay_usage, 1, formats);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if ((rc = cli_load_replayable("replay", s.ops.v[0], &s.cfg, &t, &a)) == EXIT_OK) {
		td_whatif_report(&a, &rep);
		c.path = s.ops.v[0];
		c.a = &a;
		c.rep = &rep;
		c.w = td_an_whatif(&a);
		rc = cli_write_by(s.outp, s.format, render, &c);
		td_rp_report_free(&rep);
		td_analysis_free(&a);
		td_trace_free(&t);
	}
	return cli_end(&s, rc);
}
