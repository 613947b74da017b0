/* SPDX-License-Identifier: MIT */
#include "collector/format.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- buffer ------------------------------------------------------------------------------ */

static int grow(struct tdc_buf *b, size_t need)
{
	size_t cap;
	char *s;

	if (b->oom)
		return -1;
	if (b->len + need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + need + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->oom = 1; /* the collector never aborts its host: drop, count, go on */
		return -1;
	}
	b->s = s;
	b->cap = cap;
	return 0;
}

void tdc_buf_put(struct tdc_buf *b, const char *s, size_t n)
{
	if (grow(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void tdc_buf_printf(struct tdc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || grow(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void tdc_buf_free(struct tdc_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

/* A JSON string: quotes, backslashes and control bytes escaped, invalid UTF-8 replaced. */
static void put_str(struct tdc_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	TDC_PUT_LIT(b, "\"");
	while (*p) {
		unsigned char c = *p;
		size_t k = 1;
		if (c == '"' || c == '\\') {
			char e[2] = {'\\', (char)c};
			tdc_buf_put(b, e, 2);
		} else if (c < 0x20) {
			tdc_buf_printf(b, "\\u%04x", c);
		} else if (c < 0x80) {
			tdc_buf_put(b, (const char *)p, 1);
		} else {
			/* length of a valid sequence, else replace the byte */
			k = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
			if (k) {
				size_t i;
				for (i = 1; i < k; i++)
					if ((p[i] & 0xc0) != 0x80)
						k = 0;
			}
			if (k)
				tdc_buf_put(b, (const char *)p, k);
			else
				TDC_PUT_LIT(b, "\xef\xbf\xbd"), k = 1;
		}
		p += k;
	}
	TDC_PUT_LIT(b, "\"");
}

/* --- context ----------------------------------------------------------------------------- */

void tdc_ctx_init(struct tdc_ctx *c, uint64_t base_ns, uint32_t pid)
{
	memset(c, 0, sizeof(*c));
	c->base_ns = base_ns;
	c->pid = pid;
	c->first = 1;
}

void tdc_ctx_free(struct tdc_ctx *c)
{
	size_t i;

	for (i = 0; i < c->nmarkers; i++) {
		free(c->markers[i].name);
		free(c->markers[i].domain);
	}
	free(c->markers);
	c->markers = NULL;
	c->nmarkers = c->capmarkers = 0;
}

uint64_t tdc_base_time(uint64_t now_ns)
{
	const uint64_t unit = 7889238ull * 1000000000ull;
	return now_ns / unit * unit;
}

/* Where ctx is in the context -> device map, or -1. */
static long ctx_slot(const struct tdc_ctx *c, uint32_t ctx)
{
	size_t i;
	for (i = 0; i < c->nctxdev; i++)
		if (c->ctxdev[i].ctx == ctx)
			return (long)i;
	return -1;
}

static void note_ctx(struct tdc_ctx *c, uint32_t ctx, uint32_t dev)
{
	if (ctx_slot(c, ctx) >= 0)
		return;
	if (c->nctxdev < sizeof(c->ctxdev) / sizeof(c->ctxdev[0])) {
		c->ctxdev[c->nctxdev].ctx = ctx;
		c->ctxdev[c->nctxdev].dev = dev;
		c->nctxdev++;
	}
}

/* A GPU record's start: its context noted (the context -> device map), then 1 when it
 * has timestamps; 0, counted, when CUPTI left both at zero (nothing to place on a timeline). */
static int stamped(struct tdc_ctx *c, uint32_t ctx, uint32_t dev, uint64_t start, uint64_t end)
{
	note_ctx(c, ctx, dev);
	if (start == 0 && end == 0) {
		c->no_timestamp++;
		return 0;
	}
	return 1;
}

static uint32_t dev_of_ctx(const struct tdc_ctx *c, uint32_t ctx)
{
	long i = ctx_slot(c, ctx);
	return i >= 0 ? c->ctxdev[i].dev : 0;
}

static uint32_t sms_of(const struct tdc_ctx *c, uint32_t dev)
{
	size_t i;
	for (i = 0; i < c->ndevices; i++)
		if (c->devices[i].id == dev)
			return c->devices[i].sms;
	return 0;
}

/* --- events ------------------------------------------------------------------------------ */

/* "ts": microseconds with the nanosecond digits, relative to the base */
static void put_us(struct tdc_buf *b, uint64_t ns)
{
	tdc_buf_printf(b, "%llu.%03llu", (unsigned long long)(ns / 1000),
		       (unsigned long long)(ns % 1000));
}

static void begin(struct tdc_ctx *c, struct tdc_buf *b)
{
	if (!c->first)
		TDC_PUT_LIT(b, ",\n");
	c->first = 0;
	c->events++;
}

/* {"ph":"X","cat":CAT,"name":NAME,"pid":P,"tid":T,"ts":..,"dur":..,"args":{  (left open) */
static void open_x(struct tdc_ctx *c, struct tdc_buf *b, const char *cat, const char *name,
		   int64_t pid, int64_t tid, uint64_t start, uint64_t end)
{
	uint64_t s = start > c->base_ns ? start - c->base_ns : 0;

	begin(c, b);
	tdc_buf_printf(b, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	put_str(b, name);
	tdc_buf_printf(b, ",\"pid\":%lld,\"tid\":%lld,\"ts\":", (long long)pid, (long long)tid);
	put_us(b, s);
	TDC_PUT_LIT(b, ",\"dur\":");
	put_us(b, end > start ? end - start : 0);
	TDC_PUT_LIT(b, ",\"args\":{");
}

static void flow(struct tdc_ctx *c, struct tdc_buf *b, char ph, uint32_t id, int64_t pid,
		 int64_t tid, uint64_t t)
{
	begin(c, b);
	tdc_buf_printf(b, "{\"ph\":\"%c\",\"id\":%u,\"pid\":%lld,\"tid\":%lld,\"ts\":", ph, id,
		       (long long)pid, (long long)tid);
	put_us(b, t > c->base_ns ? t - c->base_ns : 0);
	tdc_buf_printf(b, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"%s}", ph == 'f' ? ",\"bp\":\"e\"" : "");
}

static const char *mem_kind(uint32_t k)
{
	static const char *const n[] = {"Unknown", "Pageable", "Pinned", "Device", "Array",
					"Managed", "Device Static", "Managed Static"};
	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown";
}

static const char *copy_kind(uint32_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA: return "HtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH: return "AtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA: return "AtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD: return "AtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA: return "DtoA";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH: return "HtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "PtoP";
	default: return "<unknown>";
	}
}

/* Runtime cbids whose calls start a CPU -> GPU flow: launches, copies, memsets, syncs. */
static int flow_name(const char *n)
{
	return !strncmp(n, "cudaLaunch", 10) || !strncmp(n, "__cudaLaunch", 12) ||
	       !strncmp(n, "cudaGraphLaunch", 15) || !strncmp(n, "cudaMemcpy", 10) ||
	       !strncmp(n, "cudaMemset", 10) || !strncmp(n, "cuLaunch", 8) ||
	       strstr(n, "Synchronize") != NULL;
}

static void kernel(struct tdc_ctx *c, const CUpti_ActivityKernel10 *k, struct tdc_buf *b)
{
	char dm[1024];
	const char *name = k->name ? k->name : "(unnamed kernel)";
	uint32_t sms;
	double blocks;

	if (!stamped(c, k->contextId, k->deviceId, k->start, k->end))
		return;
	if (c->demangle && k->name) {
		const char *d = c->demangle(k->name, dm, sizeof(dm), c->arg);
		if (d)
			name = d;
	}
	sms = sms_of(c, k->deviceId);
	blocks = (double)k->gridX * (double)k->gridY * (double)k->gridZ;
	open_x(c, b, "kernel", name, k->deviceId, k->streamId, k->start, k->end);
	tdc_buf_printf(b, "\"queued\":%llu,\"device\":%u,\"context\":%u,\"stream\":%u,"
			  "\"correlation\":%u,\"registers per thread\":%u,\"shared memory\":%d,",
		       (unsigned long long)(k->queued > c->base_ns ? k->queued - c->base_ns : 0),
		       k->deviceId, k->contextId, k->streamId, k->correlationId,
		       (unsigned)k->registersPerThread, k->staticSharedMemory + k->dynamicSharedMemory);
	if (sms)
		tdc_buf_printf(b, "\"blocks per SM\":%.6f,\"warps per SM\":%.6f,", blocks / sms,
			       blocks * ((double)k->blockX * k->blockY * k->blockZ / 32.0) / sms);
	tdc_buf_printf(b, "\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]}}", k->gridX, k->gridY, k->gridZ,
		       k->blockX, k->blockY, k->blockZ);
	flow(c, b, 'f', k->correlationId, k->deviceId, k->streamId, k->start);
}

static void memcpy_rec(struct tdc_ctx *c, const CUpti_ActivityMemcpy6 *m, struct tdc_buf *b)
{
	char name[96];

	if (!stamped(c, m->contextId, m->deviceId, m->start, m->end))
		return;
	snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(m->copyKind),
		 mem_kind(m->srcKind), mem_kind(m->dstKind));
	open_x(c, b, "gpu_memcpy", name, m->deviceId, m->streamId, m->start, m->end);
	tdc_buf_printf(b, "\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation\":%u,"
			  "\"bytes\":%llu,", m->deviceId, m->contextId, m->streamId, m->correlationId,
		       (unsigned long long)m->bytes);
	if (m->end > m->start)
		tdc_buf_printf(b, "\"memory bandwidth (GB/s)\":%.6f,",
			       (double)m->bytes / (double)(m->end - m->start));
	tdc_buf_printf(b, "\"async\":%d}}", (m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) ? 1 : 0);
	flow(c, b, 'f', m->correlationId, m->deviceId, m->streamId, m->start);
}

static void memset_rec(struct tdc_ctx *c, const CUpti_ActivityMemset4 *m, struct tdc_buf *b)
{
	char name[64];

	if (!stamped(c, m->contextId, m->deviceId, m->start, m->end))
		return;
	snprintf(name, sizeof(name), "Memset (%s)", mem_kind(m->memoryKind));
	open_x(c, b, "gpu_memset", name, m->deviceId, m->streamId, m->start, m->end);
	tdc_buf_printf(b, "\"device\":%u,\"context\":%u,\"stream\":%u,\"correlation\":%u,"
			  "\"bytes\":%llu}}", m->deviceId, m->contextId, m->streamId, m->correlationId,
		       (unsigned long long)m->bytes);
	flow(c, b, 'f', m->correlationId, m->deviceId, m->streamId, m->start);
}

static void api(struct tdc_ctx *c, const CUpti_ActivityAPI *a, int driver, struct tdc_buf *b)
{
	char fallback[48];
	const char *name = c->api_name ? c->api_name(driver, a->cbid, c->arg) : NULL;

	if (!name) {
		snprintf(fallback, sizeof(fallback), "%s_cbid_%u", driver ? "cuda_driver" : "cuda_runtime",
			 a->cbid);
		name = fallback;
	}
	open_x(c, b, driver ? "cuda_driver" : "cuda_runtime", name, a->processId, a->threadId,
	       a->start, a->end);
	tdc_buf_printf(b, "\"cbid\":%u,\"correlation\":%u}}", a->cbid, a->correlationId);
	if (flow_name(name))
		flow(c, b, 's', a->correlationId, a->processId, a->threadId, a->start);
}

static void sync_rec(struct tdc_ctx *c, const CUpti_ActivitySynchronization2 *s, struct tdc_buf *b)
{
	static const char *const kinds[] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
					    "Stream Sync", "Context Sync"};
	const char *name = (unsigned)s->type < 5 ? kinds[s->type] : "Unknown Sync";
	uint32_t dev = dev_of_ctx(c, s->contextId);
	int64_t stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : (int64_t)s->streamId;

	open_x(c, b, "cuda_sync", name, dev, stream, s->start, s->end);
	tdc_buf_printf(b, "\"cuda_sync_kind\":\"%s\",", name);
	if (s->cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE)
		tdc_buf_printf(b, "\"wait_on_cuda_event_id\":%u,", s->cudaEventId);
	tdc_buf_printf(b, "\"stream\":%lld,\"correlation\":%u,\"device\":%u,\"context\":%u}}",
		       (long long)stream, s->correlationId, dev, s->contextId);
}

static void marker(struct tdc_ctx *c, const CUpti_ActivityMarker2 *m, struct tdc_buf *b)
{
	uint32_t pid = m->objectId.pt.processId, tid = m->objectId.pt.threadId;
	size_t i;

	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
		struct tdc_marker *mk;
		if (c->nmarkers == c->capmarkers) {
			size_t cap = c->capmarkers ? c->capmarkers * 2 : 16;
			struct tdc_marker *n = realloc(c->markers, cap * sizeof(*n));
			if (!n)
				return;
			c->markers = n;
			c->capmarkers = cap;
		}
		mk = &c->markers[c->nmarkers++];
		mk->id = m->id;
		mk->pid = pid;
		mk->tid = tid;
		mk->ts = m->timestamp;
		mk->name = strdup(m->name ? m->name : "");
		mk->domain = strdup(m->domain ? m->domain : "");
		return;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
		for (i = 0; i < c->nmarkers; i++) {
			struct tdc_marker *mk = &c->markers[i];
			if (mk->id != m->id)
				continue;
			open_x(c, b, "user_annotation", mk->name, mk->pid, mk->tid, mk->ts, m->timestamp);
			TDC_PUT_LIT(b, "\"source\":\"nvtx\",\"domain\":");
			put_str(b, mk->domain);
			TDC_PUT_LIT(b, "}}");
			free(mk->name);
			free(mk->domain);
			c->markers[i] = c->markers[--c->nmarkers];
			return;
		}
		c->unmatched_marker_ends++;
		return;
	}
	if (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
		begin(c, b);
		TDC_PUT_LIT(b, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
		put_str(b, m->name);
		tdc_buf_printf(b, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
		put_us(b, m->timestamp > c->base_ns ? m->timestamp - c->base_ns : 0);
		TDC_PUT_LIT(b, "}");
	}
}

static void overhead(struct tdc_ctx *c, const CUpti_ActivityOverhead3 *o, struct tdc_buf *b)
{
	const char *name;

	switch (o->overheadKind) {
	case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER: name = "Driver Compiler"; break;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH: name = "Buffer Flush"; break;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION: name = "Instrumentation"; break;
	case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE: name = "Resource"; break;
	default: name = "CUPTI Overhead"; break;
	}
	open_x(c, b, "overhead", name, -1, 0, o->start, o->end);
	TDC_PUT_LIT(b, "}}");
}

static void device(struct tdc_ctx *c, const CUpti_ActivityDevice5 *d)
{
	struct tdc_device *t;
	size_t i;

	for (i = 0; i < c->ndevices; i++)
		if (c->devices[i].id == d->id)
			return;
	if (c->ndevices == sizeof(c->devices) / sizeof(c->devices[0]))
		return;
	t = &c->devices[c->ndevices++];
	t->id = d->id;
	t->sms = d->numMultiprocessors;
	t->cc_major = d->computeCapabilityMajor;
	t->cc_minor = d->computeCapabilityMinor;
	t->threads_per_block = d->maxThreadsPerBlock;
	t->warp = d->numThreadsPerWarp;
	t->mem = d->globalMemorySize;
	snprintf(t->name, sizeof(t->name), "%s", d->name ? d->name : "");
}

int tdc_format_record(const CUpti_Activity *rec, struct tdc_ctx *c, struct tdc_buf *out)
{
	uint64_t before = c->events;

	c->records++;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
	case CUPTI_ACTIVITY_KIND_KERNEL:
		kernel(c, (const CUpti_ActivityKernel10 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		memcpy_rec(c, (const CUpti_ActivityMemcpy6 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		memset_rec(c, (const CUpti_ActivityMemset4 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
		api(c, (const CUpti_ActivityAPI *)rec, 0, out);
		break;
	case CUPTI_ACTIVITY_KIND_DRIVER:
		api(c, (const CUpti_ActivityAPI *)rec, 1, out);
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		sync_rec(c, (const CUpti_ActivitySynchronization2 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_MARKER:
		marker(c, (const CUpti_ActivityMarker2 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		overhead(c, (const CUpti_ActivityOverhead3 *)rec, out);
		break;
	case CUPTI_ACTIVITY_KIND_DEVICE:
		device(c, (const CUpti_ActivityDevice5 *)rec);
		break;
	case CUPTI_ACTIVITY_KIND_CONTEXT:
		note_ctx(c, ((const CUpti_ActivityContext3 *)rec)->contextId,
			 ((const CUpti_ActivityContext3 *)rec)->deviceId);
		break;
	default:
		c->unknown_kinds++;
		break;
	}
	return (int)(c->events - before);
}

void tdc_format_head(struct tdc_ctx *c, const char *process_name, struct tdc_buf *out)
{
	tdc_buf_printf(out, "{\n\"schemaVersion\": 1,\n\"displayTimeUnit\": \"ms\",\n"
			    "\"baseTimeNanoseconds\": %llu,\n\"traceEvents\": [\n",
		       (unsigned long long)c->base_ns);
	/* a process name so Perfetto labels the host side */
	tdc_buf_printf(out, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":0,\"ts\":0,"
			    "\"args\":{\"name\":", c->pid);
	put_str(out, process_name);
	TDC_PUT_LIT(out, "}}");
	c->first = 0; /* the events that follow need their comma */
}

void tdc_format_tail(const struct tdc_ctx *c, uint64_t dropped, uint64_t buffers,
		     const char *trace_name, struct tdc_buf *out)
{
	size_t i;

	TDC_PUT_LIT(out, "\n],\n\"deviceProperties\": [");
	for (i = 0; i < c->ndevices; i++) {
		const struct tdc_device *d = &c->devices[i];
		tdc_buf_printf(out, "%s\n  {\"id\": %u, \"name\": ", i ? "," : "", d->id);
		put_str(out, d->name);
		tdc_buf_printf(out, ", \"totalGlobalMem\": %llu, \"computeMajor\": %u, \"computeMinor\": "
				    "%u, \"maxThreadsPerBlock\": %u, \"warpSize\": %u, \"numSms\": %u}",
			       (unsigned long long)d->mem, d->cc_major, d->cc_minor,
			       d->threads_per_block, d->warp, d->sms);
	}
	tdc_buf_printf(out, "],\n\"tracedoc_collector\": {\"records\": %llu, \"events\": %llu, "
			    "\"buffers\": %llu, \"droppedRecords\": %llu, \"recordsWithoutTimestamps\": "
			    "%llu, \"unmatchedMarkerEnds\": %llu, \"openMarkers\": %zu},\n\"traceName\": ",
		       (unsigned long long)c->records, (unsigned long long)c->events,
		       (unsigned long long)buffers, (unsigned long long)dropped,
		       (unsigned long long)c->no_timestamp, (unsigned long long)c->unmatched_marker_ends,
		       c->nmarkers);
	put_str(out, trace_name);
	TDC_PUT_LIT(out, "\n}\n");
}
