/* SPDX-License-Identifier: MIT */
/* A CUDA caching-allocator snapshot: torch.cuda.memory._snapshot() (the data behind
 * _dump_snapshot()'s pickle and pytorch.org/memory_viz) saved as JSON, streamed like a trace
 * (plain, gzip or zstd) and read by parser/snapshot.h. From `segments` (what is reserved, and
 * the blocks live at the end) and `device_traces` (alloc, free_requested, free_completed,
 * segment_alloc, segment_free, oom, with their frames) it replays allocated memory per device:
 * the peak, the allocation sites (innermost user Python frame) holding the most bytes there,
 * and what was live at each oom. Library code: never prints. */
#ifndef TD_TABLES_SNAPSHOT_H
#define TD_TABLES_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"
#include "tables/snapshot_cat.h"

#define TD_SNAP_SITES 10 /* sites listed at a peak or an oom */

struct td_snap_site {
	uint32_t site;             /* id in td_snapshot.strs: "train.py(42): forward" */
	int64_t bytes;
	uint64_t blocks;
};

/* what was live, by category (tables/snapshot_cat.h), and in each by the rule that inferred it */
struct td_snap_cats {
	struct {
		int64_t bytes;
		uint64_t blocks;
		int64_t rule_bytes[TD_SNAP_NRULE];
		uint64_t rule_blocks[TD_SNAP_NRULE];
	} c[TD_SNAP_NCAT];
};

struct td_snap_oom {
	size_t index;              /* its place in the device's trace (0-based) */
	int64_t time_us;           /* -1 when the entry has none */
	int64_t requested, device_free, allocated; /* allocated: live then, replayed */
	int64_t reserved;          /* reserved then: the snapshot's, less the segments mapped
				    * after it, plus those released after it */
	int64_t largest_free;      /* the largest free block at the snapshot (-1: none known) */
	int fragmented;            /* free memory (reserved but unallocated, and the device's)
				    * would hold the request, no block of it did */
	uint32_t site;             /* where the failed allocation came from */
	struct td_snap_site top[TD_SNAP_SITES];
	size_t ntop;
	struct td_snap_cats cats;  /* live then, by category */
};

struct td_snap_dev {
	int32_t device;
	int64_t reserved, allocated; /* at the snapshot: segments' sizes, live blocks' sizes */
	uint64_t segments, blocks;
	uint64_t events;           /* entries of its trace */
	int64_t peak, peak_time_us; /* allocated at most, replayed over the trace (-1: no time) */
	int64_t peak_reserved;     /* reserved at most, replayed: the segments mapped and
				    * released over the trace, from the snapshot's backwards */
	int64_t peak_entry;        /* the entry (0-based) after which it peaked; -1: at the start */
	int64_t start_allocated;   /* live when the trace begins */
	struct td_snap_site top[TD_SNAP_SITES]; /* the sites holding most at the peak */
	size_t ntop;
	struct td_snap_site *at_peak; /* every site live at the peak, the largest first, ties
				       * by site id (the top ones are top[]) */
	size_t nat_peak;
	struct td_snap_cats cats;  /* live at the peak, by category */
	struct td_snap_oom *ooms;
	size_t nooms;
	uint64_t unmatched_frees;  /* frees of blocks the replay did not know (counted, kept) */
};

struct td_snapshot {
	struct td_strtab strs;
	struct td_snap_dev *dev;   /* by device id */
	size_t ndev;
	int has_traces;            /* device_traces recorded (_record_memory_history) */
	int expandable;            /* expandable segments on */
};

/* A snapshot does not say how much memory its device has: given that (cap bytes, from the
 * user), the figures of d a device of cap bytes cannot hold, as TD_SNAP_OVER_* bits (0 when
 * cap <= 0 or none is above it). */
enum {
	TD_SNAP_OVER_RESERVED = 1, TD_SNAP_OVER_PEAK_RESERVED = 2, TD_SNAP_OVER_PEAK = 4,
	TD_SNAP_OVER_START = 8,
};
unsigned td_snap_over(const struct td_snap_dev *d, int64_t cap);

/* Reads the snapshot from in (parser/input.h; left open) and replays it; name is the file's
 * name for messages. Returns 0, or TD_EIO / TD_EFORMAT with err filled (file, line, column
 * and byte of a JSON error). */
struct td_input;
int td_snapshot_read(struct td_input *in, const char *name, struct td_snapshot *s,
		     struct td_error *err);
void td_snapshot_free(struct td_snapshot *s);

#endif
