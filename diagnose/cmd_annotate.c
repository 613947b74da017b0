/* SPDX-License-Identifier: MIT */
/* tracedoc annotate TRACE -o OUT [--config FILE]
 * The trace, unchanged, with a `tracedoc` process added for Perfetto and chrome://tracing: per
 * device a track of its idle gaps named by cause and activity, a counter of GPU utilization,
 * a track per finding with a slice at each piece of evidence, and the steps' critical path
 * (sizing/critpath.h), a slice per piece by category. The trace is read twice and
 * copied as it is read the second time, the added events written before the events array
 * closes: memory stays that of one reading. OUT's suffix (.json, .json.gz, .json.zst) picks its
 * compression. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/sat.h"
#include "common/error.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/out.h"
#include "diagnose/zout.h"
#include "parser/input.h"
#include "config/config.h"
#include "rules/rule.h"
#include "sizing/critpath.h"

#define UTIL_BUCKETS 200

static void annotate_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc annotate TRACE -o OUT [--config FILE]\n"
		   "  TRACE  a trace file (read twice: not stdin)\n"
		   "  OUT    .json, .json.gz or .json.zst: the trace unchanged plus a 'tracedoc'\n"
		   "         process - each GPU's idle gaps by cause, its utilization as a counter,\n"
		   "         a track per finding at its evidence - for ui.perfetto.dev\n");
}

static int ends(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

struct adder {
	yajl_gen g;
	struct td_buf buf;
	int64_t pid;
	uint64_t n, gaps, slices, counters, meta;
	uint64_t path;            /* of the slices: the critical path's */
	const struct td_trace *t;
};
#define PATH_TID 999 /* the critical path's track: below the findings' (1000 + i) */

/* microseconds with the ns digits, as Kineto writes them */
static void us(yajl_gen g, int64_t ns)
{
	char b[40];
	int64_t w = ns / 1000, r = ns % 1000;
	int n;

	if (r < 0) {
		w--;
		r += 1000;
	}
	n = snprintf(b, sizeof(b), "%lld.%03lld", (long long)w, (long long)r);
	yajl_gen_number(g, b, (size_t)n);
}

static void begin(struct adder *d, const char *ph, int64_t tid)
{
	yajl_gen_reset(d->g, ",\n");
	yajl_gen_map_open(d->g);
	out_json_key(d->g, "ph");
	out_json_str(d->g, ph);
	out_json_key(d->g, "pid");
	out_json_int(d->g, d->pid);
	out_json_key(d->g, "tid");
	out_json_int(d->g, tid);
	d->n++;
}

static void meta(struct adder *d, const char *what, int64_t tid, const char *key, const char *name,
		 int64_t sort)
{
	begin(d, "M", tid);
	out_json_key(d->g, "name");
	out_json_str(d->g, what);
	out_json_key(d->g, "ts");
	out_json_int(d->g, 0);
	out_json_key(d->g, "args");
	yajl_gen_map_open(d->g);
	out_json_key(d->g, key);
	if (name)
		out_json_str(d->g, name);
	else
		out_json_int(d->g, sort);
	yajl_gen_map_close(d->g);
	yajl_gen_map_close(d->g);
	d->meta++;
}

/* A finding's evidence on one track must nest or be disjoint: Perfetto refuses slices that
 * overlap otherwise. Each piece goes to the first lane where it does (lane 0 is the finding's
 * track, lane k its tid + k * LANE_TID); returns the lanes used. */
#define LANE_TID 1000000
static int fits(const struct td_evidence *a, const struct td_evidence *b)
{
	int64_t ae = td_sat_add(a->ts, a->dur), be = td_sat_add(b->ts, b->dur);

	return ae <= b->ts || be <= a->ts || (a->ts <= b->ts && be <= ae) ||
	       (b->ts <= a->ts && ae <= be);
}

static size_t lanes(const struct td_vec *ev, size_t *lane)
{
	size_t n = ev->len, i, j, nl = n ? 1 : 0;

	for (i = 0; i < n; i++) {
		const struct td_evidence *x = &TD_VEC_AT(ev, struct td_evidence, i);
		size_t l;
		for (l = 0;; l++) {
			for (j = 0; j < i; j++)
				if (lane[j] == l && !fits(x, &TD_VEC_AT(ev, struct td_evidence, j)))
					break;
			if (j == i)
				break;
		}
		lane[i] = l;
		if (l + 1 > nl)
			nl = l + 1;
	}
	return nl;
}

static void slice(struct adder *d, int64_t tid, int64_t ts, int64_t dur, const char *name,
		  const char *k1, const char *v1, const char *k2, int64_t v2, const char *k3,
		  const char *v3)
{
	begin(d, "X", tid);
	out_json_key(d->g, "cat");
	out_json_str(d->g, "tracedoc");
	out_json_key(d->g, "name");
	out_json_str(d->g, name);
	out_json_key(d->g, "ts");
	us(d->g, ts);
	out_json_key(d->g, "dur");
	us(d->g, dur > 0 ? dur : 0);
	out_json_key(d->g, "args");
	yajl_gen_map_open(d->g);
	if (k1) {
		out_json_key(d->g, k1);
		out_json_str(d->g, v1);
	}
	if (k2) {
		out_json_key(d->g, k2);
		out_json_int(d->g, v2);
	}
	if (k3) {
		out_json_key(d->g, k3);
		out_json_str(d->g, v3);
	}
	yajl_gen_map_close(d->g);
	yajl_gen_map_close(d->g);
}

/* The added events, as the text that goes after the trace's last event. */
/* Each step's critical path (sizing/critpath.h): one track of contiguous slices. */
static void path_track(struct adder *d, const struct td_critpath *cp)
{
	const struct td_trace *t = d->t;
	char name[600];
	size_t i;

	meta(d, "thread_name", PATH_TID, "name", "critical path, by category", 0);
	meta(d, "thread_sort_index", PATH_TID, "sort_index", NULL, 999);
	for (i = 0; i < cp->segs.len; i++) {
		const struct td_cp_seg *s = &TD_VEC_AT(&cp->segs, struct td_cp_seg, i);
		const char *what = s->ev == TD_NONE ? "host work"
				   : td_trace_name(t, td_trace_ev(t, s->ev)->name);
		snprintf(name, sizeof(name), "%s: %.500s", td_cp_cat_name((enum td_cp_cat)s->cat), what);
		slice(d, PATH_TID, s->start, s->dur, name, "category",
		      td_cp_cat_name((enum td_cp_cat)s->cat), "step", cp->steps[s->step].number, NULL,
		      NULL);
		d->slices++;
		d->path++;
	}
}

static void build(struct adder *d, const struct td_analysis *a, const struct td_report *r,
		  const struct td_critpath *cp)
{
	const struct td_trace *t = a->t;
	size_t i, k, dv;
	char name[1400], b1[32];

	d->g = yajl_gen_alloc(NULL);
	yajl_gen_config(d->g, yajl_gen_print_callback, td_buf_gen_cb, &d->buf);
	for (i = 0, d->pid = 0; i < t->tracks.len; i++) { /* a pid no thread of the trace has */
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (!tr->is_gpu && !tr->pid_is_str && tr->pid >= d->pid)
			d->pid = tr->pid + 1;
		if (tr->is_gpu && tr->device >= d->pid)
			d->pid = tr->device + 1;
	}
	if (d->pid < 1000000)
		d->pid = 1000000; /* clear of the device pids Kineto uses */
	meta(d, "process_name", 0, "name", "tracedoc", 0);
	meta(d, "process_sort_index", 0, "sort_index", NULL, -1);
	for (dv = 0; dv < a->ndev; dv++) {
		const struct td_dev_analysis *x = &a->dev[dv];
		int64_t tid = 1 + 2 * (int64_t)dv, span = x->win_end - x->win_start;
		snprintf(name, sizeof(name), "GPU %d idle, by cause", x->device);
		meta(d, "thread_name", tid, "name", name, 0);
		for (i = 0; i < x->ngaps; i++) {
			const struct td_gap *gp = &x->gaps[i];
			const struct td_finding *fd = td_report_owner(a, r, dv, gp->start);
			snprintf(name, sizeof(name), "%s%s%s", td_cause_title((enum td_cause)gp->cause),
				 gp->what ? ": " : "", gp->what ? td_an_label(a, gp->what) : "");
			slice(d, tid, gp->start, gp->end - gp->start, name, "cause",
			      td_cause_id((enum td_cause)gp->cause), "cause_ns", gp->cause_ns,
			      fd ? "finding" : NULL, fd ? fd->title : NULL);
			d->gaps++;
		}
		snprintf(name, sizeof(name), "GPU %d busy %%", x->device);
		for (k = 0; k <= UTIL_BUCKETS && span > 0; k++) {
			int64_t b0 = x->win_start + span * (int64_t)k / UTIL_BUCKETS;
			int64_t bn = x->win_start + span * (int64_t)(k + 1) / UTIL_BUCKETS;
			double u = k < UTIL_BUCKETS && bn > b0
				? 100.0 * (double)td_an_busy_between(a, dv, b0, bn) / (double)(bn - b0) : 0;
			char v[32];
			int nv = snprintf(v, sizeof(v), "%.1f", u);
			begin(d, "C", 0);
			out_json_key(d->g, "name");
			out_json_str(d->g, name);
			out_json_key(d->g, "ts");
			us(d->g, b0);
			out_json_key(d->g, "args");
			yajl_gen_map_open(d->g);
			out_json_key(d->g, "busy");
			yajl_gen_number(d->g, v, (size_t)nv);
			yajl_gen_map_close(d->g);
			yajl_gen_map_close(d->g);
			d->counters++;
		}
	}
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *fd = &TD_VEC_AT(&r->findings, struct td_finding, i);
		int64_t tid = 1000 + (int64_t)i;
		char *title = td_unmark(fd->title);
		size_t *lane = td_calloc(fd->evidence.len ? fd->evidence.len : 1, sizeof(*lane)), nl;
		snprintf(name, sizeof(name), "%zu. %s [%s]", i + 1, fd->rule,
			 td_severity_name(fd->severity));
		meta(d, "thread_name", tid, "name", name, 0);
		meta(d, "thread_sort_index", tid, "sort_index", NULL, 1000 + (int64_t)i);
		snprintf(name, sizeof(name), "%s: %s", fd->rule, title);
		free(title);
		if (!fd->evidence.len) { /* no instances: the finding over its device's window */
			size_t w;
			for (w = 0; w < a->ndev; w++)
				if (a->dev[w].device == fd->device || fd->device < 0) {
					slice(d, tid, a->dev[w].win_start, a->dev[w].win_end -
					      a->dev[w].win_start, name, "fix", fd->fix, "savings_ns",
					      fd->savings_ns, "savings", td_fmt_dur(b1, sizeof(b1),
										    fd->savings_ns));
					d->slices++;
					break;
				}
		}
		nl = lanes(&fd->evidence, lane);
		for (k = 1; k < nl; k++) { /* evidence that overlaps without nesting: its own lane */
			char ln[600];
			snprintf(ln, sizeof(ln), "%zu. %s [%s], overlapping evidence %zu", i + 1, fd->rule,
				 td_severity_name(fd->severity), k + 1);
			meta(d, "thread_name", tid + LANE_TID * (int64_t)k, "name", ln, 0);
			meta(d, "thread_sort_index", tid + LANE_TID * (int64_t)k, "sort_index", NULL,
			     1000 + (int64_t)i);
		}
		for (k = 0; k < fd->evidence.len; k++) {
			const struct td_evidence *e = &TD_VEC_AT(&fd->evidence, struct td_evidence, k);
			slice(d, tid + LANE_TID * (int64_t)lane[k], e->ts, e->dur, name, "fix", fd->fix,
			      "savings_ns", fd->savings_ns, "evidence", e->text);
			d->slices++;
		}
		free(lane);
	}
	if (cp)
		path_track(d, cp);
	yajl_gen_free(d->g);
}

/* Copies path to z with the added text (each event after ",\n") before byte `close`, the
 * events' ']'. */
static int copy(const char *path, struct zout *z, int64_t close, const char *add, size_t addn,
		int nonempty, struct td_error *err)
{
	struct td_input *in;
	static char buf[1 << 16];
	int64_t off = 0;
	ssize_t n;
	int done = 0;

	if (td_input_open(path, &in, err) != 0)
		return -1;
	while ((n = td_input_read(in, buf, sizeof(buf), err)) > 0) {
		size_t head = n;
		if (!done && off + n > close) {
			head = (size_t)(close - off);
			/* add starts with ",\n": without it after no event */
			size_t skip = !nonempty && addn >= 2 ? 2 : 0;
			if (zout_write(z, buf, head) || zout_write(z, add + skip, addn - skip) ||
			    zout_write(z, "\n", 1) ||
			    zout_write(z, buf + head, (size_t)n - head))
				goto fail;
			done = 1;
		} else if (zout_write(z, buf, (size_t)n)) {
			goto fail;
		}
		off += n;
	}
	td_input_close(in);
	if (n < 0)
		return -1;
	if (!done)
		return td_error_set(err, TD_EFORMAT, "%s changed while it was read", path), -1;
	return 0;
fail:
	td_input_close(in);
	td_error_set(err, TD_EIO, "cannot write the output: %s", strerror(errno));
	return -1;
}

int cmd_annotate(int argc, char **argv)
{
	const char *outp = NULL, *cfgp = NULL;
	const struct cli_opt opts[] = {
		{"--output", 'o', &outp, NULL}, {"--config", 0, &cfgp, NULL}, {NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};
	struct td_config cfg;
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	int rc;

	rc = cli_parse_exactly("annotate", argc, argv, opts, &ops, annotate_usage, 1);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (!outp) {
		cli_operands_free(&ops);
		annotate_usage(stderr);
		return EXIT_USAGE;
	}
	if (!ends(outp, ".json") && !ends(outp, ".json.gz") && !ends(outp, ".json.zst")) {
		fprintf(stderr, "tracedoc annotate: -o %s: the name must end in .json, .json.gz or "
				".json.zst (it picks the compression)\n", outp);
		cli_operands_free(&ops);
		return EXIT_USAGE;
	}
	if (!strcmp(ops.v[0], "-")) {
		fprintf(stderr, "tracedoc annotate: the trace is read twice: give a file, not stdin\n");
		cli_operands_free(&ops);
		return EXIT_USAGE;
	}
	if ((rc = cli_config(cfgp, &cfg)) != EXIT_OK) {
		cli_operands_free(&ops);
		return rc;
	}
	td_trace_init(&t);
	if ((rc = cli_load(ops.v[0], &t)) == EXIT_OK && t.nsys) {
		fprintf(stderr, "tracedoc annotate: %s: an Nsight Systems export: annotate adds to a "
			"JSON trace's events; run tracedoc diagnose on it (--format html for a "
			"report file)\n", ops.v[0]);
		rc = EXIT_INPUT;
	} else if (rc == EXIT_OK && (t.partial || t.events_close < 0)) {
		fprintf(stderr, "tracedoc annotate: %s: %s: there is no end of its events to add to\n",
			ops.v[0], t.partial ? "a partial trace" : "no events array");
		rc = EXIT_INPUT;
	}
	if (rc == EXIT_OK) {
		struct adder d;
		struct out_file of;
		struct td_error err;
		memset(&d, 0, sizeof(d));
		memset(&err, 0, sizeof(err));
		struct td_critpath cp;
		td_analysis_run(&a, &t, &cfg);
		td_diagnose(&a, &r);
		d.t = &t;
		build(&d, &a, &r, td_critpath(&a, &cp) == 0 ? &cp : NULL);
		td_critpath_free(&cp);
		if (out_open(&of, outp) != 0) {
			cli_cannot_write(outp, errno);
			rc = EXIT_INTERNAL;
		} else {
			struct zout *z = zout_open(of.f, outp);
			int ok = z && copy(ops.v[0], z, t.events_close, d.buf.s ? d.buf.s : "", d.buf.n,
					   t.n_trace_events > 0, &err) == 0;
			if (z && zout_close(z) != 0)
				ok = 0;
			if (out_close(&of, ok) != 0 || !ok) {
				fprintf(stderr, "tracedoc annotate: %s\n", *err.msg ? err.msg :
					"cannot write the output");
				rc = err.code == TD_EFORMAT ? EXIT_INPUT : EXIT_INTERNAL;
			} else {
				fprintf(stderr, "tracedoc annotate: %s: added %llu events (%llu idle gaps, "
						"%llu finding slices, %llu counter samples, %llu metadata) in "
						"process %lld (%llu slices of them on the critical path)\n",
					outp, (unsigned long long)d.n,
					(unsigned long long)d.gaps, (unsigned long long)d.slices,
					(unsigned long long)d.counters, (unsigned long long)d.meta,
					(long long)d.pid, (unsigned long long)d.path);
			}
		}
		free(d.buf.s);
		td_report_free(&r);
		td_analysis_free(&a);
	}
	td_trace_free(&t);
	td_config_free(&cfg);
	cli_operands_free(&ops);
	return rc;
}
