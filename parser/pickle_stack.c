/* SPDX-License-Identifier: MIT */
/* The pickle reader's values, memo and stack (parser/pickle_int.h): the unpickler's stack
 * machine over builtin values only. Stack entries are marks, values (scalars, or nodes: strings and built containers, counted
 * references), or streamed containers (OPEN: their start event handed out, items handed out as
 * they are set into them; DONE: an item already handed out). A container is streamed when it is
 * made where a streamed container's items stand (after its MARK, or right above it for a single
 * APPEND / SETITEM) and the sink asks for it; every streamed item records the container it went
 * to, and the opcode that sets it there must agree, else the pickle is refused (this reader
 * cannot guess wrong in silence). Nothing here calls anything from the file. */
#include "parser/pickle_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

int pk_fail(struct pk *p, uint64_t off, const char *fmt, ...)
{
	char m[400];
	va_list ap;

	if (p->err->code)
		return p->err->code;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	p->err->has_pos = 1;
	p->err->offset = off;
	return td_error_set(p->err, TD_EPARSE, "%s: byte %llu: %s", p->name,
			    (unsigned long long)off, m);
}

/* ---- bytes ---- */

int pk_fill(struct pk *p, size_t need)
{
	while (p->len - p->pos < need) {
		ssize_t n;
		if (p->eof) {
			if (p->frame_end > OFF(p) + (p->len - p->pos))
				return pk_fail(p, p->op_off, "the pickle ends inside a frame that runs to "
					    "byte %llu: the file is cut short",
					    (unsigned long long)p->frame_end);
			return pk_fail(p, p->op_off, "the pickle ends inside opcode %s: the file is cut "
				    "short", td_pickle_opname(p->op));
		}
		if (p->pos) {
			memmove(p->buf, p->buf + p->pos, p->len - p->pos);
			p->base += p->pos;
			p->len -= p->pos;
			p->pos = 0;
		}
		n = p->read(p->src, p->buf + p->len, sizeof(p->buf) - p->len, p->err);
		if (n < 0)
			return (int)n;
		if (!n)
			p->eof = 1;
		p->len += (size_t)n;
	}
	return 0;
}

uint64_t pk_le(const unsigned char *b, unsigned n)
{
	uint64_t v = 0;
	while (n--)
		v = (v << 8) | b[n];
	return v;
}

/* ---- nodes and values ---- */

struct node *pk_node_new(struct pk *p, uint8_t type)
{
	struct node *n;

	if (p->live >= TD_PK_LIVE_MAX)
		return NULL;
	n = td_calloc(1, sizeof(*n));
	n->type = type;
	n->refs = 1;
	n->size = 1;
	n->height = type >= N_LIST ? 1 : 0;
	n->next = p->all;
	if (p->all)
		p->all->prev = n;
	p->all = n;
	p->live++;
	return n;
}

static void node_free(struct pk *p, struct node *n)
{
	if (n->prev)
		n->prev->next = n->next;
	else
		p->all = n->next;
	if (n->next)
		n->next->prev = n->prev;
	free(n->kids);
	free(n->s);
	free(n);
	p->live--;
}

/* drops a reference; what falls to 0 is freed, its items too (a worklist: no recursion) */
void pk_release(struct pk *p, struct val v)
{
	struct node **work = NULL;
	size_t nw = 0, cw = 0;

	if (v.t != V_NODE)
		return;
	if (--v.u.n->refs)
		return;
	work = td_malloc(16 * sizeof(*work));
	cw = 16;
	work[nw++] = v.u.n;
	while (nw) {
		struct node *n = work[--nw];
		size_t i;
		for (i = 0; i < n->len && n->kids; i++)
			if (n->kids[i].t == V_NODE && !--n->kids[i].u.n->refs) {
				if (nw == cw)
					work = td_realloc(work, (cw *= 2) * sizeof(*work));
				work[nw++] = n->kids[i].u.n;
			}
		node_free(p, n);
	}
	free(work);
}

struct val pk_vnode(struct node *n)
{
	struct val v = {V_NODE, {0}};
	v.u.n = n;
	return v;
}

void pk_free_all(struct pk *p)
{
	while (p->all)
		node_free(p, p->all);
	free(p->st);
	free(p->memo);
	free(p->notes);
}

static int is_container(struct val v)
{
	return v.t == V_NODE && v.u.n->type >= N_LIST;
}

/* ---- the memo: only what may be referenced again, by index ---- */

struct memo_slot *pk_memo_find(struct pk *p, uint32_t k, int add)
{
	size_t i;
	struct memo_slot *tomb = NULL;

	if (add && (p->mused + p->mdead + 1) * 2 > p->mcap) {
		struct memo_slot *old = p->memo;
		size_t oc = p->mcap, j;
		p->mcap = 64; /* a power of two, a quarter used at most */
		while (p->mcap < p->mused * 4)
			p->mcap *= 2;
		p->memo = td_calloc(p->mcap, sizeof(*p->memo));
		p->mdead = 0;
		for (j = 0; j < oc; j++)
			if (old[j].used == 1) {
				i = (old[j].key * 0x9e3779b1u) & (p->mcap - 1);
				while (p->memo[i].used)
					i = (i + 1) & (p->mcap - 1);
				p->memo[i] = old[j];
			}
		free(old);
	}
	if (!p->mcap)
		return NULL;
	for (i = (k * 0x9e3779b1u) & (p->mcap - 1); p->memo[i].used; i = (i + 1) & (p->mcap - 1)) {
		if (p->memo[i].used == 1 && p->memo[i].key == k)
			return &p->memo[i];
		if (p->memo[i].used == 2 && !tomb)
			tomb = &p->memo[i];
	}
	if (!add)
		return NULL;
	if (!tomb)
		tomb = &p->memo[i];
	else
		p->mdead--;
	tomb->used = 1;
	tomb->key = k;
	tomb->v.t = V_NONE;
	p->mused++;
	return tomb;
}

void pk_memo_drop(struct pk *p, uint32_t k)
{
	struct memo_slot *m = pk_memo_find(p, k, 0);

	if (k < p->ncap)
		p->notes[k] = 0;
	if (!m)
		return;
	if (m->v.t == V_NODE && m->v.u.n->memo_idx == k)
		m->v.u.n->memoized = 0;
	pk_release(p, m->v);
	m->used = 2;
	p->mused--;
	p->mdead++;
}

/* a container the sink noted: kept as its note alone (2 bytes by memo index, not the tree; a
 * note of 0xffff or more in the memo itself) */
static void memo_note(struct pk *p, struct node *n)
{
	uint32_t k = n->memo_idx, note = n->note;

	pk_memo_drop(p, k);
	if (note >= 0xffffu) {
		struct memo_slot *m = pk_memo_find(p, k, 1);
		m->v.t = V_NOTE;
		m->v.u.u = note;
		return;
	}
	if (k >= p->ncap) {
		size_t c = p->ncap ? p->ncap : 1024;
		while (c <= k)
			c *= 2;
		p->notes = td_realloc(p->notes, c * sizeof(*p->notes));
		memset(p->notes + p->ncap, 0, (c - p->ncap) * sizeof(*p->notes));
		p->ncap = c;
	}
	p->notes[k] = (uint16_t)note;
}

/* a built container handed out and not wanted again: its memo reference goes */
static void unmemo(struct pk *p, struct node *n)
{
	if (n->memoized)
		pk_memo_drop(p, n->memo_idx);
}

/* ---- handing out ---- */

int pk_sink_ok(struct pk *p, int r)
{
	if (!r) {
		p->sink_failed = 1;
		p->err->has_pos = 1;
		p->err->offset = p->op_off;
	}
	return r ? 0 : TD_EFORMAT;
}

/* an integer's decimal digits ending at end (no printf: a snapshot has millions) */
static char *digits(char *end, uint64_t u)
{
	do
		*--end = (char)('0' + u % 10);
	while (u /= 10);
	return end;
}

static int out_number(struct pk *p, struct val v, int key)
{
	char b[40], *s = b + sizeof(b);
	size_t n;

	if (v.t == V_INT) {
		s = digits(s, v.u.i < 0 ? 0 - (uint64_t)v.u.i : (uint64_t)v.u.i);
		if (v.u.i < 0)
			*--s = '-';
	} else if (v.t == V_UINT) {
		s = digits(s, v.u.u);
	} else {
		s = b;
		snprintf(b, sizeof(b), "%.17g", v.u.d);
	}
	n = s == b ? strlen(b) : (size_t)(b + sizeof(b) - s);
	if (key)
		return pk_sink_ok(p, p->sink->cb->yajl_map_key(p->sink->ctx, (const unsigned char *)s,
							     n));
	return pk_sink_ok(p, p->sink->cb->yajl_number(p->sink->ctx, s, n));
}

int pk_emit(struct pk *p, struct val v, int key, unsigned depth)
{
	const yajl_callbacks *cb = p->sink->cb;
	void *c = p->sink->ctx;
	struct node *n;
	size_t i;
	int rc = 0, d, keep;

	if (++p->emitted > (OFF(p) << 4) + (1ull << 24))
		return pk_fail(p, p->op_off, "the memo's references expand past %llu values: a memo "
			    "bomb, not a snapshot", (unsigned long long)p->emitted - 1);
	if (depth > TD_PK_DEPTH_MAX)
		return pk_fail(p, p->op_off, "values nest deeper than %u (a nesting bomb, or a value "
			    "that holds itself)", TD_PK_DEPTH_MAX);
	if (key && (v.t == V_NODE && v.u.n->type >= N_LIST))
		return pk_sink_ok(p, cb->yajl_map_key(c, (const unsigned char *)"(tuple)", 7));
	switch (v.t) {
	case V_NONE:
		return key ? pk_sink_ok(p, cb->yajl_map_key(c, (const unsigned char *)"None", 4))
			: pk_sink_ok(p, cb->yajl_null(c));
	case V_FALSE:
	case V_TRUE:
		if (key)
			return pk_sink_ok(p, cb->yajl_map_key(c, (const unsigned char *)(v.t == V_TRUE ?
						       "True" : "False"), v.t == V_TRUE ? 4 : 5));
		return pk_sink_ok(p, cb->yajl_boolean(c, v.t == V_TRUE));
	case V_INT:
	case V_UINT:
	case V_FLOAT:
		return out_number(p, v, key);
	case V_NOTE: { /* the sink skips it; else it reads as an empty list */
		uint32_t note = (uint32_t)v.u.u;
		if (key)
			return pk_sink_ok(p, cb->yajl_map_key(c, (const unsigned char *)"(tuple)", 7));
		if (p->sink->enter && p->sink->enter(c, &note))
			return 0;
		if ((rc = pk_sink_ok(p, cb->yajl_start_array(c))) != 0)
			return rc;
		return pk_sink_ok(p, cb->yajl_end_array(c));
	}
	default:
		break;
	}
	n = v.u.n;
	if (n->type < N_LIST)
		return pk_sink_ok(p, (key ? cb->yajl_map_key : cb->yajl_string)
			       (c, (const unsigned char *)(n->s ? n->s : ""), n->len));
	if (p->sink->enter && p->sink->enter(c, &n->note))
		return 0;
	d = n->type == N_DICT;
	if ((rc = pk_sink_ok(p, d ? cb->yajl_start_map(c) : cb->yajl_start_array(c))) != 0)
		return rc;
	for (i = 0; i < n->len && !rc; i++)
		rc = pk_emit(p, n->kids[i], d && !(i & 1), depth + 1);
	if (rc)
		return rc;
	keep = n->memoized && n->size <= TD_PK_TREE_MAX && p->sink->keep && p->sink->keep(c);
	if ((rc = pk_sink_ok(p, d ? cb->yajl_end_map(c) : cb->yajl_end_array(c))) != 0)
		return rc;
	if (n->memoized && !keep)
		unmemo(p, n);
	else if (n->memoized && n->note) /* set by the sink at the end event */
		memo_note(p, n);
	return 0;
}

/* ---- the stack ---- */

int pk_push(struct pk *p, uint8_t kind, struct val v)
{
	struct ent *e;

	if (p->nst >= TD_PK_STACK_MAX) {
		pk_release(p, v);
		return pk_fail(p, p->op_off, "more than %u values on the stack: a nesting bomb, not a "
			    "snapshot", TD_PK_STACK_MAX);
	}
	if (p->nst == p->cst)
		p->st = td_realloc(p->st, (p->cst = p->cst ? p->cst * 2 : 256) * sizeof(*p->st));
	e = &p->st[p->nst++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->parent = NOPARENT;
	e->v = v;
	return 0;
}

int pk_push_val(struct pk *p, struct val v)
{
	return pk_push(p, E_VAL, v);
}

int pk_push_scalar(struct pk *p, uint8_t t, int64_t i)
{
	struct val v = {t, {0}};
	v.u.i = i;
	return pk_push_val(p, v);
}

int pk_last_mark(const struct pk *p, size_t *m)
{
	size_t i = p->nst;

	while (i--)
		if (p->st[i].kind == E_MARK) {
			*m = i;
			return 1;
		}
	return 0;
}

/* Where a container made (or promoted) at stack index at would go: the streamed container it
 * is an item of (*parent) and where that container's items begin on the stack (*from).
 * kind: the container's node type. 0 when it cannot be streamed there. */
static int find_parent(const struct pk *p, size_t at, uint8_t kind, size_t *parent, size_t *from)
{
	size_t j = at, items = 0, alt = (size_t)-1;

	while (j--) {
		const struct ent *e = &p->st[j];
		if (e->kind == E_MARK) {
			if (!j || p->st[j - 1].kind != E_OPEN)
				return 0;
			*parent = j - 1;
			*from = j + 1;
			break;
		}
		if (e->kind == E_DONE && e->parent < j) { /* an item out already: its container */
			*parent = e->parent;
			*from = e->parent + 1 + (p->st[e->parent + 1].kind == E_MARK);
			break;
		}
		if (e->kind == E_OPEN) {
			/* right above it, no mark: its single APPEND / SETITEM, or its parent's next
			 * item. Containers are no keys; a full batch ends with a mark; a list right
			 * above a list is taken for its sibling (device_traces' lists) */
			uint64_t c = e->count;
			int child = e->dict ? items == 1 && c % BATCH == 0
				: items == 0 && c % BATCH == 0 && kind == N_DICT;
			if (child) {
				*parent = j;
				*from = j + 1;
				break;
			}
			if (!e->dict && items == 0 && c % BATCH == 0)
				alt = j; /* its child after all, if no sibling can stand here */
		}
		if (++items > 256) /* no pickler writes so many before a container: built */
			return 0;
	}
	/* a container is a value: in a dict it stands at an odd place */
	if (j != (size_t)-1 && (!p->st[*parent].dict || ((at - *from) & 1)))
		return 1;
	if (alt == (size_t)-1)
		return 0;
	*parent = alt;
	*from = alt + 1;
	return 1;
}

/* hands out the items of a streamed container from..to-1 not yet out; they become DONE */
static int flush(struct pk *p, size_t parent, size_t from, size_t to)
{
	size_t i = from;
	int rc = 0;

	if (parent != NOPARENT && p->st[parent].flushed > from && p->st[parent].flushed <= to)
		i = p->st[parent].flushed; /* what lies below is out already */
	for (; i < to && !rc; i++) {
		struct ent *e = &p->st[i];
		if (e->kind == E_VAL)
			rc = pk_emit(p, e->v, p->st[parent].dict && !((i - from) & 1), 1);
		else if (e->kind == E_OPEN && e->parent == (uint32_t)parent)
			rc = pk_sink_ok(p, e->dict ? p->sink->cb->yajl_end_map(p->sink->ctx)
				     : p->sink->cb->yajl_end_array(p->sink->ctx));
		else if (e->kind == E_DONE && e->parent == (uint32_t)parent)
			continue;
		else
			return pk_fail(p, p->op_off, "a pickle this reader cannot stream: an item "
				    "streamed into one container is set into another");
		if (e->kind == E_OPEN || e->kind == E_VAL) {
			pk_release(p, e->v);
			e->v.t = V_NONE;
			e->kind = E_DONE;
			e->parent = (uint32_t)parent;
		}
	}
	if (!rc && parent != NOPARENT)
		p->st[parent].flushed = (uint32_t)to;
	return rc;
}

/* The container at stack index at (a built one, or one just made) streamed from now on: what
 * stands before it handed out, its start, the items it holds. */
static int stream_at(struct pk *p, size_t at, size_t parent, size_t from)
{
	struct ent *e = &p->st[at];
	struct node *n = e->v.u.n;
	int rc, d = n->type == N_DICT;
	size_t i;

	e->depth = parent == NOPARENT ? 0 : (uint16_t)(p->st[parent].depth + 1);
	if (e->depth > TD_PK_DEPTH_MAX)
		return pk_fail(p, p->op_off, "values nest deeper than %u: a nesting bomb",
			       TD_PK_DEPTH_MAX);
	if ((rc = flush(p, parent, from, at)) != 0)
		return rc;
	if ((rc = pk_sink_ok(p, d ? p->sink->cb->yajl_start_map(p->sink->ctx)
			  : p->sink->cb->yajl_start_array(p->sink->ctx))) != 0)
		return rc;
	for (i = 0; i < n->len && !rc; i++)
		rc = pk_emit(p, n->kids[i], d && !(i & 1), 1);
	e->count = n->len;
	e->dict = (uint8_t)d;
	e->kind = E_OPEN;
	e->parent = (uint32_t)parent;
	unmemo(p, n);
	pk_release(p, e->v);
	e->v.t = V_NONE;
	return rc;
}

/* a built container grew past TD_PK_TREE_MAX: streamed, the built ones it stands in first */
static int promote(struct pk *p, size_t at, unsigned depth)
{
	size_t parent, from;
	struct node *n = p->st[at].v.u.n;

	if (n->refs > 1 + (unsigned)n->memoized || depth > TD_PK_DEPTH_MAX)
		return pk_fail(p, p->op_off, "a value of more than %u items that is referenced "
			    "elsewhere: too large to keep", TD_PK_TREE_MAX);
	if (!find_parent(p, at, n->type, &parent, &from)) {
		size_t k = at - 1;
		while (k > 0 && p->st[k].kind == E_VAL)
			k--;
		if (at >= 2 && p->st[k].kind == E_MARK && k >= 1 && p->st[k - 1].kind == E_VAL &&
		    is_container(p->st[k - 1].v)) {
			int rc = promote(p, k - 1, depth + 1);
			if (rc)
				return rc;
			if (find_parent(p, at, n->type, &parent, &from))
				return stream_at(p, at, parent, from);
		}
		return pk_fail(p, p->op_off, "a value of more than %u items where it cannot be "
			    "streamed", TD_PK_TREE_MAX);
	}
	return stream_at(p, at, parent, from);
}

/* EMPTY_DICT / EMPTY_LIST / EMPTY_SET: streamed where the sink wants it, else built */
int pk_make(struct pk *p, uint8_t type)
{
	size_t parent, from, at = p->nst;
	struct node *n = pk_node_new(p, type);
	int rc;

	if (!n)
		return pk_fail(p, p->op_off, "more than %u values kept at once: a memo bomb, not a "
			    "snapshot", TD_PK_LIVE_MAX);
	if ((rc = pk_push_val(p, pk_vnode(n))) != 0)
		return rc;
	if (at == 0) {
		if (p->sink->tree && p->sink->tree(p->sink->ctx))
			return 0;
		return stream_at(p, at, NOPARENT, 0);
	}
	if (!find_parent(p, at, type, &parent, &from))
		return 0;
	if ((rc = flush(p, parent, from, at)) != 0)
		return rc;
	if (p->sink->tree && p->sink->tree(p->sink->ctx))
		return 0;
	return stream_at(p, at, parent, at);
}

static void add_kid(struct node *n, struct val v)
{
	if (n->len == n->cap)
		n->kids = td_realloc(n->kids, (n->cap = n->cap ? n->cap * 2 : 4) * sizeof(*n->kids));
	n->kids[n->len++] = v;
	if (v.t == V_NODE) {
		n->size = n->size + v.u.n->size < n->size ? UINT64_MAX : n->size + v.u.n->size;
		if (v.u.n->height + 1 > n->height)
			n->height = (uint16_t)(v.u.n->height + 1);
	} else {
		n->size++;
	}
}

/* APPEND(S), SETITEM(S), ADDITEMS: items from..nst-1 set into the container at index t */
int pk_set_items(struct pk *p, size_t t, size_t from, int dict, const char *op)
{
	struct ent *c = &p->st[t];
	size_t i, n = p->nst - from;
	int rc = 0;

	if (dict && (n & 1))
		return pk_fail(p, p->op_off, "%s with a key and no value", op);
	if (c->kind == E_OPEN) {
		if (c->dict != dict)
			return pk_fail(p, p->op_off, "%s into a %s", op, c->dict ? "dict" : "list");
		if ((rc = flush(p, t, from, p->nst)) != 0)
			return rc;
		c->count += n;
	} else if (c->kind == E_VAL && is_container(c->v)) {
		struct node *nd = c->v.u.n;
		if ((nd->type == N_DICT) != dict || nd->type == N_TUPLE)
			return pk_fail(p, p->op_off, "%s into a %s", op, nd->type == N_DICT ? "dict" :
				    nd->type == N_TUPLE ? "tuple" : "list");
		for (i = from; i < p->nst; i++) {
			if (p->st[i].kind != E_VAL)
				return pk_fail(p, p->op_off, "a pickle this reader cannot stream: a "
					    "streamed container set into a built one by %s", op);
			add_kid(nd, p->st[i].v);
			p->st[i].v.t = V_NONE;
		}
		if (nd->height > TD_PK_DEPTH_MAX)
			return pk_fail(p, p->op_off, "values nest deeper than %u: a nesting bomb",
				    TD_PK_DEPTH_MAX);
	} else {
		return pk_fail(p, p->op_off, "%s into something that is not a %s", op,
			    dict ? "dict" : "list");
	}
	p->nst = from;
	if (from && p->st[from - 1].kind == E_MARK && from - 1 > t)
		p->nst = from - 1;
	c->flushed = 0;
	if (c->kind == E_VAL && c->v.u.n->size > TD_PK_TREE_MAX)
		rc = promote(p, t, 0);
	return rc;
}

/* TUPLE, TUPLE1-3, FROZENSET, LIST, DICT: a built container of the items from..nst-1 */
int pk_collect(struct pk *p, size_t from, uint8_t type, size_t drop)
{
	struct node *n;
	size_t i;

	for (i = from; i < p->nst; i++)
		if (p->st[i].kind != E_VAL)
			return pk_fail(p, p->op_off, "a pickle this reader cannot stream: a streamed "
				    "container inside a tuple");
	if (type == N_DICT && ((p->nst - from) & 1))
		return pk_fail(p, p->op_off, "DICT with a key and no value");
	if (!(n = pk_node_new(p, type)))
		return pk_fail(p, p->op_off, "more than %u values kept at once: a memo bomb",
			    TD_PK_LIVE_MAX);
	for (i = from; i < p->nst; i++)
		add_kid(n, p->st[i].v);
	p->nst = from - drop;
	if (n->height > TD_PK_DEPTH_MAX) {
		pk_release(p, pk_vnode(n));
		return pk_fail(p, p->op_off, "values nest deeper than %u: a nesting bomb",
			    TD_PK_DEPTH_MAX);
	}
	return pk_push_val(p, pk_vnode(n));
}


