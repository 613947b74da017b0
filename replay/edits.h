/* SPDX-License-Identifier: MIT */
/* What replay/edits.c gives the replay (replay/sim.c): the overrides of a replay's times made
 * from a fix's edits, and the flags it leaves on each node. Not an interface. */
#ifndef TD_REPLAY_EDITS_H
#define TD_REPLAY_EDITS_H

#include <stddef.h>

#include "replay/replay.h"

/* what the edits did to a node (td_rp_times.flag); F_UNWAIT and F_WARM mark host calls only,
 * so a GPU op reuses their bits for what TD_RP_SIDE did to it */
enum { F_REMOVED = 1, F_UNWAIT = 2, F_COST = 4, F_FUSED = 8, F_GAP = 16, F_PINNED = 32,
       F_ANCHOR = 64, F_WARM = 128 };
#define F_SIDE F_UNWAIT     /* op: moved to a side stream */
#define F_AFTER_SIDE F_WARM /* op: the first after moved copies on its stream */
/* and F_FUSED marks GPU ops only, so a host call reuses it: the launch of an op fused into the
 * one before, which costs nothing and waits for nothing - as an own cost of 0 would, without
 * an over entry per launch (a fusion edits hundreds of thousands of them) */
#define F_FREE F_FUSED
#define F_COSTED (F_COST | F_FREE) /* host: its own cost set, no wait */
/* F_ANCHOR marks GPU ops only, so a host call reuses it: its join to another thread's burst cut
 * (TD_RP_UNJOIN) */
#define F_NOJOIN F_ANCHOR

/* Fills out's overrides (its flags, over, anchors, sides, tails, gate_off; ready and cleared
 * for g) from the edits pre[0..npre), then edits[0..nedits): over and anchors ordered by node,
 * sides as the replay follows them. */
void td_rp_edit_times(const struct td_replay *g, const struct td_rp_edit *pre, size_t npre,
		      const struct td_rp_edit *edits, size_t nedits, struct td_rp_times *out);

#endif
