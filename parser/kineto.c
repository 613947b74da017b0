/* SPDX-License-Identifier: MIT */
/* yajl callbacks that turn a Kineto / chrome trace into td_trace events. A stack of container
 * contexts tells each callback where it is (top object, traceEvents, one event, its args, ...);
 * everything else is skipped as cheaply as yajl allows. Numbers arrive as raw text
 * (yajl_number) and only the fields we keep are converted, exactly. */
#include "parser/parser.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/utf8.h"
#include <pthread.h>

#include "parser/builder.h"
#include "parser/num.h"
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
static size_t range_index(const struct td_parser *p, size_t k)
{
	return p->sq_on ? td_scan_index(&p->sq_state, p->chunk, p->sq_blocks, p->offset, k) : k;
}

static inline unsigned char ctx_at(const struct td_parser *p, unsigned d)
{
	return d < MAXD ? p->ctx[d] : C_SKIP;
}

static int fail(struct td_parser *p, int code, const char *fmt, ...) TD_PRINTF(3, 4);
static int fail(struct td_parser *p, int code, const char *fmt, ...)
{
	va_list ap;

	p->failed = 1;
	p->code = code;
	if (p->err) {
		p->err->code = code;
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	return 0; /* cancels the parse */
}

/* --- key and category matching ----------------------------------------------------------- */

#define KEQ(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), lit, sizeof(lit) - 1) == 0)

static int ieq(const unsigned char *s, size_t n, const char *lit)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c >= 'A' && c <= 'Z')
			c = (unsigned char)(c + 32);
		if (!lit[i] || c != (unsigned char)lit[i])
			return 0;
	}
	return lit[n] == '\0';
}

static void match_cat(struct td_raw *e, const unsigned char *s, size_t n)
{
	static const struct {
		const char *name;
		uint8_t cat;
	} cats[] = {
		{"cpu_op", CAT_CPU_OP}, {"operator", CAT_CPU_OP}, {"user_annotation", CAT_USER_ANN},
		{"gpu_user_annotation", CAT_GPU_ANN}, {"python_function", CAT_PYTHON},
		{"python", CAT_PYTHON}, {"cuda_runtime", CAT_RUNTIME}, {"runtime", CAT_RUNTIME},
		{"cuda_driver", CAT_DRIVER}, {"kernel", CAT_KERNEL}, {"gpu_memcpy", CAT_MEMCPY},
		{"memcpy", CAT_MEMCPY}, {"gpu_memset", CAT_MEMSET}, {"memset", CAT_MEMSET},
		{"cuda_sync", CAT_SYNC}, {"hip_sync", CAT_SYNC}, {"trace", CAT_TRACE},
		{"overhead", CAT_OVERHEAD}, {"ac2g", CAT_AC2G}, {"async", CAT_AC2G},
		{"async_cpu_to_gpu", CAT_AC2G}, {"cpu_to_cuda", CAT_AC2G}, {"fwdbwd", CAT_FWDBWD},
		{"forward_backward", CAT_FWDBWD}, {"cpu_instant_event", CAT_INSTANT},
	};
	static const struct {
		const char *name;
		size_t len;
		uint8_t cat;
	} exact[] = {
		{"cpu_op", 6, CAT_CPU_OP}, {"cuda_runtime", 12, CAT_RUNTIME}, {"kernel", 6, CAT_KERNEL},
		{"ac2g", 4, CAT_AC2G}, {"python_function", 15, CAT_PYTHON},
	};
	size_t i;

	/* fast path: the exact spellings current Kineto writes, most frequent first */
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (n == exact[i].len && memcmp(s, exact[i].name, n) == 0) {
			e->cat = exact[i].cat;
			e->legacy_cat = 0;
			return;
		}
	}
	e->cat = CAT_OTHER;
	for (i = 0; i < sizeof(cats) / sizeof(cats[0]); i++) {
		if (ieq(s, n, cats[i].name)) {
			e->cat = cats[i].cat;
			break;
		}
	}
	/* PyTorch 1.8/1.9 wrote capitalised categories. */
	e->legacy_cat = KEQ(s, n, "Operator") || KEQ(s, n, "Runtime") || KEQ(s, n, "Kernel") ||
			KEQ(s, n, "Memcpy") || KEQ(s, n, "Memset");
}

/* --- positions and errors ---------------------------------------------------------------- */

static void remember_tail(struct td_parser *p, const unsigned char *b, size_t n)
{
	if (n >= sizeof(p->tail)) {
		memcpy(p->tail, b + n - sizeof(p->tail), sizeof(p->tail));
		p->tail_len = sizeof(p->tail);
	} else {
		size_t keep = sizeof(p->tail) - n;
		if (keep > p->tail_len)
			keep = p->tail_len;
		memmove(p->tail, p->tail + p->tail_len - keep, keep);
		memcpy(p->tail + keep, b, n);
		p->tail_len = keep + n;
	}
}

/* Appends a printable quote of bytes to buf: JSON-ish escapes for control and non-ASCII. */
/* Fills err's position for an error at byte `k` of the range yajl was reading, and appends a
 * quote of the bytes around it to the message. */
static void locate(struct td_parser *p, size_t k, struct td_error *err)
{
	/* the whole chunk the range is part of: lines and line_start are at its start */
	const unsigned char *c0 = p->chunk0 ? p->chunk0 : p->chunk;
	size_t c0_len = p->chunk0 ? p->chunk0_len : p->chunk_len;
	uint64_t base = p->offset - (uint64_t)(p->chunk - c0); /* c0's absolute offset */
	uint64_t lines = p->lines, line_start = p->line_start, abs;
	unsigned char ctxb[96];
	size_t before, after, n = 0;
	char q[400];
	size_t len = strlen(err->msg);
	const unsigned char *nl, *s = c0, *end;

	if (k > p->chunk_len)
		k = p->chunk_len;
	k += (size_t)(p->chunk - c0);
	abs = base + k;
	end = c0 + k;
	while (s < end && (nl = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		lines++;
		line_start = base + (uint64_t)(nl + 1 - c0);
		s = nl + 1;
	}
	err->has_pos = 1;
	err->offset = abs;
	err->line = (uint32_t)(lines + 1 > UINT32_MAX ? UINT32_MAX : lines + 1);
	err->col = (uint32_t)(abs - line_start + 1 > UINT32_MAX ? UINT32_MAX : abs - line_start + 1);

	/* up to 24 bytes before (from the previous chunks' tail if needed) and 24 after */
	before = k < 24 ? k : 24;
	if (before < 24) {
		size_t from_tail = 24 - before;
		if (from_tail > p->tail_len)
			from_tail = p->tail_len;
		memcpy(ctxb, p->tail + p->tail_len - from_tail, from_tail);
		n = from_tail;
	}
	memcpy(ctxb + n, c0 + k - before, before);
	n += before;
	{
		size_t at = n;
		after = c0_len - k < 24 ? c0_len - k : 24;
		memcpy(ctxb + n, c0 + k, after);
		n += after;
		if (n && len + 16 < sizeof(err->msg)) {
			size_t qo = td_quote_bytes(q, sizeof(q), ctxb, at);
			qo += (size_t)snprintf(q + qo, sizeof(q) - qo, " >>> ");
			td_quote_bytes(q + qo, sizeof(q) - qo, ctxb + at, n - at);
			snprintf(err->msg + len, sizeof(err->msg) - len, ": near \"%s\"", q);
		}
	}
}

/* --- value helpers ----------------------------------------------------------------------- */

static int64_t num_or_count(struct td_parser *p, const char *s, size_t n, int scale, int *ok)
{
	int64_t v;
	int st = td_num_scaled(s, n, scale, &v);

	*ok = 1;
	if (st & TD_NUM_SYNTAX) {
		p->anom.bad_number++;
		*ok = 0;
		return 0;
	}
	if (st & TD_NUM_RANGE) {
		p->anom.huge_number++;
		*ok = 0;
	}
	if ((st & TD_NUM_INEXACT) && scale)
		p->anom.sub_ns_digits++;
	return v;
}

/* Copies a string into the current event's string area. */
static void slice(struct td_parser *p, struct td_slice *sl, const unsigned char *s, size_t n)
{
	struct td_raw *e = &p->ev;

	if (n > UINT32_MAX / 2)
		n = UINT32_MAX / 2;
	if (e->str_len + n > p->sbuf_cap) {
		p->sbuf_cap = (e->str_len + n) * 2 + 256;
		p->sbuf = td_realloc(p->sbuf, p->sbuf_cap);
	}
	memcpy(p->sbuf + e->str_len, s, n);
	sl->off = e->str_len;
	sl->len = (uint32_t)n;
	sl->set = 1;
	e->str_len += (uint32_t)n;
}

#define CAPTURE_MAX 4096

static void capture_raw(struct td_parser *p, const char *s, size_t n)
{
	struct td_raw *e = &p->ev;
	char *to;

	if (e->str_len + n > p->sbuf_cap) {
		p->sbuf_cap = (e->str_len + n) * 2 + 256;
		p->sbuf = td_realloc(p->sbuf, p->sbuf_cap);
	}
	to = p->sbuf + e->str_len;
	if (n <= 8) { /* "[", ", ", "4096": a call to memcpy would cost more */
		size_t i;
		for (i = 0; i < n; i++)
			to[i] = s[i];
	} else {
		memcpy(to, s, n);
	}
	e->str_len += (uint32_t)n;
	p->capture->len += (uint32_t)n;
}

/* Appends bytes to the args array being captured (its slice grows at the string area's end);
 * past CAPTURE_MAX bytes the rest is left out, and the text is closed with "...]" at its end. */
static void capture_put(struct td_parser *p, const char *s, size_t n)
{
	if (p->capture_cut)
		return;
	if (p->capture->len + n > CAPTURE_MAX) {
		p->capture_cut = 1;
		return;
	}
	capture_raw(p, s, n);
}

/* ", " before an element that is not the first of its array */
static void capture_sep(struct td_parser *p)
{
	if (p->capture->len && p->sbuf[p->ev.str_len - 1] != '[')
		capture_put(p, ", ", 2);
}

static char *copy_str(char *old, const unsigned char *s, size_t n)
{
	free(old);
	return td_strndup((const char *)s, n);
}

/* pid / tid: numbers, numeric strings ("25738") as numbers, other strings interned. */
static void set_id_slow(struct td_parser *p, int64_t *v, uint8_t *is_str, struct td_slice *text,
			const unsigned char *s, size_t n, int from_string);
static void set_id(struct td_parser *p, int64_t *v, uint8_t *is_str, struct td_slice *text,
		   const unsigned char *s, size_t n, int from_string)
{

	/* the same few pids and tids repeat: reuse the last conversion of the same text */
	if (n == p->id_cache_len && from_string == p->id_cache_from_string &&
	    memcmp(s, p->id_cache, n) == 0) {
		*v = p->id_cache_v;
		*is_str = p->id_cache_str;
		return;
	}
	set_id_slow(p, v, is_str, text, s, n, from_string);
	if (!*is_str && n <= sizeof(p->id_cache)) {
		memcpy(p->id_cache, s, n);
		p->id_cache_len = n;
		p->id_cache_from_string = from_string;
		p->id_cache_v = *v;
		p->id_cache_str = *is_str;
	}
}

static void set_id_slow(struct td_parser *p, int64_t *v, uint8_t *is_str, struct td_slice *text,
			const unsigned char *s, size_t n, int from_string)
{
	int64_t x;

	if (td_num_int((const char *)s, n, &x) == TD_NUM_OK && n > 0) {
		*v = x;
		*is_str = 0;
		return;
	}
	if (!from_string) /* a fractional or huge number: keep its text */
		p->anom.bad_number++;
	*v = 0;
	slice(p, text, s, n);
	*is_str = 1;
}

/* --- the callbacks ----------------------------------------------------------------------- */

static int on_scalar(struct td_parser *p, const unsigned char *s, size_t n, int is_string,
		     int is_null)
{
	struct td_trace *t = p->t;
	struct td_raw *e = &p->ev;
	int ok;

	if (p->depth == 0)
		return fail(p, TD_EFORMAT, "the document is a single %s, not a trace (expected an "
			    "object with \"traceEvents\" or an array of events)",
			    is_null ? "null" : is_string ? "string" : "scalar");
	switch (ctx_at(p, p->depth)) {
	case C_CAPTURE:
		if (p->capture) {
			capture_sep(p);
			if (is_string)
				capture_put(p, "\"", 1);
			capture_put(p, (const char *)s, n);
			if (is_string)
				capture_put(p, "\"", 1);
		}
		return 1;
	case C_EVENT:
		switch (p->key) {
		case EK_PH:
			if (is_string && n >= 1)
				e->ph = n == 1 ? (char)s[0] : '?';
			break;
		case EK_CAT:
			if (is_string)
				match_cat(e, s, n);
			break;
		case EK_NAME:
			if (is_string)
				slice(p, &e->name, s, n);
			break;
		case EK_PID:
			if (!is_null) {
				set_id(p, &e->pid, &e->pid_str, &e->pid_text, s, n, is_string);
				e->has_pid = 1;
			}
			break;
		case EK_TID:
			if (!is_null) {
				set_id(p, &e->tid, &e->tid_str, &e->tid_text, s, n, is_string);
				e->has_tid = 1;
			}
			break;
		case EK_TS:
			if (!is_null) {
				e->ts = num_or_count(p, (const char *)s, n, 3, &ok);
				e->has_ts = 1;
				e->bad_ts = !ok;
			}
			break;
		case EK_DUR:
			if (!is_null) {
				e->dur = num_or_count(p, (const char *)s, n, 3, &ok);
				e->has_dur = ok;
			}
			break;
		default:
			break;
		}
		return 1;
	case C_ARGS:
		if (is_null)
			return 1;
		switch (p->key) {
		case AK_EXT:
			e->ext = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_ext = ok;
			break;
		case AK_CORR:
			e->corr = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_corr = ok;
			break;
		case AK_DEVICE:
			e->device = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_device = ok;
			break;
		case AK_STREAM:
			/* ROCm writes "0x0"; anything unparsable is counted and ignored */
			if (is_string && n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
				char hex[24];
				size_t m = n < sizeof(hex) - 1 ? n : sizeof(hex) - 1;
				memcpy(hex, s, m);
				hex[m] = '\0';
				e->stream = strtoll(hex, NULL, 16);
				e->has_stream = 1;
			} else {
				e->stream = num_or_count(p, (const char *)s, n, 0, &ok);
				e->has_stream = ok;
			}
			break;
		case AK_BYTES:
			e->bytes = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_bytes = ok;
			break;
		case AK_MEM_DEVID:
			e->device = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_device = ok;
			break;
		case AK_MEM_TOTAL:
			e->mem_total = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_mem_total = ok;
			break;
		case AK_NAME:
		case AK_LABELS:
			if (is_string && p->key == AK_NAME)
				slice(p, &e->arg_name, s, n);
			break;
		case AK_COLL_NAME:
		case AK_DTYPE:
		case AK_PG_NAME:
			if (is_string) {
				slice(p, p->key == AK_COLL_NAME ? &e->coll_name
					 : p->key == AK_DTYPE ? &e->dtype : &e->pg_name, s, n);
				e->has_coll = 1;
			}
			break;
		case AK_IN_NELEMS:
		case AK_OUT_NELEMS:
		case AK_GROUP_SIZE:
			if (!is_string) {
				int64_t v = num_or_count(p, (const char *)s, n, 0, &ok);
				if (ok) {
					*(p->key == AK_IN_NELEMS ? &e->in_nelems : p->key == AK_OUT_NELEMS
						  ? &e->out_nelems : &e->group_size) = v;
					e->has_coll = 1;
				}
			}
			break;
		case AK_WAIT_STREAM:
			if (!is_string) {
				e->wait_stream = num_or_count(p, (const char *)s, n, 0, &ok);
				e->has_wait_stream = ok;
			}
			break;
		case AK_CALL_STACK:
			if (is_string)
				slice(p, &e->call_stack, s, n);
			break;
		case AK_MEM_RESERVED:
			e->mem_reserved = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_mem_reserved = ok;
			break;
		case AK_MEM_BYTES:
			e->mem_bytes = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_mem_bytes = ok;
			break;
		case AK_MEM_DEVTYPE:
			e->mem_devtype = num_or_count(p, (const char *)s, n, 0, &ok);
			e->has_mem_devtype = ok;
			break;
		default:
			break;
		}
		return 1;
	case C_TOP_OBJ:
		switch (p->key) {
		case TK_EVENTS:
			return fail(p, TD_EFORMAT, "\"traceEvents\" is a %s; expected an array",
				    is_null ? "null" : is_string ? "string" : "scalar");
		case TK_SCHEMA:
			if (!is_string && !is_null)
				t->schema_version = num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		case TK_BASETIME:
			if (!is_null)
				t->base_time_ns = num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		case TK_UNIT:
			if (is_string)
				p->unit = copy_str(p->unit, s, n);
			break;
		case TK_NAME:
			if (is_string)
				p->trace_name = copy_str(p->trace_name, s, n);
			break;
		default:
			break;
		}
		return 1;
	case C_EVENTS:
		t->n_trace_events++;
		p->non_objects++;
		return 1;
	case C_DEVPROP:
		if (is_null)
			return 1;
		switch (p->key) {
		case DK_ID:
			p->dev.id = (int32_t)num_or_count(p, (const char *)s, n, 0, &ok);
			p->dev_has_id = ok;
			break;
		case DK_NAME:
			if (is_string)
				p->dev_name = copy_str(p->dev_name, s, n);
			break;
		case DK_MEM:
			p->dev.total_mem = num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		case DK_MAJOR:
			p->dev.cc_major = (int32_t)num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		case DK_MINOR:
			p->dev.cc_minor = (int32_t)num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		case DK_SMS:
			p->dev.num_sms = (int32_t)num_or_count(p, (const char *)s, n, 0, &ok);
			break;
		default:
			break;
		}
		return 1;
	case C_COLLECTOR:
		if (p->key == 1 && !is_null && !is_string)
			t->dropped_records = num_or_count(p, (const char *)s, n, 0, &ok);
		return 1;
	case C_DISTINFO:
		if (is_null)
			return 1;
		if (p->key == IK_RANK)
			t->rank = num_or_count(p, (const char *)s, n, 0, &ok);
		else if (p->key == IK_WORLD)
			t->world_size = num_or_count(p, (const char *)s, n, 0, &ok);
		else if (p->key == IK_BACKEND && is_string)
			p->backend = copy_str(p->backend, s, n);
		return 1;
	default:
		return 1;
	}
}

static int cb_null(void *ctx)
{
	return on_scalar(ctx, (const unsigned char *)"null", 4, 0, 1);
}

static int cb_bool(void *ctx, int v)
{
	struct td_parser *p = ctx;
	unsigned char c = ctx_at(p, p->depth);

	/* true or false where a number belongs ("ts": true): counted, not read as 1 or 0 */
	if ((c == C_EVENT || c == C_ARGS || c == C_DEVPROP || c == C_DISTINFO) && p->key) {
		p->anom.bad_number++;
		return 1;
	}
	return v ? on_scalar(ctx, (const unsigned char *)"1", 1, 0, 0)
		 : on_scalar(ctx, (const unsigned char *)"0", 1, 0, 0);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	return on_scalar(ctx, (const unsigned char *)s, n, 0, 0);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	return on_scalar(ctx, s, n, 1, 0);
}

static int cb_key(void *ctx, const unsigned char *s, size_t n)
{
	struct td_parser *p = ctx;
	uint8_t k = 0;

	switch (ctx_at(p, p->depth)) {
	case C_EVENT:
		switch (n) {
		case 2:
			k = KEQ(s, n, "ph") ? EK_PH : KEQ(s, n, "ts") ? EK_TS : KEQ(s, n, "id") ? EK_ID : 0;
			break;
		case 3:
			k = KEQ(s, n, "cat") ? EK_CAT : KEQ(s, n, "pid") ? EK_PID
				: KEQ(s, n, "tid") ? EK_TID : KEQ(s, n, "dur") ? EK_DUR : 0;
			break;
		case 4:
			k = KEQ(s, n, "name") ? EK_NAME : KEQ(s, n, "args") ? EK_ARGS : 0;
			break;
		default:
			break;
		}
		break;
	case C_ARGS:
		switch (n) {
		case 4:
			k = KEQ(s, n, "name") ? AK_NAME : 0;
			break;
		case 5:
			k = KEQ(s, n, "bytes") ? AK_BYTES : KEQ(s, n, "dtype") ? AK_DTYPE
				: KEQ(s, n, "Bytes") ? AK_MEM_BYTES : 0;
			break;
		case 6:
			k = KEQ(s, n, "device") ? AK_DEVICE : KEQ(s, n, "stream") ? AK_STREAM
				: KEQ(s, n, "labels") ? AK_LABELS : 0;
			break;
		case 9:
			k = KEQ(s, n, "Device Id") ? AK_MEM_DEVID : 0;
			break;
		case 10:
			k = KEQ(s, n, "Group size") ? AK_GROUP_SIZE : KEQ(s, n, "Input Dims") ? AK_INPUT_DIMS
				: KEQ(s, n, "Input type") ? AK_INPUT_TYPE : KEQ(s, n, "Call stack")
				? AK_CALL_STACK : 0;
			break;
		case 11:
			k = KEQ(s, n, "External id") || KEQ(s, n, "external id") ? AK_EXT
				: KEQ(s, n, "correlation") ? AK_CORR : KEQ(s, n, "Device Type")
				? AK_MEM_DEVTYPE : 0;
			break;
		case 13:
			k = KEQ(s, n, "In msg nelems") ? AK_IN_NELEMS : 0;
			break;
		case 14:
			k = KEQ(s, n, "Out msg nelems") ? AK_OUT_NELEMS
				: KEQ(s, n, "wait_on_stream") ? AK_WAIT_STREAM
				: KEQ(s, n, "Total Reserved") ? AK_MEM_RESERVED : 0;
			break;
		case 15:
			k = KEQ(s, n, "Total Allocated") ? AK_MEM_TOTAL
				: KEQ(s, n, "Collective name") ? AK_COLL_NAME : 0;
			break;
		case 18:
			k = KEQ(s, n, "Process Group Name") ? AK_PG_NAME : 0;
			break;
		default:
			break;
		}
		break;
	case C_TOP_OBJ:
		k = KEQ(s, n, "traceEvents") ? TK_EVENTS : KEQ(s, n, "deviceProperties") ? TK_DEVPROPS
			: KEQ(s, n, "distributedInfo") ? TK_DIST : KEQ(s, n, "schemaVersion") ? TK_SCHEMA
			: KEQ(s, n, "baseTimeNanoseconds") ? TK_BASETIME
			: KEQ(s, n, "displayTimeUnit") ? TK_UNIT : KEQ(s, n, "traceName") ? TK_NAME
			: KEQ(s, n, "tracedoc_collector") ? TK_COLLECTOR : 0;
		break;
	case C_DEVPROP:
		k = KEQ(s, n, "id") ? DK_ID : KEQ(s, n, "name") ? DK_NAME
			: KEQ(s, n, "totalGlobalMem") ? DK_MEM : KEQ(s, n, "computeMajor") ? DK_MAJOR
			: KEQ(s, n, "computeMinor") ? DK_MINOR : KEQ(s, n, "numSms") ? DK_SMS : 0;
		break;
	case C_COLLECTOR:
		k = KEQ(s, n, "droppedRecords") ? 1 : 0;
		break;
	case C_DISTINFO:
		k = KEQ(s, n, "rank") ? IK_RANK : KEQ(s, n, "world_size") ? IK_WORLD
			: KEQ(s, n, "backend") ? IK_BACKEND : 0;
		break;
	default:
		break;
	}
	/* a key we read, twice in one event, its args or the document: the first is kept */
	if (k) {
		uint64_t bit = 1ull << (k & 63);
		unsigned char c = ctx_at(p, p->depth);
		uint64_t *seen = c == C_EVENT ? &p->ev_keys : c == C_ARGS ? &p->arg_keys
			: c == C_TOP_OBJ ? &p->top_keys : NULL;
		if (seen && (*seen & bit)) {
			if (c == C_TOP_OBJ && k == TK_EVENTS)
				p->anom.duplicate_trace_events++;
			else if (!p->dup_counted) /* once per event or document */
				p->anom.duplicate_keys++, p->dup_counted = 1;
			k = 0;
		} else if (seen) {
			*seen |= bit;
		}
	}
	p->key = k;
	return 1;
}

#define TD_TRACE_DEPTH_MAX 10000 /* real traces nest < 20 levels */

static int push(struct td_parser *p, uint8_t c)
{
	if (p->depth >= TD_TRACE_DEPTH_MAX) /* a nesting bomb: stop before yajl's stack grows */
		return fail(p, TD_EFORMAT, "the JSON nests deeper than %d levels", TD_TRACE_DEPTH_MAX);
	p->depth++;
	if (p->depth < MAXD)
		p->ctx[p->depth] = c;
	p->key = 0;
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct td_parser *p = ctx;
	uint8_t c = C_SKIP;

	if (p->depth == 0) {
		if (p->started)
			return fail(p, TD_EFORMAT, "%s", "more than one JSON value in the input");
		p->started = 1;
		p->t->layout = TD_LAYOUT_OBJECT;
		return push(p, C_TOP_OBJ);
	}
	switch (ctx_at(p, p->depth)) {
	case C_EVENTS:
		p->t->n_trace_events++;
		memset(&p->ev, 0, sizeof(p->ev));
		p->ev_keys = p->arg_keys = 0;
		p->dup_counted = 0;
		p->capture = NULL;
		p->event_depth = p->depth + 1;
		c = C_EVENT;
		break;
	case C_EVENT:
		c = p->key == EK_ARGS ? C_ARGS : C_SKIP;
		if (c == C_ARGS)
			p->arg_keys = 0;
		break;
	case C_TOP_OBJ:
		if (p->key == TK_EVENTS)
			return fail(p, TD_EFORMAT, "%s", "\"traceEvents\" is an object; expected an array");
		c = p->key == TK_DIST ? C_DISTINFO : p->key == TK_COLLECTOR ? C_COLLECTOR : C_SKIP;
		break;
	case C_DEVPROPS:
		memset(&p->dev, 0, sizeof(p->dev));
		free(p->dev_name);
		p->dev_name = NULL;
		p->dev_has_id = 0;
		c = C_DEVPROP;
		break;
	default:
		break;
	}
	return push(p, c);
}

static int cb_start_array(void *ctx)
{
	struct td_parser *p = ctx;
	uint8_t c = C_SKIP;

	if (p->depth == 0) {
		if (p->started)
			return fail(p, TD_EFORMAT, "%s", "more than one JSON value in the input");
		p->started = 1;
		p->saw_events = 1;
		p->t->layout = TD_LAYOUT_ARRAY;
		return push(p, C_EVENTS);
	}
	switch (ctx_at(p, p->depth)) {
	case C_TOP_OBJ:
		if (p->key == TK_EVENTS) {
			p->saw_events = 1;
			c = C_EVENTS;
		} else if (p->key == TK_DEVPROPS) {
			c = C_DEVPROPS;
		}
		break;
	case C_EVENTS:
		p->t->n_trace_events++;
		p->non_objects++;
		break;
	case C_ARGS:
		if ((p->key == AK_INPUT_DIMS || p->key == AK_INPUT_TYPE) && !p->capture) {
			struct td_slice *sl = p->key == AK_INPUT_DIMS ? &p->ev.dims : &p->ev.types;
			sl->off = p->ev.str_len;
			sl->len = 0;
			sl->set = 1;
			p->capture = sl;
			p->capture_depth = p->depth + 1;
			p->capture_cut = 0;
			capture_put(p, "[", 1);
			c = C_CAPTURE;
		}
		break;
	case C_CAPTURE:
		if (p->capture) {
			capture_sep(p);
			capture_put(p, "[", 1);
		}
		c = C_CAPTURE;
		break;
	default:
		break;
	}
	return push(p, c);
}

static void finish_device(struct td_parser *p)
{
	struct dev_props *d;

	if (!p->dev_has_id)
		return;
	d = td_vec_push(&p->devs);
	d->d = p->dev;
	d->name = p->dev_name;
	p->dev_name = NULL;
}

static void finish_event(struct td_parser *p);

static int pop(struct td_parser *p)
{
	unsigned char c = ctx_at(p, p->depth);

	if (c == C_EVENTS && p->t->events_close < 0) {
		/* the byte of the ']' closing the events (yajl has consumed it), for annotate */
		size_t used = yajl_get_bytes_consumed(p->h);
		p->t->events_close = (int64_t)(p->offset + (used ? range_index(p, used - 1) : 0));
	}
	if (c == C_EVENT && p->depth == p->event_depth) {
		finish_event(p);
		p->event_depth = 0;
	}
	else if (c == C_DEVPROP)
		finish_device(p);
	else if (c == C_CAPTURE && p->capture) {
		capture_put(p, "]", 1);
		if (p->depth == p->capture_depth) {
			if (p->capture_cut) { /* close what the cut left open */
				const char *b = p->sbuf + p->capture->off;
				uint32_t i, open = 0;
				for (i = 0; i < p->capture->len; i++)
					open += b[i] == '[' ? 1u : b[i] == ']' ? (uint32_t)-1 : 0u;
				capture_raw(p, "...", 3);
				while (open--)
					capture_raw(p, "]", 1);
				p->capture_cut = 0;
			}
			p->capture = NULL;
		}
	}
	p->depth--;
	p->key = 0;
	if (p->depth == 0) {
		p->top_done = 1;
		if (!p->saw_events)
			return fail(p, TD_EFORMAT, "%s",
				    "the top-level object has no \"traceEvents\" array");
	}
	return 1;
}

static int cb_end(void *ctx)
{
	return pop(ctx);
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* --- events to the builder, on this thread or the builder's ----------------------------- */

static void *model_main(void *arg)
{
	struct td_parser *p = arg;
	struct model_thread *mt = p->mt;

	for (;;) {
		struct batch *b;

		pthread_mutex_lock(&mt->mu);
		while (mt->head == mt->tail && !mt->done)
			pthread_cond_wait(&mt->cv, &mt->mu);
		if (mt->head == mt->tail) {
			pthread_mutex_unlock(&mt->mu);
			return NULL;
		}
		b = &mt->b[mt->tail % NBATCH];
		pthread_mutex_unlock(&mt->mu);
		td_builder_add_records(&p->builder, b->buf, b->len);
		pthread_mutex_lock(&mt->mu);
		mt->tail++;
		pthread_cond_broadcast(&mt->cv);
		pthread_mutex_unlock(&mt->mu);
	}
}

/* Hands the filled batch to the builder and takes the next free one. */
static void ship(struct td_parser *p)
{
	struct model_thread *mt = p->mt;

	pthread_mutex_lock(&mt->mu);
	mt->head++;
	pthread_cond_broadcast(&mt->cv);
	while (mt->head - mt->tail == NBATCH)
		pthread_cond_wait(&mt->cv, &mt->mu);
	p->cur = &mt->b[mt->head % NBATCH];
	p->cur->len = 0;
	pthread_mutex_unlock(&mt->mu);
}

static void finish_event(struct td_parser *p)
{
	struct td_raw *e = &p->ev;
	size_t need;

	e->full = e->has_coll || e->has_wait_stream || e->has_mem_total || e->has_mem_reserved ||
		  e->has_mem_bytes || e->has_mem_devtype;
	if (p->sink) { /* a split worker: records in order to the one model thread */
		need = td_raw_size(e);
		if (need > TD_BATCH_BYTES) { /* a record larger than a batch: shipped alone */
			unsigned char *big = td_malloc(need);
			td_parser_flush(p);
			td_raw_put(big, e, p->sbuf);
			(void)p->sink(p->sink_ctx, big, need, 0);
			return;
		}
		if (p->wbuf && p->wlen + need > TD_BATCH_BYTES) {
			p->wbuf = p->sink(p->sink_ctx, p->wbuf, p->wlen, 1);
			p->wlen = 0;
		}
		if (!p->wbuf)
			p->wbuf = p->sink(p->sink_ctx, NULL, 0, 1);
		td_raw_put(p->wbuf + p->wlen, e, p->sbuf);
		p->wlen += need;
		return;
	}
	if (!p->mt) {
		td_builder_add(&p->builder, e, p->sbuf);
		return;
	}
	need = td_raw_size(e);
	if (p->cur->len + need > BATCH_BYTES && p->cur->len > 0)
		ship(p);
	if (need > BATCH_BYTES) {
		/* an event larger than a batch (a huge name): let the builder drain, then add it here */
		pthread_mutex_lock(&p->mt->mu);
		while (p->mt->head != p->mt->tail)
			pthread_cond_wait(&p->mt->cv, &p->mt->mu);
		pthread_mutex_unlock(&p->mt->mu);
		td_builder_add(&p->builder, e, p->sbuf);
		return;
	}
	td_raw_put(p->cur->buf + p->cur->len, e, p->sbuf);
	p->cur->len += need;
}

static void free_model_thread(struct td_parser *p)
{
	struct model_thread *mt = p->mt;
	int i;

	pthread_mutex_destroy(&mt->mu);
	pthread_cond_destroy(&mt->cv);
	for (i = 0; i < NBATCH; i++)
		free(mt->b[i].buf);
	free(mt);
	p->mt = NULL;
	p->cur = NULL;
}

/* Sends what is left and waits for the builder to finish. */
static void stop_model_thread(struct td_parser *p)
{
	struct model_thread *mt = p->mt;

	if (!mt)
		return;
	pthread_mutex_lock(&mt->mu);
	if (p->cur && p->cur->len)
		mt->head++;
	mt->done = 1;
	pthread_cond_broadcast(&mt->cv);
	pthread_mutex_unlock(&mt->mu);
	pthread_join(mt->th, NULL);
	free_model_thread(p);
}

/* --- public API -------------------------------------------------------------------------- */

struct td_parser *td_parser_new(struct td_trace *t)
{
	struct td_parser *p = td_calloc(1, sizeof(*p));

	p->t = t;
	p->h = yajl_alloc(&callbacks, NULL, p);
	if (!p->h) {
		free(p);
		return NULL;
	}
	/* Names may hold invalid UTF-8: keep them (counted) rather than fail the trace. */
	yajl_config(p->h, yajl_dont_validate_strings, 1);
	td_builder_init(&p->builder, t);
	td_vec_init(&p->devs, sizeof(struct dev_props));
	p->sbuf_cap = 4096;
	p->sbuf = td_malloc(p->sbuf_cap);
	p->squeeze = -1;
	p->mbuf = td_malloc(PIECE_MAX + 128);
	return p;
}

struct td_parser *td_parser_new_threaded(struct td_trace *t)
{
	struct td_parser *p = td_parser_new(t);
	struct model_thread *mt;
	int i;

	if (!p)
		return NULL;
	mt = td_calloc(1, sizeof(*mt));
	for (i = 0; i < NBATCH; i++)
		mt->b[i].buf = td_malloc(BATCH_BYTES);
	pthread_mutex_init(&mt->mu, NULL);
	pthread_cond_init(&mt->cv, NULL);
	p->mt = mt;
	p->cur = &mt->b[0];
	if (pthread_create(&mt->th, NULL, model_main, p) != 0)
		free_model_thread(p); /* no thread: build on this one */
	return p;
}

void td_parser_free(struct td_parser *p)
{
	size_t i;

	if (!p)
		return;
	stop_model_thread(p);
	if (p->h)
		yajl_free(p->h);
	td_builder_free(&p->builder);
	for (i = 0; i < p->devs.len; i++)
		free(TD_VEC_AT(&p->devs, struct dev_props, i).name);
	td_vec_free(&p->devs);
	free(p->dev_name);
	free(p->unit);
	free(p->trace_name);
	free(p->backend);
	free(p->sbuf);
	free(p->mbuf);
	free(p->wbuf);
	free(p);
}

static int yajl_failure(struct td_parser *p, struct td_error *err)
{
	size_t at = yajl_get_bytes_consumed(p->h);

	if (!p->failed) {
		unsigned char *m = yajl_get_error(p->h, 0, NULL, 0);
		char *nl;

		td_error_set(err, TD_EPARSE, "%s", m ? (const char *)m : "invalid JSON");
		if ((nl = strchr(err->msg, '\n')) != NULL)
			*nl = '\0';
		if (m)
			yajl_free_error(p->h, m);
		p->failed = 1;
		p->code = TD_EPARSE;
	}
	/* yajl counts the token that failed as consumed and points past its last byte; after a
	 * map's value it steps back to the token's start (yajl_parser.c), and where the lexer
	 * stops at a byte it cannot take (a comment's '/', a bad literal or number) it leaves
	 * that byte unconsumed: point at it, which also keeps whitespace out of the position */
	if (at > 0 && p->code == TD_EPARSE && at <= p->chunk_len) {
		const char *m = err->msg;
		int at_byte = strstr(m, "after key and value") || strstr(m, "comment") ||
			      strstr(m, "invalid string in json") || strstr(m, "malformed number");
		at = range_index(p, at_byte ? at : at - 1);
		/* the byte it could not take is never whitespace: a squeezed range has none to
		 * point at, so neither does the plain one (the same position either way) */
		while (at_byte && at < p->chunk_len && (p->chunk[at] == ' ' || p->chunk[at] == '\t' ||
						       p->chunk[at] == '\n' || p->chunk[at] == '\r'))
			at++;
	} else if (at > 0)
		at = range_index(p, at - 1) + 1; /* just after what was consumed */
	locate(p, at, err);
	return p->code;
}

/* Feeds yajl bytes [from, to) of the current chunk, or with data its squeezed form data[0..n)
 * (the scan state at `from` in *state; the first `blocks` bytes squeezed, the rest as is). */
static int feed_range(struct td_parser *p, const unsigned char *buf, size_t from, size_t to,
		      uint64_t base, const unsigned char *data, size_t n, const struct td_scan *state,
		      size_t blocks)
{
	yajl_status st;

	if (to <= from)
		return 0;
	p->chunk = buf + from;
	p->chunk_len = to - from;
	p->offset = base + from;
	p->sq_on = data != NULL;
	if (data) {
		p->sq_state = *state;
		p->sq_blocks = blocks;
		st = yajl_parse(p->h, data, n);
	} else {
		st = yajl_parse(p->h, buf + from, to - from);
	}
	if (st != yajl_status_ok)
		return -1; /* the range stays current, for the error's position */
	p->sq_on = 0;
	p->offset = base;
	return 0;
}

/* One quote at byte i of the chunk: toggles the string state unless escaped. Returns 1 when
 * it closed a string that was being cut (yajl gets bytes again from i). */
static int quote_at(struct td_parser *p, size_t i, uint64_t base)
{
	if (p->scan.in_str && (p->scan.bs_run & 1)) { /* an escaped quote */
		p->scan.bs_run = 0;
		return 0;
	}
	p->scan.bs_run = 0;
	p->scan.in_str = !p->scan.in_str;
	if (p->scan.in_str) {
		p->scan.str_open = base + i;
		return 0;
	}
	if (p->skipping) {
		p->skipping = 0;
		return 1;
	}
	return 0;
}

/* Up to 8 bytes at buf[i]: the string state a word, or a byte, at a time. *start moves to a
 * quote that closes a string being cut. */
static inline void strings8(struct td_parser *p, const unsigned char *buf, size_t i, size_t n,
			    uint64_t base, size_t *start)
{
	uint64_t w, q, bs;
	size_t k;

	p->scan.ws_seed = 0; /* whitespace after these bytes is kept */
	if (n == 8) {
		w = td_load_le64(buf + i);
		q = td_bytes_eq(w, '"');
		bs = td_bytes_eq(w, '\\');
	} else {
		q = bs = 1; /* the tail: byte by byte */
	}
	if (!bs && !q) {
		p->scan.bs_run = 0;
	} else if (!bs && !p->scan.bs_run) { /* quotes only: no escapes to follow */
		while (q) {
			k = (size_t)__builtin_ctzll(q) / 8;
			q &= q - 1;
			if (quote_at(p, i + k, base))
				*start = i + k;
		}
	} else { /* backslashes: byte by byte */
		for (k = 0; k < n; k++) {
			unsigned char c = buf[i + k];
			if (c == '\\') {
				p->scan.bs_run++;
			} else if (c == '"') {
				if (quote_at(p, i + k, base))
					*start = i + k;
			} else {
				p->scan.bs_run = 0;
			}
		}
	}
}

/* The chunk through yajl, a string's bytes past TD_STRING_MAX left out. Whole 64-byte blocks
 * go through td_scan_blocks() a piece at a time, squeezed (parser/scan.h) and handed to yajl
 * at once; the tail, and the bytes of a string being cut, 8 at a time (a word without a quote
 * or a backslash costs a few operations; an escaped quote has an odd run of backslashes
 * before it). A piece in which a string grows past the limit is handed over as it is, up to
 * the cut. Returns 0, or -1 when yajl failed (p->chunk, p->offset set for its position). */
static int feed_strings(struct td_parser *p, const unsigned char *buf, size_t len, uint64_t base)
{
	size_t i = p->skip_bom, start = p->skip_bom;

	p->skip_bom = 0;
	while (i < len) {
		if (!p->skipping && len - i >= 64) {
			size_t n = (len - i) & ~(size_t)63, o = 0, done;
			struct td_scan before = p->scan;
			int sq = (p->squeeze < 0 ? td_scan_squeeze_pays() : p->squeeze) && start == i;
			if (sq && n > PIECE_MAX)
				n = PIECE_MAX;
			done = td_scan_blocks(&p->scan, buf + i, n, base + i, TD_STRING_MAX,
					      sq ? p->mbuf : NULL, &o, PIECE);
			i += done;
			if (!p->scan.in_str || base + i - p->scan.str_open <= TD_STRING_MAX) {
				size_t blocks = i - start;
				if (!sq)
					continue;
				/* the tail (< 64 bytes) goes with the last piece, as it is: yajl is
				 * handed the chunk's end where it would be without squeezing */
				if (len - i < 64 && (!p->scan.in_str ||
						     base + len - p->scan.str_open <= TD_STRING_MAX)) {
					size_t k;
					for (k = i; k < len; k += 8)
						strings8(p, buf, k, len - k >= 8 ? 8 : len - k, base,
							 &start);
					memcpy(p->mbuf + o, buf + i, len - i);
					o += len - i;
					i = len;
				}
				if (feed_range(p, buf, start, i, base, p->mbuf, o, &before, blocks))
					return -1;
				start = i;
				continue;
			}
		} else {
			size_t n = len - i >= 8 ? 8 : len - i;
			strings8(p, buf, i, n, base, &start);
			i += n;
		}
		/* a string past the limit: yajl gets up to the cut, nothing more of it */
		if (p->scan.in_str && !p->skipping && base + i - p->scan.str_open > TD_STRING_MAX) {
			size_t cut = (size_t)(p->scan.str_open + TD_STRING_MAX - base), back;
			if (cut < start)
				cut = start;
			for (back = 1; back <= 8 && cut - back > start; back++) /* not in an escape */
				if (buf[cut - back] == '\\') {
					cut -= back;
					break;
				}
			while (cut > start && (buf[cut] & 0xc0) == 0x80) /* nor in a UTF-8 character */
				cut--;
			if (feed_range(p, buf, start, cut, base, NULL, 0, NULL, 0))
				return -1;
			p->skipping = 1;
			p->anom.long_strings++;
			start = len;
		}
	}
	return p->skipping ? 0 : feed_range(p, buf, start, len, base, NULL, 0, NULL, 0);
}

int td_parser_feed_counted(struct td_parser *p, const void *buf, size_t len, uint64_t lines,
			   size_t last_nl, struct td_error *err)
{
	if (p->failed)
		return p->code ? p->code : TD_EPARSE;
	if (len == 0)
		return 0;
	p->err = err;
	if (p->offset == 0 && !p->started) {
		const unsigned char *b = buf;
		/* UTF-16 text is not JSON we read: say so at byte 0 */
		if (len >= 2 && ((b[0] == 0xff && b[1] == 0xfe) || (b[0] == 0xfe && b[1] == 0xff) ||
				 (b[0] && !b[1]) || (!b[0] && len >= 2 && b[1]))) {
			struct td_error *e = err;
			td_error_set(e, TD_EFORMAT, "the input is UTF-16 text, not UTF-8: convert it "
				     "first (iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8.json)");
			e->has_pos = 1;
			e->line = e->col = 1;
			e->offset = 0;
			p->failed = 1;
			p->code = TD_EFORMAT;
			return TD_EFORMAT;
		}
		/* a UTF-8 byte order mark: read past it */
		if (len >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf)
			p->skip_bom = 3;
	}
	p->chunk0 = buf;
	p->chunk0_len = len;
	if (feed_strings(p, buf, len, p->offset) != 0)
		return yajl_failure(p, err);
	if (lines) {
		p->lines += lines;
		p->line_start = p->offset + last_nl + 1;
	}
	p->chunk0 = NULL;
	p->chunk0_len = 0;
	remember_tail(p, buf, len);
	p->offset += len;
	p->t->bytes_in = p->offset;
	return 0;
}

int td_parser_feed(struct td_parser *p, const void *buf, size_t len, struct td_error *err)
{
	size_t last_nl;
	uint64_t lines = td_scan_lines(buf, len, &last_nl);

	return td_parser_feed_counted(p, buf, len, lines, last_nl, err);
}

static void intern_to_builder(void *ctx, const char *name, uint32_t len, uint32_t *id)
{
	*id = td_builder_intern(ctx, name, len);
}

/* After the builder has seen every event: what this thread kept aside. */
static void apply_deferred(struct td_parser *p)
{
	struct td_parser *one[1];

	stop_model_thread(p);
	one[0] = p;
	td_parser_merge(one, 1, p->t, intern_to_builder, &p->builder);
	td_builder_finish(&p->builder);
	memset(&p->anom, 0, sizeof(p->anom));
	p->non_objects = 0;
}

/* --- split workers (parser/split.c) ------------------------------------------------------ */

struct td_parser *td_parser_new_worker(struct td_trace *shadow,
				       unsigned char *(*sink)(void *ctx, unsigned char *full,
							      size_t len, int want),
				       void *ctx)
{
	struct td_parser *p = td_parser_new(shadow);

	if (!p)
		return NULL;
	p->sink = sink;
	p->sink_ctx = ctx;
	return p;
}

void td_parser_trim(struct td_parser *p)
{
	td_parser_flush(p);
	if (p->h)
		yajl_free(p->h);
	p->h = NULL;
	free(p->sbuf);
	p->sbuf = NULL;
	p->sbuf_cap = 0;
	free(p->mbuf);
	p->mbuf = NULL;
}

void td_parser_set_squeeze(struct td_parser *p, int on)
{
	p->squeeze = on;
}

void td_parser_prime(struct td_parser *p, int array_layout, uint64_t offset, uint64_t lines,
		     uint64_t line_start, const void *before, size_t before_len)
{
	static const char obj[] = "{\"traceEvents\":[", arr[] = "[";
	const char *pre = array_layout ? arr : obj;
	size_t n = strlen(pre);

	/* the document's opening, so that the context is the sequential reader's at an event */
	p->chunk = (const unsigned char *)pre;
	p->chunk_len = n;
	p->chunk0 = NULL;
	p->sq_on = 0;
	p->offset = offset - n;
	(void)yajl_parse(p->h, (const unsigned char *)pre, n);
	p->offset = offset;
	p->lines = lines;
	p->line_start = line_start;
	p->tail_len = 0; /* the bytes before the block, for the context of an error near its start */
	remember_tail(p, before, before_len);
}

int td_parser_at_boundary(const struct td_parser *p)
{
	return !p->failed && !p->scan.in_str && !p->skipping && !p->event_depth && p->depth >= 1 &&
	       ctx_at(p, p->depth) == C_EVENTS;
}

void td_parser_flush(struct td_parser *p)
{
	if (p->sink && p->wbuf) /* shipped, or (empty) back to the pool */
		(void)p->sink(p->sink_ctx, p->wbuf, p->wlen, 0);
	p->wbuf = NULL;
	p->wlen = 0;
}

void td_parser_merge(struct td_parser *const *w, size_t n, struct td_trace *t,
		     void (*add)(void *ctx, const char *name, uint32_t len, uint32_t *id), void *ctx)
{
	size_t k, i;
	const char *unit = NULL, *name = NULL, *backend = NULL;
	uint32_t id;

	for (k = 0; k < n; k++) { /* the devices in document order, as one reader would */
		for (i = 0; i < w[k]->devs.len; i++) {
			struct dev_props *dp = &TD_VEC_AT(&w[k]->devs, struct dev_props, i);
			struct td_device *d = td_trace_device(t, dp->d.id);
			id = 0;
			if (dp->name)
				add(ctx, dp->name, (uint32_t)strlen(dp->name), &id);
			d->name = id;
			d->total_mem = dp->d.total_mem;
			d->cc_major = dp->d.cc_major;
			d->cc_minor = dp->d.cc_minor;
			d->num_sms = dp->d.num_sms;
			d->has_props = 1;
		}
		if (w[k]->unit)
			unit = w[k]->unit;
		if (w[k]->trace_name)
			name = w[k]->trace_name;
		if (w[k]->backend)
			backend = w[k]->backend;
	}
	if (unit) {
		add(ctx, unit, (uint32_t)strlen(unit), &id);
		t->display_time_unit = id;
	}
	if (name) {
		add(ctx, name, (uint32_t)strlen(name), &id);
		t->trace_name = id;
	}
	if (backend) {
		add(ctx, backend, (uint32_t)strlen(backend), &id);
		t->backend = id;
	}
	for (k = 0; k < n; k++) {
		struct td_parser *p = w[k];
		t->by_kind[TD_K_UNKNOWN] += p->non_objects;
		t->anom.non_object_event += p->non_objects;
		t->anom.bad_number += p->anom.bad_number;
		t->anom.huge_number += p->anom.huge_number;
		t->anom.sub_ns_digits += p->anom.sub_ns_digits;
		t->anom.long_strings += p->anom.long_strings;
		t->anom.duplicate_keys += p->anom.duplicate_keys;
		t->anom.duplicate_trace_events += p->anom.duplicate_trace_events;
	}
}

/* The document's end: build (the whole reader) or ship (a split worker) what is held. */
static int end_document(struct td_parser *p, uint64_t events_before, int build,
			struct td_error *err)
{
	yajl_status st;

	if (p->failed)
		return p->code ? p->code : TD_EPARSE;
	p->err = err;
	p->chunk = (const unsigned char *)"";
	p->chunk_len = 0;
	p->chunk0 = NULL;
	p->sq_on = 0;
	st = yajl_complete_parse(p->h);
	if (build)
		apply_deferred(p);
	else
		td_parser_flush(p);
	if (!p->started) {
		td_error_set(err, TD_EPARSE, "%s", p->offset ? "no JSON value in the input"
							     : "the input is empty");
		locate(p, 0, err);
		return TD_EPARSE;
	}
	if (st != yajl_status_ok && p->failed)
		return yajl_failure(p, err);
	if (!p->top_done) {
		/* Cut short: keep every complete event; the one being read is dropped. */
		if (p->event_depth)
			p->t->n_trace_events--;
		p->t->partial = 1;
		p->t->partial_offset = p->offset;
		snprintf(p->t->partial_msg, sizeof(p->t->partial_msg),
			 "the JSON ends early at byte %llu (inside %s); results cover the %llu "
			 "complete event(s) before it",
			 (unsigned long long)p->offset,
			 ctx_at(p, p->depth) == C_EVENTS || ctx_at(p, p->depth) == C_EVENT ||
					 ctx_at(p, p->depth) == C_ARGS
				 ? "traceEvents" : "the document",
			 (unsigned long long)(p->t->n_trace_events + events_before));
		return 0;
	}
	if (st != yajl_status_ok)
		return yajl_failure(p, err);
	return 0;
}

int td_parser_finish_worker(struct td_parser *p, uint64_t events_before, struct td_error *err)
{
	return end_document(p, events_before, 0, err);
}

int td_parser_finish(struct td_parser *p, struct td_error *err)
{
	return end_document(p, 0, 1, err);
}
