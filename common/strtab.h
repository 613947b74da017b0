/* SPDX-License-Identifier: MIT */
/* String interning. Each distinct byte string gets a small id; id 0 is "no string". Strings are
 * copied into chunks owned by the table and NUL-terminated; pointers returned by
 * strtab_str() stay valid until strtab_free(). Strings may hold any bytes, NUL included. */
#ifndef TD_COMMON_STRTAB_H
#define TD_COMMON_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct td_strtab {
	uint32_t *slots;     /* open addressing: id per slot, 0 = empty */
	uint32_t nslots;     /* power of two */
	uint32_t count;      /* number of strings, ids are 1..count */
	const char **strs;   /* by id */
	uint32_t *lens;      /* by id */
	uint32_t *hashes;    /* by id */
	uint32_t cap;
	char *chunk;         /* current storage chunk */
	size_t chunk_used, chunk_size;
	void *chunks;        /* list of chunks for freeing */
	size_t bytes;        /* total bytes stored */
};

void td_strtab_init(struct td_strtab *st);
void td_strtab_free(struct td_strtab *st);
/* Returns the id of `s[0..len)`, adding it when new. Never returns 0. */
uint32_t td_strtab_intern(struct td_strtab *st, const char *s, size_t len);
/* Returns the id of `s[0..len)` or 0 when it was never interned. */
uint32_t td_strtab_find(const struct td_strtab *st, const char *s, size_t len);
static inline const char *td_strtab_str(const struct td_strtab *st, uint32_t id)
{
	return id && id <= st->count ? st->strs[id] : "";
}
static inline uint32_t td_strtab_len(const struct td_strtab *st, uint32_t id)
{
	return id && id <= st->count ? st->lens[id] : 0;
}
uint32_t td_hash_bytes(const char *s, size_t len);
/* The length of s[0..len) without a trailing "#<digits>" (the numbering of names made once per
 * iteration: "ProfilerStep#41"), the '#' kept; len when it has none. */
size_t td_name_stem_len(const char *s, size_t len);

#endif
