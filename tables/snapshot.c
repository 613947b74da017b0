/* SPDX-License-Identifier: MIT */
#include "tables/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/vec.h"
#include "parser/input.h"
#include "analysis/names.h"

/* --- what the reader keeps --------------------------------------------------------------- */

enum act { A_OTHER, A_ALLOC, A_FREE_REQ, A_FREE_DONE, A_SEG_ALLOC, A_SEG_FREE, A_OOM };

struct sevent {          /* one entry of a device's trace */
	uint64_t addr;
	int64_t size, time_us, device_free;
	uint32_t site;
	uint8_t act;
};

struct sblock {          /* a block live at the snapshot */
	uint64_t addr;
	int64_t size;
	uint32_t site;
	int32_t device;
	size_t order;        /* its place in the file */
};

struct sdev {
	int32_t device;
	int64_t reserved;
	uint64_t segments;
	struct td_vec ev;    /* struct sevent */
};

/* --- the streaming reader ---------------------------------------------------------------- */

enum ctx {
	X_SKIP, X_TOP, X_SEGS, X_SEG, X_BLOCKS, X_BLOCK, X_FRAMES, X_FRAME, X_TRACES, X_DEVTRACE,
	X_EVENT,
};
#define MAXD 64

struct reader {
	struct td_snapshot *s;
	unsigned depth;
	uint8_t ctx[MAXD];
	char key[32];
	/* the object being read */
	int32_t seg_device;
	int64_t seg_size;
	size_t seg_first_block; /* the segment's blocks start here in `blocks` */
	uint64_t b_addr;
	int64_t b_size;
	char b_state[32];
	struct sevent e;
	char act[32];
	uint32_t site;       /* of the object whose frames these are */
	int site_rank;       /* 3 user frame, 2 a Python frame, 1 any frame, 0 none */
	char f_file[512], f_name[256];
	int64_t f_line;
	int trace_dev;       /* the device_traces index being read */
	struct td_vec devs;  /* struct sdev */
	uint32_t *dmap;      /* device id -> 1 + index in devs (open addressing; 0 empty) */
	size_t dcap;
	struct td_vec blocks; /* struct sblock */
	int failed;
	char why[256];
};

static uint8_t at(const struct reader *r, unsigned d)
{
	return d < MAXD ? r->ctx[d] : X_SKIP;
}

static size_t dslot(const struct reader *r, int32_t device)
{
	size_t i = ((uint32_t)device * 0x9e3779b1u) & (r->dcap - 1);

	while (r->dmap[i] &&
	       TD_VEC_AT(&r->devs, struct sdev, r->dmap[i] - 1).device != device)
		i = (i + 1) & (r->dcap - 1);
	return i;
}

/* The device's entry, made on first sight: hashed, so 200,000 devices read in linear time. */
static struct sdev *dev_of(struct reader *r, int32_t device)
{
	size_t i;
	struct sdev *d;

	if ((r->devs.len + 1) * 2 > r->dcap) {
		size_t k;
		free(r->dmap);
		r->dcap = r->dcap ? r->dcap * 2 : 64;
		r->dmap = td_calloc(r->dcap, sizeof(*r->dmap));
		for (k = 0; k < r->devs.len; k++)
			r->dmap[dslot(r, TD_VEC_AT(&r->devs, struct sdev, k).device)] = (uint32_t)k + 1;
	}
	i = dslot(r, device);
	if (r->dmap[i])
		return &TD_VEC_AT(&r->devs, struct sdev, r->dmap[i] - 1);
	d = td_vec_push(&r->devs);
	memset(d, 0, sizeof(*d));
	d->device = device;
	td_vec_init(&d->ev, sizeof(struct sevent));
	r->dmap[i] = (uint32_t)r->devs.len;
	return d;
}

static int push(struct reader *r, uint8_t c)
{
	r->depth++;
	if (r->depth < MAXD)
		r->ctx[r->depth] = c;
	r->key[0] = '\0';
	return 1;
}

/* the number's text as a C string, cut to 39 bytes (more is not a number we keep) */
static const char *num_text(char *b, size_t cap, const char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(b, s, n);
	b[n] = '\0';
	return b;
}

static int64_t num(const char *s, size_t n)
{
	char b[40];
	return strtoll(num_text(b, sizeof(b), s, n), NULL, 10);
}

/* an address: every 64-bit value, 0 and all ones too */
static uint64_t unum(const char *s, size_t n)
{
	char b[40];
	return strtoull(num_text(b, sizeof(b), s, n), NULL, 10);
}

/* a size: never below 0 (a negative one would make memory out of nothing) */
static int64_t size_of(int64_t v)
{
	return v < 0 ? 0 : v;
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	struct reader *r = ctx;

	switch (at(r, r->depth)) {
	case X_SEG:
		if (!strcmp(r->key, "device"))
			r->seg_device = (int32_t)num(s, n);
		else if (!strcmp(r->key, "total_size"))
			r->seg_size = size_of(num(s, n));
		break;
	case X_BLOCK:
		if (!strcmp(r->key, "address"))
			r->b_addr = unum(s, n);
		else if (!strcmp(r->key, "size"))
			r->b_size = size_of(num(s, n));
		break;
	case X_EVENT:
		if (!strcmp(r->key, "addr"))
			r->e.addr = unum(s, n);
		else if (!strcmp(r->key, "size"))
			r->e.size = size_of(num(s, n));
		else if (!strcmp(r->key, "time_us"))
			r->e.time_us = num(s, n);
		else if (!strcmp(r->key, "device_free"))
			r->e.device_free = num(s, n);
		break;
	case X_FRAME:
		if (!strcmp(r->key, "line"))
			r->f_line = num(s, n);
		break;
	default:
		break;
	}
	return 1;
}

static void copy(char *dst, size_t cap, const unsigned char *s, size_t n)
{
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	struct reader *r = ctx;

	switch (at(r, r->depth)) {
	case X_BLOCK:
		if (!strcmp(r->key, "state"))
			copy(r->b_state, sizeof(r->b_state), s, n);
		break;
	case X_EVENT:
		if (!strcmp(r->key, "action"))
			copy(r->act, sizeof(r->act), s, n);
		break;
	case X_FRAME:
		if (!strcmp(r->key, "filename"))
			copy(r->f_file, sizeof(r->f_file), s, n);
		else if (!strcmp(r->key, "name"))
			copy(r->f_name, sizeof(r->f_name), s, n);
		break;
	default:
		break;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	(void)ctx;
	return 1;
}

static int cb_bool(void *ctx, int v)
{
	(void)ctx;
	(void)v;
	return 1;
}

static int cb_key(void *ctx, const unsigned char *s, size_t n)
{
	struct reader *r = ctx;

	copy(r->key, sizeof(r->key), s, n);
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct reader *r = ctx;
	uint8_t c = X_SKIP;

	if (r->depth == 0)
		return push(r, X_TOP);
	switch (at(r, r->depth)) {
	case X_SEGS:
		r->seg_device = 0;
		r->seg_size = 0;
		r->seg_first_block = r->blocks.len;
		c = X_SEG;
		break;
	case X_BLOCKS:
		r->b_addr = 0;
		r->b_size = 0;
		r->b_state[0] = '\0';
		r->site = 0;
		r->site_rank = 0;
		c = X_BLOCK;
		break;
	case X_FRAMES:
		r->f_file[0] = r->f_name[0] = '\0';
		r->f_line = 0;
		c = X_FRAME;
		break;
	case X_DEVTRACE:
		memset(&r->e, 0, sizeof(r->e));
		r->e.time_us = -1;
		r->e.device_free = -1;
		r->act[0] = '\0';
		r->site = 0;
		r->site_rank = 0;
		c = X_EVENT;
		break;
	default:
		break;
	}
	return push(r, c);
}

static int cb_start_array(void *ctx)
{
	struct reader *r = ctx;
	uint8_t c = X_SKIP;

	if (r->depth == 0) {
		r->failed = 1;
		snprintf(r->why, sizeof(r->why), "%s", "the document is an array, not a snapshot "
			 "(an object with \"segments\" and \"device_traces\")");
		return 0;
	}
	switch (at(r, r->depth)) {
	case X_TOP:
		c = !strcmp(r->key, "segments") ? X_SEGS : !strcmp(r->key, "device_traces")
			? X_TRACES : X_SKIP;
		if (c == X_TRACES)
			r->s->has_traces = 1;
		break;
	case X_SEG:
		c = !strcmp(r->key, "blocks") ? X_BLOCKS : X_SKIP;
		break;
	case X_BLOCK:
	case X_EVENT:
		c = !strcmp(r->key, "frames") ? X_FRAMES : X_SKIP;
		break;
	case X_TRACES:
		r->trace_dev++;
		c = X_DEVTRACE;
		break;
	default:
		break;
	}
	return push(r, c);
}

static enum act act_of(const char *a)
{
	return !strcmp(a, "alloc") ? A_ALLOC : !strcmp(a, "free_requested") ? A_FREE_REQ
		: !strcmp(a, "free_completed") ? A_FREE_DONE : !strcmp(a, "segment_alloc")
		? A_SEG_ALLOC : !strcmp(a, "segment_free") ? A_SEG_FREE : !strcmp(a, "oom") ? A_OOM
		: A_OTHER;
}

/* A frame just read: is it a better site for its object than the one kept? (innermost first:
 * the first user frame wins, else the first Python frame, else the first frame) */
static void frame_done(struct reader *r)
{
	char f[900];
	int rank;

	snprintf(f, sizeof(f), "%s(%lld): %s", r->f_file, (long long)r->f_line, r->f_name);
	rank = td_is_user_frame(f) ? 3 : strstr(f, ".py(") ? 2 : 1;
	if (rank > r->site_rank) {
		r->site_rank = rank;
		r->site = td_strtab_intern(&r->s->strs, f, strlen(f));
	}
}

static int cb_end(void *ctx)
{
	struct reader *r = ctx;
	uint8_t c = at(r, r->depth);

	switch (c) {
	case X_FRAME:
		frame_done(r);
		break;
	case X_BLOCK:
		if (!strcmp(r->b_state, "active_allocated") || !strcmp(r->b_state, "active_pending_free")) {
			struct sblock *b = td_vec_push(&r->blocks);
			b->addr = r->b_addr;
			b->size = r->b_size;
			b->site = r->site;
			b->device = -1; /* set at the segment's end */
		}
		break;
	case X_SEG: {
		struct sdev *d = dev_of(r, r->seg_device);
		size_t i;
		d->reserved = td_sat_add(d->reserved, r->seg_size);
		d->segments++;
		/* "device" may come after "blocks": the segment's blocks take it now */
		for (i = r->seg_first_block; i < r->blocks.len; i++)
			TD_VEC_AT(&r->blocks, struct sblock, i).device = r->seg_device;
		break;
	}
	case X_EVENT: {
		struct sdev *d = dev_of(r, r->trace_dev - 1);
		struct sevent *e = td_vec_push(&d->ev);
		*e = r->e;
		e->act = (uint8_t)act_of(r->act);
		e->site = r->site;
		break;
	}
	default:
		break;
	}
	r->depth--;
	r->key[0] = '\0';
	return 1;
}

static const yajl_callbacks callbacks = {
	cb_null, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* --- replay ------------------------------------------------------------------------------ */

/* Sums of sizes a file controls: 128 bits, so no sum of 64-bit sizes wraps; shown clamped. */
__extension__ typedef __int128 i128;

static int64_t clamp64(i128 v)
{
	return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

/* site -> the bytes and blocks live from it: open addressing, kept as blocks come and go, so
 * the top sites at a peak or an oom cost the sites, not the blocks times the sites */
struct sites {
	uint32_t *key;       /* site + 1; 0 empty */
	i128 *bytes;
	uint64_t *blocks;
	size_t cap, n;
};

/* address -> (size, site): open addressing; any 64-bit address, state apart */
enum { S_EMPTY, S_USED, S_GONE };
struct live {
	uint64_t *addr;
	uint8_t *state;
	int64_t *size;
	uint32_t *site;
	size_t cap, n, used;
	i128 total;
	struct sites by_site;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static void sites_alloc(struct sites *t, size_t cap)
{
	t->cap = cap;
	t->key = td_calloc(cap, sizeof(*t->key));
	t->bytes = td_malloc(cap * sizeof(*t->bytes));
	t->blocks = td_malloc(cap * sizeof(*t->blocks));
}

static size_t sites_slot(const struct sites *t, uint32_t site)
{
	size_t i = mix(site) & (t->cap - 1);

	while (t->key[i] && t->key[i] != site + 1)
		i = (i + 1) & (t->cap - 1);
	return i;
}

static void sites_add(struct sites *t, uint32_t site, i128 bytes, int64_t blocks)
{
	size_t i;

	if ((t->n + 1) * 2 > t->cap) {
		struct sites g;
		size_t k;
		sites_alloc(&g, t->cap * 2);
		for (k = 0; k < t->cap; k++)
			if (t->key[k]) {
				size_t j = sites_slot(&g, t->key[k] - 1);
				g.key[j] = t->key[k];
				g.bytes[j] = t->bytes[k];
				g.blocks[j] = t->blocks[k];
			}
		g.n = t->n;
		free(t->key);
		free(t->bytes);
		free(t->blocks);
		*t = g;
	}
	i = sites_slot(t, site);
	if (!t->key[i]) {
		t->key[i] = site + 1;
		t->bytes[i] = 0;
		t->blocks[i] = 0;
		t->n++;
	}
	t->bytes[i] += bytes;
	t->blocks[i] += (uint64_t)blocks;
}

static void live_alloc(struct live *l, size_t cap)
{
	memset(l, 0, sizeof(*l));
	l->cap = cap;
	l->addr = td_malloc(cap * sizeof(*l->addr));
	l->state = td_calloc(cap, 1);
	l->size = td_malloc(cap * sizeof(*l->size));
	l->site = td_malloc(cap * sizeof(*l->site));
}

static void live_init(struct live *l)
{
	live_alloc(l, 16);
	sites_alloc(&l->by_site, 16);
}

static void live_free(struct live *l)
{
	free(l->addr);
	free(l->state);
	free(l->size);
	free(l->site);
	free(l->by_site.key);
	free(l->by_site.bytes);
	free(l->by_site.blocks);
}

static size_t slot(const struct live *l, uint64_t addr)
{
	size_t i = mix(addr) & (l->cap - 1), tomb = SIZE_MAX;

	for (; l->state[i] != S_EMPTY; i = (i + 1) & (l->cap - 1)) {
		if (l->state[i] == S_USED && l->addr[i] == addr)
			return i;
		if (l->state[i] == S_GONE && tomb == SIZE_MAX)
			tomb = i;
	}
	return tomb != SIZE_MAX ? tomb : i;
}

static int live_has(const struct live *l, uint64_t addr)
{
	size_t i = slot(l, addr);
	return l->state[i] == S_USED && l->addr[i] == addr;
}

static void live_put(struct live *l, uint64_t addr, int64_t size, uint32_t site)
{
	size_t i = slot(l, addr);

	if (l->state[i] == S_USED && l->addr[i] == addr) { /* allocated twice without a free: */
		l->total -= l->size[i];                     /* the later one counts */
		sites_add(&l->by_site, l->site[i], -(i128)l->size[i], -1);
	} else {
		if (l->state[i] == S_EMPTY)
			l->used++;
		l->n++;
	}
	l->state[i] = S_USED;
	l->addr[i] = addr;
	l->size[i] = size;
	l->site[i] = site;
	l->total += size;
	sites_add(&l->by_site, site, size, 1);
}

static void live_add(struct live *l, uint64_t addr, int64_t size, uint32_t site)
{
	if ((l->used + 1) * 2 > l->cap) { /* grow (or only sweep the removed) */
		struct live n;
		size_t i;
		live_alloc(&n, l->n * 4 > l->cap ? l->cap * 2 : l->cap);
		for (i = 0; i < l->cap; i++)
			if (l->state[i] == S_USED) {
				size_t j = slot(&n, l->addr[i]);
				n.state[j] = S_USED;
				n.addr[j] = l->addr[i];
				n.size[j] = l->size[i];
				n.site[j] = l->site[i];
				n.used++;
				n.n++;
			}
		n.total = l->total;
		n.by_site = l->by_site;
		free(l->addr);
		free(l->state);
		free(l->size);
		free(l->site);
		*l = n;
	}
	live_put(l, addr, size, site);
}

/* Returns 1 when addr was live. */
static int live_del(struct live *l, uint64_t addr)
{
	size_t i = slot(l, addr);

	if (l->state[i] != S_USED || l->addr[i] != addr)
		return 0;
	l->total -= l->size[i];
	sites_add(&l->by_site, l->site[i], -(i128)l->size[i], -1);
	l->state[i] = S_GONE;
	l->n--;
	return 1;
}

/* the sites holding the most of what is live, into top: the largest first, ties by site id */
static size_t top_sites(const struct live *l, struct td_snap_site *top)
{
	const struct sites *t = &l->by_site;
	i128 bytes[TD_SNAP_SITES];
	size_t n = 0, i, k;

	for (i = 0; i < t->cap; i++) {
		struct td_snap_site x;
		if (!t->key[i] || !t->blocks[i])
			continue;
		x.site = t->key[i] - 1;
		x.blocks = t->blocks[i];
		for (k = n; k > 0 && (t->bytes[i] > bytes[k - 1] || (t->bytes[i] == bytes[k - 1] &&
								    x.site < top[k - 1].site)); k--)
			;
		if (k >= TD_SNAP_SITES)
			continue;
		if (n < TD_SNAP_SITES)
			n++;
		memmove(top + k + 1, top + k, (n - 1 - k) * sizeof(*top));
		memmove(bytes + k + 1, bytes + k, (n - 1 - k) * sizeof(*bytes));
		top[k] = x;
		bytes[k] = t->bytes[i];
	}
	for (i = 0; i < n; i++)
		top[i].bytes = clamp64(bytes[i]);
	return n;
}

/* A copy of src in *dst (uninitialised before). */
static void live_copy(struct live *dst, const struct live *src)
{
	const struct sites *t = &src->by_site;

	*dst = *src;
	dst->addr = td_malloc(src->cap * sizeof(*dst->addr));
	dst->state = td_malloc(src->cap);
	dst->size = td_malloc(src->cap * sizeof(*dst->size));
	dst->site = td_malloc(src->cap * sizeof(*dst->site));
	memcpy(dst->addr, src->addr, src->cap * sizeof(*dst->addr));
	memcpy(dst->state, src->state, src->cap);
	memcpy(dst->size, src->size, src->cap * sizeof(*dst->size));
	memcpy(dst->site, src->site, src->cap * sizeof(*dst->site));
	sites_alloc(&dst->by_site, t->cap);
	dst->by_site.n = t->n;
	memcpy(dst->by_site.key, t->key, t->cap * sizeof(*t->key));
	memcpy(dst->by_site.bytes, t->bytes, t->cap * sizeof(*t->bytes));
	memcpy(dst->by_site.blocks, t->blocks, t->cap * sizeof(*t->blocks));
}

/* What was live on sd's device when the trace began, in *start (uninitialised before): the
 * blocks it frees without having allocated them, and the blocks live at its end that it never
 * allocated, their site `before` unless the snapshot names one. */
static void live_at_start(const struct sdev *sd, const struct sblock *blk, size_t nblk,
			  uint32_t before, struct live *start)
{
	const struct sevent *ev = sd->ev.data;
	struct live known;
	size_t i, b;

	live_init(&known);
	live_init(start);
	for (i = 0; i < sd->ev.len; i++)
		if (ev[i].act == A_ALLOC)
			live_add(&known, ev[i].addr, ev[i].size, ev[i].site);
		else if (ev[i].act == A_FREE_DONE && !live_del(&known, ev[i].addr))
			live_add(start, ev[i].addr, ev[i].size, before);
	for (b = 0; b < nblk; b++) {
		const struct sblock *x = &blk[b];
		if (!live_has(&known, x->addr) && !live_has(start, x->addr))
			live_add(start, x->addr, x->size, x->site ? x->site : before);
	}
	live_free(&known);
}

/* sd's blocks live at the snapshot are blk[0..nblk) */
static void replay(struct td_snapshot *s, struct sdev *sd, const struct sblock *blk,
		   size_t nblk, struct td_snap_dev *out)
{
	const struct sevent *ev = sd->ev.data;
	size_t n = sd->ev.len, i, no = 0;
	struct live start, live;
	static const char pre[] = "(allocated before the trace)";
	uint32_t before = td_strtab_intern(&s->strs, pre, sizeof(pre) - 1);
	i128 peak;

	live_at_start(sd, blk, nblk, before, &start);
	live_copy(&live, &start);
	out->start_allocated = clamp64(live.total);
	peak = live.total;
	out->peak_entry = -1;
	out->peak_time_us = -1;
	for (i = 0; i < n; i++) /* pass 2: the peak */
		if (ev[i].act == A_ALLOC || ev[i].act == A_FREE_DONE) {
			if (ev[i].act == A_ALLOC)
				live_add(&live, ev[i].addr, ev[i].size, ev[i].site);
			else if (!live_del(&live, ev[i].addr))
				out->unmatched_frees++;
			if (live.total > peak) {
				peak = live.total;
				out->peak_entry = (int64_t)i;
				out->peak_time_us = ev[i].time_us;
			}
		} else if (ev[i].act == A_OOM) {
			no++;
		}
	live_free(&live);
	out->peak = clamp64(peak);
	/* pass 3: again to the peak and to each oom, for what was live there */
	out->ooms = td_calloc(no ? no : 1, sizeof(*out->ooms));
	live_copy(&live, &start);
	live_free(&start);
	if (out->peak_entry < 0)
		out->ntop = top_sites(&live, out->top);
	for (i = 0; i < n; i++) {
		if (ev[i].act == A_ALLOC)
			live_add(&live, ev[i].addr, ev[i].size, ev[i].site);
		else if (ev[i].act == A_FREE_DONE)
			live_del(&live, ev[i].addr);
		else if (ev[i].act == A_OOM) {
			struct td_snap_oom *o = &out->ooms[out->nooms++];
			o->index = i;
			o->time_us = ev[i].time_us;
			o->requested = ev[i].size;
			o->device_free = ev[i].device_free;
			o->allocated = clamp64(live.total);
			o->site = ev[i].site;
			o->ntop = top_sites(&live, o->top);
		}
		if ((int64_t)i == out->peak_entry)
			out->ntop = top_sites(&live, out->top);
	}
	live_free(&live);
}

static int by_device(const void *a, const void *b)
{
	const struct sdev *x = a, *y = b;
	return (x->device > y->device) - (x->device < y->device);
}

/* blocks by device, in the order read within one */
static int block_order(const void *a, const void *b)
{
	const struct sblock *x = a, *y = b;
	if (x->device != y->device)
		return (x->device > y->device) - (x->device < y->device);
	return (x->order > y->order) - (x->order < y->order);
}

int td_snapshot_read(struct td_input *in, const char *name, struct td_snapshot *s,
		     struct td_error *err)
{
	struct reader r;
	yajl_handle h;
	unsigned char buf[1 << 16];
	ssize_t n;
	uint64_t offset = 0, line = 1, line_start = 0;
	int rc = 0;
	size_t i, b;

	memset(s, 0, sizeof(*s));
	td_strtab_init(&s->strs);
	memset(&r, 0, sizeof(r));
	r.s = s;
	td_vec_init(&r.devs, sizeof(struct sdev));
	td_vec_init(&r.blocks, sizeof(struct sblock));
	h = yajl_alloc(&callbacks, NULL, &r);
	for (;;) {
		yajl_status st;
		n = td_input_read(in, buf, sizeof(buf), err);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		st = n ? yajl_parse(h, buf, (size_t)n) : yajl_complete_parse(h);
		if (st != yajl_status_ok) {
			size_t k = n ? yajl_get_bytes_consumed(h) : 0, j;
			for (j = 0; j < k && j < (size_t)n; j++)
				if (buf[j] == '\n') {
					line++;
					line_start = offset + j + 1;
				}
			err->has_pos = 1;
			err->offset = offset + k;
			err->line = (uint32_t)line;
			err->col = (uint32_t)(offset + k - line_start + 1);
			rc = td_error_set(err, r.failed ? TD_EFORMAT : TD_EPARSE, "%s:%u:%u (byte %llu): "
					  "%s", name, err->line, err->col, (unsigned long long)err->offset,
					  r.failed ? r.why : n ? "not valid JSON" : "the JSON ends early");
			break;
		}
		if (!n)
			break;
		for (i = 0; i < (size_t)n; i++)
			if (buf[i] == '\n') {
				line++;
				line_start = offset + i + 1;
			}
		offset += (uint64_t)n;
	}
	yajl_free(h);
	if (!rc && !r.devs.len && !r.blocks.len)
		rc = td_error_set(err, TD_EFORMAT, "%s: no \"segments\" or \"device_traces\": not a "
				  "memory snapshot", name);
	if (!rc) {
		struct sblock *blk = r.blocks.data;
		for (b = 0; b < r.blocks.len; b++) { /* every device with live blocks is reported */
			dev_of(&r, blk[b].device);
			blk[b].order = b;
		}
		if (r.devs.len > 1)
			qsort(r.devs.data, r.devs.len, sizeof(struct sdev), by_device);
		if (r.blocks.len > 1)
			qsort(blk, r.blocks.len, sizeof(*blk), block_order);
		s->ndev = r.devs.len;
		s->dev = td_calloc(s->ndev ? s->ndev : 1, sizeof(*s->dev));
		for (i = 0, b = 0; i < r.devs.len; i++) {
			struct sdev *sd = &TD_VEC_AT(&r.devs, struct sdev, i);
			struct td_snap_dev *d = &s->dev[i];
			size_t first;
			i128 allocated = 0;
			while (b < r.blocks.len && blk[b].device < sd->device)
				b++;
			for (first = b; b < r.blocks.len && blk[b].device == sd->device; b++) {
				allocated += blk[b].size;
				d->blocks++;
			}
			d->device = sd->device;
			d->reserved = sd->reserved;
			d->segments = sd->segments;
			d->events = sd->ev.len;
			d->allocated = clamp64(allocated);
			replay(s, sd, b > first ? blk + first : NULL, b - first, d);
		}
	}
	for (i = 0; i < r.devs.len; i++)
		td_vec_free(&TD_VEC_AT(&r.devs, struct sdev, i).ev);
	td_vec_free(&r.devs);
	free(r.dmap);
	td_vec_free(&r.blocks);
	if (rc)
		td_snapshot_free(s);
	return rc;
}

void td_snapshot_free(struct td_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->ndev; i++)
		free(s->dev[i].ooms);
	free(s->dev);
	td_strtab_free(&s->strs);
	memset(s, 0, sizeof(*s));
}
