/* SPDX-License-Identifier: MIT */
/* The replay's graph (replay/replay.h), its edges of what lies outside the device's streams:
 * copies over the host link (pageable ones, the link's pinned bandwidth, one copy engine per
 * direction) and the host's waits for a producer outside the trace (td_replay_gate). */
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/internal.h"
#include "replay/links.h"
#include "replay/replay.h"

#define PIN_MIN_BYTES (1u << 20) /* smaller copies are their fixed cost more than bandwidth */

static uint64_t bytes_of(const struct td_replay *g, uint32_t k)
{
	const struct td_event *e = td_rp_event(g, k);
	return e->aux < g->t->xfer_bytes.len ? TD_VEC_AT(&g->t->xfer_bytes, uint64_t, e->aux) : 0;
}

struct copy_key {
	int64_t ts;
	uint32_t key, node; /* device * 2 + direction */
};
#define COPY_LESS(x, y)                                                                      \
	((x)->key != (y)->key ? (x)->key < (y)->key : (x)->ts != (y)->ts ? (x)->ts < (y)->ts     \
							 : (x)->node < (y)->node)
TD_DEFINE_SORT(sort_copies, struct copy_key, COPY_LESS)

/* The copies over the host link: pageable ones marked, the link's pinned bandwidth per device
 * and direction from the pinned copies of 1 MB or more, and each copy's edge from the one
 * before it on its engine (another stream's, ended before it started in the trace). */
void td_rp_link_copies(struct td_replay *g, const uint8_t *role)
{
	struct td_vec v;
	struct copy_key *c;
	uint64_t *bytes = td_calloc(2 * g->ndev + 1, sizeof(uint64_t));
	int64_t *time = td_calloc(2 * g->ndev + 1, sizeof(int64_t));
	uint32_t *n = td_calloc(2 * g->ndev + 1, sizeof(uint32_t));
	size_t k, i;

	td_vec_init(&v, sizeof(struct copy_key));
	for (k = g->nhost; k < g->n; k++) {
		const struct td_event *e = td_rp_event(g, (uint32_t)k);
		uint8_t ro = role[e->name];
		uint32_t key;
		if (e->kind != TD_K_MEMCPY || !(ro & (TD_RP_OP_HTOD | TD_RP_OP_DTOH)))
			continue;
		key = (uint32_t)td_rp_dev_of(g, (uint32_t)k) * 2 + ((ro & TD_RP_OP_DTOH) ? 1 : 0);
		if (ro & TD_RP_OP_DTOH)
			g->fl[k] |= TD_RPF_DTOH;
		if (ro & TD_RP_OP_PAGEABLE) {
			g->fl[k] |= TD_RPF_PAGEABLE;
			g->pageable_copies++;
		}
		if ((ro & TD_RP_OP_PINNED) && bytes_of(g, (uint32_t)k) >= PIN_MIN_BYTES &&
		    td_ev_dur(e) > 0) {
			bytes[key] += bytes_of(g, (uint32_t)k);
			time[key] += td_ev_dur(e);
			n[key]++;
		}
		c = td_vec_push(&v);
		c->ts = e->ts;
		c->key = key;
		c->node = (uint32_t)k;
	}
	for (i = 0; i < 2 * g->ndev; i++)
		if (n[i] >= 3) {
			g->dev[i / 2].pinned[i % 2] = (int64_t)(bytes[i] * 1000 / (uint64_t)time[i]);
			g->dev[i / 2].pinned_measured |= (uint8_t)(1u << (i % 2));
		}
	c = v.data;
	sort_copies(c, v.len);
	for (i = 1; i < v.len; i++) {
		uint32_t a = c[i - 1].node, b = c[i].node;
		if (c[i - 1].key != c[i].key || td_rp_track(g, a) == td_rp_track(g, b) ||
		    end_of(g, a) > ts_of(g, b) + SLACK_NS)
			continue; /* another engine, the same stream's order, or sharing it */
		td_rp_add_side(&g->engine, b, a, 0, TD_RP_NOGAP);
		g->fl[b] |= TD_RPF_ENGINE;
		g->engine_edges++;
	}
	td_rp_sort_side(&g->engine);
	td_vec_free(&v);
	free(bytes);
	free(time);
	free(n);
}

int64_t td_rp_pinned_time(const struct td_replay *g, size_t dev, int dtoh, uint64_t bytes,
			  int64_t measured)
{
	int64_t bw = dev < g->ndev ? g->dev[dev].pinned[dtoh ? 1 : 0] : 0, d;

	if (bw <= 0)
		return measured;
	d = (int64_t)(bytes * 1000 / (uint64_t)bw) + TD_RP_PIN_LAT_NS;
	return d < measured ? d : measured;
}

int64_t td_rp_pin_alloc_ns(uint64_t bytes)
{
	uint64_t size = 1;

	while (size < bytes && size < (UINT64_C(1) << 62))
		size <<= 1;
	return TD_RP_PIN_ALLOC_LAT_NS + (int64_t)(size / TD_RP_PIN_ALLOC_BPNS);
}

uint64_t td_rp_copy_bytes(const struct td_replay *g, uint32_t k)
{
	return bytes_of(g, k);
}

int64_t td_rp_pinned_dur(const struct td_replay *g, uint32_t k)
{
	const struct td_event *e = td_rp_event(g, k);

	if (!(g->fl[k] & TD_RPF_PAGEABLE))
		return td_ev_dur(e);
	return td_rp_pinned_time(g, (size_t)td_rp_dev_of(g, k), (g->fl[k] & TD_RPF_DTOH) != 0,
				 bytes_of(g, k), td_ev_dur(e));
}

/* --- producers outside the trace ---------------------------------------------------------- */

int td_replay_gate(struct td_replay *g, uint32_t track, int64_t from, int64_t to)
{
	uint32_t f, n, k;
	struct td_rp_side *s;
	size_t lo, i;

	if (track >= g->t->tracks.len || (f = g->track_first[track]) == TD_NONE)
		return -1;
	n = g->track_count[track];
	TD_LOWER_BOUND(lo, n, td_rp_event(g, f + (uint32_t)mid)->ts < to);
	if (lo == n)
		return -1;
	k = f + (uint32_t)lo;
	s = g->gates.data;
	TD_LOWER_BOUND(i, g->gates.len, s[mid].node < k);
	if (i < g->gates.len && s[i].node == k) { /* two waits before one call: the later */
		s[i].w = from > s[i].w ? from : s[i].w;
		return 0;
	}
	td_vec_push(&g->gates); /* kept by node: a few a step, inserted in place */
	s = g->gates.data;
	memmove(&s[i + 1], &s[i], (g->gates.len - 1 - i) * sizeof(*s));
	s[i] = (struct td_rp_side){k, TD_NONE, td_rp_event(g, k)->ts, from};
	g->fl[k] |= TD_RPF_GATE;
	return 0;
}
