/* SPDX-License-Identifier: MIT */
/* The pickle reader (parser/pickle.h): each opcode read and done on the stack of
 * parser/pickle_stack.c; the refused ones named with their byte. */
#include "parser/pickle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "parser/pickle_int.h"


static int arg(struct pk *p, size_t n, const unsigned char **b)
{
	int rc = pk_fill(p, n);

	if (rc)
		return rc;
	*b = p->buf + p->pos;
	p->pos += n;
	return 0;
}

/* a string or bytes of len bytes: the first TD_PK_STR_KEEP kept, the rest read past */
static int read_str(struct pk *p, uint64_t len, uint8_t type)
{
	size_t keep = len < TD_PK_STR_KEEP ? (size_t)len : TD_PK_STR_KEEP;
	struct node *n = pk_node_new(p, type);
	uint64_t got = 0, at = OFF(p);

	if (!n)
		return pk_fail(p, p->op_off, "more than %u values kept at once: a memo bomb",
			    TD_PK_LIVE_MAX);
	n->s = td_malloc(keep + 1);
	n->len = keep;
	while (got < len) {
		size_t avail;
		if (p->pos == p->len && pk_fill(p, 1)) {
			pk_release(p, pk_vnode(n));
			p->err->code = 0;
			return pk_fail(p, p->op_off, "%s says %llu bytes follow from byte %llu; the file "
				    "ends %llu bytes later: it is cut short, or not a pickle",
				    td_pickle_opname(p->op), (unsigned long long)len,
				    (unsigned long long)at, (unsigned long long)got);
		}
		avail = p->len - p->pos;
		if (avail > len - got)
			avail = (size_t)(len - got);
		if (got < keep)
			memcpy(n->s + got, p->buf + p->pos, keep - got < avail ? keep - got : avail);
		p->pos += avail;
		got += avail;
	}
	n->s[keep] = '\0';
	return pk_push_val(p, pk_vnode(n));
}

/* LONG1 / LONG4: little-endian two's complement; past 64 bits, the nearest double */
static int read_long(struct pk *p, uint64_t n)
{
	const unsigned char *b;
	struct val v = {V_INT, {0}};
	int rc;

	if (n > TD_PK_LONG_MAX)
		return pk_fail(p, p->op_off, "%s of %llu bytes: more than the %u this reader takes "
			    "(a snapshot's ints take at most 9)", td_pickle_opname(p->op),
			    (unsigned long long)n, TD_PK_LONG_MAX);
	if ((rc = arg(p, (size_t)n, &b)) != 0)
		return rc;
	if (n && n <= 8) {
		uint64_t u = pk_le(b, (unsigned)n);
		if (n < 8 && (b[n - 1] & 0x80))
			u |= ~0ull << (8 * n);
		v.u.i = (int64_t)u;
	} else if (n == 9 && b[8] == 0) {
		v.t = V_UINT;
		v.u.u = pk_le(b, 8);
	} else if (n) {
		double d = 0;
		uint64_t i = n;
		while (i--)
			d = d * 256 + b[i];
		if (b[n - 1] & 0x80)
			d -= ldexp(1, (int)(8 * n));
		v.t = V_FLOAT;
		v.u.d = d;
	}
	return pk_push_val(p, v);
}

static int memo_put(struct pk *p, uint64_t idx)
{
	struct ent *e;
	struct memo_slot *m;

	if (!p->nst || p->st[p->nst - 1].kind == E_MARK)
		return pk_fail(p, p->op_off, "%s with nothing to store", td_pickle_opname(p->op));
	if (idx > UINT32_MAX || idx > p->op_off)
		return pk_fail(p, p->op_off, "%s %llu: more memo entries than bytes before it: a "
			       "memo bomb", td_pickle_opname(p->op), (unsigned long long)idx);
	if (idx + 1 > p->memo_len)
		p->memo_len = idx + 1;
	e = &p->st[p->nst - 1];
	if (e->kind != E_VAL) {
		pk_memo_drop(p, (uint32_t)idx); /* streamed: never referenced again */
		return 0;
	}
	if (p->mused >= TD_PK_LIVE_MAX && !pk_memo_find(p, (uint32_t)idx, 0))
		return pk_fail(p, p->op_off, "more than %u memo entries kept: a memo bomb, not a "
			       "snapshot", TD_PK_LIVE_MAX);
	m = pk_memo_find(p, (uint32_t)idx, 1);
	pk_release(p, m->v);
	m->v = e->v;
	if (e->v.t == V_NODE) {
		e->v.u.n->refs++;
		e->v.u.n->memoized = 1;
		e->v.u.n->memo_idx = (uint32_t)idx;
	}
	return 0;
}

static int memo_get(struct pk *p, uint64_t idx)
{
	struct memo_slot *m = idx <= UINT32_MAX ? pk_memo_find(p, (uint32_t)idx, 0) : NULL;

	if (!m && idx < p->ncap && p->notes[idx]) {
		struct val v = {V_NOTE, {0}};
		v.u.u = p->notes[idx];
		return pk_push_val(p, v);
	}
	if (!m)
		return pk_fail(p, p->op_off, "%s %llu: a value this reader did not keep (a dict or "
			    "list already streamed past, or never stored)", td_pickle_opname(p->op),
			    (unsigned long long)idx);
	if (m->v.t == V_NODE)
		m->v.u.n->refs++;
	return pk_push_val(p, m->v);
}

static int stop(struct pk *p)
{
	struct ent *e;

	if (!p->nst || p->st[p->nst - 1].kind == E_MARK || p->st[p->nst - 1].kind == E_DONE)
		return pk_fail(p, p->op_off, "STOP with no value to return");
	e = &p->st[p->nst - 1];
	if (e->kind == E_OPEN)
		return e->parent != NOPARENT ? pk_fail(p, p->op_off, "STOP inside a container") :
			pk_sink_ok(p, e->dict ? p->sink->cb->yajl_end_map(p->sink->ctx)
				: p->sink->cb->yajl_end_array(p->sink->ctx));
	return pk_emit(p, e->v, 0, 1);
}

static int need(struct pk *p, size_t n)
{
	return p->nst < n ? pk_fail(p, p->op_off, "%s with too few values on the stack",
				 td_pickle_opname(p->op)) : 0;
}

static int marked(struct pk *p, size_t *m)
{
	return pk_last_mark(p, m) ? 0 : pk_fail(p, p->op_off, "%s without a MARK",
					  td_pickle_opname(p->op));
}

static int step(struct pk *p, unsigned char op)
{
	const unsigned char *b;
	size_t m = 0;
	int rc = 0;

#define ARG(n) if ((rc = arg(p, (n), &b)) != 0) return rc
	switch (op) {
	case 0x80: ARG(1);
		return b[0] < 2 || b[0] > 5 ? pk_fail(p, p->op_off, "pickle protocol %u: this reader "
						   "takes protocols 2 to 5", b[0]) : 0;
	case 0x95: ARG(8);
		p->frame_end = OFF(p) + pk_le(b, 8);
		return 0;
	case '(': return pk_push(p, E_MARK, (struct val){V_NONE, {0}});
	case 'N': return pk_push_scalar(p, V_NONE, 0);
	case 0x88: return pk_push_scalar(p, V_TRUE, 0);
	case 0x89: return pk_push_scalar(p, V_FALSE, 0);
	case 'J': ARG(4);
		return pk_push_scalar(p, V_INT, (int32_t)(uint32_t)pk_le(b, 4));
	case 'K': ARG(1);
		return pk_push_scalar(p, V_INT, b[0]);
	case 'M': ARG(2);
		return pk_push_scalar(p, V_INT, (int64_t)pk_le(b, 2));
	case 0x8a: ARG(1);
		return read_long(p, b[0]);
	case 0x8b: ARG(4);
		if (pk_le(b, 4) & 0x80000000u)
			return pk_fail(p, p->op_off, "LONG4 of %llu bytes (a negative count as a signed "
				       "32-bit length): not an int", (unsigned long long)pk_le(b, 4));
		return read_long(p, pk_le(b, 4));
	case 'G': {
		struct val v = {V_FLOAT, {0}};
		uint64_t u = 0;
		int i;
		ARG(8);
		for (i = 0; i < 8; i++)
			u = (u << 8) | b[i];
		memcpy(&v.u.d, &u, sizeof(v.u.d));
		return pk_push_val(p, v);
	}
	case 0x8c: ARG(1); return read_str(p, b[0], N_STR);
	case 'X': ARG(4); return read_str(p, pk_le(b, 4), N_STR);
	case 0x8d: ARG(8); return read_str(p, pk_le(b, 8), N_STR);
	case 'C': ARG(1); return read_str(p, b[0], N_BYTES);
	case 'B': ARG(4); return read_str(p, pk_le(b, 4), N_BYTES);
	case 0x8e: case 0x96: ARG(8); return read_str(p, pk_le(b, 8), N_BYTES);
	case '}': return pk_make(p, N_DICT);
	case ']': return pk_make(p, N_LIST);
	case 0x8f: return pk_make(p, N_SET);
	case ')': return pk_collect(p, p->nst, N_TUPLE, 0);
	case 0x85: case 0x86: case 0x87:
		if ((rc = need(p, op - 0x84u)) != 0)
			return rc;
		return pk_collect(p, p->nst - (op - 0x84u), N_TUPLE, 0);
	case 't': case 'l': case 'd': case 0x91:
		if ((rc = marked(p, &m)) != 0)
			return rc;
		return pk_collect(p, m + 1, op == 't' ? N_TUPLE : op == 'l' ? N_LIST : op == 'd' ?
			       N_DICT : N_SET, 1);
	case 'a': if ((rc = need(p, 2)) != 0) return rc;
		return pk_set_items(p, p->nst - 2, p->nst - 1, 0, "APPEND");
	case 's': if ((rc = need(p, 3)) != 0) return rc;
		return pk_set_items(p, p->nst - 3, p->nst - 2, 1, "SETITEM");
	case 'e': case 'u': case 0x90:
		if ((rc = marked(p, &m)) != 0)
			return rc;
		if (!m)
			return pk_fail(p, p->op_off, "%s with nothing to set the items into",
				    td_pickle_opname(op));
		return pk_set_items(p, m - 1, m + 1, op == 'u', td_pickle_opname(op));
	case 0x94: return memo_put(p, p->memo_len);
	case 'q': ARG(1); return memo_put(p, b[0]);
	case 'r': ARG(4); return memo_put(p, pk_le(b, 4));
	case 'h': ARG(1); return memo_get(p, b[0]);
	case 'j': ARG(4); return memo_get(p, pk_le(b, 4));
	case '0':
		if ((rc = need(p, 1)) != 0)
			return rc;
		if (p->st[p->nst - 1].kind == E_OPEN || p->st[p->nst - 1].kind == E_DONE)
			return pk_fail(p, p->op_off, "POP of a streamed container");
		pk_release(p, p->st[--p->nst].v);
		return 0;
	case '1':
		if ((rc = marked(p, &m)) != 0)
			return rc;
		while (p->nst > m + 1) {
			if (p->st[p->nst - 1].kind != E_VAL)
				return pk_fail(p, p->op_off, "POP_MARK of a streamed container");
			pk_release(p, p->st[--p->nst].v);
		}
		p->nst = m;
		return 0;
	case '2':
		if ((rc = need(p, 1)) != 0)
			return rc;
		if (p->st[p->nst - 1].kind != E_VAL)
			return pk_fail(p, p->op_off, "DUP of a mark or a streamed container");
		if (p->st[p->nst - 1].v.t == V_NODE)
			p->st[p->nst - 1].v.u.n->refs++;
		return pk_push_val(p, p->st[p->nst - 1].v);
	case 'c': case 0x93: case 'R': case 'b': case 'i': case 'o': case 0x81: case 0x92:
	case 'P': case 'Q': case 0x82: case 0x83: case 0x84: case 0x97: case 0x98:
		return pk_fail(p, p->op_off, "opcode %s (0x%02x) would import or call Python code: "
			    "refused, nothing in a file is ever run. A snapshot holds only builtin "
			    "values (the dict torch.cuda.memory._snapshot() returns)",
			    td_pickle_opname(op), op);
	case 'I': case 'L': case 'F': case 'S': case 'V': case 'g': case 'p': case 'T':
	case 'U':
		return pk_fail(p, p->op_off, "opcode %s (0x%02x) of pickle protocol 0 or 1: not "
			    "read (save with protocol 2 or later)", td_pickle_opname(op), op);
	default:
		return pk_fail(p, p->op_off, "byte 0x%02x is not a pickle opcode: the file is not a "
			    "pickle, or is damaged here", op);
	}
#undef ARG
}

int td_pickle_read(td_pk_read_fn read, void *src, const char *name,
		   const struct td_pk_sink *sink, struct td_error *err)
{
	struct pk *p = td_calloc(1, sizeof(*p));
	int rc;

	p->read = read;
	p->src = src;
	p->name = name;
	p->sink = sink;
	p->err = err;
	err->code = 0;
	for (;;) {
		p->op_off = OFF(p);
		if (p->pos == p->len && (rc = pk_fill(p, 1)) != 0) {
			if (rc == TD_EPARSE && p->eof && p->frame_end <= OFF(p)) {
				err->code = 0;
				rc = pk_fail(p, p->op_off, "the pickle ends before its STOP: the file is "
					  "cut short");
			}
			break;
		}
		p->op = p->buf[p->pos++];
		if (p->op == '.') {
			rc = stop(p);
			break;
		}
		if ((rc = step(p, p->op)) != 0)
			break;
	}
	pk_free_all(p);
	free(p);
	return rc;
}
