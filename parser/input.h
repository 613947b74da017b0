/* SPDX-License-Identifier: MIT */
/* Trace input: a file or standard input ("-"), plain, gzip or zstd, detected by the magic
 * bytes rather than the suffix. Reads hand out uncompressed bytes. */
#ifndef TD_PARSER_INPUT_H
#define TD_PARSER_INPUT_H

#include <stddef.h>
#include <sys/types.h>

#include "parser/trace.h"

struct td_error;
struct td_input;

/* Opens `path` ("-" for stdin). Returns 0, or TD_EIO with err filled. */
int td_input_open(const char *path, struct td_input **out, struct td_error *err);
enum td_compression td_input_compression(const struct td_input *in);
/* Reads up to `cap` uncompressed bytes. Returns the count, 0 at the end, or a negative TD_E*
 * code with err filled (unreadable file, corrupt compressed data). */
ssize_t td_input_read(struct td_input *in, void *buf, size_t cap, struct td_error *err);
/* After the end: 1 when the compressed stream stopped before its end (a truncated file). */
int td_input_truncated(const struct td_input *in);
/* Compressed bytes consumed so far. */
unsigned long long td_input_raw_offset(const struct td_input *in);
void td_input_close(struct td_input *in);
/* Before the first read: a zstd input of many frames is decoded on `threads` threads
 * (parser/zframes.h); what it reads is the same. Anything else is read as before. */
void td_input_set_threads(struct td_input *in, int threads);
/* Gives back len uncompressed bytes already read (a sniff of the head of a pipe): the next
 * reads hand them out again, before the rest. They were counted against the limits once. */
void td_input_unread(struct td_input *in, const void *buf, size_t len);
/* Bytes after a gzip stream that are not another member: ignored, as gzip -d does. */
unsigned long long td_input_garbage(const struct td_input *in);

/* Limits on what an input decompresses to, for every later read: at most total bytes (0: no
 * limit), and past TD_INPUT_RATIO_FROM bytes at most ratio times the compressed bytes read (0:
 * no limit; real traces compress 10-50 times, a bomb of whitespace a thousand). */
#define TD_INPUT_RATIO_DEFAULT 500ull
#define TD_INPUT_RATIO_FROM (256ull << 20)
void td_input_set_limits(unsigned long long total, unsigned long long ratio);

#endif
