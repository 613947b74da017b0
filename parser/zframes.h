/* SPDX-License-Identifier: MIT */
/* zstd input of many frames (the collector writes a frame per CUPTI buffer, pzstd one per
 * chunk) decoded on several threads, handed out in order. Only small frames are decoded here:
 * complete within TD_ZF_LOOKAHEAD compressed bytes and at most TD_ZF_FRAME_MAX decoded. At the
 * first frame that is not (a file of one large frame, a truncated or a corrupt one) the rest of
 * the stream goes back to the caller's streaming decoder from that frame's first byte, so
 * what it yields, its errors and their positions, and truncation are a sequential read's. */
#ifndef TD_PARSER_ZFRAMES_H
#define TD_PARSER_ZFRAMES_H

#include <stddef.h>
#include <sys/types.h>

#define TD_ZF_LOOKAHEAD ((size_t)4 << 20)
#define TD_ZF_FRAME_MAX ((size_t)32 << 20)
#define TD_ZF_REST (-1000) /* td_zf_next: the rest is the streaming decoder's (td_zf_rest) */

struct td_error;
struct td_zframes;

/* Starts `threads` decoders on the zstd stream that fd reads on, `unit` bytes per read (the
 * caller's own read size, so its reads begin where they would have); `have` holds the stream's
 * first bytes, already read (eof: all of it). NULL when no thread starts. */
struct td_zframes *td_zf_start(int threads, int fd, size_t unit, const unsigned char *have,
			       size_t have_len, int eof);
/* The next decoded bytes, in *out until the next call: their count, 0 at the end of the
 * stream, TD_ZF_REST, or TD_EIO with err filled (a read error). */
ssize_t td_zf_next(struct td_zframes *z, const unsigned char **out, struct td_error *err);
/* After TD_ZF_REST: the bytes read and not decoded here, from stream offset *off (the
 * caller owns *buf; read on from fd after them). */
void td_zf_rest(struct td_zframes *z, unsigned char **buf, size_t *len, unsigned long long *off);
/* Compressed bytes of the frames handed out. */
unsigned long long td_zf_consumed(const struct td_zframes *z);
/* Stops the threads and frees everything (any time). */
void td_zf_free(struct td_zframes *z);

#endif
