/* SPDX-License-Identifier: MIT */
/* The streaming reader and the model it builds, on hand-written fixtures whose expected values
 * are worked out by hand in the comments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "parser/load.h"
#include "tests/helpers.h"

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
	assert_string_equal(td_trace_name(&t, td_trace_track(&t, td_trace_ev(&t, find(&t,
				"aten::add", 0))->track)->name), "thread 10 (python)");
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
	tr = td_trace_track(&t, e->track);
	assert_true(tr->is_gpu);
	assert_int_equal(tr->device, 0);
	assert_int_equal(tr->stream, 7);
	e = td_trace_ev(&t, find(&t, "Memcpy DtoH (Device -> Pageable)", 0));
	assert_int_equal(TD_VEC_AT(&t.xfer_bytes, uint64_t, e->aux), 4);
	e = td_trace_ev(&t, find(&t, "Memset (Device)", 0));
	assert_int_equal(TD_VEC_AT(&t.xfer_bytes, uint64_t, e->aux), 1024);
	assert_int_equal(td_trace_track(&t, e->track)->stream, 8);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
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
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
