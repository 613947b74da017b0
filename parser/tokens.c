/* SPDX-License-Identifier: MIT */
/* Tokens to records: yajl's callbacks turn a Kineto / chrome trace into raw events (one record
 * per event, appended to the batch). A stack of container contexts tells each callback where it
 * is (top object, traceEvents, one event, its args, ...; parser/keys.c names the keys);
 * everything else is skipped as cheaply as yajl allows. Numbers arrive as raw text
 * (yajl_number) and only the fields we keep are converted, exactly. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/utf8.h"
#include "parser/builder.h"
#include "parser/keys.h"
#include "parser/num.h"
#include "parser/parser.h"
#include "parser/parser_state.h"
#include "parser/scan.h"
#include "parser/trace.h"

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

/* --- category matching (the keys: parser/keys.c) ------------------------------------------ */

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

/* an arg that is a whole number: its value and whether it was one */
#define NUM_ARG(key, field)                                                                 \
	case key:                                                                           \
		e->field = num_or_count(p, (const char *)s, n, 0, &ok);                      \
		e->has_##field = ok;                                                        \
		break

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
		NUM_ARG(AK_EXT, ext);
		NUM_ARG(AK_CORR, corr);
		case AK_MEM_DEVID: /* a [memory] sample's "Device Id" */
		NUM_ARG(AK_DEVICE, device);
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
		NUM_ARG(AK_BYTES, bytes);
		NUM_ARG(AK_MEM_TOTAL, mem_total);
		case AK_NAME:
		case AK_LABELS:
			if (is_string && p->key == AK_NAME)
				slice(p, &e->arg_name, s, n);
			break;
		case AK_KERNEL:
			if (is_string)
				slice(p, &e->kernel, s, n);
			break;
		case AK_COLL_NAME:
		case AK_DTYPE:
		case AK_PG_NAME:
		case AK_PG_DESC:
			if (is_string) {
				slice(p, p->key == AK_COLL_NAME ? &e->coll_name
					 : p->key == AK_DTYPE ? &e->dtype
					 : p->key == AK_PG_DESC ? &e->pg_desc : &e->pg_name, s, n);
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
		case AK_SEQ:
		case AK_SEQ_NUM:
		case AK_WAIT_REC:
			if (!is_string) {
				int64_t v = num_or_count(p, (const char *)s, n, 0, &ok);
				if (ok) {
					int k = p->key;
					*(k == AK_SEQ ? &e->seq : k == AK_SEQ_NUM ? &e->seq_num
					  : &e->wait_rec) = v;
					e->chk |= k == AK_SEQ ? TD_RAW_CHK_SEQ : k == AK_SEQ_NUM
						? TD_RAW_CHK_SEQ_NUM : TD_RAW_CHK_WAIT_REC;
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
		NUM_ARG(AK_MEM_RESERVED, mem_reserved);
		NUM_ARG(AK_MEM_BYTES, mem_bytes);
		NUM_ARG(AK_MEM_DEVTYPE, mem_devtype);
		case AK_REGS:
		case AK_SMEM:
		case AK_OCC:
		case AK_BPSM: { /* occupancy figures: rounded, not counted as lost digits */
			int64_t v;
			int k = p->key;
			if (is_string || (td_num_scaled((const char *)s, n, k == AK_OCC ? 2 : k == AK_BPSM
						  ? 3 : 0, &v) & (TD_NUM_SYNTAX | TD_NUM_RANGE)))
				break;
			*(k == AK_REGS ? &e->regs : k == AK_SMEM ? &e->smem : k == AK_OCC ? &e->occ
			  : &e->bpsm) = v;
			e->launch_has |= (uint8_t)(1u << (k - AK_REGS));
			e->has_launch = 1;
			break;
		}
		case AK_KFLOP:
		case AK_KGB: { /* numbers >= 0; anything else is left out (no cost) */
			int64_t v;
			int k = p->key;
			if (is_string || (td_num_scaled((const char *)s, n, k == AK_KGB ? 9 : 0, &v) &
					  (TD_NUM_SYNTAX | TD_NUM_RANGE)) || v < 0)
				break;
			*(k == AK_KFLOP ? &e->kflop : &e->kbytes) = v;
			*(k == AK_KFLOP ? &e->has_kflop : &e->has_kbytes) = 1;
			break;
		}
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

/* the document's first container: an object holding traceEvents, or an array of events */
static int open_document(struct td_parser *p, int layout, uint8_t c)
{
	if (p->started)
		return fail(p, TD_EFORMAT, "%s", "more than one JSON value in the input");
	p->started = 1;
	p->saw_events = c == C_EVENTS;
	p->t->layout = layout;
	return push(p, c);
}

static int cb_start_map(void *ctx)
{
	struct td_parser *p = ctx;
	uint8_t c = C_SKIP;

	if (p->depth == 0)
		return open_document(p, TD_LAYOUT_OBJECT, C_TOP_OBJ);
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

	if (p->depth == 0)
		return open_document(p, TD_LAYOUT_ARRAY, C_EVENTS);
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
		if ((p->key == AK_INPUT_DIMS || p->key == AK_INPUT_TYPE || p->key == AK_GRID ||
		     p->key == AK_BLOCK || p->key == AK_CONCRETE) && !p->capture) {
			struct td_slice *sl = p->key == AK_INPUT_DIMS ? &p->ev.dims : p->key ==
				AK_INPUT_TYPE ? &p->ev.types : p->key == AK_GRID ? &p->ev.grid
				: p->key == AK_BLOCK ? &p->ev.block : &p->ev.concrete;
			if (p->key == AK_GRID || p->key == AK_BLOCK)
				p->ev.has_launch = 1;
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
		size_t used = yajl_get_bytes_consumed(p->h);
		/* just past the document's last byte: what trails it is an error there */
		p->doc_end = p->offset + (used ? range_index(p, used - 1) + 1 : 0);
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

const yajl_callbacks td_token_callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, td_tokens_key, cb_end, cb_start_array, cb_end,
};

static void finish_event(struct td_parser *p)
{
	struct td_raw *e = &p->ev;
	size_t need;

	/* record_param_comms's metadata keys, present whatever their values (tracedoc check) */
#define ARG_BIT(k) (1ull << ((k) & 63))
	e->chk |= (uint8_t)((p->arg_keys & ARG_BIT(AK_COLL_NAME) ? 1u : 0u) |
			    (p->arg_keys & ARG_BIT(AK_DTYPE) ? 2u : 0u) |
			    (p->arg_keys & ARG_BIT(AK_IN_NELEMS) ? 4u : 0u) |
			    (p->arg_keys & ARG_BIT(AK_OUT_NELEMS) ? 8u : 0u) |
			    (p->arg_keys & ARG_BIT(AK_GROUP_SIZE) ? 16u : 0u));
#undef ARG_BIT
	e->full = e->has_coll || e->has_wait_stream || e->has_mem_total || e->has_mem_reserved ||
		  e->has_mem_bytes || e->has_mem_devtype || e->has_launch || e->has_kflop ||
		  e->has_kbytes || e->kernel.set ||
		  (e->chk & ~TD_RAW_CHK_COMMS);
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
		td_parser_ship(p);
	if (need > BATCH_BYTES) {
		/* an event larger than a batch (a huge name): let the builder drain, then add it here */
		td_parser_drain(p);
		td_builder_add(&p->builder, e, p->sbuf);
		return;
	}
	td_raw_put(p->cur->buf + p->cur->len, e, p->sbuf);
	p->cur->len += need;
}
