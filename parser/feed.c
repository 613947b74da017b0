/* SPDX-License-Identifier: MIT */
/* Bytes to tokens: a chunk of the input is scanned (strings followed across chunks, a string
 * past TD_STRING_MAX cut before yajl sees it, whitespace between tokens squeezed out where that
 * pays) and handed to yajl; an error's line, column and byte are found here, in the input's own
 * terms. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
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

/* --- positions and errors ---------------------------------------------------------------- */

void td_feed_remember_tail(struct td_parser *p, const unsigned char *b, size_t n)
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
void td_feed_locate(struct td_parser *p, size_t k, struct td_error *err)
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

/* the first byte of the range from k on that is not whitespace */
static size_t skip_ws(const struct td_parser *p, size_t k)
{
	while (k < p->chunk_len && (p->chunk[k] == ' ' || p->chunk[k] == '\t' ||
				    p->chunk[k] == '\n' || p->chunk[k] == '\r'))
		k++;
	return k;
}

/* yajl's errors that leave the byte it could not take unconsumed */
static int stops_at_byte(const char *m)
{
	return strstr(m, "after key and value") || strstr(m, "comment") ||
	       strstr(m, "invalid string in json") || strstr(m, "malformed number");
}

int td_feed_yajl_failure(struct td_parser *p, struct td_error *err)
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
	if (p->code == TD_EPARSE && p->top_done && strstr(err->msg, "trailing garbage")) {
		/* yajl consumes a trailing token but not a comment's '/': the garbage is the first
		 * byte after the document that is not whitespace, whatever it is */
		at = p->doc_end > p->offset ? (size_t)(p->doc_end - p->offset) : 0;
		at = skip_ws(p, at);
	} else if (p->code == TD_EPARSE && at <= p->chunk_len &&
		   (at > 0 || stops_at_byte(err->msg))) {
		/* at 0 too, for a byte it could not take: the range may begin with whitespace that
		 * a squeeze left out (yajl then stops at 0) and the plain read steps over */
		int at_byte = stops_at_byte(err->msg);
		at = range_index(p, at_byte ? at : at - 1);
		/* the byte it could not take is never whitespace: a squeezed range has none to
		 * point at, so neither does the plain one (the same position either way) */
		if (at_byte)
			at = skip_ws(p, at);
	} else if (at > 0)
		at = range_index(p, at - 1) + 1; /* just after what was consumed */
	td_feed_locate(p, at, err);
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
		return td_feed_yajl_failure(p, err);
	if (lines) {
		p->lines += lines;
		p->line_start = p->offset + last_nl + 1;
	}
	p->chunk0 = NULL;
	p->chunk0_len = 0;
	td_feed_remember_tail(p, buf, len);
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
