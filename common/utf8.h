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

#endif
