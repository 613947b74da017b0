/* SPDX-License-Identifier: MIT */
#include "parser/sniff.h"

#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "common/alloc.h"

#define SNIFF_DEPTH_MAX 64 /* our documents nest < 10; deeper is left to the reader to refuse */

struct td_sniffer {
	yajl_handle h;
	enum td_sniff_kind kind;
	unsigned depth;
	int key_is_schema; /* the last key at the top level was "schema" */
	int top_array;     /* the document is an array: a trace, or a list of segments */
	int started;       /* a byte order mark was looked for */
	size_t nbom;
	char schema[64];
};

static int value(struct td_sniffer *s)
{
	s->key_is_schema = 0;
	if (s->top_array && s->depth == 1) { /* an array of numbers or strings: no segments */
		s->kind = TD_SNIFF_TRACE;
		return 0;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	return value(ctx);
}

static int cb_bool(void *ctx, int b)
{
	(void)b;
	return value(ctx);
}

static int cb_number(void *ctx, const char *n, size_t len)
{
	(void)n;
	(void)len;
	return value(ctx);
}

static int cb_string(void *ctx, const unsigned char *v, size_t len)
{
	struct td_sniffer *s = ctx;

	if (s->depth == 1 && s->key_is_schema) {
		if (len >= sizeof(s->schema))
			len = sizeof(s->schema) - 1;
		memcpy(s->schema, v, len);
		s->schema[len] = '\0';
		s->kind = TD_SNIFF_SCHEMA;
		return 0;
	}
	return value(s);
}

static int cb_key(void *ctx, const unsigned char *k, size_t len)
{
	struct td_sniffer *s = ctx;

	s->key_is_schema = 0;
#define IS(lit) (len == sizeof(lit) - 1 && !memcmp(k, lit, len))
	if (s->top_array) { /* the first element's keys: a segment's, or an event's */
		if (s->depth != 2)
			return 1;
		if (IS("total_size") || IS("segment_type") || IS("blocks") || IS("allocated_size"))
			s->kind = TD_SNIFF_SNAPSHOT;
		else if (!IS("device") && !IS("address") && !IS("stream"))
			s->kind = TD_SNIFF_TRACE;
		return s->kind == TD_SNIFF_MORE;
	}
	if (s->depth != 1)
		return 1;
	/* Kineto writes these before its events: no need to read on to "traceEvents" */
	if (IS("traceEvents") || IS("schemaVersion") || IS("deviceProperties") ||
	    IS("displayTimeUnit"))
		s->kind = TD_SNIFF_TRACE;
	else if (IS("segments") || IS("device_traces"))
		s->kind = TD_SNIFF_SNAPSHOT;
	else
		s->key_is_schema = IS("schema");
#undef IS
	return s->kind == TD_SNIFF_MORE;
}

static int open_(struct td_sniffer *s, int array)
{
	if (s->depth == 0 && array) /* the JSON Array Format (a list of events), or */
		s->top_array = 1;   /* torch.cuda.memory_snapshot()'s list of segments */
	else if (s->top_array && s->depth == 1 && array) { /* a list of lists: no segments */
		s->kind = TD_SNIFF_TRACE;
		return 0;
	}
	s->key_is_schema = 0;
	if (++s->depth > SNIFF_DEPTH_MAX) {
		s->kind = TD_SNIFF_OTHER;
		return 0;
	}
	return 1;
}

static int cb_start_map(void *ctx)
{
	return open_(ctx, 0);
}

static int cb_start_array(void *ctx)
{
	return open_(ctx, 1);
}

static int cb_end(void *ctx)
{
	struct td_sniffer *s = ctx;

	if (--s->depth <= 1 && s->top_array) { /* the first element, or the array, ended */
		s->kind = TD_SNIFF_TRACE;
		return 0;
	}
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

struct td_sniffer *td_sniff_new(void)
{
	struct td_sniffer *s = td_calloc(1, sizeof(*s));

	s->h = yajl_alloc(&callbacks, NULL, s);
	yajl_config(s->h, yajl_dont_validate_strings, 1);
	return s;
}

static void parse(struct td_sniffer *s, const unsigned char *p, size_t len)
{
	yajl_status st = len ? yajl_parse(s->h, p, len) : yajl_complete_parse(s->h);

	if (s->kind == TD_SNIFF_MORE && (st != yajl_status_ok || !len))
		s->kind = s->top_array ? TD_SNIFF_TRACE : TD_SNIFF_OTHER; /* the trace reader says */
}

enum td_sniff_kind td_sniff_feed(struct td_sniffer *s, const void *buf, size_t len)
{
	static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
	const unsigned char *p = buf;
	int end = !len;

	if (s->kind != TD_SNIFF_MORE)
		return s->kind;
	if (!s->started && !s->nbom && len && *p == 0x80) /* a pickle's PROTO: a snapshot */
		return s->kind = TD_SNIFF_SNAPSHOT;
	/* a UTF-8 byte order mark is skipped, as the trace reader skips it; a part of one is
	 * no JSON */
	while (!s->started && len) {
		if (*p != bom[s->nbom]) {
			s->started = 1;
			if (s->nbom)
				return s->kind = TD_SNIFF_OTHER;
			break;
		}
		p++;
		len--;
		s->started = ++s->nbom == 3;
	}
	if (len || end)
		parse(s, p, len);
	return s->kind;
}

const char *td_sniff_schema(const struct td_sniffer *s)
{
	return s->schema;
}

void td_sniff_free(struct td_sniffer *s)
{
	if (!s)
		return;
	yajl_free(s->h);
	free(s);
}
