/* SPDX-License-Identifier: MIT */
/* The edges the replay's graph (replay/graph.c) takes from the files below it: the copies over
 * the host link (replay/copies.c) and the launch queue (replay/queue.c). Not an interface. */
#ifndef TD_REPLAY_LINKS_H
#define TD_REPLAY_LINKS_H

#include <stdint.h>

#include "replay/replay.h"

/* The copies over the host link: pageable ones marked, the link's pinned bandwidth, each
 * copy's edge from the one before it on its engine (replay/copies.c). */
void td_rp_link_copies(struct td_replay *g, const uint8_t *role);
/* The launch queue: its depth per device and each launch's edge from the op that frees its
 * slot, where the trace shows the queue full (replay/queue.c). */
void td_rp_link_queue(struct td_replay *g);
/* The bytes a copy op moves (0: unknown). */
uint64_t td_rp_copy_bytes(const struct td_replay *g, uint32_t k);

#endif
