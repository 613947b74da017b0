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

/* An object's category hint (what its memory is: a parameter, a gradient...), from its frames,
 * user_metadata and compile_context through the reader's hint callback: the category in the
 * top 3 bits, the rule that said so in the low 5 (td_snap_hint_rule). Rule 0: no frames at all;
 * 1: frames, none telling; from 2, the lower rule wins where several frames tell. */
#define TD_SNAP_HINT(cat, rule) ((uint8_t)((unsigned)(cat) << 5 | (unsigned)(rule)))
static inline unsigned td_snap_hint_rule(uint8_t h) { return h & 31u; }
static inline unsigned td_snap_hint_cat(uint8_t h) { return h >> 5; }
enum td_snap_hint_of { TD_SNAP_HINT_FRAME, TD_SNAP_HINT_METADATA, TD_SNAP_HINT_COMPILE };

struct td_snap_event {   /* one entry of a device's trace */
	uint64_t addr;
	int64_t size, time_us, device_free;
	uint32_t site;
	uint8_t act;         /* enum td_snap_act */
	uint8_t hint;        /* TD_SNAP_HINT */
};

struct td_snap_block {   /* a block live at the snapshot */
	uint64_t addr;
	int64_t size;
	uint32_t site;
	int32_t device;
	size_t order;        /* its place in the file */
	uint8_t hint;        /* TD_SNAP_HINT */
};

enum td_snap_ann_kind { TD_SNAP_ANN_STEP, TD_SNAP_ANN_ZERO_GRAD };

struct td_snap_ann {     /* an external annotation kept: Optimizer.step / zero_grad's start or end */
	int32_t device;
	int64_t time_us;
	uint8_t kind;        /* enum td_snap_ann_kind */
	uint8_t start;       /* 1 START, 0 END */
	uint32_t order;      /* its place in the file */
};

/* A device's trace entries, compact (parser/snapshot_ev.c): a header byte and varints per
 * entry, deltas from the one before (10 bytes an entry where struct td_snap_event takes 40),
 * read back in order with td_snap_ev_next. */
struct td_snap_evlog {
	unsigned char *b;
	size_t len, cap;
	uint64_t n;          /* entries */
	uint64_t addr;       /* the last entry's, and the last time_us given */
	int64_t time;
	uint32_t site;
	uint8_t hint;
};
void td_snap_ev_put(struct td_snap_evlog *l, const struct td_snap_event *e);
void td_snap_ev_free(struct td_snap_evlog *l);
struct td_snap_ev_it {
	const unsigned char *p, *end;
	uint64_t addr;
	int64_t time;
	uint32_t site;
	uint8_t hint;
};
void td_snap_ev_begin(const struct td_snap_evlog *l, struct td_snap_ev_it *it);
/* The next entry into *e: 1, or 0 past the last. */
int td_snap_ev_next(struct td_snap_ev_it *it, struct td_snap_event *e);

struct td_snap_devlog {  /* a device as read */
	int32_t device;
	int64_t reserved;
	uint64_t segments;
	int64_t largest_free; /* the largest inactive block at the snapshot */
	struct td_snap_evlog ev; /* its trace's entries */
};

struct td_snap_doc {
	struct td_vec devs;   /* struct td_snap_devlog, by device; every device with live blocks */
	struct td_vec blocks; /* struct td_snap_block, by device, then in the order read */
	struct td_vec anns;   /* struct td_snap_ann, by (device, time, order read) */
	int has_traces;       /* device_traces recorded (_record_memory_history) */
	int expandable;       /* expandable segments on (allocator_settings, or a segment's) */
};

/* Reads the snapshot from in (parser/input.h; left open) into d; name is the file's name for
 * messages. A site (its text interned in strs: "train.py(42): forward") is the object's
 * innermost frame that is_user_frame() says is the user's, else its innermost Python frame,
 * else its innermost frame; "(no frames)" without any. Its hint: the strongest of what hint()
 * says of each frame ("file(line): name"), its user_metadata and compile_context (enum
 * td_snap_hint_of); hint may be NULL. Returns 0, or TD_EIO / TD_EFORMAT / TD_EPARSE with err filled (file, line, column
 * and byte of a JSON error) and d left empty. */
struct td_input;
int td_snap_doc_read(struct td_input *in, const char *name, struct td_strtab *strs,
		     int (*is_user_frame)(const char *frame),
		     uint8_t (*hint)(enum td_snap_hint_of of, const char *text), struct td_snap_doc *d,
		     struct td_error *err);
void td_snap_doc_free(struct td_snap_doc *d);

#endif
