/* SPDX-License-Identifier: MIT */
/* Key matching for the trace reader (private to parser/): KEQ compares a token with a literal;
 * td_tokens_key (parser/keys.c) is yajl's map-key callback, which sets the parser's current
 * key. */
#ifndef TD_PARSER_KEYS_H
#define TD_PARSER_KEYS_H

#include <stddef.h>
#include <string.h>

#define KEQ(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), lit, sizeof(lit) - 1) == 0)

/* yajl's map-key callback (ctx: the struct td_parser): the key's enum, in its context */
int td_tokens_key(void *ctx, const unsigned char *s, size_t n);

#endif
