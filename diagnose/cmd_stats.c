/* SPDX-License-Identifier: MIT */
/* tracedoc stats TRACE [--format text|json] [-o FILE]: what is in a trace. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "diagnose/out.h"
#include "analysis/analysis.h"
#include "parser/trace.h"

struct dev_stat {
	const struct td_device *d;
	int64_t busy, span;
};

static const char *comp_name(enum td_compression c)
{
	return c == TD_COMP_GZIP ? "gzip" : c == TD_COMP_ZSTD ? "zstd" : "none";
}

static const char *layout_name(const struct td_trace *t)
{
	if (t->nsys)
		return "SQLite export";
	return t->layout == TD_LAYOUT_ARRAY ? "array" : "object";
}

static const char *era_name(const struct td_trace *t)
{
	if (t->nsys)
		return "nsys";
	if (t->legacy)
		return "kineto-legacy";
	if (t->layout == TD_LAYOUT_ARRAY && t->schema_version < 0)
		return "chrome";
	return "kineto";
}

static struct dev_stat *device_stats(const struct td_trace *t, size_t *n)
{
	struct dev_stat *ds = calloc(t->devices.len ? t->devices.len : 1, sizeof(*ds));
	size_t i, k = 0;

	for (i = 0; i < t->devices.len; i++) {
		const struct td_device *d = &TD_VEC_AT(&t->devices, struct td_device, i);
		struct td_interval *iv;
		size_t m;

		if (!d->ops)
			continue;
		ds[k].d = d;
		ds[k].span = d->last_end - d->first_ts;
		m = td_trace_busy(t, d->id, d->first_ts, d->last_end, &iv);
		ds[k].busy = td_intervals_total(iv, m);
		free(iv);
		k++;
	}
	*n = k;
	return ds;
}

static double frac(int64_t a, int64_t b)
{
	return b > 0 ? (double)a / (double)b : 0.0;
}

struct anom_row {
	const char *key;
	uint64_t n;
};

static size_t anomalies(const struct td_trace *t, struct anom_row *rows)
{
	const struct td_anomalies *a = &t->anom;
	struct anom_row all[] = {
		{"negative_dur", a->negative_dur}, {"missing_dur", a->missing_dur},
		{"missing_ts", a->missing_ts}, {"missing_name", a->missing_name},
		{"bad_number", a->bad_number}, {"huge_number", a->huge_number},
		{"invalid_utf8_names", a->invalid_utf8}, {"unknown_ph", a->unknown_ph},
		{"unknown_cat", a->unknown_cat}, {"non_object_event", a->non_object_event},
		{"unsorted_ts", a->unsorted_ts}, {"dur_overflow", a->dur_overflow},
		{"sub_ns_digits", a->sub_ns_digits}, {"gpu_ops_without_launch", a->orphan_gpu_ops},
		{"long_strings", a->long_strings}, {"duplicate_keys", a->duplicate_keys},
		{"duplicate_trace_events", a->duplicate_trace_events},
	};
	size_t i, k = 0;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		/* Kineto writes events in no particular order: out-of-order is normal there */
		if (all[i].n && !(all[i].n == a->unsorted_ts && !strcmp(all[i].key, "unsorted_ts") &&
				  t->layout == TD_LAYOUT_OBJECT))
			rows[k++] = all[i];
	}
	return k;
}

static void count_tracks(const struct td_trace *t, size_t *threads, size_t *streams)
{
	size_t i;

	*threads = *streams = 0;
	for (i = 0; i < t->tracks.len; i++) {
		const struct td_track *tr = td_trace_track(t, (uint32_t)i);
		if (!tr->count)
			continue;
		if (tr->is_gpu)
			(*streams)++;
		else
			(*threads)++;
	}
}

/* Where a trace without ProfilerStep# has its steps: "vLLM execute_model", ... */
static const char *iter_from(const struct td_iter_summary *it)
{
	return it->src != TD_ITER_NONE ? td_iter_src_name(it->src)
				       : "the outermost repeated NVTX range";
}

static void print_json(FILE *f, const char *path, const struct td_trace *t,
		       const struct dev_stat *ds, size_t nds, const struct td_iter_summary *it)
{
	yajl_gen g = out_json_new(f);
	struct anom_row rows[16];
	size_t i, nrows = anomalies(t, rows), threads, streams;
	int64_t s0 = 0, s1 = 0;

	count_tracks(t, &threads, &streams);
	td_trace_span(t, &s0, &s1);
	yajl_gen_map_open(g);
	out_json_kstr(g, "schema", "tracedoc.stats/1");
	out_json_kstr(g, "trace", path);
	out_json_kmap(g, "format");
	out_json_kstr(g, "layout", layout_name(t));
	out_json_kstr(g, "era", era_name(t));
	out_json_kbool(g, "rocm", t->rocm);
	out_json_kstr(g, "compression", comp_name(t->compression));
	out_json_kint(g, "schema_version", t->schema_version);
	out_json_kint(g, "bytes", (int64_t)t->bytes_in);
	yajl_gen_map_close(g);
	out_json_kint(g, "events", (int64_t)t->n_trace_events);
	out_json_kbool(g, "partial", t->partial);
	if (t->partial) {
		out_json_kstr(g, "partial_reason", t->partial_msg);
	}
	out_json_kmap(g, "by_kind");
	for (i = 0; i < TD_K_COUNT; i++) {
		if (!t->by_kind[i])
			continue;
		out_json_key(g, td_kind_name((enum td_kind)i));
		out_json_int(g, (int64_t)t->by_kind[i]);
	}
	yajl_gen_map_close(g);
	out_json_kint(g, "span_ns", s1 - s0);
	out_json_kint(g, "rank", t->rank);
	out_json_kint(g, "world_size", t->world_size);
	out_json_kint(g, "threads", (int64_t)threads);
	out_json_kint(g, "streams", (int64_t)streams);
	out_json_kmap(g, "steps");
	out_json_kint(g, "count", (int64_t)t->steps.len);
	out_json_kint(g, "median_ns", td_trace_median_step(t));
	yajl_gen_map_close(g);
	if (it->count) {
		out_json_kmap(g, "iterations");
		out_json_kint(g, "count", (int64_t)it->count);
		out_json_kint(g, "median_ns", it->median_ns);
		out_json_kstr(g, "from", iter_from(it));
		yajl_gen_map_close(g);
	}
	out_json_karray(g, "devices");
	for (i = 0; i < nds; i++) {
		yajl_gen_map_open(g);
		out_json_kint(g, "id", ds[i].d->id);
		out_json_kstr(g, "name", ds[i].d->name ? td_trace_name(t, ds[i].d->name) : "");
		out_json_kint(g, "ops", (int64_t)ds[i].d->ops);
		out_json_kint(g, "span_ns", ds[i].span);
		out_json_kint(g, "busy_ns", ds[i].busy);
		out_json_kfixed(g, "busy_fraction", frac(ds[i].busy, ds[i].span), 6);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	out_json_kint(g, "dropped_records", t->dropped_records);
	if (*t->lacks)
		out_json_kstr(g, "lacks", t->lacks);
	out_json_kmap(g, "anomalies");
	for (i = 0; i < nrows; i++) {
		out_json_key(g, rows[i].key);
		out_json_int(g, (int64_t)rows[i].n);
	}
	yajl_gen_map_close(g);
	out_json_end(g, f);
}

static void print_text(FILE *f, const char *path, const struct td_trace *t,
		       const struct dev_stat *ds, size_t nds, const struct td_iter_summary *it)
{
	char b1[32], b2[32];
	struct anom_row rows[16];
	size_t i, nrows = anomalies(t, rows), threads, streams, col = 0;
	int64_t s0 = 0, s1 = 0;

	count_tracks(t, &threads, &streams);
	td_trace_span(t, &s0, &s1);
	fprintf(f, "trace      ");
	out_text_name(f, path, 0);
	fprintf(f, "%s\n", t->partial ? "  (PARTIAL)" : "");
	fprintf(f, "format     %s %s%s, compression %s, %.1f MB uncompressed\n", era_name(t),
		layout_name(t), t->rocm ? " (ROCm)" : "", comp_name(t->compression),
		(double)t->bytes_in / 1e6);
	fprintf(f, "events     %llu in traceEvents\n", (unsigned long long)t->n_trace_events);
	for (i = 0; i < TD_K_COUNT; i++) {
		if (!t->by_kind[i])
			continue;
		if (col == 0)
			fprintf(f, "          ");
		fprintf(f, " %s %llu", td_kind_name((enum td_kind)i),
			(unsigned long long)t->by_kind[i]);
		if (++col == 5) {
			fputc('\n', f);
			col = 0;
		}
	}
	if (col)
		fputc('\n', f);
	fprintf(f, "span       %s\n", td_fmt_dur(b1, sizeof(b1), s1 - s0));
	if (t->rank >= 0) {
		fprintf(f, "rank       %lld", (long long)t->rank);
		if (t->world_size > 0)
			fprintf(f, " of %lld", (long long)t->world_size);
		if (t->backend) {
			fprintf(f, " (");
			out_text_name(f, td_trace_name(t, t->backend), 40);
			fprintf(f, ")");
		}
		fputc('\n', f);
	}
	fprintf(f, "threads    %zu CPU threads, %zu GPU streams\n", threads, streams);
	if (t->steps.len)
		fprintf(f, "steps      %zu ProfilerStep#, median %s\n", t->steps.len,
			td_fmt_dur(b1, sizeof(b1), td_trace_median_step(t)));
	else if (it->count)
		fprintf(f, "steps      %zu %s%s (%s; no ProfilerStep#), median %s\n%s", it->count,
			it->src != TD_ITER_NONE ? "iteration" : "step", it->count == 1 ? "" : "s",
			iter_from(it),
			td_fmt_dur(b1, sizeof(b1), it->median_ns),
			it->count >= 3 ? "           diagnose leaves start-up ones out of its window\n"
				       : "");
	else
		fprintf(f, "steps      none (no ProfilerStep# markers)\n");
	if (!nds)
		fprintf(f, "devices    no GPU activity in this trace\n");
	for (i = 0; i < nds; i++) {
		fprintf(f, "%s GPU %d ", i ? "          " : "devices   ", ds[i].d->id);
		out_text_name(f, ds[i].d->name ? td_trace_name(t, ds[i].d->name) : "(unnamed)", 40);
		fprintf(f, ": %llu ops, busy %s of %s (%.1f%%)\n", (unsigned long long)ds[i].d->ops,
			td_fmt_dur(b1, sizeof(b1), ds[i].busy), td_fmt_dur(b2, sizeof(b2), ds[i].span),
			100.0 * frac(ds[i].busy, ds[i].span));
	}
	if (t->dropped_records >= 0)
		fprintf(f, "collector  %lld records dropped by CUPTI%s\n", (long long)t->dropped_records,
			t->dropped_records ? " (the trace misses them)" : "");
	if (!nrows)
		fprintf(f, "anomalies  none\n");
	for (i = 0; i < nrows; i++)
		fprintf(f, "%s %s %llu\n", i ? "          " : "anomalies ", rows[i].key,
			(unsigned long long)rows[i].n);
	if (*t->lacks) {
		fputs("lacks      ", f);
		out_text_wrap(f, t->lacks, 11, 11, 100);
		fputc('\n', f);
	}
	if (t->partial) {
		fputs("partial    ", f);
		out_text_wrap(f, t->partial_msg, 11, 11, 100);
		fputc('\n', f);
	}
}

static void stats_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc stats TRACE [--format text|json] [-o FILE]\n"
		   "  TRACE   a Kineto / PyTorch profiler trace: .json, .json.gz or .json.zst, or -\n"
		   "          for stdin\n");
}

/* What the stats print, for cli_write. */
struct stats_ctx {
	const char *path;
	const struct td_trace *t;
	const struct dev_stat *ds;
	size_t nds;
	struct td_iter_summary it;
};

static void stats_out(FILE *f, const char *format, int color, const void *ctx)
{
	const struct stats_ctx *c = ctx;

	(void)color;
	if (strcmp(format, "json") == 0)
		print_json(f, c->path, c->t, c->ds, c->nds, &c->it);
	else
		print_text(f, c->path, c->t, c->ds, c->nds, &c->it);
}

int cmd_stats(int argc, char **argv)
{
	const char *path = NULL, *format = "text", *outp = NULL;
	static const char *const formats[] = {"text", "json", NULL};
	const struct cli_opt opts[] = {
		{"--format", 0, &format, NULL}, {"--output", 'o', &outp, NULL}, {NULL, 0, NULL, NULL},
	};
	struct td_trace t;
	struct stats_ctx c;
	struct dev_stat *ds;
	size_t nds;
	int rc;

	rc = cli_parse_one("stats", argc, argv, opts, stats_usage, "one trace at a time", &path);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (cli_one_of("stats", "--format", format, formats))
		return EXIT_USAGE;
	td_trace_init(&t);
	if ((rc = cli_load(path, &t)) != EXIT_OK) {
		td_trace_free(&t);
		return rc;
	}
	ds = device_stats(&t, &nds);
	c.path = path;
	c.t = &t;
	c.ds = ds;
	c.nds = nds;
	memset(&c.it, 0, sizeof(c.it));
	if (!t.steps.len) /* an engine's iterations or NVTX steps, found by names as diagnose does */
		td_analysis_iterations(&t, &c.it);
	rc = cli_write(outp, format, NULL, stats_out, &c);
	free(ds);
	td_trace_free(&t);
	return rc;
}
