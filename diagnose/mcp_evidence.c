/* SPDX-License-Identifier: MIT */
/* The evidence behind a finding: every event on every track that overlaps [ts - W, ts + W],
 * the nearest first when there are more than the limit, then shown by track and time. The
 * times are the reports' (integer nanoseconds, the trace's clock), so a finding's window or a
 * critical-path segment can be looked at directly. */
#include "diagnose/mcp_evidence.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/vec.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/out.h"
#include "parser/trace.h"

#define EVIDENCE_LIMIT_MAX 5000

/* the trace read last, kept while its file is the same */
static struct {
	struct td_trace t;
	char *path;
	struct stat st;
	int loaded;
} kept;

void mcp_evidence_free(void)
{
	if (kept.loaded)
		td_trace_free(&kept.t);
	free(kept.path);
	memset(&kept, 0, sizeof(kept));
}

static int same_file(const char *path, const struct stat *st)
{
	return kept.loaded && !strcmp(kept.path, path) && kept.st.st_dev == st->st_dev &&
	       kept.st.st_ino == st->st_ino && kept.st.st_size == st->st_size &&
	       kept.st.st_mtime == st->st_mtime;
}

static int load(const char *path)
{
	struct stat st;
	int rc;

	if (stat(path, &st) == 0 && same_file(path, &st))
		return EXIT_OK;
	mcp_evidence_free();
	td_trace_init(&kept.t);
	if ((rc = cli_load(path, &kept.t)) != EXIT_OK) {
		td_trace_free(&kept.t);
		return rc;
	}
	kept.loaded = 1;
	kept.path = td_strndup(path, strlen(path));
	kept.st = st;
	return EXIT_OK;
}

struct hit {
	uint32_t ev, track;
	int64_t dist;
};

static int by_dist(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;

	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int by_place(const void *a, const void *b)
{
	const struct hit *x = a, *y = b;
	const struct td_event *ex = td_trace_ev(&kept.t, x->ev), *ey = td_trace_ev(&kept.t, y->ev);

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (ex->ts != ey->ts)
		return ex->ts < ey->ts ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int shown_kind(int k)
{
	return k != TD_K_FLOW_AC2G && k != TD_K_FLOW_FWDBWD && k != TD_K_FLOW_OTHER &&
	       k != TD_K_METADATA;
}

static void track_json(yajl_gen g, const struct td_trace *t, const struct td_track *tr)
{
	out_json_kmap(g, "track");
	out_json_kbool(g, "gpu", tr->is_gpu);
	if (tr->is_gpu) {
		out_json_kint(g, "device", tr->device);
		out_json_kint(g, "stream", tr->stream);
	} else {
		if (tr->pid_is_str)
			out_json_kstr(g, "pid", td_strtab_str(&t->names, (uint32_t)tr->pid));
		else
			out_json_kint(g, "pid", tr->pid);
		if (tr->tid_is_str)
			out_json_kstr(g, "tid", td_strtab_str(&t->names, (uint32_t)tr->tid));
		else
			out_json_kint(g, "tid", tr->tid);
	}
	if (tr->name)
		out_json_kstr(g, "thread", td_strtab_str(&t->names, tr->name));
	yajl_gen_map_close(g);
}

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static void write_json(FILE *f, const char *path, int64_t at, int64_t w, struct hit *h, size_t n,
		       size_t matched)
{
	const struct td_trace *t = &kept.t;
	yajl_gen g = out_json_new(f);
	size_t i;
	uint32_t cur = UINT32_MAX;

	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.evidence/1");
	out_json_kstr(g, "trace", path);
	out_json_kint(g, "ts_ns", at);
	out_json_kint(g, "window_ns", w);
	out_json_kint(g, "from_ns", sat_sub(at, w));
	out_json_kint(g, "to_ns", sat_add(at, w));
	out_json_kint(g, "events_matched", (int64_t)matched);
	out_json_kint(g, "events_shown", (int64_t)n);
	out_json_kbool(g, "truncated", n < matched);
	out_json_karray(g, "tracks");
	for (i = 0; i < n; i++) {
		const struct td_event *e = td_trace_ev(t, h[i].ev);
		if (h[i].track != cur) {
			if (cur != UINT32_MAX) {
				yajl_gen_array_close(g);
				yajl_gen_map_close(g);
			}
			cur = h[i].track;
			yajl_gen_map_open(g);
			track_json(g, t, td_trace_track(t, cur));
			out_json_karray(g, "events");
		}
		yajl_gen_map_open(g);
		out_json_kstr(g, "name", td_strtab_str(&t->names, e->name));
		out_json_kstr(g, "kind", td_kind_name((enum td_kind)e->kind));
		out_json_kint(g, "ts_ns", e->ts);
		out_json_kint(g, "dur_ns", td_ev_dur(e));
		out_json_kint(g, "offset_ns", sat_sub(e->ts, at)); /* its start less ts */
		yajl_gen_map_close(g);
	}
	if (cur != UINT32_MAX) {
		yajl_gen_array_close(g);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_end(g, f);
}

static void evidence_usage(FILE *f)
{
	fprintf(f, "usage: evidence --ts NS [--window NS] [--limit N] -- TRACE\n");
}

/* a whole number of nanoseconds (may be negative for --ts) */
static int parse_ns(const char *opt, const char *s, int64_t min, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	v = strtoll(s, &end, 10);
	if (*end || v < min) {
		fprintf(stderr, "tracedoc evidence: %s %s: a whole number of nanoseconds, at least "
			"%lld\n", opt, s, (long long)min);
		return -1;
	}
	*out = v;
	return 0;
}

int mcp_evidence(int argc, char **argv)
{
	const char *ts = NULL, *win = NULL, *lim = NULL, *path;
	int64_t at = 0, w = 1000000;
	int rc, limit = 200;
	struct td_vec hits;
	size_t i, matched = 0;
	const struct cli_opt opts[] = {
		{"--ts", 0, &ts, NULL}, {"--window", 0, &win, NULL}, {"--limit", 0, &lim, NULL},
		{NULL, 0, NULL, NULL},
	};

	rc = cli_parse_one("evidence", argc, argv, opts, evidence_usage, "one trace", &path);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (!ts) {
		fprintf(stderr, "tracedoc evidence: --ts is needed\n");
		return EXIT_USAGE;
	}
	if (parse_ns("--ts", ts, INT64_MIN, &at) || (win && parse_ns("--window", win, 0, &w)) ||
	    (lim && cli_count("evidence", "--limit", lim, 1, EVIDENCE_LIMIT_MAX, &limit)))
		return EXIT_USAGE;
	if ((rc = load(path)) != EXIT_OK)
		return rc;
	td_vec_init(&hits, sizeof(struct hit));
	for (i = 0; i < kept.t.tracks.len; i++) {
		const struct td_track *tr = td_trace_track(&kept.t, (uint32_t)i);
		int64_t from = sat_sub(at, w), to = sat_add(at, w);
		uint32_t k;
		for (k = 0; k < tr->count; k++) {
			uint32_t ev = tr->first + k;
			const struct td_event *e = td_trace_ev(&kept.t, ev);
			int64_t end = td_ev_end(e);
			struct hit *h;
			if (!shown_kind(e->kind) || e->ts > to || end < from)
				continue;
			h = td_vec_push(&hits);
			h->ev = ev;
			h->track = (uint32_t)i;
			if (e->ts > at)
				h->dist = sat_sub(e->ts, at);
			else
				h->dist = at > end ? sat_sub(at, end) : 0; /* 0: it holds at */
		}
	}
	matched = hits.len;
	if (hits.len > (size_t)limit) {
		qsort(hits.data, hits.len, sizeof(struct hit), by_dist);
		hits.len = (size_t)limit;
	}
	if (hits.len)
		qsort(hits.data, hits.len, sizeof(struct hit), by_place);
	write_json(stdout, path, at, w, hits.data, hits.len, matched);
	td_vec_free(&hits);
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_INTERNAL;
}
