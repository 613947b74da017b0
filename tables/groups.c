/* SPDX-License-Identifier: MIT */
#include "tables/groups.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

uint32_t td_group(struct td_groups *g, uint32_t a, uint32_t b, int *added)
{
	uint64_t key = ((uint64_t)a << 32 | b) + 1;
	size_t i;

	if ((g->n + 1) * 2 > g->cap) {
		size_t nc = g->cap ? g->cap * 2 : 256, k;
		uint64_t *nk = td_calloc(nc, sizeof(*nk));
		uint32_t *ni = td_malloc(nc * sizeof(*ni));
		for (k = 0; k < g->cap; k++)
			if (g->keys[k]) {
				size_t j = mix(g->keys[k]) & (nc - 1);
				while (nk[j])
					j = (j + 1) & (nc - 1);
				nk[j] = g->keys[k];
				ni[j] = g->idx[k];
			}
		free(g->keys);
		free(g->idx);
		g->keys = nk;
		g->idx = ni;
		g->cap = nc;
	}
	for (i = mix(key) & (g->cap - 1); g->keys[i]; i = (i + 1) & (g->cap - 1))
		if (g->keys[i] == key) {
			*added = 0;
			return g->idx[i];
		}
	g->keys[i] = key;
	g->idx[i] = (uint32_t)g->n;
	*added = 1;
	return (uint32_t)g->n++;
}

void td_groups_free(struct td_groups *g)
{
	free(g->keys);
	free(g->idx);
	memset(g, 0, sizeof(*g));
}
