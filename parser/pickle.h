/* SPDX-License-Identifier: MIT */
/* A pickle reader that runs nothing: protocols 2-5, only the opcodes that build builtin values
 * (dict, list, tuple, set, str, bytes, int of any width, float, bool, None; the memo; frames),
 * handed out as yajl's callbacks, in document order, as the JSON reader hands out a JSON
 * document. Every opcode that would import or call (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST,
 * OBJ, NEWOBJ, NEWOBJ_EX, PERSID, BINPERSID, EXT1/2/4, NEXT_BUFFER, READONLY_BUFFER) is refused
 * with its name and byte offset. docs/tables.md writes down the subset and the design.
 *
 * Streamed, not built: a container is either streamed (its start event handed out when it is
 * made, its items as they are set into it, nothing kept) or built (a small tree, handed out
 * whole when it is set into a streamed one, and kept for the memo's later references while the
 * sink wants it). The sink says which (td_pk_sink.tree): the snapshot reader builds only the
 * stacks of frames (shared by reference between blocks and trace entries) and what it skips.
 * A built value that grows past TD_PK_TREE_MAX nodes is streamed from then on. Library code:
 * never prints. */
#ifndef TD_PARSER_PICKLE_H
#define TD_PARSER_PICKLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <yajl/yajl_parse.h>

#include "common/error.h"

#define TD_PK_TREE_MAX 4096u     /* nodes in a built value before it is streamed */
#define TD_PK_DEPTH_MAX 512u     /* nesting of values (a nesting bomb is refused) */
#define TD_PK_STACK_MAX (1u << 20) /* entries on the unpickler's stack, marks included */
#define TD_PK_LIVE_MAX (1u << 22)  /* values kept at once, memo entries (a memo bomb) */
#define TD_PK_STR_KEEP (1u << 20)  /* a string's first bytes kept (the rest read, dropped) */
#define TD_PK_LONG_MAX 4096u     /* bytes of a LONG1 / LONG4 (more is refused) */

struct td_pk_sink {
	const yajl_callbacks *cb; /* null, boolean, number (text), string, map_key, start/end map,
				   * start/end array; integer and double are not used */
	void *ctx;
	/* a container begins where the callbacks now stand: 1 to build it (kept for references),
	 * 0 to stream it; NULL streams every container */
	int (*tree)(void *ctx);
	/* a built container's events begin; note is its slot for the sink (0 at first): 1 skips
	 * them (the sink knows what it made of them from the note); NULL: never skipped. Once
	 * the sink has set a memoized container's note (nonzero, while its events are handed
	 * out), the memo keeps the note alone (2 bytes when below 0xffff): later references
	 * hand out this call only, and read as an empty list where the sink does not skip them;
	 * a sink that keeps its notes small keeps the memo small */
	int (*enter)(void *ctx, uint32_t *note);
	/* a built container's last event comes next: 1 keeps it for later references */
	int (*keep)(void *ctx);
};

/* where the bytes come from: as td_input_read (count, 0 at the end, or a TD_E* code) */
typedef ssize_t (*td_pk_read_fn)(void *src, void *buf, size_t cap, struct td_error *err);

/* Reads one pickle from src to its STOP, handing its value to sink. name is the file's name for
 * messages. Returns 0; TD_EPARSE (not a pickle we read: a refused opcode, a truncated file,
 * a bomb; err names the byte and the opcode); TD_EFORMAT when a callback returned 0 (the sink
 * says why); TD_EIO from src. err->offset is the byte. */
int td_pickle_read(td_pk_read_fn read, void *src, const char *name,
		   const struct td_pk_sink *sink, struct td_error *err);

/* The opcode's name ("GLOBAL"), or NULL for a byte that is not an opcode. */
const char *td_pickle_opname(unsigned char op);

#endif
