/* SPDX-License-Identifier: MIT */
#include "common/strtab.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

struct chunk_hdr {
	struct chunk_hdr *next;
};

uint32_t td_hash_bytes(const char *s, size_t len)
{
	/* FNV-1a over 8-byte words, then a murmur finalizer: cheap and good enough for names. */
	uint64_t h = 0xcbf29ce484222325ull ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

void td_strtab_init(struct td_strtab *st)
{
	memset(st, 0, sizeof(*st));
	/* small to start (a summary holds a few strings; a job holds thousands of summaries),
	 * doubling as it fills */
	st->nslots = 64;
	st->slots = td_calloc(st->nslots, sizeof(uint32_t));
	st->cap = 32;
	st->strs = td_malloc(st->cap * sizeof(*st->strs));
	st->lens = td_malloc(st->cap * sizeof(*st->lens));
	st->hashes = td_malloc(st->cap * sizeof(*st->hashes));
	st->strs[0] = "";
	st->lens[0] = 0;
	st->hashes[0] = 0;
}

void td_strtab_free(struct td_strtab *st)
{
	struct chunk_hdr *c = st->chunks;

	while (c) {
		struct chunk_hdr *n = c->next;
		free(c);
		c = n;
	}
	free(st->slots);
	free(st->strs);
	free(st->lens);
	free(st->hashes);
	memset(st, 0, sizeof(*st));
}

static char *store(struct td_strtab *st, const char *s, size_t len)
{
	char *d;

	if (st->chunk_used + len + 1 > st->chunk_size) {
		size_t size = st->chunk_size ? st->chunk_size * 2 : 1024;
		struct chunk_hdr *c;

		if (size > 64 * 1024)
			size = 64 * 1024;
		if (len + 1 > size / 4)
			size = len + 1 + sizeof(struct chunk_hdr);
		c = td_malloc(sizeof(struct chunk_hdr) + size);
		c->next = st->chunks;
		st->chunks = c;
		st->chunk = (char *)(c + 1);
		st->chunk_size = size;
		st->chunk_used = 0;
	}
	d = st->chunk + st->chunk_used;
	memcpy(d, s, len);
	d[len] = '\0';
	st->chunk_used += len + 1;
	st->bytes += len + 1;
	return d;
}

static void grow(struct td_strtab *st)
{
	uint32_t n = st->nslots * 2, i;
	uint32_t *slots = td_calloc(n, sizeof(uint32_t));

	for (i = 1; i <= st->count; i++) {
		uint32_t j = st->hashes[i] & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = i;
	}
	free(st->slots);
	st->slots = slots;
	st->nslots = n;
}

/* The slot of s (hash h): its id there, or the empty slot where it would go (id 0). */
/* (inlined: td_strtab_intern is on the reader's path for every name) */
static inline __attribute__((always_inline)) uint32_t
find_slot(const struct td_strtab *st, const char *s, size_t len, uint32_t h, uint32_t *slot)
{
	uint32_t j = h & (st->nslots - 1), id;

	while ((id = st->slots[j]) != 0) {
		if (st->hashes[id] == h && st->lens[id] == len && memcmp(st->strs[id], s, len) == 0)
			break;
		j = (j + 1) & (st->nslots - 1);
	}
	*slot = j;
	return id;
}

uint32_t td_strtab_find(const struct td_strtab *st, const char *s, size_t len)
{
	uint32_t slot;

	return find_slot(st, s, len, td_hash_bytes(s, len), &slot);
}

uint32_t td_strtab_intern(struct td_strtab *st, const char *s, size_t len)
{
	uint32_t h = td_hash_bytes(s, len), j;
	uint32_t id = find_slot(st, s, len, h, &j);

	if (id)
		return id;
	if (st->count + 1 >= st->cap) {
		st->cap *= 2;
		st->strs = td_realloc(st->strs, st->cap * sizeof(*st->strs));
		st->lens = td_realloc(st->lens, st->cap * sizeof(*st->lens));
		st->hashes = td_realloc(st->hashes, st->cap * sizeof(*st->hashes));
	}
	id = ++st->count;
	st->strs[id] = store(st, s, len);
	st->lens[id] = (uint32_t)len;
	st->hashes[id] = h;
	st->slots[j] = id;
	if (st->count * 2 > st->nslots)
		grow(st);
	return id;
}

size_t td_name_stem_len(const char *s, size_t len)
{
	size_t k = len;

	while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9')
		k--;
	return k < len && k > 0 && s[k - 1] == '#' ? k : len;
}
