/* SPDX-License-Identifier: MIT */
/* The caching-allocator snapshot's reader (parser/snapshot.h): yajl's callbacks over the
 * document, a stack of contexts saying where each value is (segments, their blocks, the
 * device traces, frames); the devices and blocks kept, then ordered for the replay
 * (tables/snapshot.c). */
#include "parser/snapshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/vec.h"
#include "parser/input.h"
#include "parser/pickle.h"
#include "parser/yajl_ignore.h"

enum ctx {
	X_SKIP, X_TOP, X_SEGS, X_SEG, X_BLOCKS, X_BLOCK, X_FRAMES, X_FRAME, X_TRACES, X_DEVTRACE,
	X_EVENT, X_SETTINGS, X_ANNS, X_ANN,
};
#define MAXD 64

/* a pickle's stack of frames, or one frame, read once: what its next references take */
struct note {
	uint32_t id;         /* a stack's site in strs; a frame's text in frames */
	uint8_t rank, hint, frame;
};

struct reader {
	struct td_strtab *strs;  /* the sites' text */
	int (*is_user_frame)(const char *frame);
	uint8_t (*hint_of)(enum td_snap_hint_of of, const char *text);
	int has_traces;
	unsigned depth;
	uint8_t ctx[MAXD];
	char key[32];
	/* the object being read */
	int32_t seg_device;
	int64_t seg_size, seg_free; /* seg_free: its largest inactive block */
	int expandable;
	size_t seg_first_block; /* the segment's blocks start here in `blocks` */
	uint64_t b_addr;
	int64_t b_size;
	char b_state[32];
	struct td_snap_event e;
	char act[32];
	uint32_t site;       /* of the object whose frames these are */
	int site_rank;       /* 3 user frame, 2 a Python frame, 1 any frame, 0 none */
	uint8_t hint;        /* the object's (TD_SNAP_HINT) */
	uint32_t no_frames;  /* the site of an object without frames: "(no frames)" */
	uint8_t fhint;       /* its stack of frames' */
	char a_name[64], a_stage[16]; /* an external annotation being read */
	int32_t a_device;
	int64_t a_time;
	struct td_vec anns;  /* struct td_snap_ann */
	char f_file[512], f_name[256];
	int64_t f_line;
	int trace_dev;       /* the device_traces index being read */
	uint32_t *note;      /* a pickle's stack of frames being read: where its note goes */
	uint32_t *fnote;     /* a pickle's frame being read: where its note goes */
	struct td_strtab frames; /* a pickle's frames, each once (ids for the notes) */
	struct td_vec notes; /* struct note, each once: a note is 1 + its index */
	uint32_t *nmap;      /* a note's content -> 1 + its index (open addressing; 0 empty) */
	size_t ncap;
	struct td_vec devs;  /* struct td_snap_devlog */
	uint32_t *dmap;      /* device id -> 1 + index in devs (open addressing; 0 empty) */
	size_t dcap;
	struct td_vec blocks; /* struct td_snap_block */
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
	       TD_VEC_AT(&r->devs, struct td_snap_devlog, r->dmap[i] - 1).device != device)
		i = (i + 1) & (r->dcap - 1);
	return i;
}

/* The device's entry, made on first sight: hashed, so 200,000 devices read in linear time. */
static struct td_snap_devlog *dev_of(struct reader *r, int32_t device)
{
	size_t i;
	struct td_snap_devlog *d;

	if ((r->devs.len + 1) * 2 > r->dcap) {
		size_t k;
		free(r->dmap);
		r->dcap = r->dcap ? r->dcap * 2 : 64;
		r->dmap = td_calloc(r->dcap, sizeof(*r->dmap));
		for (k = 0; k < r->devs.len; k++)
			r->dmap[dslot(r, TD_VEC_AT(&r->devs, struct td_snap_devlog, k).device)] = (uint32_t)k + 1;
	}
	i = dslot(r, device);
	if (r->dmap[i])
		return &TD_VEC_AT(&r->devs, struct td_snap_devlog, r->dmap[i] - 1);
	d = td_vec_push(&r->devs);
	memset(d, 0, sizeof(*d));
	d->device = device;
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
	case X_ANN:
		if (!strcmp(r->key, "device"))
			r->a_device = (int32_t)num(s, n);
		else if (!strcmp(r->key, "time_us"))
			r->a_time = num(s, n);
		break;
	default:
		break;
	}
	return 1;
}

/* the stronger of the object's hint and h: a telling rule over none, the lower rule first */
static uint8_t hint_merge(uint8_t cur, uint8_t h)
{
	unsigned rule = td_snap_hint_rule(h), was = td_snap_hint_rule(cur);

	return (rule >= 2 ? was < 2 || rule < was : rule > was) ? h : cur;
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
		if (!strcmp(r->key, "action")) {
			copy(r->act, sizeof(r->act), s, n);
		} else if (r->hint_of && (!strcmp(r->key, "user_metadata") ||
					  !strcmp(r->key, "compile_context"))) {
			char t[256];
			copy(t, sizeof(t), s, n);
			r->hint = hint_merge(r->hint, r->hint_of(r->key[0] == 'u' ? TD_SNAP_HINT_METADATA
								  : TD_SNAP_HINT_COMPILE, t));
		}
		break;
	case X_ANN:
		if (!strcmp(r->key, "name"))
			copy(r->a_name, sizeof(r->a_name), s, n);
		else if (!strcmp(r->key, "stage"))
			copy(r->a_stage, sizeof(r->a_stage), s, n);
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

/* expandable segments: allocator_settings' expandable_segments, or a segment's is_expandable */
static int cb_bool(void *ctx, int v)
{
	struct reader *r = ctx;
	uint8_t c = at(r, r->depth);

	if (v && ((c == X_SETTINGS && !strcmp(r->key, "expandable_segments")) ||
		  (c == X_SEG && !strcmp(r->key, "is_expandable"))))
		r->expandable = 1;
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
	case X_TOP:
		c = !strcmp(r->key, "allocator_settings") ? X_SETTINGS : X_SKIP;
		break;
	case X_ANNS:
		r->a_name[0] = r->a_stage[0] = '\0';
		r->a_device = 0;
		r->a_time = -1;
		c = X_ANN;
		break;
	case X_SEGS:
		r->seg_device = 0;
		r->seg_size = 0;
		r->seg_free = 0;
		r->seg_first_block = r->blocks.len;
		c = X_SEG;
		break;
	case X_BLOCKS:
		r->b_addr = 0;
		r->b_size = 0;
		r->b_state[0] = '\0';
		r->site = 0;
		r->site_rank = 0;
		r->hint = 0;
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
		r->hint = 0;
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

	if (r->depth == 0) /* torch.cuda.memory_snapshot(): the list of segments alone */
		return push(r, X_SEGS);
	switch (at(r, r->depth)) {
	case X_TOP:
		c = !strcmp(r->key, "segments") ? X_SEGS : !strcmp(r->key, "device_traces")
			? X_TRACES : !strcmp(r->key, "external_annotations") ? X_ANNS : X_SKIP;
		if (c == X_TRACES)
			r->has_traces = 1;
		break;
	case X_SEG:
		c = !strcmp(r->key, "blocks") ? X_BLOCKS : X_SKIP;
		break;
	case X_BLOCK:
	case X_EVENT:
		c = !strcmp(r->key, "frames") ? X_FRAMES : X_SKIP;
		r->fhint = 0;
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

static enum td_snap_act act_of(const char *a)
{
	return !strcmp(a, "alloc") ? TD_SNAP_ALLOC : !strcmp(a, "free_requested") ? TD_SNAP_FREE_REQ
		: !strcmp(a, "free_completed") ? TD_SNAP_FREE_DONE : !strcmp(a, "segment_alloc") ||
		!strcmp(a, "segment_map") ? TD_SNAP_SEG_ALLOC : !strcmp(a, "segment_free") ||
		!strcmp(a, "segment_unmap") ? TD_SNAP_SEG_FREE : !strcmp(a, "oom") ? TD_SNAP_OOM
		: TD_SNAP_OTHER;
}

/* A frame just read: is it a better site for its object than the one kept? (innermost first:
 * the first user frame wins, else the first Python frame, else the first frame) */
static void frame_site(struct reader *r, const char *f, size_t n, int rank)
{
	if (rank > r->site_rank) {
		r->site_rank = rank;
		r->site = td_strtab_intern(r->strs, f, n);
	}
}

static size_t nslot(const struct reader *r, const struct note *x)
{
	uint64_t k = (uint64_t)x->id << 24 | (uint64_t)x->frame << 16 | (uint64_t)x->rank << 8 | x->hint;
	size_t i = (size_t)((k * 0x9e3779b97f4a7c15ull) >> 20) & (r->ncap - 1);

	for (; r->nmap[i]; i = (i + 1) & (r->ncap - 1)) {
		const struct note *y = &TD_VEC_AT(&r->notes, struct note, r->nmap[i] - 1);
		if (y->id == x->id && y->frame == x->frame && y->rank == x->rank && y->hint == x->hint)
			break;
	}
	return i;
}

/* a note for a pickle's container: 1 + the index of its content, kept once (a stack's site,
 * rank and hint are shared by many stacks), 0 when there are too many */
static uint32_t note_of(struct reader *r, uint32_t id, int rank, uint8_t hint, int frame)
{
	struct note x = {id, (uint8_t)rank, hint, (uint8_t)frame};
	size_t i;

	if (r->notes.len >= UINT32_MAX / 4)
		return 0;
	if ((r->notes.len + 1) * 2 > r->ncap) {
		size_t k;
		free(r->nmap);
		r->ncap = r->ncap ? r->ncap * 2 : 256;
		r->nmap = td_calloc(r->ncap, sizeof(*r->nmap));
		for (k = 0; k < r->notes.len; k++)
			r->nmap[nslot(r, &TD_VEC_AT(&r->notes, struct note, k))] = (uint32_t)k + 1;
	}
	i = nslot(r, &x);
	if (!r->nmap[i]) {
		*(struct note *)td_vec_push(&r->notes) = x;
		r->nmap[i] = (uint32_t)r->notes.len;
	}
	return r->nmap[i];
}

/* what a frame tells of its object: a rule's hint, or "a frame, telling nothing" */
static uint8_t frame_hint(const struct reader *r, const char *f)
{
	uint8_t h = r->hint_of ? r->hint_of(TD_SNAP_HINT_FRAME, f) : 0;
	return td_snap_hint_rule(h) >= 2 ? h : TD_SNAP_HINT(0, 1);
}

static void frame_done(struct reader *r)
{
	char f[900];
	int rank;
	uint8_t h;

	snprintf(f, sizeof(f), "%s(%lld): %s", r->f_file, (long long)r->f_line, r->f_name);
	rank = r->is_user_frame(f) ? 3 : strstr(f, ".py(") ? 2 : 1;
	h = frame_hint(r, f);
	if (r->fnote) { /* a pickle's frame: its text kept once, the next references read that */
		*r->fnote = note_of(r, td_strtab_intern(&r->frames, f, strlen(f)), rank, h, 1);
		r->fnote = NULL;
	}
	frame_site(r, f, strlen(f), rank);
	r->fhint = hint_merge(r->fhint, h);
}

static int cb_end(void *ctx)
{
	struct reader *r = ctx;
	uint8_t c = at(r, r->depth);

	switch (c) {
	case X_FRAME:
		frame_done(r);
		break;
	case X_FRAMES: /* a pickle's stack of frames: its site kept for its next references */
		if (r->note && r->site_rank)
			*r->note = note_of(r, r->site, r->site_rank, r->fhint, 0);
		r->note = NULL;
		r->hint = hint_merge(r->hint, r->fhint);
		break;
	case X_ANN: {
		int kind = !strncmp(r->a_name, "Optimizer.step#", 15) ? TD_SNAP_ANN_STEP
			: !strncmp(r->a_name, "Optimizer.zero_grad#", 20) ? TD_SNAP_ANN_ZERO_GRAD : -1;
		int start = !strcmp(r->a_stage, "START") ? 1 : !strcmp(r->a_stage, "END") ? 0 : -1;
		if (kind >= 0 && start >= 0 && r->a_time >= 0) {
			struct td_snap_ann *a = td_vec_push(&r->anns);
			a->device = r->a_device;
			a->time_us = r->a_time;
			a->kind = (uint8_t)kind;
			a->start = (uint8_t)start;
			a->order = (uint32_t)(r->anns.len - 1);
		}
		break;
	}
	case X_BLOCK:
		if (!strcmp(r->b_state, "active_allocated") || !strcmp(r->b_state, "active_pending_free")) {
			struct td_snap_block *b = td_vec_push(&r->blocks);
			b->addr = r->b_addr;
			b->size = r->b_size;
			b->site = r->site_rank ? r->site : r->no_frames;
			b->hint = r->hint;
			b->device = -1; /* set at the segment's end */
		} else if (!strcmp(r->b_state, "inactive") && r->b_size > r->seg_free) {
			r->seg_free = r->b_size;
		}
		break;
	case X_SEG: {
		struct td_snap_devlog *d = dev_of(r, r->seg_device);
		size_t i;
		d->reserved = td_sat_add(d->reserved, r->seg_size);
		d->segments++;
		if (r->seg_free > d->largest_free)
			d->largest_free = r->seg_free;
		/* "device" may come after "blocks": the segment's blocks take it now */
		for (i = r->seg_first_block; i < r->blocks.len; i++)
			TD_VEC_AT(&r->blocks, struct td_snap_block, i).device = r->seg_device;
		break;
	}
	case X_EVENT: {
		struct td_snap_devlog *d = dev_of(r, r->trace_dev - 1);
		struct td_snap_event e = r->e;
		e.act = (uint8_t)act_of(r->act);
		e.site = r->site_rank ? r->site : r->no_frames;
		e.hint = r->hint;
		td_snap_ev_put(&d->ev, &e);
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
	td_yajl_ignore, cb_bool, NULL, NULL, cb_number, cb_string,
	cb_start_map, cb_key, cb_end, cb_start_array, cb_end,
};

/* ---- a pickle's hooks (parser/pickle.h): what is built, skipped, kept ---- */

/* the container beginning now is a stack of frames */
static int at_frames(const struct reader *r)
{
	uint8_t c = at(r, r->depth);
	return (c == X_SEG || c == X_BLOCK || c == X_EVENT) && !strcmp(r->key, "frames");
}

/* streamed: the document, the segments, blocks and trace entries and their lists; built (and
 * kept for references): the stacks of frames, and what is skipped */
static int pk_tree(void *ctx)
{
	struct reader *r = ctx;
	uint8_t c = at(r, r->depth);

	if (r->depth == 0 || c == X_SEGS || c == X_BLOCKS || c == X_TRACES || c == X_DEVTRACE)
		return 0;
	if (c == X_TOP)
		return strcmp(r->key, "segments") && strcmp(r->key, "device_traces");
	return !(c == X_SEG && !strcmp(r->key, "blocks"));
}

/* a stack of frames met again: its site, from its note, without reading it again */
static int pk_enter(void *ctx, uint32_t *note)
{
	struct reader *r = ctx;

	const struct note *x = *note && *note <= r->notes.len
		? &TD_VEC_AT(&r->notes, struct note, *note - 1) : NULL;

	if (at(r, r->depth) == X_FRAMES) { /* a frame dict */
		if (!x) {
			r->fnote = note;
			return 0;
		}
		frame_site(r, td_strtab_str(&r->frames, x->id), td_strtab_len(&r->frames, x->id),
			   x->rank);
		r->fhint = hint_merge(r->fhint, x->hint);
		return 1;
	}
	if (!at_frames(r))
		return 0;
	if (x) {
		r->site = x->id;
		r->site_rank = x->rank;
		r->hint = hint_merge(r->hint, x->hint);
		return 1;
	}
	r->note = note;
	return 0;
}

static int pk_keep(void *ctx)
{
	uint8_t c = at(ctx, ((struct reader *)ctx)->depth);
	return c == X_FRAMES || c == X_FRAME || c == X_SKIP;
}

static ssize_t pk_read(void *src, void *buf, size_t cap, struct td_error *err)
{
	return td_input_read(src, buf, cap, err);
}

/* the pickle (its first byte PROTO's 0x80) streamed into the same callbacks */
static int read_pickle(struct td_input *in, const char *name, struct reader *r,
		       struct td_error *err)
{
	static const struct td_pk_sink proto = {&callbacks, NULL, pk_tree, pk_enter, pk_keep};
	struct td_pk_sink sink = proto;
	int rc;

	sink.ctx = r;
	td_strtab_init(&r->frames);
	td_vec_init(&r->notes, sizeof(struct note));
	rc = td_pickle_read(pk_read, in, name, &sink, err);
	td_strtab_free(&r->frames);
	td_vec_free(&r->notes);
	free(r->nmap);
	if (rc == TD_EFORMAT)
		rc = td_error_set(err, TD_EFORMAT, "%s: byte %llu: %s", name,
				  (unsigned long long)err->offset, r->failed ? r->why :
				  "not a memory snapshot");
	return rc;
}

static int by_device(const void *a, const void *b)
{
	const struct td_snap_devlog *x = a, *y = b;
	return (x->device > y->device) - (x->device < y->device);
}

/* blocks by device, in the order read within one */
static int block_order(const void *a, const void *b)
{
	const struct td_snap_block *x = a, *y = b;
	if (x->device != y->device)
		return (x->device > y->device) - (x->device < y->device);
	return (x->order > y->order) - (x->order < y->order);
}

/* annotations by device, then time, then the order read */
static int ann_order(const void *a, const void *b)
{
	const struct td_snap_ann *x = a, *y = b;
	if (x->device != y->device)
		return (x->device > y->device) - (x->device < y->device);
	if (x->time_us != y->time_us)
		return (x->time_us > y->time_us) - (x->time_us < y->time_us);
	return (x->order > y->order) - (x->order < y->order);
}

int td_snap_doc_read(struct td_input *in, const char *name, struct td_strtab *strs,
		     int (*is_user_frame)(const char *frame),
		     uint8_t (*hint)(enum td_snap_hint_of of, const char *text), struct td_snap_doc *d,
		     struct td_error *err)
{
	struct reader r;
	yajl_handle h;
	unsigned char buf[1 << 16];
	ssize_t n;
	uint64_t offset = 0, line = 1, line_start = 0;
	int rc = 0, pickle;
	size_t i, b;

	memset(d, 0, sizeof(*d));
	memset(&r, 0, sizeof(r));
	r.strs = strs;
	r.is_user_frame = is_user_frame;
	r.hint_of = hint;
	r.no_frames = td_strtab_intern(strs, "(no frames)", 11);
	td_vec_init(&r.devs, sizeof(struct td_snap_devlog));
	td_vec_init(&r.anns, sizeof(struct td_snap_ann));
	td_vec_init(&r.blocks, sizeof(struct td_snap_block));
	n = td_input_read(in, buf, sizeof(buf), err);
	if (n > 0)
		td_input_unread(in, buf, (size_t)n);
	h = yajl_alloc(&callbacks, NULL, &r);
	pickle = n > 0 && buf[0] == 0x80; /* PROTO: _dump_snapshot()'s pickle, whatever its name */
	if (pickle)
		rc = read_pickle(in, name, &r, err);
	else if (n < 0)
		rc = (int)n;
	for (; !rc && !pickle;) {
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
		struct td_snap_block *blk = r.blocks.data;
		for (b = 0; b < r.blocks.len; b++) { /* every device with live blocks is reported */
			dev_of(&r, blk[b].device);
			blk[b].order = b;
		}
		if (r.devs.len > 1)
			qsort(r.devs.data, r.devs.len, sizeof(struct td_snap_devlog), by_device);
		if (r.blocks.len > 1)
			qsort(blk, r.blocks.len, sizeof(*blk), block_order);
		if (r.anns.len > 1)
			qsort(r.anns.data, r.anns.len, sizeof(struct td_snap_ann), ann_order);
	}
	free(r.dmap);
	d->devs = r.devs;
	d->blocks = r.blocks;
	d->anns = r.anns;
	d->has_traces = r.has_traces;
	d->expandable = r.expandable;
	if (rc)
		td_snap_doc_free(d);
	return rc;
}

void td_snap_doc_free(struct td_snap_doc *d)
{
	size_t i;

	for (i = 0; i < d->devs.len; i++)
		td_snap_ev_free(&TD_VEC_AT(&d->devs, struct td_snap_devlog, i).ev);
	td_vec_free(&d->devs);
	td_vec_free(&d->blocks);
	td_vec_free(&d->anns);
	memset(d, 0, sizeof(*d));
}
