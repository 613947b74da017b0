/* SPDX-License-Identifier: MIT */
/* Output helpers shared by the commands: durations for people, names escaped for a terminal,
 * JSON through yajl_gen with invalid UTF-8 replaced, and atomic -o FILE. */
#ifndef TD_DIAGNOSE_OUT_H
#define TD_DIAGNOSE_OUT_H

#include <stdint.h>
#include <stdio.h>
#include <yajl/yajl_gen.h>

/* Names (marked, common/fmt.h) are shortened in text to at most this many bytes. */
#define OUT_NAME_MAX 60

/* Writes text for Markdown (a table cell or a paragraph): nothing from a trace may open HTML,
 * end a table cell, start code or emphasis, mention anyone, render as math or break the line;
 * marked names become code spans; invalid UTF-8 becomes U+FFFD. */
void out_md(FILE *f, const char *s);
/* Writes the UTF-8 character at p (n bytes left), U+FFFD for an invalid byte, or a C1 or bidi
 * control as \uNNNN (common/utf8.h); returns the bytes consumed. */
size_t out_utf8_char(FILE *f, const unsigned char *p, size_t n);
/* The entity c is written as in HTML or XML text and attribute values: &amp; &lt; &gt; &quot;
 * and for ' &apos; (xml) or &#39; (HTML, which had no &apos; before HTML5); NULL when c stands
 * for itself. */
const char *out_markup_entity(unsigned char c, int xml);
/* Writes s with control bytes and invalid UTF-8 shown as \xNN, cut to max characters with
 * "..." (max 0 = no limit); marked names are shortened in the middle to fit. */
void out_text_name(FILE *f, const char *s, size_t max);

/* Writes s word-wrapped at width columns, continuation lines indented by indent; col is the
 * column the cursor is at. A name is one word, shortened; everything is escaped as above. */
void out_text_wrap(FILE *f, const char *s, int col, int indent, int width);

/* yajl_gen conveniences; out_json_str drops the name marks. */
yajl_gen out_json_new(FILE *f);
void out_json_key(yajl_gen g, const char *k);
void out_json_str(yajl_gen g, const char *s);
void out_json_int(yajl_gen g, int64_t v);
void out_json_fixed(yajl_gen g, double v, int decimals);
void out_json_bool(yajl_gen g, int v);
/* a key and its value, in one call */
void out_json_kint(yajl_gen g, const char *k, int64_t v);
void out_json_kstr(yajl_gen g, const char *k, const char *s);
void out_json_kbool(yajl_gen g, const char *k, int v);
void out_json_kfixed(yajl_gen g, const char *k, double v, int decimals);
/* the key and s, or null when s is NULL */
void out_json_kstr_or_null(yajl_gen g, const char *k, const char *s);
/* the key, then an array or a map opened under it */
void out_json_karray(yajl_gen g, const char *k);
void out_json_kmap(yajl_gen g, const char *k);
/* the end of a document out_json_new began with a map: the map closed, g freed, the line
 * ended on f */
void out_json_end(yajl_gen g, FILE *f);

/* An output stream: stdout, or a temporary file beside `path` renamed over it on success. */
struct out_file {
	FILE *f;
	char *path, *tmp;
	int direct;  /* not a regular file: written in place */
};
int out_open(struct out_file *o, const char *path);
/* Closes; renames into place when ok, else removes the temporary. Returns 0 or -1 (errno). */
int out_close(struct out_file *o, int ok);

/* 1 when colour should be used on f (a terminal, NO_COLOR unset). */
int out_use_color(FILE *f);

#endif
