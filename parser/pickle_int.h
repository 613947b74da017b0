/* SPDX-License-Identifier: MIT */
/* What the pickle reader's two halves share: parser/pickle_stack.c (values, the memo, the
 * stack, streaming) below parser/pickle.c (the opcodes). Internal to the reader. */
#ifndef TD_PARSER_PICKLE_INT_H
#define TD_PARSER_PICKLE_INT_H

#include <stdint.h>

#include "parser/pickle.h"

/* V_NOTE: a container the sink noted (td_pk_sink.enter), kept as its note alone */
enum { V_NONE, V_FALSE, V_TRUE, V_INT, V_UINT, V_FLOAT, V_NOTE, V_NODE };
enum { N_STR, N_BYTES, N_LIST, N_DICT, N_TUPLE, N_SET };
enum { E_MARK, E_VAL, E_OPEN, E_DONE };
#define BATCH 1000u   /* the pickler's batch of APPENDS / SETITEMS */
#define NOPARENT UINT32_MAX

struct node;
struct val {
	uint8_t t;
	union {
		int64_t i;
		uint64_t u;
		double d;
		struct node *n;
	} u;
};

struct node {
	struct node *prev, *next;  /* every node alive, to free cycles at the end */
	uint32_t refs, note, memo_idx;
	uint8_t type, memoized;
	uint16_t height;
	uint64_t size;             /* nodes under it, itself included (saturating) */
	size_t len, cap;           /* items, or string bytes */
	struct val *kids;
	char *s;
};

struct ent {
	uint8_t kind, dict;        /* dict: an OPEN dict (else list or set) */
	uint16_t depth;            /* OPEN: how deep it stands among the streamed ones */
	uint32_t parent;           /* OPEN / DONE: the stack index of the container it went to */
	uint64_t count;            /* OPEN: items set into it so far */
	uint32_t flushed;          /* OPEN: its items below this stack index are out (0: none) */
	struct val v;
};

struct memo_slot {
	uint32_t key;
	uint8_t used;              /* 0 empty, 1 used, 2 deleted */
	struct val v;
};

struct pk {
	td_pk_read_fn read;
	void *src;
	const char *name;
	const struct td_pk_sink *sink;
	struct td_error *err;
	unsigned char buf[1 << 16];
	size_t pos, len;
	uint64_t base;             /* the file offset of buf[0] */
	int eof;
	uint64_t frame_end, op_off; /* op_off: where the opcode being read began */
	unsigned char op;
	struct ent *st;
	size_t nst, cst;
	struct memo_slot *memo;
	size_t mcap, mused, mdead;
	uint64_t memo_len;
	uint16_t *notes;           /* by memo index: the note of a noted container, 0 none (a
				    * note from 0xffff up is kept in the memo, as a V_NOTE) */
	size_t ncap;
	struct node *all;
	uint64_t live, emitted;
	int sink_failed;
};

#define OFF(p) ((p)->base + (p)->pos)

int pk_fail(struct pk *p, uint64_t off, const char *fmt, ...) TD_PRINTF(3, 4);
int pk_fill(struct pk *p, size_t need);
uint64_t pk_le(const unsigned char *b, unsigned n);
struct node *pk_node_new(struct pk *p, uint8_t type);
/* every value still alive freed (cycles too), the stack and the memo */
void pk_free_all(struct pk *p);
void pk_release(struct pk *p, struct val v);
struct val pk_vnode(struct node *n);
struct memo_slot *pk_memo_find(struct pk *p, uint32_t k, int add);
void pk_memo_drop(struct pk *p, uint32_t k);
int pk_sink_ok(struct pk *p, int r);
int pk_emit(struct pk *p, struct val v, int key, unsigned depth);
int pk_push(struct pk *p, uint8_t kind, struct val v);
int pk_push_val(struct pk *p, struct val v);
int pk_push_scalar(struct pk *p, uint8_t t, int64_t i);
int pk_last_mark(const struct pk *p, size_t *m);
/* EMPTY_DICT / EMPTY_LIST / EMPTY_SET: streamed where the sink wants it, else built */
int pk_make(struct pk *p, uint8_t type);
/* APPEND(S), SETITEM(S), ADDITEMS: items from..nst-1 set into the container at index t */
int pk_set_items(struct pk *p, size_t t, size_t from, int dict, const char *op);
/* TUPLE, TUPLE1-3, FROZENSET, LIST, DICT: a built container of the items from..nst-1; drop: a
 * MARK below them is popped too */
int pk_collect(struct pk *p, size_t from, uint8_t type, size_t drop);

#endif
