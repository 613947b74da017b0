/* SPDX-License-Identifier: MIT */
/* UTF-8 validation: trace names are kept byte for byte, and escaped where output needs valid
 * UTF-8. */
#ifndef TD_COMMON_UTF8_H
#define TD_COMMON_UTF8_H

#include <stddef.h>

/* 1 when s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
int td_utf8_valid(const char *s, size_t n);
/* Length of the valid UTF-8 sequence at s (1..4), or 0 when the byte at s starts none. */
size_t td_utf8_seq(const unsigned char *s, size_t n);

/* A malloc'd copy of s with each byte that starts no valid sequence replaced by U+FFFD. */
char *td_utf8_fix(const char *s);
/* s[0..n) into out (room for n * 3 bytes) as td_utf8_fix has it, every byte in drop (a
 * string, NULL: none) left out; no NUL added. Returns the length written. */
size_t td_utf8_fix_into(char *out, const char *s, size_t n, const char *drop);

/* The code point of the k-byte sequence at p when it must not reach a terminal raw: a C1
 * control (U+0080-U+009F: U+009B is a CSI) or a bidi control (U+061C, U+200E-U+200F,
 * U+202A-U+202E, U+2066-U+2069: "Trojan Source"); else 0. */
unsigned td_utf8_unsafe(const unsigned char *p, size_t k);
/* Writes s[0..n) into buf (cap > 0, always NUL-terminated, cut to fit) with every C0 control,
 * DEL and invalid byte as \xNN and every C1 or bidi control as \uNNNN. Returns buf. */
char *td_utf8_escape_controls(char *buf, size_t cap, const char *s, size_t n);

/* The n bytes as a message quotes them: \n, \t, and every byte outside printable ASCII as
 * \xNN, cut to fit cap (> 0). Returns the length written. */
size_t td_quote_bytes(char *buf, size_t cap, const void *bytes, size_t n);

#endif
