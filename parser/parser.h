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

/* Like td_parser_feed() for a chunk whose newlines were already counted (on another thread,
 * with td_scan_lines()): `lines` newlines, the last one at byte `last_nl` of the chunk
 * (ignored when lines is 0). */
int td_parser_feed_counted(struct td_parser *p, const void *buf, size_t len, uint64_t lines,
			   size_t last_nl, struct td_error *err);

/* Whether the whitespace between tokens is left out before yajl reads the input (by default
 * where that pays: parser/scan.h). The model and any error are the same either way. */
void td_parser_set_squeeze(struct td_parser *p, int on);

/* Ends the input. A document cut short (a truncated file) is not an error: the trace is marked
 * partial, keeping every complete event, and 0 is returned. An input with no JSON value at all,
 * or one that is not a trace, is TD_EPARSE / TD_EFORMAT. */
int td_parser_finish(struct td_parser *p, struct td_error *err);

/* --- split-parallel reading (parser/split.c) -------------------------------------------------
 * A worker parses one block of the events array into a shadow trace (its scalars: layout,
 * counts, partial state) and ships the raw records to sink in order, for one model thread. */
#define TD_BATCH_BYTES ((size_t)1 << 20) /* records are shipped in batches of this size */
/* sink(ctx, full, len, want): full (len bytes of records; len 0: an unused buffer) is the
 * sink's now; with want, it returns an empty TD_BATCH_BYTES buffer. A record larger than a
 * batch is shipped alone, in a buffer of its own size. piece: a buffer an earlier worker's
 * td_parser_trim() gave back (the parser's now), or NULL for a new one. */
struct td_parser *td_parser_new_worker(struct td_trace *shadow,
				       unsigned char *(*sink)(void *ctx, unsigned char *full,
							      size_t len, int want),
				       void *ctx, unsigned char *piece);
/* After a worker's block is verified: ships what it holds and frees the parse state, keeping
 * what td_parser_merge() needs. Returns its piece buffer (the caller's now, free() or handed to
 * the next worker: a block's parser would map and fault in a fresh one, the size of a mapping,
 * a thousand times a GB), or NULL. */
unsigned char *td_parser_trim(struct td_parser *p);
/* Puts a worker where a block at absolute byte `offset` starts: inside the events array
 * (the document's opening parsed first), `lines` newlines and the line starting at byte
 * line_start before it, the input's bytes just before it being before[0..before_len). */
void td_parser_prime(struct td_parser *p, int array_layout, uint64_t offset, uint64_t lines,
		     uint64_t line_start, const void *before, size_t before_len);
/* 1 when the parser stands between two elements of the events array (a verified cut). */
int td_parser_at_boundary(const struct td_parser *p);
/* Ships the records held back. */
void td_parser_flush(struct td_parser *p);
/* Ends the document on the last block's worker, as td_parser_finish() without building
 * (events_before: the events the earlier blocks hold, for the partial message). */
int td_parser_finish_worker(struct td_parser *p, uint64_t events_before, struct td_error *err);
/* Applies n workers' deferred data (devices, unit, trace name, backend, counts), in block
 * order, to t; add interns a string (on the model thread). */
void td_parser_merge(struct td_parser *const *w, size_t n, struct td_trace *t,
		     void (*add)(void *ctx, const char *name, uint32_t len, uint32_t *id), void *ctx);

#endif
