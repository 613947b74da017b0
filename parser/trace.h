/* SPDX-License-Identifier: MIT */
/* The normalized trace model: every duration event of a profiler trace as a compact 28-byte
 * record, grouped into tracks (a CPU thread or a GPU stream), with names interned, the CPU span
 * tree per thread, runtime-call <-> GPU-op links and ProfilerStep# steps.
 *
 * Ownership: a struct td_trace owns everything it points to; td_trace_free() releases it all.
 * Times are integer nanoseconds on the trace's own clock (Kineto's `ts` microseconds x 1000). */
#ifndef TD_PARSER_TRACE_H
#define TD_PARSER_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "common/strtab.h"
#include "common/vec.h"

/* Normalized event kinds. The first group is stored as struct td_event; the rest are counted. */
enum td_kind {
	TD_K_CPU_OP,          /* cat cpu_op / Operator */
	TD_K_USER_ANNOTATION, /* cat user_annotation (record_function ranges, ProfilerStep#) */
	TD_K_PYTHON,          /* cat python_function (with_stack=True) */
	TD_K_RUNTIME,         /* cuda_runtime / cuda_driver / Runtime / hip* API calls */
	TD_K_KERNEL,          /* GPU kernel */
	TD_K_MEMCPY,          /* GPU memcpy */
	TD_K_MEMSET,          /* GPU memset */
	TD_K_SYNC,            /* cuda_sync / hip_sync: a GPU-side record of a host wait */
	TD_K_GPU_ANNOTATION,  /* gpu_user_annotation */
	TD_K_OTHER_SPAN,      /* any other ph:X (Trace, overhead, unknown categories) */
	TD_K_NSTORED,
	TD_K_FLOW_AC2G = TD_K_NSTORED, /* ph s/f/t, CPU -> GPU launch flows */
	TD_K_FLOW_FWDBWD,     /* ph s/f, forward -> backward flows */
	TD_K_FLOW_OTHER,
	TD_K_MEMORY,          /* [memory] instants */
	TD_K_INSTANT,         /* other instants */
	TD_K_COUNTER,         /* ph C */
	TD_K_METADATA,        /* ph M */
	TD_K_UNKNOWN,         /* unknown ph, or not an object */
	TD_K_COUNT
};
const char *td_kind_name(enum td_kind k);
static inline int td_kind_is_gpu_op(int k)
{
	return k == TD_K_KERNEL || k == TD_K_MEMCPY || k == TD_K_MEMSET;
}
static inline int td_kind_on_gpu_track(int k)
{
	return td_kind_is_gpu_op(k) || k == TD_K_SYNC || k == TD_K_GPU_ANNOTATION;
}

/* Event flags. */
#define TD_EF_DRIVER 0x01   /* runtime event from the driver API (cuda_driver) */
#define TD_EF_NO_DUR 0x02   /* ph:X without dur */
#define TD_EF_NO_CORR 0x04  /* no correlation id */
#define TD_EF_NO_EXT 0x08   /* no External id */
#define TD_EF_COLL 0x10     /* a collective kernel with arguments in td_trace.colls */
#define TD_EF_LAUNCH 0x20   /* a kernel whose aux is its launch configuration in
			     * td_trace.launches */
#define TD_EF_OVERHEAD 0x40 /* a profiler overhead row (cat "overhead": CUPTI's own time) */

/* A time on the trace's clock inside a stored event: 4-byte aligned, so that the event packs
 * into 28 bytes (an event array's bulk is its events; x86 and arm64 read it unaligned alike). */
typedef int64_t td_ev_time __attribute__((aligned(4)));

/* A stored event: 28 bytes. Its track is not stored: after finalize, events are grouped by
 * track (td_trace_track_of finds an event's), and before, each track keeps its own chunks.
 * `aux` is the External id for CPU ops, runtime calls and kernels
 * (for a kernel with TD_EF_LAUNCH, 1 + the index of its launch configuration in
 * td_trace.launches instead: nothing reads a kernel's External id, and a table of launches
 * beside the events took 40 bytes a kernel), an index into td_trace.xfer_bytes for memcpy /
 * memset, and for a sync record the stream it
 * waits on plus one (0: none). */
struct td_event {
	td_ev_time ts;
	uint32_t dur_lo;
	uint16_t dur_hi;
	uint8_t kind;
	uint8_t flags;
	uint32_t name;   /* strtab id */
	union {
		uint32_t corr; /* runtime calls, GPU ops, sync: the correlation id */
		uint32_t args; /* CPU ops, annotations: 1 + index in td_trace.op_args, 0: none */
	};
	uint32_t aux;
};
#define TD_DUR_MAX ((int64_t)0xffffffffffffll)
static inline int64_t td_ev_dur(const struct td_event *e)
{
	return (int64_t)e->dur_lo | ((int64_t)e->dur_hi << 32);
}
static inline int64_t td_ev_end(const struct td_event *e)
{
	return e->ts + td_ev_dur(e);
}

/* A thread on the host, or a stream on a device. */
struct td_track {
	int is_gpu;
	int64_t pid, tid;          /* CPU: numeric ids, or strtab ids when *_is_str */
	uint8_t pid_is_str, tid_is_str;
	int32_t device;            /* GPU: device index */
	int64_t stream;            /* GPU: stream id (-1 when none, e.g. context-wide syncs) */
	uint32_t name;             /* thread_name metadata, when present */
	uint32_t first, count;     /* range in td_trace.events after finalize */
	int64_t last_ts;           /* while parsing: for the unsorted-timestamp count */
	struct td_chunk *chunks, *tail; /* while parsing: the track's events, in arrival order */
};

struct td_device {
	int32_t id;
	uint32_t name;             /* strtab id, from deviceProperties */
	int64_t total_mem;
	int32_t cc_major, cc_minor, num_sms;
	int has_props;
	/* from the events */
	uint64_t ops;              /* kernels + memcpy + memset */
	int64_t first_ts, last_end;
	int64_t peak_allocated;    /* max "Total Allocated" of [memory] events, -1 when none */
};

/* A collective kernel's arguments (newer Kineto writes them on NCCL/RCCL kernels): kept aside,
 * looked up by correlation id. Sizes are element counts; -1 when absent. */
struct td_coll {
	uint32_t corr;
	int32_t device;
	uint32_t name;             /* "Collective name": allreduce, _allgather_base, ... */
	uint32_t pg;               /* "Process Group Name" */
	uint32_t pg_desc;          /* "Process Group Description": mesh_tp, TENSOR_MODEL_PARALLEL_GROUP */
	uint32_t dtype;            /* "dtype": Float, BFloat16, ... */
	int32_t group_size;        /* ranks in the group, -1 when absent */
	int64_t in_nelems, out_nelems;
};

/* A kernel's launch configuration, as Kineto writes it in the kernel's args, each distinct one
 * once (kernels repeat a few; the kernel's aux names its own); n: the kernels launched with it.
 * Absent values -1. */
struct td_launch {
	uint32_t grid, block;      /* "[24, 1, 1]", ids in td_trace.names (0: absent) */
	int32_t regs;              /* registers per thread */
	int32_t smem;              /* shared memory, bytes */
	int32_t occ;               /* est. achieved occupancy %, x 100 */
	int32_t bpsm;              /* blocks per SM, x 1000 */
	uint32_t n;                /* kernels with this configuration (not part of its key) */
};

/* What record_shapes / with_stack add to a CPU op or annotation: each distinct triple once,
 * an op's found by its td_event.args. Strings are ids in td_trace.names; 0 when absent. */
struct td_op_args {
	uint32_t dims;             /* "Input Dims" as text: "[[64, 4096], [4096]]" */
	uint32_t types;            /* "Input type": "[\"float\", \"float\"]" */
	uint32_t stack;            /* "Call stack": frames innermost first, ';'-separated */
	uint32_t concrete;         /* "Concrete Inputs" of a convolution (its stride, padding) */
	/* an Inductor-compiled Triton launch's own estimate (its record function's args,
	 * torch/_inductor/runtime/triton_heuristics.py): "kernel_flop", and "kernel_num_gb" in
	 * bytes (x 10^9, rounded down); -1 absent */
	int64_t kflop, kbytes;
};

/* One [memory] instant (profile_memory=True): after an allocation (bytes > 0) or a free
 * (bytes < 0) on a device. Totals -1 when the trace did not record them. 32 bytes (a
 * profile_memory trace holds hundreds a megabyte): the sizes are 48-bit (128 TiB), read and
 * written with td_mem_get / td_mem_set. */
enum td_mem_field { TD_MEM_ALLOCATED, TD_MEM_RESERVED, TD_MEM_BYTES };
struct td_mem_sample {
	int64_t ts;
	uint32_t lo[3];            /* by enum td_mem_field: the low 32 bits */
	int16_t hi[3];             /* and the high 16, signed */
	int16_t device;            /* -1: host memory (Device Type 0) */
	uint32_t track;            /* the CPU thread it happened on; TD_NONE: one with no spans.
				    * While parsing: 1 + its index in td_trace.mem_threads,
				    * resolved to a track at finalize */
};
#define TD_MEM_MAX ((INT64_C(1) << 47) - 1)
static inline int64_t td_mem_get(const struct td_mem_sample *m, enum td_mem_field f)
{
	return (int64_t)m->hi[f] * INT64_C(4294967296) + (int64_t)m->lo[f];
}
/* Stores v, clamped to +-TD_MEM_MAX; returns 1 when it had to be. */
static inline int td_mem_set(struct td_mem_sample *m, enum td_mem_field f, int64_t v)
{
	int clamped = v > TD_MEM_MAX || v < -TD_MEM_MAX;

	if (clamped)
		v = v > 0 ? TD_MEM_MAX : -TD_MEM_MAX;
	m->lo[f] = (uint32_t)v;
	m->hi[f] = (int16_t)((v - (int64_t)m->lo[f]) / INT64_C(4294967296));
	return clamped;
}

/* A memory sample's thread while parsing (samples may come before the thread's spans). */
struct td_mem_thread {
	int64_t pid, tid;          /* numeric ids, or strtab ids when the flag says so */
	uint32_t flags;            /* 1: pid is a string, 2: tid is */
	uint32_t pad;
};

/* What `tracedoc check` reads that nothing else keeps (PyTorch's trace validator rules), one
 * record per event that carries it, in the order read: a Stream Wait Event's or Event Sync's
 * "wait_on_cuda_event_record_corr_id" (value: the id, -1 when absent or negative), a
 * record_param_comms op's missing metadata (value: a mask, bits 0-4: Collective name, dtype,
 * In msg nelems, Out msg nelems, Group size), an autograd::engine::evaluate_function: op's
 * "Sequence number" (else its "seq_num", as the validator reads them). */
enum td_fact_kind { TD_FACT_SYNC_WAIT, TD_FACT_COMMS, TD_FACT_BWD_SEQ };
struct td_fact {
	int64_t ts;
	int64_t value;
	uint32_t name;             /* the event's name (strtab id) */
	uint32_t track;            /* its track */
	uint32_t kind;             /* enum td_fact_kind */
	uint32_t pad;
};

/* A runtime launch call's kernel, by name (roctracer writes it in the call's args, as
 * "kernel"): what a call under graph capture launched, with no kernel of its own to name it. */
struct td_launch_name {
	uint32_t corr;             /* the call's correlation id */
	uint32_t name;             /* the kernel's name (strtab id) */
};

/* A graph-replayed kernel's annotation: newer PyTorch (torch.cuda.graph's mark_kernels, its
 * export's cuda_graph_annotations) writes the annotation's fields in the kernel's args, its
 * "name" among them; the kernel found by its track, start and correlation id. */
struct td_kernel_mark {
	int64_t ts;
	uint32_t track, corr;
	uint32_t name;             /* the annotation's "name" (strtab id) */
	uint32_t pad;
};

enum td_compression { TD_COMP_NONE, TD_COMP_GZIP, TD_COMP_ZSTD };
enum td_layout { TD_LAYOUT_UNKNOWN, TD_LAYOUT_OBJECT, TD_LAYOUT_ARRAY };

/* Counts of odd but parseable data. */
struct td_anomalies {
	uint64_t negative_dur, missing_dur, missing_ts, missing_name, bad_number, huge_number;
	uint64_t invalid_utf8, unknown_ph, unknown_cat, non_object_event, unsorted_ts, dur_overflow;
	uint64_t sub_ns_digits, unmatched_flow_ids, orphan_gpu_ops;
	uint64_t long_strings;     /* strings cut at 1 MiB */
	uint64_t duplicate_keys;   /* a key twice in one event or its args: the first kept */
	uint64_t duplicate_trace_events; /* a second "traceEvents": not read */
};

struct td_step {
	uint32_t event;            /* index of the ProfilerStep#N event */
	int64_t number;            /* N */
	int64_t ts, end;
};

struct td_trace {
	struct td_strtab names;
	struct td_vec events;      /* struct td_event, grouped by track (after finalize) */
	uint64_t n_events;         /* events stored so far */
	struct td_vec tracks;      /* struct td_track */
	struct td_vec devices;     /* struct td_device, sorted by id after finalize */
	struct td_vec xfer_bytes;  /* uint64_t */
	struct td_vec steps;       /* struct td_step, by ts */
	struct td_vec colls;       /* struct td_coll, by (device, corr) after finalize */
	struct td_vec launches;    /* struct td_launch, distinct, in order first seen */
	struct td_vec op_args;     /* struct td_op_args, distinct */
	struct td_vec mem;         /* struct td_mem_sample, by (ts, order read) after finalize */
	struct td_vec mem_threads; /* struct td_mem_thread, distinct, while parsing */
	struct td_vec facts;       /* struct td_fact, in the order read */
	struct td_vec launch_names; /* struct td_launch_name, in the order read */
	struct td_vec kernel_marks; /* struct td_kernel_mark, in the order read */
	/* Per event, after finalize: on a CPU track the enclosing span (its parent), on a GPU
	 * track the runtime call with the same correlation id (its launch); TD_NONE if none. */
	uint32_t *link;
	uint32_t *track_firsts;    /* after finalize: per track, its first event (td_trace_track_of) */
	uint32_t *gpu_tracks;      /* after finalize: the GPU tracks by (device, track) */
	size_t ngpu_tracks;
	/* after finalize, when Python frames are a quarter of the events or more (with_stack):
	 * the other events' indices by kind, each kind's in order, kind k's at
	 * [scan_off[k], scan_off[k + 1]) (TD_FOR_KIND); NULL otherwise */
	uint32_t *scan;
	size_t scan_off[TD_K_NSTORED + 1];

	/* input and metadata */
	enum td_compression compression;
	enum td_layout layout;
	int legacy;                /* PyTorch 1.8/1.9 categories (Operator, Runtime, Kernel) */
	int rocm;                  /* hip* runtime names seen */
	int64_t schema_version;    /* -1 when absent */
	int64_t rank, world_size;  /* -1 when absent */
	uint32_t backend;          /* distributedInfo.backend */
	int64_t base_time_ns;      /* baseTimeNanoseconds, -1 when absent */
	int64_t dropped_records;   /* records the CUPTI collector lost, -1 when not a collector trace */
	int nsys;                  /* read from an Nsight Systems export (parser/nsys.c) */
	char lacks[512];           /* what the input lacks, for the report's notes ("": nothing) */
	uint32_t display_time_unit, trace_name;
	uint64_t n_trace_events;   /* elements of the traceEvents array */
	uint64_t bytes_in;         /* uncompressed bytes read */
	int64_t events_close;      /* offset of the ']' closing the events array, -1 unknown */
	uint64_t input_garbage;    /* bytes after the gzip stream, ignored */
	uint64_t by_kind[TD_K_COUNT];
	int partial;               /* truncated input: results cover the complete events only */
	uint64_t partial_offset;   /* where the input ended */
	char partial_msg[256];
	struct td_anomalies anom;
	uint64_t flows_s, flows_f; /* flow starts / finishes */
	uint64_t memory_events;
	int finalized;
	int jobs;                  /* threads td_trace_finalize() may use (the loader's -j) */
	/* lookup state while parsing */
	uint32_t *track_slots, track_nslots, last_track, last_device;
	uint32_t *dev_slots, dev_nslots; /* device id -> index + 1, open addressing */
};
#define TD_NONE UINT32_MAX

static inline uint32_t td_trace_parent(const struct td_trace *t, uint32_t i);
static inline uint32_t td_trace_launch(const struct td_trace *t, uint32_t i);

void td_trace_init(struct td_trace *t);
void td_trace_free(struct td_trace *t);

/* Parsing side (used by the reader): find or add a CPU track (pid, tid) or GPU track. */
uint32_t td_trace_cpu_track(struct td_trace *t, int64_t pid, int pid_is_str, int64_t tid,
			    int tid_is_str);
uint32_t td_trace_gpu_track(struct td_trace *t, int32_t device, int64_t stream);
/* The CPU track of (pid, tid) if there is one, else TD_NONE (before finalize). */
uint32_t td_trace_find_cpu_track(const struct td_trace *t, int64_t pid, int pid_is_str,
				 int64_t tid, int tid_is_str);
struct td_device *td_trace_device(struct td_trace *t, int32_t id);
/* Appends a zeroed event to a track (before finalize). */
struct td_event *td_trace_push(struct td_trace *t, uint32_t track);

/* Sorts events by (track, ts, longer first), builds the CPU span trees, the runtime <-> GPU-op
 * links and the steps. Call once, after the last event. With t->jobs > 1, a large trace's
 * events are gathered and linked on two threads (the same result). */
void td_trace_finalize(struct td_trace *t);

/* Time span of all stored events: [*start, *end). Returns 0 when there are none. */
int td_trace_span(const struct td_trace *t, int64_t *start, int64_t *end);

/* Busy intervals of a device: the union of its kernel, memcpy and memset intervals clipped to
 * [from, to), sorted. The caller frees *out. Returns the number of intervals. */
struct td_interval {
	int64_t start, end;
};
size_t td_trace_busy(const struct td_trace *t, int32_t device, int64_t from, int64_t to,
		     struct td_interval **out);
/* The same, leaving out ops whose name id has skip_name[id] set (skip_name may be NULL). */
size_t td_trace_busy_skip(const struct td_trace *t, int32_t device, int64_t from, int64_t to,
			  const uint8_t *skip_name, struct td_interval **out);
int64_t td_intervals_total(const struct td_interval *iv, size_t n);

/* Median step duration (ns; the mean of the two middle steps for an even count), 0 when there
 * are no steps. */
int64_t td_trace_median_step(const struct td_trace *t);
/* The median of n values (the mean of the two middle ones for an even n; reorders v). */
int64_t td_median_i64(int64_t *v, size_t n);

/* The collective arguments of GPU op ev, or NULL. */
const struct td_coll *td_trace_coll(const struct td_trace *t, uint32_t ev);
/* The launch (grid, block, registers, ...) of kernel ev, or NULL. */
const struct td_launch *td_trace_launch_of(const struct td_trace *t, uint32_t ev);
/* Device id's entry (after finalize, the devices are by id), or NULL. */
const struct td_device *td_trace_find_device(const struct td_trace *t, int32_t id);
/* The GPU tracks (streams) of device dev, their ids in *n (after finalize). */
const uint32_t *td_trace_device_tracks(const struct td_trace *t, int32_t dev, size_t *n);
/* The record_shapes / with_stack args of CPU op ev, or NULL. */
const struct td_op_args *td_trace_op_args(const struct td_trace *t, uint32_t ev);
/* Bytes of one element of a Kineto dtype name ("Float" 4, "BFloat16" 2, ...), 0 if unknown. */
int td_dtype_bytes(const char *dtype);

static inline struct td_event *td_trace_ev(const struct td_trace *t, uint32_t i)
{
	return &((struct td_event *)t->events.data)[i];
}
static inline struct td_track *td_trace_track(const struct td_trace *t, uint32_t i)
{
	return &((struct td_track *)t->tracks.data)[i];
}
/* The events of one stored kind k: TD_FOR_KIND(t, k, j, i) { ... } visits, in index order,
 * the events of kind k where the trace keeps them apart (a trace with stacks is mostly Python
 * frames, and a pass for anything else would wade through them), and every event otherwise:
 * the body still checks the kind. i gets the event's index, j (a size_t) is the position. */
static inline size_t td_trace_kind_begin(const struct td_trace *t, int k)
{
	return t->scan ? t->scan_off[k] : 0;
}
static inline size_t td_trace_kind_end(const struct td_trace *t, int k)
{
	return t->scan ? t->scan_off[k + 1] : t->events.len;
}
static inline uint32_t td_trace_scan_at(const struct td_trace *t, size_t j)
{
	return t->scan ? t->scan[j] : (uint32_t)j;
}
#define TD_FOR_KIND(t, k, j, i)                                                              \
	for ((j) = td_trace_kind_begin(t, k);                                                \
	     (j) < td_trace_kind_end(t, k) && ((i) = td_trace_scan_at(t, (j)), 1); (j)++)
/* The track of event i (after finalize): the last whose events begin at or before it. */
static inline uint32_t td_trace_track_of(const struct td_trace *t, uint32_t i)
{
	const uint32_t *f = t->track_firsts;
	size_t lo = 0, n = t->tracks.len;

	while (n > 1) {
		size_t half = n / 2;
		if (f[lo + half] <= i)
			lo += half;
		n -= half;
	}
	return (uint32_t)lo;
}
/* The same for a loop over the events in order, remembering the last track's range (start
 * with a zeroed struct): a search only where a track ends. */
struct td_track_cursor {
	uint32_t track, first, end;
};
static inline uint32_t td_trace_track_at(const struct td_trace *t, struct td_track_cursor *c,
					 uint32_t i)
{
	if (i < c->first || i >= c->end) {
		c->track = td_trace_track_of(t, i);
		c->first = t->track_firsts[c->track];
		c->end = c->track + 1 < t->tracks.len ? t->track_firsts[c->track + 1]
						       : (uint32_t)t->events.len;
	}
	return c->track;
}
static inline uint32_t td_trace_parent(const struct td_trace *t, uint32_t i)
{
	return td_kind_on_gpu_track(td_trace_ev(t, i)->kind) ? TD_NONE : t->link[i];
}
static inline uint32_t td_trace_launch(const struct td_trace *t, uint32_t i)
{
	return td_kind_on_gpu_track(td_trace_ev(t, i)->kind) ? t->link[i] : TD_NONE;
}
static inline const char *td_trace_name(const struct td_trace *t, uint32_t id)
{
	return td_strtab_str(&t->names, id);
}

/* The events of one device's GPU tracks (its streams), track by track, each in time order:
 *     struct td_dev_events it;
 *     uint32_t k;
 *     for (td_dev_events_begin(&it, t, device); td_dev_events_next(&it, &k);)
 * and td_dev_events_count(t, device) of them (to size a buffer). After finalize. */
struct td_dev_events {
	const struct td_trace *t;
	const uint32_t *tracks; /* NULL: every GPU (or host) track of the trace */
	size_t ntracks, i;
	uint32_t k, end;
	int host; /* the host tracks' events, not the GPU's (td_host_events_begin) */
};
static inline void td_dev_events_begin(struct td_dev_events *it, const struct td_trace *t,
				       int32_t device)
{
	it->t = t;
	it->tracks = td_trace_device_tracks(t, device, &it->ntracks);
	it->i = 0;
	it->k = it->end = 0;
	it->host = 0;
}
/* The same over every device's GPU tracks, in track order. */
static inline void td_gpu_events_begin(struct td_dev_events *it, const struct td_trace *t)
{
	it->t = t;
	it->tracks = NULL;
	it->ntracks = t->tracks.len;
	it->i = 0;
	it->k = it->end = 0;
	it->host = 0;
}
/* The same over every host track (the CPU threads'), in track order. */
static inline void td_host_events_begin(struct td_dev_events *it, const struct td_trace *t)
{
	td_gpu_events_begin(it, t);
	it->host = 1;
}
static inline int td_dev_events_next(struct td_dev_events *it, uint32_t *k)
{
	while (it->k >= it->end) {
		const struct td_track *tr;
		if (it->i >= it->ntracks)
			return 0;
		tr = td_trace_track(it->t, it->tracks ? it->tracks[it->i] : (uint32_t)it->i);
		it->i++;
		if (it->host ? tr->is_gpu : !tr->is_gpu)
			continue;
		it->k = tr->first;
		it->end = tr->first + tr->count;
	}
	*k = it->k++;
	return 1;
}
/* The track of the event td_dev_events_next() gave last. */
static inline uint32_t td_dev_events_track(const struct td_dev_events *it)
{
	return it->tracks ? it->tracks[it->i - 1] : (uint32_t)(it->i - 1);
}
size_t td_dev_events_count(const struct td_trace *t, int32_t device);
/* Sorts v and merges overlapping intervals in place; returns the new count. */
size_t td_iv_merge(struct td_interval *v, size_t n);

#endif
