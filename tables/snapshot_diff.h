/* SPDX-License-Identifier: MIT */
/* Two caching-allocator snapshots compared (`tracedoc memory A B`), device by device: the
 * peaks, allocated and reserved, each replayed over its trace (tables/snapshot.h), and the
 * allocation sites whose live bytes at the peak changed, the largest change first. Sites are
 * matched by their text ("train.py(42): forward"). Library code: never prints. */
#ifndef TD_TABLES_SNAPSHOT_DIFF_H
#define TD_TABLES_SNAPSHOT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "tables/snapshot.h"

struct td_snap_change {
	const char *site;          /* in A's or B's strings: valid while both are */
	int64_t a, b;              /* live at the peak in A, in B (0: none there) */
	uint64_t blocks_a, blocks_b;
};

struct td_snap_devdiff {
	int32_t device;
	const struct td_snap_dev *a, *b; /* NULL: the device is not in that snapshot */
	struct td_snap_change *ch; /* every site whose bytes at the peak differ: the largest
				    * |b - a| first, ties by site text */
	size_t nch;
};

struct td_snap_diff {
	struct td_snap_devdiff *dev; /* by device id: every device of A or B */
	size_t ndev;
};

/* out = A against B (both kept alive while out is used). */
void td_snapshot_diff(const struct td_snapshot *a, const struct td_snapshot *b,
		      struct td_snap_diff *out);
void td_snap_diff_free(struct td_snap_diff *d);

#endif
