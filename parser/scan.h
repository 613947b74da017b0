/* SPDX-License-Identifier: MIT */
/* The byte scan in front of yajl, 64 bytes at a time: the string state (quotes and runs of
 * backslashes, followed as simdjson does), newlines, and the whitespace between tokens that
 * yajl need not see. yajl's lexer spends about 20 instructions on each whitespace byte, and
 * Kineto writes its traces indented (15-55% of their bytes are whitespace outside strings);
 * handed only what it needs, yajl sees the same tokens in the same order.
 *
 * Which whitespace goes: a run outside strings whose previous byte is structural ({ } [ ] : ,)
 * or a quote. Two tokens are never joined ("1 2" stays), so yajl accepts and rejects exactly
 * the same input, at the same token. The rule depends on the bytes alone: every implementation
 * (AVX2, SSE2 + SSSE3, portable) drops the same bytes, and td_scan_index() maps a byte yajl
 * saw back to the input for error positions. */
#ifndef TD_PARSER_SCAN_H
#define TD_PARSER_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* What one block hands the next. */
struct td_scan {
	int in_str;        /* a string is open */
	uint64_t bs_run;   /* backslashes just before the next byte (the 64-byte scan keeps its parity) */
	uint64_t str_open; /* absolute offset of the open string's quote */
	uint64_t ws_seed;  /* 1: whitespace at the next byte follows a structural byte (dropped) */
};

/* Scans the whole 64-byte blocks of b[0..n) (n a multiple of 64), b[0] being at absolute
 * offset `at`. Stops after the first block at whose end an open string is over `max` bytes.
 * With out, appends the bytes yajl needs at out + *out_len (room for n + 64 more) and adds
 * their count to *out_len, and stops after `soft` bytes at the first block that ends between two tokens
 * (after a structural byte or a quote that closes a string, or whitespace that follows one),
 * so that no token is split where the input was not. Returns the bytes scanned. */
size_t td_scan_blocks(struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
		      uint64_t max, unsigned char *out, size_t *out_len, size_t soft);

/* The index in b of byte k of what td_scan_blocks() wrote for b[0..n), scanning from state
 * *s (not changed); past what the blocks kept, the bytes after n count as kept one for one. */
size_t td_scan_index(const struct td_scan *s, const unsigned char *b, size_t n, uint64_t at,
		     size_t k);

/* The newlines in buf[0..len), the last one at *last_nl (0 when none). */
uint64_t td_scan_lines(const void *buf, size_t len, size_t *last_nl);

/* 1 when the implementation in use squeezes for less time than yajl spends on the whitespace
 * (the SIMD ones; measured in bench/: yajl's loop over a whitespace byte is slow, the masks
 * and shuffles are fast). */
int td_scan_squeeze_pays(void);
/* Overrides that default for the whole process: 1 on, 0 off, -1 back to the default (for the
 * benchmark: TD_SQUEEZE=0|1). */
void td_scan_set_squeeze(int on);

/* The implementation in use: "avx2", "sse" or "portable". td_scan_use(name) selects one
 * (tests compare them); returns -1 when this CPU or build cannot run it. */
const char *td_scan_impl(void);
int td_scan_use(const char *name);

/* 8 bytes as a word whose low byte is b[0] */
static inline uint64_t td_load_le64(const unsigned char *b)
{
	uint64_t w;

	memcpy(&w, b, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* the high bit of each byte of x that equals c (exact: no false positives) */
static inline uint64_t td_bytes_eq(uint64_t x, unsigned char c)
{
	uint64_t y = x ^ (0x0101010101010101ull * c);
	uint64_t t = (y & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full;
	return ~(t | y | 0x7f7f7f7f7f7f7f7full);
}

#endif
