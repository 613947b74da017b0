/* SPDX-License-Identifier: MIT */
/* The reader's state, shared by its stages (private to parser/): feed.c hands the input's
 * bytes, scanned and squeezed, to yajl; tokens.c turns yajl's tokens into records (one per
 * event, into a batch); handoff.c sends the batches to the builder (on its thread or this one);
 * kineto.c is the parser's API, for the sequential reader and the split reader's workers alike.
 *
 *   bytes -> feed.c (scan.c, yajl) -> tokens.c (callbacks) -> records -> handoff.c -> builder.c
 */
#ifndef TD_PARSER_STATE_H
#define TD_PARSER_STATE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <yajl/yajl_parse.h>

#include "common/error.h"
#include "common/vec.h"
#include "parser/builder.h"
#include "parser/scan.h"
#include "parser/trace.h"

enum ctx {
	C_SKIP,      /* a value we do not need */
	C_TOP_OBJ,   /* {"schemaVersion":..., "traceEvents": [...]} */
	C_EVENTS,    /* the traceEvents array, or a top-level array */
	C_EVENT,     /* one event object */
	C_ARGS,      /* its "args" */
	C_DEVPROPS,  /* "deviceProperties": [...] */
	C_DEVPROP,   /* one device */
	C_DISTINFO,  /* "distributedInfo": {...} */
	C_COLLECTOR, /* "tracedoc_collector": {...}, written by our CUPTI collector */
	C_CAPTURE,   /* an args array kept as text ("Input Dims": [[64, 4096], [4096]]) */
};

enum top_key {
	TK_OTHER, TK_EVENTS, TK_DEVPROPS, TK_DIST, TK_SCHEMA, TK_BASETIME, TK_UNIT, TK_NAME,
	TK_COLLECTOR,
};
enum ev_key { EK_OTHER, EK_PH, EK_CAT, EK_NAME, EK_PID, EK_TID, EK_TS, EK_DUR, EK_ARGS, EK_ID };
enum arg_key {
	AK_OTHER, AK_EXT, AK_CORR, AK_DEVICE, AK_STREAM, AK_BYTES, AK_NAME, AK_MEM_DEVID,
	AK_MEM_TOTAL, AK_LABELS, AK_COLL_NAME, AK_IN_NELEMS, AK_OUT_NELEMS, AK_GROUP_SIZE,
	AK_DTYPE, AK_PG_NAME, AK_WAIT_STREAM, AK_INPUT_DIMS, AK_INPUT_TYPE, AK_CALL_STACK,
	AK_MEM_RESERVED, AK_MEM_BYTES, AK_MEM_DEVTYPE,
	AK_GRID, AK_BLOCK, AK_REGS, AK_SMEM, AK_OCC, AK_BPSM, /* a kernel's launch */
	AK_CONCRETE, AK_PG_DESC,
	AK_SEQ, AK_SEQ_NUM, AK_WAIT_REC, /* what tracedoc check reads (trace.h, td_fact) */
	AK_KFLOP, AK_KGB, /* an Inductor Triton launch's kernel_flop, kernel_num_gb */
	AK_KERNEL, /* a runtime launch call's kernel name (roctracer writes it) */
};
enum dp_key { DK_OTHER, DK_ID, DK_NAME, DK_MEM, DK_MAJOR, DK_MINOR, DK_SMS };
enum di_key { IK_OTHER, IK_RANK, IK_WORLD, IK_BACKEND };


#define MAXD 64

/* deviceProperties entries, applied to the model at the end */
struct dev_props {
	struct td_device d;
	char *name;
};

#define NBATCH 4
#define BATCH_BYTES TD_BATCH_BYTES

/* Hand-off of raw events to the builder thread. */
struct batch {
	unsigned char *buf;
	size_t len;
};

struct model_thread {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch b[NBATCH];
	unsigned head, tail; /* filled batches are [tail, head) */
	int done;            /* no more batches will come */
};

struct td_parser {
	yajl_handle h;
	struct td_trace *t;
	struct td_error *err;
	int failed, code;
	unsigned depth;
	uint8_t ctx[MAXD];
	uint8_t key;          /* current key in the innermost object we read */
	int started, top_done, saw_events;
	uint64_t doc_end;     /* top_done: the offset just past the document */
	unsigned event_depth;   /* depth of the event being read, 0 when none */
	struct td_raw ev;
	uint64_t ev_keys, arg_keys, top_keys; /* keys seen in the event, its args, the top */
	int dup_counted;      /* a duplicate counted for this event */
	struct td_slice *capture; /* the args array being kept as text, or NULL */
	unsigned capture_depth;   /* the depth of its outermost array */
	int capture_cut;          /* it grew past CAPTURE_MAX: the rest is left out */
	char *sbuf;           /* the current event's string area */
	size_t sbuf_cap;
	struct td_device dev;
	char *dev_name;
	int dev_has_id;
	struct td_vec devs;   /* struct dev_props */
	char *unit, *trace_name, *backend;
	struct td_anomalies anom; /* counted on this thread, added to the model at the end */
	uint64_t non_objects;
	size_t skip_bom;      /* bytes of a byte order mark at the start, not for yajl */
	struct td_builder builder;
	struct model_thread *mt;
	struct batch *cur;    /* the batch being filled (threaded) */
	/* a split worker (parser/split.c): records shipped to a sink, not built here */
	unsigned char *(*sink)(void *ctx, unsigned char *full, size_t len, int want);
	void *sink_ctx;
	unsigned char *wbuf;
	size_t wlen;
	/* position */
	uint64_t offset;      /* bytes before the current chunk, or during a range before it */
	uint64_t lines;       /* newlines before the current chunk */
	uint64_t line_start;  /* absolute offset of the current line's first byte */
	const unsigned char *chunk0; /* the current chunk (lines and line_start are before it) */
	size_t chunk0_len;
	const unsigned char *chunk; /* the range of it yajl is reading (offset is its start) */
	size_t chunk_len;
	unsigned char tail[48];
	size_t tail_len;
	/* strings, followed across chunks: yajl re-reads a token that spans chunks from its start,
	 * so a string of hundreds of MB would take quadratic time; past TD_STRING_MAX its bytes
	 * are left out before yajl sees them */
	struct td_scan scan;  /* the string state (parser/scan.h) */
	int skipping;         /* a string past TD_STRING_MAX: its bytes are left out */
	/* whitespace between tokens, left out before yajl (parser/scan.h) */
	int squeeze;          /* 1 on, 0 off, -1 (the default) where it pays */
	unsigned char *mbuf;  /* what yajl gets of a piece */
	int sq_on;            /* the range yajl reads was squeezed: its positions map back */
	struct td_scan sq_state; /* the scan state at its start */
	size_t sq_blocks;     /* its length (whole blocks) */
	/* the last pid/tid text converted */
	unsigned char id_cache[24];
	size_t id_cache_len;
	int id_cache_from_string;
	int64_t id_cache_v;
	uint8_t id_cache_str;
};

#define TD_STRING_MAX (1u << 20) /* a string's bytes kept; the rest are left out, counted */
/* squeezed and handed to yajl about this many bytes at a time: at least PIECE, to a block that
 * ends between two tokens, at most PIECE_MAX (only a string of 192 KiB or more has no such
 * block: an error inside it could then be placed a byte or two differently) */
#define PIECE ((size_t)64 << 10)
#define PIECE_MAX (4 * PIECE)

/* Byte k of what yajl got of the current range, as an index into the range. */
static inline size_t range_index(const struct td_parser *p, size_t k)
{
	return p->sq_on ? td_scan_index(&p->sq_state, p->chunk, p->sq_blocks, p->offset, k) : k;
}

static inline unsigned char ctx_at(const struct td_parser *p, unsigned d)
{
	return d < MAXD ? p->ctx[d] : C_SKIP;
}

/* tokens.c: yajl's callbacks, with the parser as their context */
extern const yajl_callbacks td_token_callbacks;
/* handoff.c: the model thread started (it builds the batches shipped to it), stopped (what is
 * left sent, the builder finished); the batch being filled goes to the builder (it is full);
 * every batch shipped taken by the builder */
void td_parser_start_model(struct td_parser *p);
void td_parser_stop_model(struct td_parser *p);
void td_parser_ship(struct td_parser *p);
void td_parser_drain(struct td_parser *p);
/* feed.c: the last bytes of a chunk, kept for an error's quote; an error's position at byte k
 * of the range yajl was reading; the error yajl stopped at, with its position */
void td_feed_remember_tail(struct td_parser *p, const unsigned char *b, size_t n);
void td_feed_locate(struct td_parser *p, size_t k, struct td_error *err);
int td_feed_yajl_failure(struct td_parser *p, struct td_error *err);

#endif
