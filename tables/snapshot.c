/* SPDX-License-Identifier: MIT */
/* A caching-allocator snapshot replayed (tables/snapshot.h): read into its model by
 * parser/snapshot.c, then per device the allocated memory replayed over its trace: the live
 * blocks and the bytes per site, the peak and each oom with the sites holding the most. */
#include "tables/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "common/strtab.h"
#include "parser/snapshot.h"
#include "analysis/names.h"

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
	uint8_t *hint;       /* its category and the rule that said so (TD_SNAP_HINT) */
	int64_t *size;
	uint32_t *site;
	size_t cap, n, used;
	i128 total;
	struct sites by_site;
	i128 cat_bytes[TD_SNAP_NCAT][TD_SNAP_NRULE]; /* live bytes and blocks by (category, rule) */
	int64_t cat_blocks[TD_SNAP_NCAT][TD_SNAP_NRULE];
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
	l->hint = td_malloc(cap);
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
	free(l->hint);
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

/* a live block of hint h and size bytes counted in (or, by -1, out of) its category */
static void cat_add(struct live *l, uint8_t h, int64_t size, int sign)
{
	unsigned c = td_snap_hint_cat(h), r = td_snap_hint_rule(h);

	if (c >= TD_SNAP_NCAT || r >= TD_SNAP_NRULE)
		c = r = 0;
	l->cat_bytes[c][r] += sign * (i128)size;
	l->cat_blocks[c][r] += sign;
}

static void live_put(struct live *l, uint64_t addr, int64_t size, uint32_t site, uint8_t hint)
{
	size_t i = slot(l, addr);

	if (l->state[i] == S_USED && l->addr[i] == addr) { /* allocated twice without a free: */
		l->total -= l->size[i];                     /* the later one counts */
		sites_add(&l->by_site, l->site[i], -(i128)l->size[i], -1);
		cat_add(l, l->hint[i], l->size[i], -1);
	} else {
		if (l->state[i] == S_EMPTY)
			l->used++;
		l->n++;
	}
	l->state[i] = S_USED;
	l->addr[i] = addr;
	l->size[i] = size;
	l->site[i] = site;
	l->hint[i] = hint;
	l->total += size;
	sites_add(&l->by_site, site, size, 1);
	cat_add(l, hint, size, 1);
}

static void live_add(struct live *l, uint64_t addr, int64_t size, uint32_t site, uint8_t hint)
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
				n.hint[j] = l->hint[i];
				n.used++;
				n.n++;
			}
		n.total = l->total;
		n.by_site = l->by_site;
		memcpy(n.cat_bytes, l->cat_bytes, sizeof(n.cat_bytes));
		memcpy(n.cat_blocks, l->cat_blocks, sizeof(n.cat_blocks));
		free(l->addr);
		free(l->state);
		free(l->hint);
		free(l->size);
		free(l->site);
		*l = n;
	}
	live_put(l, addr, size, site, hint);
}

/* Returns 1 when addr was live. */
static int live_del(struct live *l, uint64_t addr)
{
	size_t i = slot(l, addr);

	if (l->state[i] != S_USED || l->addr[i] != addr)
		return 0;
	l->total -= l->size[i];
	sites_add(&l->by_site, l->site[i], -(i128)l->size[i], -1);
	cat_add(l, l->hint[i], l->size[i], -1);
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

static int by_bytes(const void *x, const void *y)
{
	const struct td_snap_site *a = x, *b = y;

	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* every site holding live blocks, into a new array in *out: the largest first */
static size_t all_sites(const struct live *l, struct td_snap_site **out)
{
	const struct sites *t = &l->by_site;
	size_t n = 0, i;

	*out = td_malloc((t->n ? t->n : 1) * sizeof(**out));
	for (i = 0; i < t->cap; i++)
		if (t->key[i] && t->blocks[i]) {
			(*out)[n].site = t->key[i] - 1;
			(*out)[n].bytes = clamp64(t->bytes[i]);
			(*out)[n++].blocks = t->blocks[i];
		}
	if (n > 1)
		qsort(*out, n, sizeof(**out), by_bytes);
	return n;
}

/* what is live, by category and by the rule that inferred it */
static void cats_of(const struct live *l, struct td_snap_cats *out)
{
	unsigned c, r;

	memset(out, 0, sizeof(*out));
	for (c = 0; c < TD_SNAP_NCAT; c++) {
		i128 sum = 0;
		int64_t blocks = 0;
		for (r = 0; r < TD_SNAP_NRULE; r++) {
			sum += l->cat_bytes[c][r];
			blocks += l->cat_blocks[c][r];
			out->c[c].rule_bytes[r] = clamp64(l->cat_bytes[c][r]);
			out->c[c].rule_blocks[r] = (uint64_t)(l->cat_blocks[c][r] > 0 ?
							      l->cat_blocks[c][r] : 0);
		}
		out->c[c].bytes = clamp64(sum);
		out->c[c].blocks = (uint64_t)(blocks > 0 ? blocks : 0);
	}
}

/* the sites live at the peak: the top ones and all of them; its categories */
static void at_peak(const struct live *l, struct td_snap_dev *out)
{
	out->ntop = top_sites(l, out->top);
	out->nat_peak = all_sites(l, &out->at_peak);
	cats_of(l, &out->cats);
}

/* A copy of src in *dst (uninitialised before). */
static void live_copy(struct live *dst, const struct live *src)
{
	const struct sites *t = &src->by_site;

	*dst = *src;
	dst->addr = td_malloc(src->cap * sizeof(*dst->addr));
	dst->state = td_malloc(src->cap);
	dst->hint = td_malloc(src->cap);
	dst->size = td_malloc(src->cap * sizeof(*dst->size));
	dst->site = td_malloc(src->cap * sizeof(*dst->site));
	memcpy(dst->addr, src->addr, src->cap * sizeof(*dst->addr));
	memcpy(dst->state, src->state, src->cap);
	memcpy(dst->hint, src->hint, src->cap);
	memcpy(dst->size, src->size, src->cap * sizeof(*dst->size));
	memcpy(dst->site, src->site, src->cap * sizeof(*dst->site));
	sites_alloc(&dst->by_site, t->cap);
	dst->by_site.n = t->n;
	memcpy(dst->by_site.key, t->key, t->cap * sizeof(*t->key));
	memcpy(dst->by_site.bytes, t->bytes, t->cap * sizeof(*t->bytes));
	memcpy(dst->by_site.blocks, t->blocks, t->cap * sizeof(*t->blocks));
}

/* A device's Optimizer.step and zero_grad annotations: per kind, their times and stages */
struct windows {
	int64_t *t[2];
	uint8_t *start[2];
	size_t n[2];
};

static void windows_of(const struct td_snap_doc *doc, int32_t device, struct windows *w)
{
	const struct td_snap_ann *a = doc->anns.data;
	size_t i, k;

	memset(w, 0, sizeof(*w));
	for (k = 0; k < 2; k++) {
		w->t[k] = td_malloc((doc->anns.len ? doc->anns.len : 1) * sizeof(*w->t[k]));
		w->start[k] = td_malloc(doc->anns.len ? doc->anns.len : 1);
	}
	for (i = 0; i < doc->anns.len; i++) /* by device, then time */
		if (a[i].device == device && a[i].kind < 2) {
			k = a[i].kind;
			w->t[k][w->n[k]] = a[i].time_us;
			w->start[k][w->n[k]++] = a[i].start;
		}
}

static void windows_free(struct windows *w)
{
	free(w->t[0]);
	free(w->t[1]);
	free(w->start[0]);
	free(w->start[1]);
}

/* time t (us) is inside an annotation of kind: the last of its stages at or before t began one */
static int inside(const struct windows *w, unsigned kind, int64_t t)
{
	size_t lo;
	const int64_t *v = w->t[kind];

	if (t < 0 || !w->n[kind])
		return 0;
	TD_LOWER_BOUND(lo, w->n[kind], v[mid] <= t); /* the first after t */
	return lo > 0 && w->start[kind][lo - 1];
}

/* the category of an allocation in the trace: its frames' (or user_metadata's) when they
 * tell; else allocated inside Optimizer.step; else no frames where the snapshot has some */
static uint8_t alloc_hint(const struct td_snap_event *e, const struct windows *w, int frames)
{
	unsigned r = td_snap_hint_rule(e->hint);

	if (r >= TD_RULE_METADATA)
		return e->hint;
	if (inside(w, TD_SNAP_ANN_STEP, e->time_us))
		return TD_SNAP_HINT(TD_CAT_OPTIMIZER, TD_RULE_STEP);
	if (r == TD_RULE_NO_FRAMES && frames)
		return TD_SNAP_HINT(TD_CAT_AUTOGRAD, TD_RULE_ENGINE);
	return TD_SNAP_HINT(TD_CAT_UNKNOWN, r);
}

/* What was live on sd's device when the trace began, in *start (uninitialised before): the
 * blocks it frees without having allocated them (gradients when freed inside zero_grad,
 * optimizer state inside step), and the blocks live at its end that it never allocated (by
 * their frames, else parameters), their site `before` unless the snapshot names one. */
static void live_at_start(const struct td_snap_devlog *sd, const struct td_snap_block *blk, size_t nblk,
			  uint32_t before, const struct windows *w, struct live *start)
{
	struct td_snap_ev_it it;
	struct td_snap_event e;
	struct live known;
	size_t b;

	live_init(&known);
	live_init(start);
	for (td_snap_ev_begin(&sd->ev, &it); td_snap_ev_next(&it, &e);)
		if (e.act == TD_SNAP_ALLOC)
			live_add(&known, e.addr, e.size, e.site, 0);
		else if (e.act == TD_SNAP_FREE_DONE && !live_del(&known, e.addr))
			live_add(start, e.addr, e.size, before,
				 inside(w, TD_SNAP_ANN_ZERO_GRAD, e.time_us)
				 ? TD_SNAP_HINT(TD_CAT_GRADIENT, TD_RULE_ZERO_GRAD)
				 : inside(w, TD_SNAP_ANN_STEP, e.time_us)
				 ? TD_SNAP_HINT(TD_CAT_OPTIMIZER, TD_RULE_STEP_FREE)
				 : TD_SNAP_HINT(TD_CAT_UNKNOWN, TD_RULE_BEFORE));
	for (b = 0; b < nblk; b++) {
		const struct td_snap_block *x = &blk[b];
		if (!live_has(&known, x->addr) && !live_has(start, x->addr))
			live_add(start, x->addr, x->size,
				 td_snap_hint_rule(x->hint) != TD_RULE_NO_FRAMES ? x->site : before,
				 td_snap_hint_rule(x->hint) >= TD_RULE_METADATA ? x->hint
				 : TD_SNAP_HINT(TD_CAT_PARAMETER, TD_RULE_PERSIST));
	}
	live_free(&known);
}

/* backward's: an autograd detail by its frames, its thread or its compile_context */
static int by_backward(uint8_t h)
{
	unsigned r = td_snap_hint_rule(h);

	return td_snap_hint_cat(h) == TD_CAT_AUTOGRAD &&
	       (r == TD_RULE_BACKWARD || r == TD_RULE_ENGINE || r == TD_RULE_COMPILE);
}

/* Optimizer.step begins: what backward made and is still live is a gradient. pending: the
 * addresses backward allocated since the last step began (each looked up once, so that many
 * steps cost no more than the allocations), emptied. */
static void grads_at_step(struct live *l, struct td_vec *pending)
{
	size_t k;

	for (k = 0; k < pending->len; k++) {
		uint64_t a = TD_VEC_AT(pending, uint64_t, k);
		size_t i = slot(l, a);
		if (l->state[i] != S_USED || l->addr[i] != a || !by_backward(l->hint[i]))
			continue;
		cat_add(l, l->hint[i], l->size[i], -1);
		l->hint[i] = TD_SNAP_HINT(TD_CAT_GRADIENT, TD_RULE_GRAD_LIFE);
		cat_add(l, l->hint[i], l->size[i], 1);
	}
	pending->len = 0;
}

/* why an oom failed: reserved then, and whether free memory would have held the request */
static void oom_cause(struct td_snap_oom *o, int64_t reserved, int64_t largest_free)
{
	i128 spare = (i128)reserved - o->allocated;

	o->reserved = reserved < 0 ? 0 : reserved;
	o->largest_free = largest_free > 0 ? largest_free : -1;
	if (spare < 0)
		spare = 0;
	if (o->device_free > 0)
		spare += o->device_free;
	o->fragmented = o->requested > 0 && spare >= o->requested;
}

/* sd's blocks live at the snapshot are blk[0..nblk); w its annotations; frames: the snapshot
 * has frames */
static void replay(struct td_snapshot *s, struct td_snap_devlog *sd, const struct td_snap_block *blk,
		   size_t nblk, const struct windows *w, int frames, struct td_snap_dev *out)
{
	struct td_snap_ev_it it;
	struct td_snap_event e;
	size_t i, no = 0;
	struct live start, live;
	static const char pre[] = "(allocated before the trace)";
	uint32_t before = td_strtab_intern(&s->strs, pre, sizeof(pre) - 1);
	i128 peak, seg_after = 0, rpeak;
	size_t steps = 0; /* Optimizer.step starts passed */
	struct td_vec pending; /* backward's allocations since the last step began */

	live_at_start(sd, blk, nblk, before, w, &start);
	live_copy(&live, &start);
	out->start_allocated = clamp64(live.total);
	peak = live.total;
	out->peak_entry = -1;
	out->peak_time_us = -1;
	/* pass 2: the peak; the segments mapped and released over the trace */
	for (i = 0, td_snap_ev_begin(&sd->ev, &it); td_snap_ev_next(&it, &e); i++)
		if (e.act == TD_SNAP_SEG_ALLOC)
			seg_after -= e.size;
		else if (e.act == TD_SNAP_SEG_FREE)
			seg_after += e.size;
		else if (e.act == TD_SNAP_ALLOC || e.act == TD_SNAP_FREE_DONE) {
			if (e.act == TD_SNAP_ALLOC)
				live_add(&live, e.addr, e.size, e.site, 0);
			else if (!live_del(&live, e.addr))
				out->unmatched_frees++;
			if (live.total > peak) {
				peak = live.total;
				out->peak_entry = (int64_t)i;
				out->peak_time_us = e.time_us;
			}
		} else if (e.act == TD_SNAP_OOM) {
			no++;
		}
	live_free(&live);
	out->peak = clamp64(peak);
	/* pass 3: again to the peak and to each oom, for what was live there; reserved then is
	 * the snapshot's less the segments mapped after it, plus those released after it */
	out->ooms = td_calloc(no ? no : 1, sizeof(*out->ooms));
	live_copy(&live, &start);
	live_free(&start);
	if (out->peak_entry < 0)
		at_peak(&live, out);
	td_vec_init(&pending, sizeof(uint64_t));
	for (i = 0; i < live.cap && w->n[TD_SNAP_ANN_STEP]; i++) /* backward's from before */
		if (live.state[i] == S_USED && by_backward(live.hint[i]))
			*(uint64_t *)td_vec_push(&pending) = live.addr[i];
	rpeak = (i128)out->reserved + seg_after;
	for (i = 0, td_snap_ev_begin(&sd->ev, &it); td_snap_ev_next(&it, &e); i++) {
		if (e.act == TD_SNAP_SEG_ALLOC)
			seg_after += e.size;
		else if (e.act == TD_SNAP_SEG_FREE)
			seg_after -= e.size;
		if ((i128)out->reserved + seg_after > rpeak)
			rpeak = (i128)out->reserved + seg_after;
		for (; e.time_us >= 0 && steps < w->n[TD_SNAP_ANN_STEP] &&
		       w->t[TD_SNAP_ANN_STEP][steps] <= e.time_us; steps++)
			if (w->start[TD_SNAP_ANN_STEP][steps])
				grads_at_step(&live, &pending);
		if (e.act == TD_SNAP_ALLOC) {
			uint8_t h = alloc_hint(&e, w, frames);
			live_add(&live, e.addr, e.size, e.site, h);
			if (by_backward(h) && w->n[TD_SNAP_ANN_STEP])
				*(uint64_t *)td_vec_push(&pending) = e.addr;
		}
		else if (e.act == TD_SNAP_FREE_DONE)
			live_del(&live, e.addr);
		else if (e.act == TD_SNAP_OOM) {
			struct td_snap_oom *o = &out->ooms[out->nooms++];
			o->index = i;
			o->time_us = e.time_us;
			o->requested = e.size;
			o->device_free = e.device_free;
			o->allocated = clamp64(live.total);
			o->site = e.site;
			o->ntop = top_sites(&live, o->top);
			cats_of(&live, &o->cats);
			oom_cause(o, clamp64((i128)out->reserved + seg_after), sd->largest_free);
		}
		if ((int64_t)i == out->peak_entry)
			at_peak(&live, out);
	}
	live_free(&live);
	td_vec_free(&pending);
	out->peak_reserved = clamp64(rpeak);
}

int td_snapshot_read(struct td_input *in, const char *name, struct td_snapshot *s,
		     struct td_error *err)
{
	struct td_snap_doc doc;
	struct td_snap_block *blk;
	int rc, frames = 0;
	size_t i, b;

	memset(s, 0, sizeof(*s));
	td_strtab_init(&s->strs);
	rc = td_snap_doc_read(in, name, &s->strs, td_is_user_frame, td_snap_cat_hint, &doc, err);
	if (rc) {
		td_snapshot_free(s);
		return rc;
	}
	s->has_traces = doc.has_traces;
	s->expandable = doc.expandable;
	blk = doc.blocks.data;
	for (i = 0; i < doc.blocks.len && !frames; i++) /* any frames recorded */
		frames = td_snap_hint_rule(blk[i].hint) != TD_RULE_NO_FRAMES;
	for (i = 0; i < doc.devs.len && !frames; i++) {
		const struct td_snap_devlog *sd = &TD_VEC_AT(&doc.devs, struct td_snap_devlog, i);
		struct td_snap_ev_it it;
		struct td_snap_event e;
		for (td_snap_ev_begin(&sd->ev, &it); !frames && td_snap_ev_next(&it, &e);)
			frames = td_snap_hint_rule(e.hint) != TD_RULE_NO_FRAMES;
	}
	s->ndev = doc.devs.len;
	s->dev = td_calloc(s->ndev ? s->ndev : 1, sizeof(*s->dev));
	for (i = 0, b = 0; i < doc.devs.len; i++) {
		struct td_snap_devlog *sd = &TD_VEC_AT(&doc.devs, struct td_snap_devlog, i);
		struct td_snap_dev *d = &s->dev[i];
		struct windows w;
		size_t first;
		i128 allocated = 0;
		while (b < doc.blocks.len && blk[b].device < sd->device)
			b++;
		for (first = b; b < doc.blocks.len && blk[b].device == sd->device; b++) {
			allocated += blk[b].size;
			d->blocks++;
		}
		d->device = sd->device;
		d->reserved = sd->reserved;
		d->segments = sd->segments;
		d->events = sd->ev.n;
		d->allocated = clamp64(allocated);
		windows_of(&doc, sd->device, &w);
		replay(s, sd, b > first ? blk + first : NULL, b - first, &w, frames, d);
		windows_free(&w);
	}
	td_snap_doc_free(&doc);
	return 0;
}

unsigned td_snap_over(const struct td_snap_dev *d, int64_t cap)
{
	if (cap <= 0)
		return 0;
	return (d->reserved > cap ? TD_SNAP_OVER_RESERVED : 0u) |
	       (d->peak_reserved > cap ? TD_SNAP_OVER_PEAK_RESERVED : 0u) |
	       (d->events && d->peak > cap ? TD_SNAP_OVER_PEAK : 0u) |
	       (d->events && d->start_allocated > cap ? TD_SNAP_OVER_START : 0u);
}

void td_snapshot_free(struct td_snapshot *s)
{
	size_t i;

	for (i = 0; i < s->ndev; i++) {
		free(s->dev[i].ooms);
		free(s->dev[i].at_peak);
	}
	free(s->dev);
	td_strtab_free(&s->strs);
	memset(s, 0, sizeof(*s));
}
