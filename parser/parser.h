/* SPDX-License-Identifier: MIT */
/* Streaming reader for PyTorch-profiler / Kineto trace JSON (object or plain-array layout),
 * built on yajl's callback API: the document is never held in memory, only the model.
 *
 * Feed the uncompressed bytes in chunks of any size with td_parser_feed(), then call
 * td_parser_finish(). Errors carry the line, column and byte offset of the offending input. */
#ifndef TD_PARSER_PARSER_H
#define TD_PARSER_PARSER_H

#include <stddef.h>
#include <stdint.h>

struct td_trace;
struct td_error;
struct td_parser;

/* Creates a parser that adds events to `t` (initialised by the caller). */
struct td_parser *td_parser_new(struct td_trace *t);
/* The same, with the model built on a second thread while this one parses. td_parser_finish()
 * (or td_parser_free()) waits for it. Falls back to one thread if none can be started. */
struct td_parser *td_parser_new_threaded(struct td_trace *t);
void td_parser_free(struct td_parser *p);

/* Parses the next chunk. Returns 0, or TD_EPARSE (not JSON) / TD_EFORMAT (wrong shape) with
 * `err` filled; after an error the parser accepts no more input. */
int td_parser_feed(struct td_parser *p, const void *buf, size_t len, struct td_error *err);

/* Like td_parser_feed() for a chunk whose newlines were already counted (on another thread):
 * `lines` newlines, the last one at byte `last_nl` of the chunk (ignored when lines is 0). */
int td_parser_feed_counted(struct td_parser *p, const void *buf, size_t len, uint64_t lines,
			   size_t last_nl, struct td_error *err);
/* Counts the newlines in buf for td_parser_feed_counted(). */
uint64_t td_count_lines(const void *buf, size_t len, size_t *last_nl);

/* Ends the input. A document cut short (a truncated file) is not an error: the trace is marked
 * partial, keeping every complete event, and 0 is returned. An input with no JSON value at all,
 * or one that is not a trace, is TD_EPARSE / TD_EFORMAT. */
int td_parser_finish(struct td_parser *p, struct td_error *err);

#endif
