/* SPDX-License-Identifier: MIT */
/* The replay's side tables (struct td_rp_side, replay/replay.h): entries kept by node, then
 * ref; appended, ordered, and a node's entry found. Below every other file of replay/. */
#include "common/sort.h"
#include "replay/internal.h"
#include "replay/replay.h"

const struct td_rp_side *td_rp_side_of(const struct td_vec *v, uint32_t k)
{
	const struct td_rp_side *s = v->data;
	size_t lo;

	TD_LOWER_BOUND(lo, v->len, s[mid].node < k);
	return lo < v->len && s[lo].node == k ? &s[lo] : NULL;
}

void td_rp_add_side(struct td_vec *v, uint32_t node, uint32_t ref, int64_t val, int64_t w)
{
	struct td_rp_side *s = td_vec_push(v);
	s->node = node;
	s->ref = ref;
	s->v = val;
	s->w = w;
}

#define SIDE_LESS(x, y) ((x)->node != (y)->node ? (x)->node < (y)->node : (x)->ref < (y)->ref)
TD_DEFINE_SORT(sort_side, struct td_rp_side, SIDE_LESS)

void td_rp_sort_side(struct td_vec *v)
{
	sort_side(v->data, v->len);
}
