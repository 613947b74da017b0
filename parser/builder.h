/* SPDX-License-Identifier: MIT */
/* Internal to parser/: the boundary between the yajl callbacks (which only convert numbers and
 * copy strings) and the model builder (which interns names, finds tracks and stores events).
 * The two can run on different threads; only the builder touches the td_trace model. */
#ifndef TD_PARSER_BUILDER_H
#define TD_PARSER_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/vec.h"

struct td_trace;

enum td_cat {
	CAT_NONE, CAT_OTHER, CAT_CPU_OP, CAT_USER_ANN, CAT_GPU_ANN, CAT_PYTHON, CAT_RUNTIME,
	CAT_DRIVER, CAT_KERNEL, CAT_MEMCPY, CAT_MEMSET, CAT_SYNC, CAT_TRACE, CAT_OVERHEAD,
	CAT_AC2G, CAT_FWDBWD, CAT_INSTANT,
};

/* A string copied out of yajl's buffer: bytes [off, off+len) of the event's string area. */
struct td_slice {
	uint32_t off, len;
	uint8_t set;
};

/* One trace event as read, numbers converted, strings not yet interned. Shipped to the
 * builder as a record - the struct, then its string area - that stops at `mem_total` unless
 * `full` is set: most events (every op, call and kernel) need no more, and the records of a
 * block are as many bytes as its JSON. */
struct td_raw {
	char ph;
	uint8_t cat, legacy_cat;
	uint8_t full;     /* the fields from mem_total on are there (td_raw_head) */
	uint8_t pid_str, tid_str, has_pid, has_tid, has_ts, has_dur, bad_ts;
	uint8_t has_ext, has_corr, has_device, has_stream, has_bytes, has_mem_total;
	uint8_t has_coll, has_wait_stream, has_mem_reserved, has_mem_bytes, has_mem_devtype;
	uint8_t has_launch, launch_has; /* launch_has: regs, smem, occ, bpsm seen (bits 0-3) */
	uint8_t has_kflop, has_kbytes;
	uint8_t chk;      /* what tracedoc check reads: the TD_RAW_CHK_* bits */
	uint32_t str_len; /* bytes in the string area */
	int64_t pid, tid; /* when *_str, the text is in pid_text / tid_text */
	int64_t ts, dur, ext, corr, device, stream, bytes;
	struct td_slice name, arg_name, pid_text, tid_text;
	struct td_slice dims, types, call_stack; /* cpu_op record_shapes / with_stack args */
	struct td_slice concrete;                /* its "Concrete Inputs" (kept for convolutions) */
	/* only in a full record (read under their has_ flags): [memory] totals, */
	int64_t mem_total;
	/* collective kernels (newer Kineto): message sizes, group, process group; a sync's stream */
	int64_t in_nelems, out_nelems, group_size, wait_stream;
	/* [memory] instants: reserved, the allocation's size (+) or free (-), device type */
	int64_t mem_reserved, mem_bytes, mem_devtype;
	struct td_slice coll_name, pg_name, pg_desc, dtype;
	/* a kernel's launch (Kineto's kernel args): "grid", "block" as text, registers per
	 * thread, shared memory bytes, est. achieved occupancy % x 100, blocks per SM x 1000 */
	struct td_slice grid, block;
	int64_t regs, smem, occ, bpsm;
	/* "Sequence number", "seq_num", "wait_on_cuda_event_record_corr_id" (under chk's bits) */
	int64_t seq, seq_num, wait_rec;
	/* an Inductor Triton launch's "kernel_flop" and "kernel_num_gb" x 10^9 (bytes) */
	int64_t kflop, kbytes;
	/* a runtime launch call's "kernel": the name of the kernel it launched (roctracer) */
	struct td_slice kernel;
};
/* td_raw.chk: which of record_param_comms's five metadata keys the args hold (bits 0-4:
 * Collective name, dtype, In msg nelems, Out msg nelems, Group size), and which of seq,
 * seq_num, wait_rec were read */
#define TD_RAW_CHK_COMMS 0x1f
#define TD_RAW_CHK_SEQ 0x20
#define TD_RAW_CHK_SEQ_NUM 0x40
#define TD_RAW_CHK_WAIT_REC 0x80

/* Bytes of e's record before its string area, and of the whole record (8-aligned). */
static inline size_t td_raw_head(const struct td_raw *e)
{
	return e->full ? sizeof(*e) : offsetof(struct td_raw, mem_total);
}
static inline size_t td_raw_size(const struct td_raw *e)
{
	return (td_raw_head(e) + e->str_len + 7) & ~(size_t)7;
}
/* Writes e's record, with its string area strs, at dst (td_raw_size(e) bytes of room). */
static inline void td_raw_put(unsigned char *dst, const struct td_raw *e, const char *strs)
{
	size_t head = td_raw_head(e);

	memcpy(dst, e, head);
	memcpy(dst + head, strs, e->str_len);
}

struct td_builder {
	struct td_trace *t;
	struct td_vec thread_names;
	uint32_t *args_slots;  /* open addressing over t->op_args: 1 + index, 0 empty */
	size_t args_nslots;
	uint32_t *launch_slots; /* the same over t->launches */
	size_t launch_nslots;
	uint32_t *mthread_slots; /* and over t->mem_threads */
	size_t mthread_nslots;
};

void td_builder_init(struct td_builder *b, struct td_trace *t);
/* Adds one event; `strs` is its string area. */
void td_builder_add(struct td_builder *b, const struct td_raw *e, const char *strs);
/* Adds the records (td_raw_put, one after another, 8-aligned) in buf[0..len), in place. */
void td_builder_add_records(struct td_builder *b, const unsigned char *buf, size_t len);
/* Interns a string (counting invalid UTF-8). Builder thread only. */
uint32_t td_builder_intern(struct td_builder *b, const char *s, uint32_t len);
/* Applies what needs every event first (thread names). */
void td_builder_finish(struct td_builder *b);
void td_builder_free(struct td_builder *b);

#endif
