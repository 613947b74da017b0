/* SPDX-License-Identifier: MIT */
/* The rules' ids: what a config may name (its suppressions), and the nearest id to a misspelt
 * one. The config knows the rules by these names alone; rules/report.c's registry lists the
 * rules in the same order (tests/test_rules.c checks that the two agree). */
#include <stdint.h>
#include <string.h>

#include "config/config.h"

const char *const td_rule_ids[] = {
	"warmup", "startup", "untraced-wait", "dataloader", "communication", "element-loop", "sync-stall", "transfer",
	"allocator", "small-kernels", "gpu-idle", "memory", "gpu-bound", "precision",
	NULL,
};

int td_rule_known(const char *id)
{
	size_t i;

	for (i = 0; td_rule_ids[i]; i++)
		if (!strcmp(td_rule_ids[i], id))
			return 1;
	return 0;
}

/* edit distance, case and '_' / '-' / ' ' folded */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64], prev, tmp;

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			char x = a[i - 1], y = b[j - 1];
			size_t cost;
			x = (char)(x == '_' || x == ' ' ? '-' : x >= 'A' && x <= 'Z' ? x + 32 : x);
			y = (char)(y == '_' || y == ' ' ? '-' : y >= 'A' && y <= 'Z' ? y + 32 : y);
			cost = x != y;
			tmp = row[j];
			row[j] = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
			if (prev + cost < row[j])
				row[j] = prev + cost;
			prev = tmp;
		}
	}
	return row[lb];
}

const char *td_rule_nearest(const char *id)
{
	size_t i, best = SIZE_MAX, d;
	const char *near = NULL;

	for (i = 0; td_rule_ids[i]; i++)
		if ((d = distance(id, td_rule_ids[i])) < best) {
			best = d;
			near = td_rule_ids[i];
		}
	return best <= 3 ? near : NULL;
}
