/* SPDX-License-Identifier: MIT */
/* The collector's pure half: one CUPTI activity record in, Kineto-compatible trace events out
 * (kernel, gpu_memcpy, gpu_memset, cuda_runtime, cuda_driver, cuda_sync, NVTX ranges as
 * user_annotation, overhead, ac2g flows). No CUPTI calls, no I/O: tested on hand-built records.
 * Internal to collector/ and its tests; nothing here is exported from the .so. */
#ifndef TD_COLLECTOR_FORMAT_H
#define TD_COLLECTOR_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* A growable text buffer. */
struct tdc_buf {
	char *s;
	size_t len, cap;
	int oom; /* an allocation failed: the text is incomplete */
};
void tdc_buf_put(struct tdc_buf *b, const char *s, size_t n);
/* A string literal's bytes, without its terminating NUL (a length counted by hand once wrote
 * one into every NVTX range's JSON). */
#define TDC_PUT_LIT(b, lit) tdc_buf_put((b), "" lit, sizeof(lit) - 1)
void tdc_buf_printf(struct tdc_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
void tdc_buf_free(struct tdc_buf *b);

struct tdc_device {
	uint32_t id, sms, cc_major, cc_minor, threads_per_block, warp;
	uint64_t mem;
	char name[128];
};

struct tdc_marker {
	uint32_t id, pid, tid;
	uint64_t ts;
	char *name, *domain;
};

struct tdc_ctx {
	uint64_t base_ns;          /* baseTimeNanoseconds; ts = (t - base) in us */
	uint32_t pid;              /* this process */
	/* name of a runtime (driver = 0) or driver (driver = 1) API callback id; may be NULL */
	const char *(*api_name)(int driver, uint32_t cbid, void *arg);
	/* demangles into buf, returns buf or NULL to keep the name; may be NULL */
	const char *(*demangle)(const char *name, char *buf, size_t cap, void *arg);
	void *arg;
	int first;                 /* no event written yet (no leading comma) */
	struct { uint32_t ctx, dev; } ctxdev[64];
	size_t nctxdev;
	struct tdc_device devices[16];
	size_t ndevices;
	struct tdc_marker *markers;  /* open NVTX ranges */
	size_t nmarkers, capmarkers;
	/* counts written into the trace */
	uint64_t records, events, no_timestamp, unmatched_marker_ends, unknown_kinds;
};

void tdc_ctx_init(struct tdc_ctx *c, uint64_t base_ns, uint32_t pid);
void tdc_ctx_free(struct tdc_ctx *c);
/* Kineto's base: Unix-epoch ns floored to units of 7,889,238 s (three months), shared by every
 * process started in the same window. */
uint64_t tdc_base_time(uint64_t now_ns);

/* Appends the events of one record (comma-separated, as elements of traceEvents). Returns the
 * number of events written (0 for records that only feed the context, e.g. devices). */
int tdc_format_record(const CUpti_Activity *rec, struct tdc_ctx *c, struct tdc_buf *out);

/* The document around the events: the head opens traceEvents; the tail closes it and adds
 * deviceProperties, the collector's counters (dropped records...) and the trace name. */
void tdc_format_head(struct tdc_ctx *c, const char *process_name, struct tdc_buf *out);
void tdc_format_tail(const struct tdc_ctx *c, uint64_t dropped, uint64_t buffers,
		     const char *trace_name, struct tdc_buf *out);

#endif
