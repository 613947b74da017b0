/* SPDX-License-Identifier: MIT */
/* The streaming reader and the model it builds, on hand-written fixtures whose expected values
 * are worked out by hand in the comments. Its parallel paths (split blocks, zstd frames and
 * finalize on threads), held to the sequential reader's model, are in test_reader_split.c:
 * one suite, one executable. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "parser/jsoncheck.h"
#include "parser/load.h"
#include "tests/helpers.h"
#include "tests/test_reader.h"

static uint32_t find(const struct td_trace *t, const char *name, int nth)
{
	uint32_t i;

	for (i = 0; i < t->events.len; i++)
		if (strcmp(td_trace_name(t, td_trace_ev(t, i)->name), name) == 0 && nth-- == 0)
			return i;
	fail_msg("no event named %s", name);
	return TD_NONE;
}

static void load(const char *fixture, struct td_trace *t)
{
	struct td_error err;
	td_trace_init(t);
	if (td_trace_load(th_fixture(fixture), NULL, t, &err) != 0)
		fail_msg("%s: %s", fixture, err.msg);
}

/* two trees alike: types, values, number flags, keys in order */
static void same_tree(yajl_val a, yajl_val b)
{
	size_t i;

	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case yajl_t_string:
		assert_string_equal(a->u.string, b->u.string);
		break;
	case yajl_t_number:
		assert_string_equal(a->u.number.r, b->u.number.r);
		assert_int_equal(a->u.number.flags, b->u.number.flags);
		if (a->u.number.flags & YAJL_NUMBER_INT_VALID)
			assert_int_equal(a->u.number.i, b->u.number.i);
		if (a->u.number.flags & YAJL_NUMBER_DOUBLE_VALID)
			assert_true(a->u.number.d == b->u.number.d);
		break;
	case yajl_t_object:
		assert_int_equal(a->u.object.len, b->u.object.len);
		for (i = 0; i < a->u.object.len; i++) {
			assert_string_equal(a->u.object.keys[i], b->u.object.keys[i]);
			same_tree(a->u.object.values[i], b->u.object.values[i]);
		}
		break;
	case yajl_t_array:
		assert_int_equal(a->u.array.len, b->u.array.len);
		for (i = 0; i < a->u.array.len; i++)
			same_tree(a->u.array.values[i], b->u.array.values[i]);
		break;
	default:
		break;
	}
}

/* the documents' trees (configs, reports, summaries) as yajl_tree_parse builds them, with the
 * arrays grown by doubling: a 100k-element array reads in linear time */
static void test_json_tree(void **state)
{
	static const char *const docs[] = {
		"{\"a\": [1, -5, 1.5, 1e3, 9223372036854775807, 9223372036854775808, -0, 0.1e-2],"
		" \"b\": {\"c\": \"x\\u00e9\\n\", \"d\": [true, false, null, [], {}]},"
		" /* a comment */ \"a\": \"dup\", \"e\": [[[\"deep\"]]]} // end",
		"[]", "5", "\"s\"", "null",
	};
	static const char *const bad[] = {"{\"a\": [1, 2}", "[1] [2]", "{\"a\" 1}", ""};
	struct td_error err;
	size_t i, n = 100000;
	char *big;
	yajl_val t, y;
	(void)state;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		memset(&err, 0, sizeof(err));
		t = td_json_tree(docs[i], "doc", "", TD_EFORMAT, &err);
		y = yajl_tree_parse(docs[i], NULL, 0);
		same_tree(t, y);
		yajl_tree_free(t);
		yajl_tree_free(y);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_null(td_json_tree(bad[i], "doc", "", TD_EFORMAT, &err));
		assert_int_equal(err.code, TD_EFORMAT);
	}
	big = malloc(n * 2 + 3);
	assert_non_null(big);
	big[0] = '[';
	for (i = 0; i < n; i++) {
		big[1 + 2 * i] = '7';
		big[2 + 2 * i] = i + 1 < n ? ',' : ']';
	}
	big[1 + 2 * n] = '\0';
	t = td_json_tree(big, "doc", "", TD_EFORMAT, &err);
	assert_non_null(t);
	assert_int_equal(t->u.array.len, n);
	assert_int_equal(t->u.array.values[n - 1]->u.number.i, 7);
	yajl_tree_free(t);
	free(big);
}

static void test_mini_metadata(void **state)
{
	struct td_trace t;
	const struct td_device *d;
	(void)state;

	load("mini-kineto.json", &t);
	assert_int_equal(t.layout, TD_LAYOUT_OBJECT);
	assert_int_equal(t.schema_version, 1);
	assert_int_equal(t.rank, 1);
	assert_int_equal(t.world_size, 2);
	assert_string_equal(td_trace_name(&t, t.backend), "nccl");
	assert_int_equal(t.base_time_ns, 1700000000000000000LL);
	assert_string_equal(td_trace_name(&t, t.display_time_unit), "ns");
	assert_string_equal(td_trace_name(&t, t.trace_name), "mini");
	assert_int_equal(t.n_trace_events, 19);
	assert_int_equal(t.events.len, 14); /* the ph:X events */
	assert_int_equal(t.by_kind[TD_K_CPU_OP], 3);
	assert_int_equal(t.by_kind[TD_K_USER_ANNOTATION], 2);
	assert_int_equal(t.by_kind[TD_K_PYTHON], 1);
	assert_int_equal(t.by_kind[TD_K_RUNTIME], 3);
	assert_int_equal(t.by_kind[TD_K_KERNEL], 2);
	assert_int_equal(t.by_kind[TD_K_MEMCPY], 1);
	assert_int_equal(t.by_kind[TD_K_MEMSET], 1);
	assert_int_equal(t.by_kind[TD_K_SYNC], 1);
	assert_int_equal(t.by_kind[TD_K_FLOW_AC2G], 2);
	assert_int_equal(t.by_kind[TD_K_MEMORY], 1);
	assert_int_equal(t.by_kind[TD_K_METADATA], 2);
	assert_int_equal(t.flows_s, 1);
	assert_int_equal(t.flows_f, 1);
	assert_false(t.partial);
	assert_false(t.legacy);
	assert_int_equal(t.devices.len, 1);
	d = &TD_VEC_AT(&t.devices, struct td_device, 0);
	assert_int_equal(d->id, 0);
	assert_string_equal(td_trace_name(&t, d->name), "Test GPU");
	assert_int_equal(d->total_mem, 85899345920LL);
	assert_int_equal(d->cc_major, 9);
	assert_int_equal(d->num_sms, 132);
	assert_int_equal(d->ops, 4);
	assert_int_equal(d->first_ts, 1010000);
	assert_int_equal(d->last_end, 1200000);
	assert_int_equal(d->peak_allocated, 4096);
	assert_string_equal(td_trace_name(&t, td_trace_track(&t, td_trace_track_of(&t, find(&t,
				"aten::add", 0)))->name), "thread 10 (python)");
	td_trace_free(&t);
}

static void test_mini_times_and_args(void **state)
{
	struct td_trace t;
	const struct td_event *e;
	const struct td_track *tr;
	(void)state;

	load("mini-kineto.json", &t);
	e = td_trace_ev(&t, find(&t, "aten::add", 0));
	assert_int_equal(e->ts, 1002123); /* 1002.123 us */
	assert_int_equal(td_ev_dur(e), 10500);
	assert_int_equal(e->aux, 2); /* External id */
	e = td_trace_ev(&t, find(&t, "add_kernel<float>", 0));
	assert_int_equal(td_ev_dur(e), 20001); /* 20.001 us */
	assert_int_equal(e->corr, 100);
	tr = td_trace_track(&t, td_trace_track_of(&t, find(&t, "add_kernel<float>", 0)));
	assert_true(tr->is_gpu);
	assert_int_equal(tr->device, 0);
	assert_int_equal(tr->stream, 7);
	e = td_trace_ev(&t, find(&t, "Memcpy DtoH (Device -> Pageable)", 0));
	assert_int_equal(TD_VEC_AT(&t.xfer_bytes, uint64_t, e->aux), 4);
	e = td_trace_ev(&t, find(&t, "Memset (Device)", 0));
	assert_int_equal(TD_VEC_AT(&t.xfer_bytes, uint64_t, e->aux), 1024);
	assert_int_equal(td_trace_track(&t, td_trace_track_of(&t, find(&t, "Memset (Device)", 0)))
			 ->stream, 8);
	td_trace_free(&t);
}

static void test_mini_links(void **state)
{
	struct td_trace t;
	uint32_t step1, step2, py, add, launch1, item, memcpy_call, mul;
	(void)state;

	load("mini-kineto.json", &t);
	step1 = find(&t, "ProfilerStep#1", 0);
	step2 = find(&t, "ProfilerStep#2", 0);
	py = find(&t, "train.py(42): train_step", 0);
	add = find(&t, "aten::add", 0);
	launch1 = find(&t, "cudaLaunchKernel", 0);
	item = find(&t, "aten::item", 0);
	memcpy_call = find(&t, "cudaMemcpyAsync", 0);
	mul = find(&t, "aten::mul", 0);
	/* the host span tree */
	assert_int_equal(td_trace_parent(&t, step1), TD_NONE);
	assert_int_equal(td_trace_parent(&t, py), step1);
	assert_int_equal(td_trace_parent(&t, add), py);
	assert_int_equal(td_trace_parent(&t, launch1), add);
	assert_int_equal(td_trace_parent(&t, item), py);
	assert_int_equal(td_trace_parent(&t, memcpy_call), item);
	assert_int_equal(td_trace_parent(&t, mul), step2);
	/* runtime call <-> GPU op by correlation */
	assert_int_equal(td_trace_launch(&t, find(&t, "add_kernel<float>", 0)), launch1);
	assert_int_equal(td_trace_launch(&t, find(&t, "Memcpy DtoH (Device -> Pageable)", 0)),
			 memcpy_call);
	assert_int_equal(td_trace_launch(&t, find(&t, "Stream Sync", 0)), memcpy_call);
	assert_int_equal(td_trace_launch(&t, find(&t, "mul_kernel", 0)),
			 find(&t, "cudaLaunchKernel", 1));
	assert_int_equal(td_trace_launch(&t, find(&t, "Memset (Device)", 0)), TD_NONE);
	assert_int_equal(t.anom.orphan_gpu_ops, 1); /* the memset's correlation 102 has no call */
	td_trace_free(&t);
}

static void test_mini_steps_and_busy(void **state)
{
	struct td_trace t;
	struct td_interval *iv;
	size_t n;
	(void)state;

	load("mini-kineto.json", &t);
	assert_int_equal(t.steps.len, 2);
	assert_int_equal(TD_VEC_AT(&t.steps, struct td_step, 0).number, 1);
	assert_int_equal(TD_VEC_AT(&t.steps, struct td_step, 1).number, 2);
	assert_int_equal(td_trace_median_step(&t), 150000); /* 100 us and 200 us: their mean */
	/* kernel [1010, 1030.001) + memset [1025, 1035) merge to 25 us; memcpy 2 us; kernel 50 us */
	n = td_trace_busy(&t, 0, 1010000, 1200000, &iv);
	assert_int_equal(n, 3);
	assert_int_equal(iv[0].start, 1010000);
	assert_int_equal(iv[0].end, 1035000);
	assert_int_equal(td_intervals_total(iv, n), 77000);
	free(iv);
	/* clipped to a window */
	n = td_trace_busy(&t, 0, 1020000, 1160000, &iv);
	assert_int_equal(td_intervals_total(iv, n), 15000 + 2000 + 10000);
	free(iv);
	td_trace_free(&t);
}

static void test_legacy_chrome_array(void **state)
{
	struct td_trace t;
	struct td_interval *iv;
	size_t n;
	(void)state;

	load("legacy-autograd.json", &t);
	assert_int_equal(t.layout, TD_LAYOUT_ARRAY);
	assert_int_equal(t.n_trace_events, 6);
	assert_int_equal(t.by_kind[TD_K_CPU_OP], 2);
	assert_int_equal(t.by_kind[TD_K_KERNEL], 2);
	assert_int_equal(t.by_kind[TD_K_FLOW_AC2G], 2);
	assert_int_equal(td_ev_dur(td_trace_ev(&t, find(&t, "aten::mm", 0))), 30250);
	n = td_trace_busy(&t, 0, 0, INT64_MAX, &iv);
	assert_int_equal(td_intervals_total(iv, n), 45000);
	free(iv);
	td_trace_free(&t);
}

static void test_odd_data_is_counted(void **state)
{
	struct td_trace t;
	uint32_t i;
	int found = 0;
	(void)state;

	load("odd/anomalies.json", &t);
	assert_int_equal(t.n_trace_events, 13);
	assert_int_equal(t.anom.negative_dur, 1);
	assert_int_equal(t.anom.missing_dur, 1);
	assert_int_equal(t.anom.missing_ts, 1);
	assert_int_equal(t.anom.missing_name, 1);
	assert_int_equal(t.anom.unknown_ph, 1);
	assert_int_equal(t.anom.unknown_cat, 1);
	assert_int_equal(t.anom.invalid_utf8, 1);
	assert_int_equal(t.anom.huge_number, 1);   /* External id 1e23; "Comms Id" is not read */
	assert_int_equal(t.anom.non_object_event, 2);
	assert_int_equal(t.anom.sub_ns_digits, 2);
	assert_int_equal(t.anom.unsorted_ts, 2);
	assert_int_equal(td_ev_dur(td_trace_ev(&t, find(&t, "neg", 0))), 0);
	assert_int_equal(td_trace_ev(&t, find(&t, "subns", 0))->ts, 95000);
	/* invalid UTF-8 and an escaped NUL are kept byte for byte */
	for (i = 0; i < t.events.len; i++) {
		const struct td_event *e = td_trace_ev(&t, i);
		if (td_strtab_len(&t.names, e->name) == 13 &&
		    memcmp(td_trace_name(&t, e->name), "nested \xc3\xa9\0nul", 13) == 0)
			found |= 1;
		if (strcmp(td_trace_name(&t, e->name), "bad \xff\xfe utf8 \xc3\x28") == 0)
			found |= 2;
	}
	assert_int_equal(found, 3);
	td_trace_free(&t);
}

static void test_truncated_is_partial(void **state)
{
	static const struct {
		const char *file;
		uint64_t events;
		uint64_t offset;
	} cases[] = {
		{"odd/truncated.json", 4, 1200},    /* cut inside the 5th event */
		{"odd/truncated.json.gz", 1, 625},  /* gzip stream cut inside the 2nd event */
		{"odd/truncated.json.zst", 2, 800}, /* first frame whole, second cut */
	};
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct td_trace t;
		load(cases[i].file, &t);
		assert_true(t.partial);
		assert_int_equal(t.n_trace_events, cases[i].events);
		assert_int_equal(t.partial_offset, cases[i].offset);
		assert_non_null(strstr(t.partial_msg, "ends early"));
		td_trace_free(&t);
	}
}

static void test_errors_name_the_place(void **state)
{
	static const struct {
		const char *file;
		int code;
		int has_pos;
		uint32_t line, col;
		uint64_t offset;
		const char *msg;
	} cases[] = {
		{"bad/not-json.txt", TD_EPARSE, 1, 1, 1, 0, "invalid char"},
		{"bad/stray-quote.json", TD_EPARSE, 1, 3, 56, 76, "aten::index(\" >>> a\")"},
		{"bad/top-number.json", TD_EFORMAT, 1, 1, 3, 2, "not a trace"},
		{"bad/events-object.json", TD_EFORMAT, 1, 1, 38, 37, "expected an array"},
		{"bad/no-events.json", TD_EFORMAT, 1, 2, 25, 45, "no \"traceEvents\""},
		{"bad/empty.json", TD_EPARSE, 1, 1, 1, 0, "the input is empty"},
		{"bad/trailing-garbage.json", TD_EPARSE, 1, 2, 1, 83, "trailing garbage"},
		{"bad/corrupt.json.gz", TD_EIO, 0, 0, 0, 0, "corrupt gzip data"},
		{"bad/truncated-early.json.zst", TD_EPARSE, 1, 1, 1, 0, "before any data"},
		{"bad/does-not-exist.json", TD_EIO, 0, 0, 0, 0, "cannot open"},
	};
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct td_trace t;
		struct td_error err;
		int rc;

		td_trace_init(&t);
		rc = td_trace_load(th_fixture(cases[i].file), NULL, &t, &err);
		if (rc != cases[i].code || err.has_pos != cases[i].has_pos ||
		    (cases[i].has_pos && (err.line != cases[i].line || err.col != cases[i].col ||
					  err.offset != cases[i].offset)))
			fail_msg("%s: rc %d pos %d %u:%u byte %llu: %s", cases[i].file, rc, err.has_pos,
				 err.line, err.col, (unsigned long long)err.offset, err.msg);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("%s: message '%s' lacks '%s'", cases[i].file, err.msg, cases[i].msg);
		td_trace_free(&t);
	}
}

/* Every chunking of the input gives the same model, or the same error at the same place. */
static void test_chunk_sweep(void **state)
{
	static const char *const files[] = {
		"mini-kineto.json", "legacy-autograd.json", "odd/anomalies.json", "odd/truncated.json",
		"bad/not-json.txt", "bad/stray-quote.json", "bad/top-number.json",
		"bad/events-object.json", "bad/no-events.json", "bad/trailing-garbage.json",
	};
	size_t f, chunk;
	(void)state;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		size_t len;
		unsigned char *buf = th_slurp(th_fixture(files[f]), &len);
		struct td_trace ref;
		struct td_error ref_err;
		int ref_rc;
		uint64_t ref_digest = 0;

		assert_non_null(buf);
		ref_rc = th_parse_mem(buf, len, 4096, &ref, &ref_err);
		if (ref_rc == 0)
			ref_digest = th_digest(&ref);
		td_trace_free(&ref);
		for (chunk = 1; chunk <= 64; chunk++) {
			struct td_trace t;
			struct td_error err;
			int rc = th_parse_mem(buf, len, chunk, &t, &err);
			if (rc != ref_rc)
				fail_msg("%s chunk %zu: rc %d, expected %d", files[f], chunk, rc, ref_rc);
			if (rc == 0 && th_digest(&t) != ref_digest)
				fail_msg("%s chunk %zu: model differs", files[f], chunk);
			if (rc != 0 && (err.line != ref_err.line || err.col != ref_err.col ||
					err.offset != ref_err.offset))
				fail_msg("%s chunk %zu: error at %u:%u (byte %llu), expected %u:%u (byte %llu)",
					 files[f], chunk, err.line, err.col, (unsigned long long)err.offset,
					 ref_err.line, ref_err.col, (unsigned long long)ref_err.offset);
			td_trace_free(&t);
		}
		free(buf);
	}
}

/* Plain, gzip and zstd files, threaded or not, give the same model. */
static void test_compressions_agree(void **state)
{
	static const char *const files[] = {
		"mini-kineto.json", "mini-kineto.json.gz", "mini-kineto.json.zst",
	};
	static const enum td_compression comp[] = {TD_COMP_NONE, TD_COMP_GZIP, TD_COMP_ZSTD};
	uint64_t first = 0;
	size_t i;
	int threaded;
	(void)state;

	for (threaded = 0; threaded < 2; threaded++) {
		for (i = 0; i < 3; i++) {
			struct td_trace t;
			struct td_error err;
			struct td_load_opts o = {.chunk = 7, .no_thread = !threaded};
			uint64_t d;

			td_trace_init(&t);
			assert_int_equal(td_trace_load(th_fixture(files[i]), &o, &t, &err), 0);
			assert_int_equal(t.compression, comp[i]);
			d = th_digest(&t);
			if (!first)
				first = d;
			assert_true(d == first);
			td_trace_free(&t);
		}
	}
}

/* The string scanner (64 bytes at a time, or a word or a byte at a time near a chunk's end)
 * follows quotes and runs of backslashes the same whatever the chunking: names with runs of
 * 0 to 9 backslashes before quotes at every offset across 64-byte blocks, and long strings
 * made of escapes that are cut at 1 MiB. */
/* the model of DOC[0..N) must not depend on the chunk sizes it is fed in */
static void same_for_chunks(const char *doc, size_t n, const size_t *chunks, size_t n_chunks,
			    long want_long, size_t want_events)
{
	struct td_trace ref;
	struct td_error err;
	uint64_t want;
	size_t c;

	assert_int_equal(th_parse_mem((const unsigned char *)doc, n, n, &ref, &err), 0);
	assert_int_equal(ref.anom.long_strings, want_long);
	assert_int_equal(ref.n_trace_events, want_events);
	want = th_digest(&ref);
	td_trace_free(&ref);
	for (c = 0; c < n_chunks; c++) {
		struct td_trace t;
		assert_int_equal(th_parse_mem((const unsigned char *)doc, n, chunks[c], &t, &err), 0);
		if (th_digest(&t) != want)
			fail_msg("chunks of %zu bytes: the model differs", chunks[c]);
		td_trace_free(&t);
	}
}

/* The string scanner takes 64 bytes at a time: backslash runs of every length before a quote,
 * at every offset in the 64-byte window, and escape-heavy strings over the 1 MiB cut, must
 * give the model the byte-at-a-time scan gives. Small chunks go only over the short strings:
 * yajl re-lexes a token split over chunks from its start, so a 1 MiB token in 1-byte chunks
 * is quadratic (the reader's chunks are 256 KiB). */
static void test_string_scan_agrees(void **state)
{
	static const size_t small[] = {1, 3, 7, 8, 9, 63, 64, 65, 127, 4096};
	static const size_t large[] = {65535, 65536, 65537, 262147, (size_t)1 << 20};
	size_t cap = (size_t)8 << 20, n = 0, i;
	char *doc = malloc(cap);
	unsigned r = 12345;
	(void)state;

	n += (size_t)sprintf(doc + n, "{\"traceEvents\": [");
	for (i = 0; i < 400; i++) {
		size_t run = i % 10, pad = (i * 7) % 70, k;
		n += (size_t)sprintf(doc + n, "%s{\"ph\": \"X\", \"name\": \"", i ? ",\n" : "");
		for (k = 0; k < pad; k++)
			doc[n++] = (char)('a' + (k % 26));
		for (k = 0; k < run; k++)
			doc[n++] = '\\';
		if (run % 2) /* an odd run escapes the quote after it: keep the string open */
			n += (size_t)sprintf(doc + n, "\" x\\\\");
		n += (size_t)sprintf(doc + n, "\", \"pid\": 1, \"tid\": %zu, \"ts\": %zu, \"dur\": 1}",
				     i % 3, i);
	}
	memcpy(doc + n, "]}\n", 3);
	same_for_chunks(doc, n + 3, small, sizeof(small) / sizeof(small[0]), 0, 400);

	/* strings over 1 MiB of escapes: quotes, backslashes, \u sequences in random order */
	for (i = 0; i < 2; i++) {
		size_t k, len = ((size_t)1 << 20) + 300000 * (i + 1);
		n += (size_t)sprintf(doc + n, ",\n{\"ph\": \"X\", \"name\": \"");
		for (k = 0; k < len;) {
			r = r * 1103515245u + 12345u;
			switch ((r >> 16) % 4) {
			case 0: memcpy(doc + n, "\\\"", 2); n += 2; k += 2; break;
			case 1: memcpy(doc + n, "\\\\", 2); n += 2; k += 2; break;
			case 2: memcpy(doc + n, "\\u00e9", 6); n += 6; k += 6; break;
			default: doc[n++] = 'z'; k++; break;
			}
		}
		n += (size_t)sprintf(doc + n, "\", \"pid\": 1, \"tid\": 9, \"ts\": %zu, \"dur\": 1}",
				     1000 + i);
	}
	n += (size_t)sprintf(doc + n, "]}\n");
	assert_true(n < cap);
	same_for_chunks(doc, n, large, sizeof(large) / sizeof(large[0]), 2, 402);
	free(doc);
}

/* record_shapes / with_stack arguments: an op's own, found from the op (with or without an
 * External id); ops with the same lists share one entry; a kernel's correlation stays its own */
static void test_op_args(void **state)
{
	static const char doc[] =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1,"
		" \"dur\": 1, \"args\": {\"External id\": 5, \"Input Dims\": [[2, 3]], "
		"\"Input type\": [\"float\"]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 3,"
		" \"dur\": 1, \"args\": {\"External id\": 6, \"Input Dims\": [[2, 3]], "
		"\"Input type\": [\"float\"]}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 5,"
		" \"dur\": 1, \"args\": {\"Input Dims\": [[7]], \"Call stack\": \"f.py(3): g\"}},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 7,"
		" \"dur\": 1, \"args\": {\"External id\": 8}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 8,"
		" \"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 9}}]}\n";
	char *path = write_temp(doc, sizeof(doc) - 1);
	struct td_trace t;
	struct td_error err;
	const struct td_op_args *a1, *a2, *b;
	(void)state;

	td_trace_init(&t);
	assert_int_equal(td_trace_load(path, NULL, &t, &err), 0);
	a1 = td_trace_op_args(&t, find(&t, "a", 0));
	a2 = td_trace_op_args(&t, find(&t, "a", 1));
	b = td_trace_op_args(&t, find(&t, "b", 0));
	assert_non_null(a1);
	assert_ptr_equal(a1, a2);
	assert_string_equal(td_trace_name(&t, a1->dims), "[[2, 3]]");
	assert_string_equal(td_trace_name(&t, a1->types), "[\"float\"]");
	assert_int_equal(a1->stack, 0);
	assert_non_null(b);
	assert_string_equal(td_trace_name(&t, b->dims), "[[7]]");
	assert_string_equal(td_trace_name(&t, b->stack), "f.py(3): g");
	assert_int_equal(b->types, 0);
	assert_null(td_trace_op_args(&t, find(&t, "c", 0)));
	assert_null(td_trace_op_args(&t, find(&t, "k", 0)));
	assert_int_equal(td_trace_ev(&t, find(&t, "k", 0))->corr, 9);
	assert_int_equal(t.op_args.len, 2);
	td_trace_free(&t);
	unlink(path);
	free(path);
}

/* An event's track is not stored: it is found from the tracks' ranges, also past tracks with
 * no events (a thread named by metadata only), and walking in order finds the same. */
static void test_track_of(void **state)
{
	struct td_trace t;
	struct td_track_cursor cur = {0, 0, 0};
	uint32_t tr[5], i, name;
	uint32_t per[5] = {3, 0, 0, 4, 1};
	int k;

	(void)state;
	td_trace_init(&t);
	name = td_strtab_intern(&t.names, "op", 2);
	for (k = 0; k < 5; k++)
		tr[k] = k == 4 ? td_trace_gpu_track(&t, 0, 7) : td_trace_cpu_track(&t, 1, 0, 10 + k, 0);
	td_trace_device(&t, 0);
	for (k = 4; k >= 0; k--) /* pushed out of track order */
		for (i = 0; i < per[k]; i++) {
			struct td_event *e = td_trace_push(&t, tr[k]);
			e->ts = 1000 * (int64_t)(per[k] - i); /* and out of time order */
			e->kind = k == 4 ? TD_K_KERNEL : TD_K_CPU_OP;
			e->name = name;
		}
	td_trace_finalize(&t);
	assert_int_equal(t.events.len, 8);
	for (i = 0; i < t.events.len; i++) {
		uint32_t want = i < 3 ? tr[0] : i < 7 ? tr[3] : tr[4];
		assert_int_equal(td_trace_track_of(&t, i), want);
		assert_int_equal(td_trace_track_at(&t, &cur, i), want);
		assert_true(i >= td_trace_track(&t, want)->first &&
			    i < td_trace_track(&t, want)->first + td_trace_track(&t, want)->count);
	}
	for (i = t.events.len; i-- > 0;) /* backwards, the cursor searches again */
		assert_int_equal(td_trace_track_at(&t, &cur, i), td_trace_track_of(&t, i));
	td_trace_free(&t);
}

/* A memory sample's sizes are 48-bit: exact within, clamped (and said so) outside. */
static void test_mem_sample_sizes(void **state)
{
	struct td_mem_sample m;
	const int64_t ok[] = {0, -1, 1, 4096, -4096, INT64_C(4294967295), INT64_C(4294967296),
			      -INT64_C(4294967296), INT64_C(80) << 30, TD_MEM_MAX, -TD_MEM_MAX};
	size_t i;

	(void)state;
	assert_int_equal(sizeof(struct td_mem_sample), 32);
	assert_int_equal(sizeof(struct td_event), 28);
	memset(&m, 0, sizeof(m));
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(td_mem_set(&m, TD_MEM_BYTES, ok[i]), 0);
		assert_int_equal(td_mem_get(&m, TD_MEM_BYTES), ok[i]);
		assert_int_equal(td_mem_get(&m, TD_MEM_ALLOCATED), 0); /* the others untouched */
	}
	assert_int_equal(td_mem_set(&m, TD_MEM_RESERVED, TD_MEM_MAX + 1), 1);
	assert_int_equal(td_mem_get(&m, TD_MEM_RESERVED), TD_MEM_MAX);
	assert_int_equal(td_mem_set(&m, TD_MEM_RESERVED, INT64_MIN), 1);
	assert_int_equal(td_mem_get(&m, TD_MEM_RESERVED), -TD_MEM_MAX);
	{ /* in a trace: a size past 48 bits is clamped, a device past 16 bits is not stored;
	   * both counted as huge numbers */
		static const char doc[] =
			"{\"traceEvents\": [\n"
			"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
			"\"tid\": 1, \"ts\": 9, \"args\": {\"Total Allocated\": 4096, \"Total "
			"Reserved\": 200000000000000000, \"Bytes\": -4096, \"Device Id\": 3, "
			"\"Device Type\": 1}},\n"
			"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, "
			"\"tid\": 1, \"ts\": 10, \"args\": {\"Total Allocated\": 1, \"Bytes\": 1, "
			"\"Device Id\": 40000, \"Device Type\": 1}}]}\n";
		char *path = write_temp(doc, sizeof(doc) - 1);
		struct td_trace t;
		struct td_error err;
		const struct td_mem_sample *s;
		td_trace_init(&t);
		assert_int_equal(td_trace_load(path, NULL, &t, &err), 0);
		assert_int_equal(t.mem.len, 1);
		s = &TD_VEC_AT(&t.mem, struct td_mem_sample, 0);
		assert_int_equal(s->device, 3);
		assert_int_equal(td_mem_get(s, TD_MEM_ALLOCATED), 4096);
		assert_int_equal(td_mem_get(s, TD_MEM_RESERVED), TD_MEM_MAX);
		assert_int_equal(td_mem_get(s, TD_MEM_BYTES), -4096);
		assert_int_equal(t.anom.huge_number, 2);
		td_trace_free(&t);
		unlink(path);
		free(path);
	}
}

/* A trace that is a quarter Python frames or more keeps its other events by kind: TD_FOR_KIND
 * visits exactly the events of one kind, in index order; a trace with fewer frames visits
 * every event (the body checks the kind). */
static void test_kind_lists(void **state)
{
	static const char *const fixtures[] = {"rules/graph-launch.json", "mini-kineto.json"};
	size_t f;

	(void)state;
	for (f = 0; f < 2; f++) {
		struct td_trace t;
		size_t j, n, py = 0;
		uint32_t i, prev;
		int k;
		load(fixtures[f], &t);
		for (i = 0; i < t.events.len; i++)
			py += td_trace_ev(&t, i)->kind == TD_K_PYTHON;
		assert_true(f == 0 ? 4 * py >= t.events.len : 4 * py < t.events.len);
		assert_true(f == 0 ? t.scan != NULL : t.scan == NULL);
		for (k = 0; k < TD_K_NSTORED; k++) {
			n = 0;
			prev = 0;
			TD_FOR_KIND(&t, k, j, i) {
				if (t.scan) { /* exactly the kind's events, in order */
					assert_int_equal(td_trace_ev(&t, i)->kind, k);
					assert_true(n == 0 || i > prev);
					prev = i;
				}
				n += td_trace_ev(&t, i)->kind == k;
			}
			for (i = 0, py = 0; i < t.events.len; i++)
				py += td_trace_ev(&t, i)->kind == k;
			assert_int_equal(n, k == TD_K_PYTHON && t.scan ? 0 : py);
		}
		td_trace_free(&t);
	}
}

/* the stem of a name numbered once per iteration */
static void test_name_stem(void **state)
{
	(void)state;
	assert_int_equal(td_name_stem_len("ProfilerStep#41", 15), 13);
	assert_int_equal(td_name_stem_len("ProfilerStep#", 13), 13);
	assert_int_equal(td_name_stem_len("aten::item2", 11), 11);
	assert_int_equal(td_name_stem_len("#7", 2), 1);
	assert_int_equal(td_name_stem_len("7", 1), 1);
	assert_int_equal(td_name_stem_len("", 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind_lists),
		cmocka_unit_test(test_name_stem),
		cmocka_unit_test(test_mini_metadata),
		cmocka_unit_test(test_mini_times_and_args),
		cmocka_unit_test(test_mini_links),
		cmocka_unit_test(test_mini_steps_and_busy),
		cmocka_unit_test(test_legacy_chrome_array),
		cmocka_unit_test(test_odd_data_is_counted),
		cmocka_unit_test(test_truncated_is_partial),
		cmocka_unit_test(test_errors_name_the_place),
		cmocka_unit_test(test_chunk_sweep),
		cmocka_unit_test(test_compressions_agree),
		cmocka_unit_test(test_string_scan_agrees),
		cmocka_unit_test(test_split_sweep),
		cmocka_unit_test(test_op_args),
		cmocka_unit_test(test_split_evil_cuts),
		cmocka_unit_test(test_split_huge_event),
		cmocka_unit_test(test_split_real_traces),
		cmocka_unit_test(test_records_short_and_full),
		cmocka_unit_test(test_zstd_frame_decoders),
		cmocka_unit_test(test_zstd_frames),
		cmocka_unit_test(test_finalize_threads),
		cmocka_unit_test(test_track_of),
		cmocka_unit_test(test_mem_sample_sizes),
		cmocka_unit_test(test_json_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
