/* SPDX-License-Identifier: MIT */
/* The collector without a GPU: the record -> JSON formatter on hand-built CUPTI records of every
 * kind; a buffer of such records walked by the real cuptiActivityGetNextRecord, written as a
 * zstd trace and read back by the reader and diagnose (pageable copy, sync stall); a file cut in
 * its last frame still yields every earlier frame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "collector/format.h"
#include "collector/zwriter.h"
#include "parser/load.h"
#include "rules/rule.h"
#include "tests/helpers.h"

#define BASE 1700000000000000000ull
#define T0 (BASE + 1000000000ull) /* 1 s after the base */

static const char *names(int driver, uint32_t cbid, void *arg)
{
	(void)arg;
	if (driver)
		return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ? "cuLaunchKernel" : NULL;
	switch (cbid) {
	case 211: return "cudaLaunchKernel";
	case 41: return "cudaMemcpyAsync";
	case 131: return "cudaStreamSynchronize";
	case 165: return "cudaDeviceSynchronize";
	default: return NULL;
	}
}

/* --- hand-built records ------------------------------------------------------------------- */

static CUpti_ActivityAPI api(uint32_t cbid, uint64_t s, uint64_t e, uint32_t corr)
{
	CUpti_ActivityAPI a;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = cbid;
	a.start = T0 + s;
	a.end = T0 + e;
	a.processId = 4242;
	a.threadId = 4243;
	a.correlationId = corr;
	return a;
}

static CUpti_ActivityKernel10 kernel(const char *name, uint64_t s, uint64_t e, uint32_t corr)
{
	CUpti_ActivityKernel10 k;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = T0 + s;
	k.end = T0 + e;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 7;
	k.gridX = 264;
	k.gridY = k.gridZ = 1;
	k.blockX = 256;
	k.blockY = k.blockZ = 1;
	k.registersPerThread = 32;
	k.correlationId = corr;
	k.name = name;
	return k;
}

static CUpti_ActivityMemcpy6 copy(int kind, int src, int dst, uint64_t bytes, uint64_t s,
				  uint64_t e, uint32_t corr)
{
	CUpti_ActivityMemcpy6 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = (uint8_t)kind;
	m.srcKind = (uint8_t)src;
	m.dstKind = (uint8_t)dst;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m.bytes = bytes;
	m.start = T0 + s;
	m.end = T0 + e;
	m.contextId = 1;
	m.streamId = 7;
	m.correlationId = corr;
	return m;
}

static CUpti_ActivitySynchronization2 sync_rec(int type, uint64_t s, uint64_t e, uint32_t corr,
					       uint32_t stream)
{
	CUpti_ActivitySynchronization2 y;
	memset(&y, 0, sizeof(y));
	y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	y.type = (CUpti_ActivitySynchronizationType)type;
	y.start = T0 + s;
	y.end = T0 + e;
	y.correlationId = corr;
	y.contextId = 1;
	y.streamId = stream;
	y.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	return y;
}

static CUpti_ActivityMarker2 mark(uint32_t flags, uint32_t id, uint64_t t, const char *name)
{
	CUpti_ActivityMarker2 m;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	m.flags = (CUpti_ActivityFlag)flags;
	m.timestamp = T0 + t;
	m.id = id;
	m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	m.objectId.pt.processId = 4242;
	m.objectId.pt.threadId = 4243;
	m.name = name;
	return m;
}

static CUpti_ActivityDevice5 device(void)
{
	CUpti_ActivityDevice5 d;
	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 0;
	d.numMultiprocessors = 132;
	d.computeCapabilityMajor = 9;
	d.globalMemorySize = 85899345920ull;
	d.maxThreadsPerBlock = 1024;
	d.numThreadsPerWarp = 32;
	d.name = "Test H100";
	return d;
}

static const char *fmt1(struct tdc_ctx *c, struct tdc_buf *b, const void *rec)
{
	b->len = 0;
	if (b->s)
		b->s[0] = '\0';
	c->first = 1;
	tdc_format_record(rec, c, b);
	/* every byte is JSON text: no NUL inside (strstr below would stop at one) */
	assert_int_equal(b->s ? strlen(b->s) : 0, b->len);
	return b->s ? b->s : "";
}

#define HAS(s, sub) do { if (!strstr((s), (sub))) fail_msg("missing %s in %s", (sub), (s)); } while (0)

static void test_format_every_kind(void **state)
{
	struct tdc_ctx c;
	struct tdc_buf b = {0};
	CUpti_ActivityDevice5 d = device();
	CUpti_ActivityKernel10 k = kernel("_Z6vecAddPfS_S_i", 2500, 7750, 99);
	CUpti_ActivityAPI r = api(211, 1000, 4000, 99);
	CUpti_ActivityAPI dr = api(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 100, 200, 98);
	CUpti_ActivityMemcpy6 m = copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
				       CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 4194304, 10000, 20000, 100);
	CUpti_ActivityMemset4 ms;
	CUpti_ActivitySynchronization2 y = sync_rec(3, 30000, 31000, 101, 7);
	CUpti_ActivitySynchronization2 cs = sync_rec(4, 40000, 41000, 102,
						     CUPTI_SYNCHRONIZATION_INVALID_VALUE);
	CUpti_ActivityMarker2 m1 = mark(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 500, "train_step");
	CUpti_ActivityMarker2 m2 = mark(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, 90000, NULL);
	CUpti_ActivityMarker2 m3 = mark(CUPTI_ACTIVITY_FLAG_MARKER_END, 77, 90000, NULL);
	CUpti_ActivityOverhead3 o;
	(void)state;

	tdc_ctx_init(&c, BASE, 4242);
	c.api_name = names;
	assert_int_equal(tdc_format_record((const CUpti_Activity *)&d, &c, &b), 0);
	assert_int_equal(c.ndevices, 1);
	HAS(fmt1(&c, &b, &k), "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"_Z6vecAddPfS_S_i\",\"pid\":0,"
			      "\"tid\":7,\"ts\":1000002.500,\"dur\":5.250,");
	HAS(b.s, "\"correlation\":99,\"registers per thread\":32");
	HAS(b.s, "\"blocks per SM\":2.000000,\"warps per SM\":16.000000,\"grid\":[264,1,1],"
		 "\"block\":[256,1,1]");
	HAS(b.s, "{\"ph\":\"f\",\"id\":99,\"pid\":0,\"tid\":7,\"ts\":1000002.500,\"cat\":\"ac2g\","
		 "\"name\":\"ac2g\",\"bp\":\"e\"}");
	HAS(fmt1(&c, &b, &r), "\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":4242,"
			      "\"tid\":4243,\"ts\":1000001.000,\"dur\":3.000,\"args\":{\"cbid\":211,"
			      "\"correlation\":99}}");
	HAS(b.s, "{\"ph\":\"s\",\"id\":99,");
	dr.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	HAS(fmt1(&c, &b, &dr), "\"cat\":\"cuda_driver\",\"name\":\"cuLaunchKernel\"");
	HAS(fmt1(&c, &b, &m), "\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy HtoD (Pageable -> Device)\"");
	HAS(b.s, "\"bytes\":4194304,\"memory bandwidth (GB/s)\":419.430400,\"async\":1");
	memset(&ms, 0, sizeof(ms));
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.start = T0 + 1;
	ms.end = T0 + 2;
	ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	ms.bytes = 64;
	ms.streamId = 7;
	HAS(fmt1(&c, &b, &ms), "\"cat\":\"gpu_memset\",\"name\":\"Memset (Device)\"");
	HAS(fmt1(&c, &b, &y), "\"cat\":\"cuda_sync\",\"name\":\"Stream Sync\",\"pid\":0,\"tid\":7");
	HAS(b.s, "\"cuda_sync_kind\":\"Stream Sync\",\"stream\":7,\"correlation\":101");
	HAS(fmt1(&c, &b, &cs), "\"name\":\"Context Sync\",\"pid\":0,\"tid\":-1");
	/* NVTX: START is held until its END; an END without START is counted */
	assert_int_equal(tdc_format_record((const CUpti_Activity *)&m1, &c, &b), 0);
	HAS(fmt1(&c, &b, &m2), "\"cat\":\"user_annotation\",\"name\":\"train_step\",\"pid\":4242,"
			       "\"tid\":4243,\"ts\":1000000.500,\"dur\":89.500");
	HAS(b.s, "\"args\":{\"source\":\"nvtx\",\"domain\":\"\"}}");
	fmt1(&c, &b, &m3);
	assert_int_equal(c.unmatched_marker_ends, 1);
	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.start = T0;
	o.end = T0 + 5;
	HAS(fmt1(&c, &b, &o), "\"cat\":\"overhead\",\"name\":\"Buffer Flush\",\"pid\":-1");
	/* records without timestamps are counted, not written as ts 0 */
	k.start = k.end = 0;
	assert_int_equal(tdc_format_record((const CUpti_Activity *)&k, &c, &b), 0);
	assert_int_equal(c.no_timestamp, 1);
	/* names are JSON-escaped, invalid UTF-8 replaced */
	k = kernel("q\"uote\\back\nline\xff", 1, 2, 1);
	HAS(fmt1(&c, &b, &k), "\"name\":\"q\\\"uote\\\\back\\u000aline\xef\xbf\xbd\"");
	tdc_buf_free(&b);
	tdc_ctx_free(&c);
}

/* --- a buffer through libcupti, into a trace, back through the reader ----------------------- */

struct bufw {
	uint8_t *p;
	size_t len;
};

static void add(struct bufw *w, const void *rec, size_t size)
{
	memcpy(w->p + w->len, rec, size);
	w->len += (size + 7) & ~(size_t)7;
}

static void write_trace(const char *path, int cut_last_frame)
{
	/* A step where the host copies a value to pageable memory and synchronizes, then uploads
	 * from pageable memory while the GPU waits (times in ns after T0):
	 *   kernel A 10..500 us, copy DtoH (pageable) 500..502 us in cudaMemcpyAsync 12..510 us,
	 *   cudaStreamSynchronize 511..520 us, cudaMemcpyAsync 530..900 us uploading (pageable)
	 *   at 850..890 us, cudaLaunchKernel 905..910 us, kernel B 915..1500 us. */
	struct bufw w = {NULL, 0};
	CUpti_ActivityDevice5 d = device();
	CUpti_ActivityAPI r1 = api(211, 1000, 6000, 1), r2 = api(41, 12000, 510000, 2);
	CUpti_ActivityAPI r3 = api(131, 511000, 520000, 3), r4 = api(41, 530000, 900000, 4);
	CUpti_ActivityAPI r5 = api(211, 905000, 910000, 5);
	CUpti_ActivityKernel10 ka = kernel("gemm_kernel", 10000, 500000, 1);
	CUpti_ActivityKernel10 kb = kernel("relu_kernel", 915000, 1500000, 5);
	CUpti_ActivityMemcpy6 c1 = copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
					CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, 4, 500000, 502000, 2);
	CUpti_ActivityMemcpy6 c2 = copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
					CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
					CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 33554432, 850000, 890000, 4);
	CUpti_ActivitySynchronization2 y = sync_rec(3, 511000, 520000, 3, 7);
	CUpti_ActivityMarker2 m1 = mark(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, 1510000, "eval");
	CUpti_ActivityMarker2 m2 = mark(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, 1600000, NULL);
	CUpti_Activity *rec = NULL;
	struct tdc_ctx c;
	struct tdc_buf b = {0};
	struct tdc_zw *zw;
	int n = 0;

	w.p = aligned_alloc(8, 4096);
	memset(w.p, 0, 4096);
	add(&w, &d, sizeof(d));
	add(&w, &r1, sizeof(r1));
	add(&w, &r2, sizeof(r2));
	add(&w, &r3, sizeof(r3));
	add(&w, &r4, sizeof(r4));
	add(&w, &r5, sizeof(r5));
	add(&w, &ka, sizeof(ka));
	add(&w, &kb, sizeof(kb));
	add(&w, &c1, sizeof(c1));
	add(&w, &c2, sizeof(c2));
	add(&w, &y, sizeof(y));
	add(&w, &m1, sizeof(m1)); /* an NVTX range after the step: read back as JSON */
	add(&w, &m2, sizeof(m2));

	tdc_ctx_init(&c, BASE, 4242);
	c.api_name = names;
	zw = tdc_zw_open(path, 3);
	assert_non_null(zw);
	tdc_format_head(&c, "test", &b);
	assert_int_equal(tdc_zw_write(zw, b.s, b.len), 0);
	assert_int_equal(tdc_zw_frame(zw), 0);
	b.len = 0;
	/* the real libcupti walks the buffer: its record sizes must be the ones built here */
	while (cuptiActivityGetNextRecord(w.p, w.len, &rec) == CUPTI_SUCCESS) {
		tdc_format_record(rec, &c, &b);
		n++;
	}
	assert_int_equal(n, 13);
	assert_int_equal(tdc_zw_write(zw, b.s, b.len), 0);
	assert_int_equal(tdc_zw_frame(zw), 0);
	b.len = 0;
	tdc_format_tail(&c, 3, 1, "test trace", &b);
	assert_int_equal(tdc_zw_write(zw, b.s, b.len), 0);
	assert_int_equal(tdc_zw_close(zw), 0);
	if (cut_last_frame) { /* a process killed while writing its last buffer */
		FILE *f = fopen(path, "r+b");
		long size;
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		fclose(f);
		assert_int_equal(truncate(path, size - 20), 0);
	}
	tdc_buf_free(&b);
	tdc_ctx_free(&c);
	free(w.p);
}

static int cupti_matches(void)
{
	uint32_t v = 0;
	if (cuptiGetVersion(&v) != CUPTI_SUCCESS || v != CUPTI_API_VERSION) {
		fprintf(stderr, "SKIPPED: libcupti API %u differs from the headers' %u (record sizes)\n",
			v, (unsigned)CUPTI_API_VERSION);
		return 0;
	}
	return 1;
}

static void test_round_trip(void **state)
{
	char path[] = "/tmp/td_collector_XXXXXX";
	char file[64];
	struct td_trace t;
	struct td_error err;
	struct td_analysis a;
	struct td_report r;
	size_t i;
	int transfer = 0, sync = 0;
	(void)state;

	if (!cupti_matches())
		skip();
	assert_non_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/t.json.zst", path);
	write_trace(file, 0);
	td_trace_init(&t);
	assert_int_equal(td_trace_load(file, NULL, &t, &err), 0);
	assert_false(t.partial);
	assert_int_equal(t.compression, TD_COMP_ZSTD);
	assert_int_equal(t.by_kind[TD_K_KERNEL], 2);
	assert_int_equal(t.by_kind[TD_K_MEMCPY], 2);
	assert_int_equal(t.by_kind[TD_K_RUNTIME], 5);
	assert_int_equal(t.by_kind[TD_K_SYNC], 1);
	assert_int_equal(t.by_kind[TD_K_USER_ANNOTATION], 1);
	assert_int_equal(t.dropped_records, 3);
	assert_string_equal(td_trace_name(&t, TD_VEC_AT(&t.devices, struct td_device, 0).name), "Test H100");
	assert_int_equal(t.base_time_ns, (int64_t)BASE);
	assert_int_equal(t.anom.orphan_gpu_ops, 0); /* every GPU op found its launch */
	td_analysis_run(&a, &t, NULL);
	td_diagnose(&a, &r);
	for (i = 0; i < r.findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r.findings, struct td_finding, i);
		transfer |= !strcmp(f->rule, "transfer") && strstr(f->title, "pageable") != NULL;
		sync |= !strcmp(f->rule, "sync-stall") && f->count == 2;
	}
	assert_true(transfer);
	assert_true(sync);
	td_report_free(&r);
	td_analysis_free(&a);
	td_trace_free(&t);

	/* cut inside the last frame: the earlier frames still read, marked partial */
	write_trace(file, 1);
	td_trace_init(&t);
	assert_int_equal(td_trace_load(file, NULL, &t, &err), 0);
	assert_true(t.partial);
	assert_int_equal(t.by_kind[TD_K_KERNEL], 2);
	td_trace_free(&t);
	unlink(file);
	rmdir(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_every_kind),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
