/* SPDX-License-Identifier: MIT */
/* The reader of a CUDA caching-allocator snapshot: torch.cuda.memory._snapshot() (the data
 * behind _dump_snapshot()'s pickle and pytorch.org/memory_viz) saved as JSON, streamed like a
 * trace (plain, gzip or zstd), into its model: per device the segments' sizes and the entries
 * of `device_traces` (alloc, free_requested, free_completed, segment_alloc, segment_free, oom),
 * and the blocks live at the end (`segments`), each with its site. tables/snapshot.h replays
 * the model. Library code: never prints. */
#ifndef TD_PARSER_SNAPSHOT_H
#define TD_PARSER_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"
#include "common/vec.h"

enum td_snap_act {
	TD_SNAP_OTHER, TD_SNAP_ALLOC, TD_SNAP_FREE_REQ, TD_SNAP_FREE_DONE, TD_SNAP_SEG_ALLOC,
	TD_SNAP_SEG_FREE, TD_SNAP_OOM,
};

struct td_snap_event {   /* one entry of a device's trace */
	uint64_t addr;
	int64_t size, time_us, device_free;
	uint32_t site;
	uint8_t act;         /* enum td_snap_act */
};

struct td_snap_block {   /* a block live at the snapshot */
	uint64_t addr;
	int64_t size;
	uint32_t site;
	int32_t device;
	size_t order;        /* its place in the file */
};

struct td_snap_devlog {  /* a device as read */
	int32_t device;
	int64_t reserved;
	uint64_t segments;
	int64_t largest_free; /* the largest inactive block at the snapshot */
	struct td_vec ev;    /* struct td_snap_event */
};

struct td_snap_doc {
	struct td_vec devs;   /* struct td_snap_devlog, by device; every device with live blocks */
	struct td_vec blocks; /* struct td_snap_block, by device, then in the order read */
	int has_traces;       /* device_traces recorded (_record_memory_history) */
	int expandable;       /* expandable segments on (allocator_settings, or a segment's) */
};

/* Reads the snapshot from in (parser/input.h; left open) into d; name is the file's name for
 * messages. A site (its text interned in strs: "train.py(42): forward") is the object's
 * innermost frame that is_user_frame() says is the user's, else its innermost Python frame,
 * else its innermost frame. Returns 0, or TD_EIO / TD_EFORMAT / TD_EPARSE with err filled
 * (file, line, column and byte of a JSON error) and d left empty. */
struct td_input;
int td_snap_doc_read(struct td_input *in, const char *name, struct td_strtab *strs,
		     int (*is_user_frame)(const char *frame), struct td_snap_doc *d,
		     struct td_error *err);
void td_snap_doc_free(struct td_snap_doc *d);

#endif
