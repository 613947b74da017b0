/* SPDX-License-Identifier: MIT */
/* The parser's API (parser/parser.h) for the sequential reader and the split reader's workers
 * (parser/split.c), which run the same stages on blocks: a parser made, primed, finished and
 * merged. The records it makes go their way through parser/handoff.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/utf8.h"
#include "parser/builder.h"
#include "parser/num.h"
#include "parser/parser.h"
#include "parser/parser_state.h"
#include "parser/scan.h"
#include "parser/trace.h"

/* --- public API -------------------------------------------------------------------------- */

static struct td_parser *parser_new(struct td_trace *t, unsigned char *piece)
{
	struct td_parser *p = td_calloc(1, sizeof(*p));

	p->t = t;
	p->h = yajl_alloc(&td_token_callbacks, NULL, p);
	if (!p->h) {
		free(piece);
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
	p->mbuf = piece ? piece : td_malloc(PIECE_MAX + 128);
	return p;
}

struct td_parser *td_parser_new(struct td_trace *t)
{
	return parser_new(t, NULL);
}

struct td_parser *td_parser_new_threaded(struct td_trace *t)
{
	struct td_parser *p = td_parser_new(t);

	if (!p)
		return NULL;
	td_parser_start_model(p);
	return p;
}

void td_parser_free(struct td_parser *p)
{
	size_t i;

	if (!p)
		return;
	td_parser_stop_model(p);
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

static void intern_to_builder(void *ctx, const char *name, uint32_t len, uint32_t *id)
{
	*id = td_builder_intern(ctx, name, len);
}

/* After the builder has seen every event: what this thread kept aside. */
static void apply_deferred(struct td_parser *p)
{
	struct td_parser *one[1];

	td_parser_stop_model(p);
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
				       void *ctx, unsigned char *piece)
{
	struct td_parser *p = parser_new(shadow, piece);

	if (!p)
		return NULL;
	p->sink = sink;
	p->sink_ctx = ctx;
	return p;
}

unsigned char *td_parser_trim(struct td_parser *p)
{
	unsigned char *piece = p->mbuf;

	td_parser_flush(p);
	if (p->h)
		yajl_free(p->h);
	p->h = NULL;
	free(p->sbuf);
	p->sbuf = NULL;
	p->sbuf_cap = 0;
	p->mbuf = NULL;
	return piece;
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
	td_feed_remember_tail(p, before, before_len);
}

int td_parser_at_boundary(const struct td_parser *p)
{
	return !p->failed && !p->scan.in_str && !p->skipping && !p->event_depth && p->depth >= 1 &&
	       ctx_at(p, p->depth) == C_EVENTS;
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
		td_feed_locate(p, 0, err);
		return TD_EPARSE;
	}
	if (st != yajl_status_ok && p->failed)
		return td_feed_yajl_failure(p, err);
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
		return td_feed_yajl_failure(p, err);
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
