/* SPDX-License-Identifier: MIT */
/* The reader's parallel paths, each held to the sequential reader's model: the split-parallel
 * reader (parser/split.c) on swept block sizes, documents made to fool its cutter, a huge
 * event and the real traces; zstd files of many frames decoded on threads (parser/zframes.c);
 * finalize on threads. Part of the test_reader suite (tests/test_reader.c runs them). */
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
#include <zstd.h>

#include "parser/load.h"
#include "parser/zframes.h"
#include "tests/helpers.h"
#include "tests/test_reader.h"

/* A temporary file holding text (tests/test_reader.h). */
char *write_temp(const char *text, size_t len)
{
	const char *dir = getenv("TMPDIR");
	char *path = malloc(4096);
	FILE *fp;
	int fd;

	snprintf(path, 4096, "%s/td-split-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fp = fdopen(fd, "wb");
	assert_non_null(fp);
	assert_int_equal(fwrite(text, 1, len, fp), len);
	fclose(fp);
	return path;
}

/* --- the split-parallel reader (parser/split.c): the sequential reader's model, always ----- */

struct outcome {
	int rc;
	uint64_t digest;
	struct td_error err;
};

static struct outcome load_opts(const char *path, const struct td_load_opts *opts)
{
	struct outcome o;
	struct td_trace t;

	memset(&o, 0, sizeof(o));
	td_trace_init(&t);
	o.rc = td_trace_load(path, opts, &t, &o.err);
	if (o.rc == 0)
		o.digest = th_digest(&t);
	td_trace_free(&t);
	return o;
}

static struct outcome load_with(const char *path, int jobs, size_t block)
{
	struct td_load_opts opts = {.jobs = jobs, .block = block};

	return load_opts(path, &opts);
}

static void same_outcome(const char *what, size_t block, int jobs, const struct outcome *ref,
			 const struct outcome *o)
{
	if (o->rc != ref->rc)
		fail_msg("%s block %zu -j%d: rc %d, sequential %d (%s)", what, block, jobs, o->rc,
			 ref->rc, o->err.msg);
	if (o->rc == 0 && o->digest != ref->digest)
		fail_msg("%s block %zu -j%d: the model differs from the sequential reader's", what,
			 block, jobs);
	if (o->rc != 0 && (o->err.has_pos != ref->err.has_pos || o->err.line != ref->err.line ||
			   o->err.col != ref->err.col || o->err.offset != ref->err.offset ||
			   strcmp(o->err.msg, ref->err.msg)))
		fail_msg("%s block %zu -j%d: error %u:%u (byte %llu) '%s', sequential %u:%u "
			 "(byte %llu) '%s'", what, block, jobs, o->err.line, o->err.col,
			 (unsigned long long)o->err.offset, o->err.msg, ref->err.line, ref->err.col,
			 (unsigned long long)ref->err.offset, ref->err.msg);
}

/* Blocks of 1 to 96 bytes cut the fixtures at every event boundary (and try every cut that is
 * not one): the model, the partial read and every error are the sequential reader's. */
void test_split_sweep(void **state)
{
	static const char *const files[] = {
		"mini-kineto.json", "mini-kineto.json.gz", "mini-kineto.json.zst",
		"legacy-autograd.json", "odd/anomalies.json", "odd/truncated.json",
		"odd/truncated.json.gz", "odd/truncated.json.zst", "memory/snapshot.json",
		"bad/not-json.txt", "bad/stray-quote.json", "bad/top-number.json",
		"bad/events-object.json", "bad/no-events.json", "bad/trailing-garbage.json",
		"bad/empty.json", "bad/corrupt.json.gz", "bad/truncated-early.json.zst",
	};
	size_t f, block;
	(void)state;

	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		const char *path = th_fixture(files[f]);
		struct outcome ref = load_with(path, 1, 0);
		int jobs;
		for (block = 1; block <= 96; block++)
			for (jobs = 2; jobs <= 3; jobs++) {
				struct outcome o = load_with(path, jobs, block);
				same_outcome(files[f], block, jobs, &ref, &o);
			}
	}
}

/* Documents made to fool the cutter: `},{` and `},\n{` inside strings (escaped quotes too),
 * inside args' nested arrays, in deviceProperties and in a "traceEvents" string before the
 * real key; a second traceEvents; the events array ending mid-block. */
void test_split_evil_cuts(void **state)
{
	static const char *const docs[] = {
		"{\"deviceProperties\": [{\"id\": 0, \"name\": \"A\"},\n{\"id\": 1, \"name\": \"B\"}],\n"
		" \"note\": \"\\\"traceEvents\\\": [\",\n"
		" \"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"a}, {b\", \"pid\": 1, \"tid\": 1, "
		"\"ts\": 1, \"dur\": 5},\n"
		"{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"q\\\"}, {\\\"r\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 2, \"dur\": 1, \"args\": {\"l\": [{\"x\": 1},\n{\"y\": 2}], "
		"\"Input Dims\": [[1, 2]]}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
		"\"ts\": 3, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 9}},"
		"{\"ph\": \"i\", \"name\": \"},{\", \"pid\": 1, \"tid\": 2, \"ts\": 4, \"s\": \"t\"}   ,"
		"\n\n  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 1, "
		"\"args\": {\"name\": \"main},\\n{\"}}\n"
		"],\n \"traceEvents\": [{\"ph\": \"X\", \"name\": \"dup\", \"pid\": 1, \"tid\": 1, "
		"\"ts\": 9, \"dur\": 1},\n{\"ph\": \"X\"}],\n"
		" \"distributedInfo\": {\"rank\": 3, \"world_size\": 8}, \"displayTimeUnit\": \"ms\"}\n",
		/* the array layout, with odd elements */
		"[{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1},\n"
		"7, \"s\", {\"ph\": \"X\", \"name\": \"}\\n,{\", \"pid\": 1, \"tid\": 1, \"ts\": 2, "
		"\"dur\": 1},\n[{\"a\": 1},\n{\"b\": 2}],\n{\"ph\": \"X\", \"name\": \"c\", \"pid\": 1, "
		"\"tid\": 1, \"ts\": 3, \"dur\": 1}]\n",
		/* cut short inside an event after a few whole ones */
		"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
		"\"dur\": 1},\n{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, "
		"\"dur\": 1},\n{\"ph\": \"X\", \"name\": \"c}, {\", \"pid\"",
		/* an error after the cuts: the sequential reader's line, column and byte */
		"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
		"\"dur\": 1},\n{\"ph\": \"X\", \"name\": \"b\", \"pid\": 1, \"tid\": 1, \"ts\": 2, "
		"\"dur\": 1},\n{\"ph\": \"X\", \"name\": \"c\", \"pid\": 1, \"tid\": 1, \"ts\": 3, "
		"\"dur\": 1},\n{\"ph\": \"X\", \"name\": \"d\" \"pid\": 1}]}\n",
		/* an error right at an event's start: its context reaches into the block before */
		"{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"a\", \"pid\": 1, \"tid\": 1, \"ts\": 1, "
		"\"dur\": 1},\n{\"ph\" 1}]}\n",
	};
	size_t d, block;
	(void)state;

	for (d = 0; d < sizeof(docs) / sizeof(docs[0]); d++) {
		char *path = write_temp(docs[d], strlen(docs[d]));
		char what[32];
		struct outcome ref = load_with(path, 1, 0);
		int jobs;
		snprintf(what, sizeof(what), "document %zu", d);
		if (d < 2)
			assert_int_equal(ref.rc, 0);
		for (block = 1; block <= strlen(docs[d]) + 2; block++)
			for (jobs = 2; jobs <= 4; jobs += 2) {
				struct outcome o = load_with(path, jobs, block);
				same_outcome(what, block, jobs, &ref, &o);
			}
		unlink(path);
		free(path);
	}
}

/* One event larger than the cutter's look-ahead: a forced cut that its worker cannot verify,
 * so that worker reads the rest alone - the same model still. */
void test_split_huge_event(void **state)
{
	size_t big = (size_t)40 << 20, i, n = 0;
	char *doc = malloc(big + 4096), *path;
	struct outcome ref, o;
	(void)state;

	n += (size_t)sprintf(doc + n, "{\"traceEvents\": [");
	for (i = 0; i < 20; i++)
		n += (size_t)sprintf(doc + n, "{\"ph\": \"X\", \"name\": \"e%zu\", \"pid\": 1, "
				     "\"tid\": 1, \"ts\": %zu, \"dur\": 1},\n", i, i * 10);
	n += (size_t)sprintf(doc + n, "{\"ph\": \"X\", \"name\": \"big\", \"pid\": 1, \"tid\": 1, "
			     "\"ts\": 500, \"dur\": 1, \"args\": {\"s\": \"");
	memset(doc + n, 'x', big);
	n += big;
	n += (size_t)sprintf(doc + n, "\"}}");
	for (i = 0; i < 20; i++)
		n += (size_t)sprintf(doc + n, ",\n{\"ph\": \"X\", \"name\": \"f%zu\", \"pid\": 1, "
				     "\"tid\": 2, \"ts\": %zu, \"dur\": 1}", i, 1000 + i);
	n += (size_t)sprintf(doc + n, "]}\n");
	path = write_temp(doc, n);
	free(doc);
	ref = load_with(path, 1, 0);
	assert_int_equal(ref.rc, 0);
	o = load_with(path, 2, 4096);
	same_outcome("huge event", 4096, 2, &ref, &o);
	o = load_with(path, 3, 0);
	same_outcome("huge event", 0, 3, &ref, &o);
	unlink(path);
	free(path);
}

/* The real traces in ../shared, cut into 64 KiB blocks. */
void test_split_real_traces(void **state)
{
	static const char *const files[] = {
		"ddp-v100-rank1.json.gz", "resnet50-nw4.pt.trace.json.gz", "b200-eager-decode.json.gz",
		"mi250-rocm.json.gz", "dlrm-v100-rank1.json.gz",
	};
	size_t f;
	(void)state;

	TH_SKIP_WITHOUT_SHARED();
	for (f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		const char *path = th_shared(files[f]);
		struct outcome ref, o;
		ref = load_with(path, 1, 0);
		assert_int_equal(ref.rc, 0);
		o = load_with(path, 2, 65536);
		same_outcome(files[f], 65536, 2, &ref, &o);
		o = load_with(path, 5, 300000);
		same_outcome(files[f], 300000, 5, &ref, &o);
	}
}

/* Records go to the model thread without their rare fields (collectives, a sync's stream,
 * [memory] totals) unless they have one: the model is the one built from whole records on one
 * thread, on fixtures that have each of them. */
void test_records_short_and_full(void **state)
{
	static const char doc[] =
		"{\"traceEvents\": [\n"
		"{\"ph\": \"X\", \"cat\": \"cuda_sync\", \"name\": \"Stream Wait Event\", \"pid\": 0, "
		"\"tid\": 7, \"ts\": 5, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7, "
		"\"correlation\": 3, \"wait_on_stream\": 13}},\n"
		"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": 8, "
		"\"dur\": 1, \"args\": {\"device\": 0, \"stream\": 7, \"correlation\": 9}},\n"
		"{\"ph\": \"i\", \"s\": \"t\", \"name\": \"[memory]\", \"pid\": 1, \"tid\": 1, \"ts\": 9, "
		"\"args\": {\"Total Allocated\": 4096, \"Total Reserved\": 8192, \"Bytes\": 4096, "
		"\"Device Id\": 0, \"Device Type\": 1}}]}\n";
	const char *files[] = {"rules/communication.json", "rules/memory.json",
			       "rules/memory-fragmented.json", "mini-kineto.json", NULL};
	char *path = write_temp(doc, sizeof(doc) - 1);
	size_t f;
	(void)state;

	files[4] = path;
	for (f = 0; f < 5; f++) {
		const char *p = f < 4 ? th_fixture(files[f]) : files[f];
		struct td_load_opts whole = {.no_thread = 1}, threaded = {.jobs = 1};
		struct outcome ref = load_opts(p, &whole), o = load_opts(p, &threaded);
		assert_int_equal(ref.rc, 0);
		same_outcome(files[f], 0, 1, &ref, &o);
		o = load_with(p, 2, 200);
		same_outcome(files[f], 200, 2, &ref, &o);
	}
	unlink(path);
	free(path);
}

/* --- zstd files of many frames, decoded on threads (parser/zframes.c) ------------------------ */

static struct outcome load_zstd(const char *path, int zstd_threads)
{
	struct td_load_opts opts = {.jobs = 2, .block = 256, .zstd_threads = zstd_threads};

	return load_opts(path, &opts);
}

/* appends doc[from, to) as one frame: with its size in the header, or streamed (without, as
 * the collector writes them) */
static size_t put_frame(unsigned char *out, size_t cap, const char *doc, size_t n, int sized)
{
	size_t r;

	if (sized) {
		r = ZSTD_compress(out, cap, doc, n, 3);
	} else {
		ZSTD_CCtx *c = ZSTD_createCCtx();
		ZSTD_inBuffer ib = {doc, n, 0};
		ZSTD_outBuffer ob = {out, cap, 0};
		do
			r = ZSTD_compressStream2(c, &ob, &ib, ZSTD_e_end);
		while (r && !ZSTD_isError(r));
		ZSTD_freeCCtx(c);
		r = ZSTD_isError(r) ? r : ob.pos;
	}
	assert_false(ZSTD_isError(r));
	return r;
}

/* doc cut into frames of 1, 900, 64 and 311 bytes (sizes in the header for every other one),
 * a skippable frame before every third; with big, 33 MiB of white space as a fourth frame
 * (streamed: no size), which is the streaming decoder's. *big_at: that frame's offset. */
static unsigned char *make_frames(const char *doc, size_t n, int big, size_t *len, size_t *big_at)
{
	static const unsigned char skip[] = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'};
	static const size_t sizes[] = {1, 900, 64, 311};
	size_t cap = 64 * n + (1 << 20), at = 0, f = 0, ws_len = (size_t)33 << 20;
	unsigned char *z = malloc(cap);

	*len = *big_at = 0;
	while (at < n) {
		size_t m = sizes[f % 4] < n - at ? sizes[f % 4] : n - at;
		if (f % 3 == 1) {
			memcpy(z + *len, skip, sizeof(skip));
			*len += sizeof(skip);
		}
		*len += put_frame(z + *len, cap - *len, doc + at, m, f % 2);
		if (big && f == 2) { /* white space between two of the events' bytes */
			char *ws = malloc(ws_len);
			memset(ws, ' ', ws_len);
			*big_at = *len;
			*len += put_frame(z + *len, cap - *len, ws, ws_len, 0);
			free(ws);
		}
		at += m;
		f++;
	}
	return z;
}

/* The frame decoders themselves: every frame of a file of small ones, in order, then the end;
 * with a large frame, the frames before it, then the rest from its first byte. */
/* A model of n launches a thread, on three threads and two streams: each call inside an op
 * (a span tree), a kernel per call with its correlation id; every eighth pair of ops arrives
 * swapped (the sort's work). */
static void fill_model(struct td_trace *t, uint32_t n)
{
	uint32_t cpu[3], gpu[2], name = td_strtab_intern(&t->names, "op", 2), k, c = 1;
	int i;

	for (i = 0; i < 3; i++)
		cpu[i] = td_trace_cpu_track(t, 1, 0, 10 + i, 0);
	gpu[0] = td_trace_gpu_track(t, 0, 7);
	gpu[1] = td_trace_gpu_track(t, 0, 8);
	td_trace_device(t, 0);
	for (i = 0; i < 3; i++)
		for (k = 0; k < n; k++) {
			int64_t ts = (int64_t)(k ^ ((k & 6) == 6 ? 1u : 0u)) * 1000;
			struct td_event *op = td_trace_push(t, cpu[i]), *call, *kern;
			op->ts = ts;
			op->dur_lo = 900;
			op->kind = TD_K_CPU_OP;
			op->name = name;
			call = td_trace_push(t, cpu[i]);
			call->ts = ts + 100;
			call->dur_lo = 300;
			call->kind = TD_K_RUNTIME;
			call->name = name;
			call->corr = c;
			kern = td_trace_push(t, gpu[k & 1]);
			kern->ts = ts + 500 + i;
			kern->dur_lo = 200;
			kern->kind = TD_K_KERNEL;
			kern->name = name;
			kern->corr = c++;
		}
}

/* A trace large enough to be finalized on two threads ends as on one: the same events in the
 * same order, the same links. */
void test_finalize_threads(void **state)
{
	struct td_trace one, two;
	uint32_t n = 100000, i, parents = 0, launches = 0;

	(void)state;
	td_trace_init(&one);
	td_trace_init(&two);
	fill_model(&one, n);
	fill_model(&two, n);
	one.jobs = 1;
	two.jobs = 2;
	td_trace_finalize(&one);
	td_trace_finalize(&two);
	assert_int_equal(one.events.len, 9 * (size_t)n);
	assert_int_equal(two.events.len, one.events.len);
	assert_memory_equal(one.events.data, two.events.data, one.events.len * sizeof(struct td_event));
	assert_memory_equal(one.link, two.link, one.events.len * sizeof(uint32_t));
	for (i = 0; i < one.tracks.len; i++) {
		assert_int_equal(td_trace_track(&one, i)->first, td_trace_track(&two, i)->first);
		assert_int_equal(td_trace_track(&one, i)->count, td_trace_track(&two, i)->count);
	}
	for (i = 0; i < two.events.len; i++) {
		const struct td_event *e = td_trace_ev(&two, i);
		if (i && td_trace_track_of(&two, i) == td_trace_track_of(&two, i - 1))
			assert_true(e->ts >= td_trace_ev(&two, i - 1)->ts); /* sorted */
		if (e->kind == TD_K_RUNTIME && td_trace_parent(&two, i) != TD_NONE &&
		    td_trace_ev(&two, td_trace_parent(&two, i))->ts == e->ts - 100)
			parents++;
		if (e->kind == TD_K_KERNEL && td_trace_launch(&two, i) != TD_NONE &&
		    td_trace_ev(&two, td_trace_launch(&two, i))->corr == e->corr)
			launches++;
	}
	assert_int_equal(parents, 3 * n); /* each call in its op */
	assert_int_equal(launches, 3 * n); /* each kernel to its call */
	td_trace_free(&one);
	td_trace_free(&two);
}

void test_zstd_frame_decoders(void **state)
{
	size_t n, len, big_at;
	char *doc = (char *)th_slurp(th_fixture("mini-kineto.json"), &n);
	assert_non_null(doc);
	int big;
	(void)state;

	for (big = 0; big < 2; big++) {
		unsigned char *z = make_frames(doc, n, big, &len, &big_at), *rest;
		char *path = write_temp((const char *)z, len), *got = malloc(n);
		size_t have = 0, rest_len;
		unsigned long long off;
		int fd = open(path, O_RDONLY);
		struct td_zframes *zf;
		struct td_error err;
		ssize_t r;
		const unsigned char *out;

		assert_true(fd >= 0);
		zf = td_zf_start(2, fd, 4096, NULL, 0, 0);
		assert_non_null(zf);
		while ((r = td_zf_next(zf, &out, &err)) > 0) {
			assert_true(have + (size_t)r <= n);
			memcpy(got + have, out, (size_t)r);
			have += (size_t)r;
		}
		if (!big) {
			assert_int_equal(r, 0);
			assert_int_equal(have, n);
			assert_int_equal(td_zf_consumed(zf), len);
		} else {
			assert_int_equal(r, TD_ZF_REST);
			assert_int_equal(have, 1 + 900 + 64); /* the three frames before it */
			td_zf_rest(zf, &rest, &rest_len, &off);
			assert_int_equal(off, big_at);
			assert_memory_equal(rest, z + big_at, rest_len);
			free(rest);
		}
		assert_memory_equal(got, doc, have);
		td_zf_free(zf);
		close(fd);
		unlink(path);
		free(path);
		free(got);
		free(z);
	}
	free(doc);
}

/* Through the reader, the same files read whole, cut short at every 97th byte and with a byte
 * spoiled at every 89th: the frame decoders give the streaming decoder's model, partial result
 * or error, at the same byte. */
void test_zstd_frames(void **state)
{
	size_t n, len, big_at, k;
	char *doc = (char *)th_slurp(th_fixture("mini-kineto.json"), &n);
	assert_non_null(doc);
	int big;
	(void)state;

	for (big = 0; big < 2; big++) {
		unsigned char *z = make_frames(doc, n, big, &len, &big_at);
		char *path = write_temp((const char *)z, len);
		struct outcome ref = load_zstd(path, -1), o;

		assert_int_equal(ref.rc, 0);
		o = load_zstd(path, 2);
		same_outcome("frames", 256, 2, &ref, &o);
		o = load_zstd(path, 1);
		same_outcome("frames, one decoder", 256, 2, &ref, &o);
		unlink(path);
		free(path);
		for (k = 1; k < len && !big; k += 97) { /* cut short */
			path = write_temp((const char *)z, k);
			ref = load_zstd(path, -1);
			o = load_zstd(path, 2);
			same_outcome("frames cut short", k, 2, &ref, &o);
			unlink(path);
			free(path);
		}
		for (k = 0; k < len && !big; k += 89) { /* a byte spoiled */
			z[k] ^= 0x41;
			path = write_temp((const char *)z, len);
			ref = load_zstd(path, -1);
			o = load_zstd(path, 2);
			same_outcome("frames with a bad byte", k, 2, &ref, &o);
			z[k] ^= 0x41;
			unlink(path);
			free(path);
		}
		free(z);
	}
	free(doc);
}
