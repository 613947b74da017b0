/* SPDX-License-Identifier: MIT */
/* Grouping rows by a 64-bit key (two ids side by side): an open-addressing map from key to the
 * row index, rows numbered in the order their key first came. */
#ifndef TD_TABLES_GROUPS_H
#define TD_TABLES_GROUPS_H

#include <stddef.h>
#include <stdint.h>

struct td_groups {
	uint64_t *keys;            /* key + 1; 0 marks an empty slot */
	uint32_t *idx;
	size_t cap, n;
};

/* The row of (a, b): an existing one, or the next number (n grows) with *added set. */
uint32_t td_group(struct td_groups *g, uint32_t a, uint32_t b, int *added);
void td_groups_free(struct td_groups *g);

#endif
