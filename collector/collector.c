/* SPDX-License-Identifier: MIT */
/* libtracedoc_collector.so: loaded by the CUDA driver through CUDA_INJECTION64_PATH, which calls
 * InitializeInjection() inside cuInit. Records kernels, copies, memsets, runtime calls, the
 * driver's launch calls, synchronization, NVTX ranges and CUPTI overhead with the Activity API
 * and writes one Kineto-compatible trace per process, <name>.<host>.<pid>.json.zst, a zstd
 * frame per CUPTI buffer. It never crashes, blocks or changes the exit status of the program:
 * on any CUPTI error it goes inert and says so once on stderr; forked children never call CUPTI.
 * Only InitializeInjection is exported. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collector/format.h"
#include "collector/zwriter.h"

#define TD_EXPORT __attribute__((visibility("default")))
#define BUF_SIZE (8u << 20)
#define NAMES 1024

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

static struct {
	pthread_once_t once;
	pthread_mutex_t mu;
	volatile int active;
	pid_t owner;
	int said;                  /* the one stderr message has been printed */
	struct tdc_ctx fmt;
	struct tdc_buf out;
	struct tdc_zw *zw;
	uint64_t dropped, buffers;
	char path[PATH_MAX];
	demangle_fn demangle;
	char *names[2][NAMES];     /* stripped API names by cbid: runtime, driver */
} S = {PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0}, {0}, NULL, 0, 0, {0}, NULL,
       {{NULL}}};

static void say(const char *what, CUptiResult r)
{
	const char *s = NULL;

	if (S.said)
		return;
	S.said = 1;
	if (r != CUPTI_SUCCESS)
		cuptiGetResultString(r, &s);
	fprintf(stderr, "tracedoc collector: %s%s%s; not recording this process\n", what,
		s ? ": " : "", s ? s : "");
}

/* "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (keeps _v2, _ptsz) */
static const char *api_name(int driver, uint32_t cbid, void *arg)
{
	const char *n = NULL;
	char *copy, *v;

	(void)arg;
	if (cbid >= NAMES)
		return NULL;
	if (S.names[driver][cbid])
		return S.names[driver][cbid];
	if (cuptiGetCallbackName(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &n) != CUPTI_SUCCESS || !n)
		return NULL;
	copy = strdup(n);
	if (!copy)
		return NULL;
	v = strrchr(copy, '_');
	if (v && v[1] == 'v' && strlen(v + 2) >= 4 && strspn(v + 2, "0123456789") == strlen(v + 2))
		*v = '\0';
	S.names[driver][cbid] = copy;
	return copy;
}

static const char *demangle(const char *name, char *buf, size_t cap, void *arg)
{
	int status = -1;
	char *d;

	(void)arg;
	if (!S.demangle || strncmp(name, "_Z", 2) != 0)
		return NULL;
	d = S.demangle(name, NULL, NULL, &status);
	if (!d || status != 0) {
		free(d);
		return NULL;
	}
	snprintf(buf, cap, "%s", d);
	free(d);
	return buf;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max)
{
	void *p = NULL;

	*max = 0;
	*size = BUF_SIZE;
	/* declining makes CUPTI drop (and count) records instead of blocking the program */
	*buffer = posix_memalign(&p, 8, BUF_SIZE) == 0 ? p : NULL;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)ctx;
	(void)stream;
	(void)size;
	if (S.active && getpid() == S.owner) {
		pthread_mutex_lock(&S.mu);
		while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS) {
			tdc_format_record(rec, &S.fmt, &S.out);
			if (rec->kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
				free(((CUpti_ActivityOverhead3 *)rec)->overheadData);
		}
		if (S.out.len && (tdc_zw_write(S.zw, S.out.s, S.out.len) || tdc_zw_frame(S.zw))) {
			S.active = 0;
			say("writing the trace failed", CUPTI_SUCCESS);
		}
		S.out.len = 0;
		S.buffers++;
		pthread_mutex_unlock(&S.mu);
		/* outside our lock: CUPTI may call back into buffer_requested */
		if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS)
			__atomic_add_fetch(&S.dropped, (uint64_t)dropped, __ATOMIC_RELAXED);
	}
	free(buf);
}

static void at_exit(void)
{
	char name[64];

	if (!S.active || getpid() != S.owner)
		return;
	/* keep accepting buffers during the forced flush; stop only afterwards */
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&S.mu);
	S.active = 0;
	snprintf(name, sizeof(name), "tracedoc collector, pid %u", S.fmt.pid);
	tdc_format_tail(&S.fmt, S.dropped, S.buffers, name, &S.out);
	if (tdc_zw_write(S.zw, S.out.s, S.out.len) || tdc_zw_close(S.zw))
		say("writing the trace failed", CUPTI_SUCCESS);
	S.zw = NULL;
	tdc_buf_free(&S.out);
	tdc_ctx_free(&S.fmt);
	pthread_mutex_unlock(&S.mu);
}

static void in_child(void)
{
	/* CUPTI has no worker thread in a forked child: calling it there hangs */
	S.active = 0;
	S.owner = 0;
}

static void process_name(char *buf, size_t cap)
{
	FILE *f = fopen("/proc/self/comm", "r");
	size_t i;

	snprintf(buf, cap, "process");
	if (f) {
		if (fgets(buf, (int)cap, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	for (i = 0; buf[i]; i++) /* a file name */
		if (buf[i] == '/' || buf[i] == ' ')
			buf[i] = '_';
}

static int open_trace(void)
{
	const char *dir = getenv("TRACEDOC_RECORD_DIR");
	char comm[64], host[128];
	struct timespec ts;
	struct tdc_buf head = {0};
	int rc;

	process_name(comm, sizeof(comm));
	if (gethostname(host, sizeof(host)) != 0)
		snprintf(host, sizeof(host), "host");
	host[sizeof(host) - 1] = '\0';
	snprintf(S.path, sizeof(S.path), "%s/%s.%s.%d.json.zst", dir && *dir ? dir : ".", comm, host,
		 (int)S.owner);
	S.zw = tdc_zw_open(S.path, 3);
	if (!S.zw)
		return -1;
	clock_gettime(CLOCK_REALTIME, &ts); /* CUPTI's default clock on Linux */
	tdc_ctx_init(&S.fmt, tdc_base_time((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec),
		     (uint32_t)S.owner);
	S.fmt.api_name = api_name;
	S.fmt.demangle = demangle;
	tdc_format_head(&S.fmt, comm, &head);
	rc = head.oom || tdc_zw_write(S.zw, head.s, head.len) || tdc_zw_frame(S.zw) ? -1 : 0;
	tdc_buf_free(&head);
	return rc;
}

static void give_up(const char *what, CUptiResult r)
{
	S.active = 0;
	say(what, r);
	if (S.zw) {
		tdc_zw_close(S.zw);
		S.zw = NULL;
		unlink(S.path);
	}
}

/* NVTX ranges reach CUPTI only through the libcupti NVTX_INJECTION64_PATH names, loaded at the
 * program's first NVTX call. A process can hold two: PyTorch loads its wheel's libcupti before
 * cuInit injects this collector, whose libcupti.so.13 is then that one, while tracedoc record
 * names the toolkit's (a second copy, no activity enabled in it: the H200's PyTorch loop
 * recorded no range). Where tracedoc record set the path (TRACEDOC_NVTX_SET) or none is set,
 * it becomes the file this collector's CUPTI was loaded from. */
static void nvtx_to_this_cupti(void)
{
	Dl_info info;

	if (getenv("NVTX_INJECTION64_PATH") && !getenv("TRACEDOC_NVTX_SET"))
		return; /* the user's own */
	if (dladdr((void *)(uintptr_t)cuptiActivityEnable, &info) && info.dli_fname &&
	    info.dli_fname[0] == '/')
		setenv("NVTX_INJECTION64_PATH", info.dli_fname, 1);
}

static void init(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
		CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
		CUPTI_ACTIVITY_KIND_OVERHEAD,
	};
	static const CUpti_CallbackId quiet[] = {
		CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, CUPTI_RUNTIME_TRACE_CBID_cudaSetDevice_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaGetLastError_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventCreate_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventCreateWithFlags_v3020,
		CUPTI_RUNTIME_TRACE_CBID_cudaEventDestroy_v3020,
	};
	uint32_t version = 0;
	CUptiResult r;
	size_t i;

	S.owner = getpid();
	if (getenv("TRACEDOC_COLLECTOR_DISABLE"))
		return;
	if ((r = cuptiGetVersion(&version)) != CUPTI_SUCCESS || version < CUPTI_API_VERSION) {
		char what[96];
		snprintf(what, sizeof(what), "libcupti API version %u is older than %u", version,
			 (unsigned)CUPTI_API_VERSION);
		say(what, r);
		return;
	}
	nvtx_to_this_cupti(); /* before the program's first NVTX call, which loads it */
	*(void **)&S.demangle = dlsym(RTLD_DEFAULT, "__cxa_demangle");
	if (open_trace() != 0) {
		char what[PATH_MAX + 64];
		snprintf(what, sizeof(what), "cannot write %s (%s)", S.path, strerror(errno));
		give_up(what, CUPTI_SUCCESS);
		return;
	}
	S.active = 1;
	if ((r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) != CUPTI_SUCCESS) {
		give_up("cuptiSetThreadIdType failed", r);
		return;
	}
	if ((r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed)) != CUPTI_SUCCESS) {
		give_up("cuptiActivityRegisterCallbacks failed", r);
		return;
	}
	/* the devices' properties once, then every kind at init: enabling kernels late stalls
	 * module loading; never CUPTI_ACTIVITY_KIND_KERNEL, which serializes kernels */
	cuptiActivityEnableAndDump(CUPTI_ACTIVITY_KIND_DEVICE);
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if ((r = cuptiActivityEnable(kinds[i])) != CUPTI_SUCCESS) {
			char what[64];
			snprintf(what, sizeof(what), "enabling activity kind %d failed", (int)kinds[i]);
			give_up(what, r);
			return;
		}
	}
	for (i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		cuptiActivityEnableRuntimeApi(quiet[i], 0);
	/* of the driver API, only the launches (Triton and friends launch through it) */
	cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, 1);
	cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, 1);
	atexit(at_exit);
	pthread_atfork(NULL, NULL, in_child);
}

TD_EXPORT int InitializeInjection(void);
TD_EXPORT int InitializeInjection(void)
{
	pthread_once(&S.once, init);
	return 1;
}
