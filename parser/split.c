/* SPDX-License-Identifier: MIT */
/* Split-parallel reading of a trace: the input (plain, or decompressed on this thread) is cut
 * into blocks at event boundaries - a `}` WS* `,` WS* `{`, one whose white space holds a
 * newline preferred (yajl rejects a raw newline inside a string, so that one lies outside) -
 * and the blocks are parsed by yajl workers on their own threads, each primed with the
 * document's opening ({"traceEvents":[ or [). One model thread builds the trace from the
 * workers' records in block order, so the model is the sequential reader's: same events, same
 * order, same interning, every count the same.
 *
 * Every cut is verified exactly: the worker of block k must end between two elements of the
 * events array. When one does not (a cut that fell inside a string or a nested array), the
 * blocks after it are dropped and that worker goes on through the rest of the input alone,
 * as the sequential reader would; a parse error in block k is reported only when the cut before
 * it held, at the position the sequential reader gives. Memory holds at most jobs + 2 blocks
 * the model has not built, with their records. */
#include "parser/split.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/vec.h"
#include "parser/builder.h"
#include "parser/input.h"
#include "parser/parser.h"
#include "parser/scan.h"
#include "parser/trace.h"

#define READ_CHUNK ((size_t)256 << 10) /* bytes per read */
#define FORCE_AT ((size_t)32 << 20) /* bytes without a boundary before a forced cut */
#define POOL_MAX 32   /* free buffers kept */
#define MAX_QUEUED 8 /* batches the model has not built, for the block it builds */

struct batch {
	unsigned char *buf;
	size_t len;
};

struct split;

struct blk {
	struct split *owner;
	size_t k;
	unsigned char *buf;        /* its bytes: the separator before it, then its events */
	size_t len, cap, body;     /* body: where its first event starts in buf */
	uint64_t start;            /* absolute offset of buf[0] */
	uint64_t lines, line_start; /* newlines before buf[body]; where that line starts */
	uint64_t body_lines;       /* newlines in the body, the last at body_nl */
	size_t body_nl;
	unsigned char before[48];  /* the input's bytes before the body (error context) */
	size_t before_len;
	int last;                  /* the input ends with this block */
	int forced;                /* cut where no boundary was found: never verified */
	struct td_trace shadow;    /* its worker's scalars and counts */
	struct td_parser *p;
	struct td_vec batches;     /* struct batch, in order */
	size_t consumed;           /* batches the model has built */
	int parsed;                /* its worker is done with it */
	int final;                 /* nothing more will be shipped into it */
	int ok_end;                /* its worker ended between two events */
	int rc;
	struct td_error err;
	int dropped;               /* after a failed cut: its work is thrown away */
};

struct split {
	struct td_input *in;
	struct td_trace *t;
	size_t block, chunk, inflight;
	int array_layout;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct blk **b;
	size_t n, cap;
	size_t next_work;          /* the next block for a worker */
	size_t model_at;           /* the block the model builds */
	int reading_done, stop;    /* no more blocks; no more dispatch (a failed cut, an error) */
	int model_done;
	unsigned char *rest;       /* after a stop: bytes read past the last block */
	size_t rest_len;
	struct td_builder builder;
	struct td_vec batch_pool;  /* unsigned char *, TD_BATCH_BYTES each */
	struct td_vec block_pool;  /* unsigned char *, `bcap` bytes each */
	struct td_vec piece_pool;  /* unsigned char *: the parsers' piece buffers (td_parser_trim) */
	size_t bcap;
	int busy;                  /* workers parsing */
};

/* Free buffers of one size, kept for reuse (under the split's lock): the same few megabytes
 * go round instead of a stream of large mallocs that glibc keeps, per thread, as RSS. */
static void pool_put(struct td_vec *pool, unsigned char *buf)
{
	if (pool->len < POOL_MAX)
		*(unsigned char **)td_vec_push(pool) = buf;
	else
		free(buf);
}

/* --- the model thread ----------------------------------------------------------------------- */

static void *model_main(void *arg)
{
	struct split *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct blk *b;
		while (s->model_at >= s->n && !s->reading_done)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->model_at >= s->n)
			break;
		b = s->b[s->model_at];
		if (b->dropped)
			break;
		/* its records as they come, until it is final */
		for (;;) {
			while (b->consumed == b->batches.len && !b->final && !b->dropped)
				pthread_cond_wait(&s->cv, &s->mu);
			if (b->consumed < b->batches.len) {
				struct batch bt = TD_VEC_AT(&b->batches, struct batch, b->consumed);
				b->consumed++;
				pthread_cond_broadcast(&s->cv); /* a sink may wait for room */
				pthread_mutex_unlock(&s->mu);
				td_builder_add_records(&s->builder, bt.buf, bt.len);
				pthread_mutex_lock(&s->mu);
				if (bt.len <= TD_BATCH_BYTES)
					pool_put(&s->batch_pool, bt.buf);
				else
					free(bt.buf);
				continue;
			}
			break;
		}
		if (b->dropped || !b->final)
			break;
		if (b->cap == s->bcap) /* built: its bytes are needed no more */
			pool_put(&s->block_pool, b->buf);
		else
			free(b->buf);
		b->buf = NULL;
		s->model_at++;
		pthread_cond_broadcast(&s->cv);
		if (b->last || b->rc)
			break;
	}
	s->model_done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* a worker's records into its block, for the model; buffers from the pool */
static unsigned char *sink(void *ctx, unsigned char *full, size_t len, int want)
{
	struct blk *b = ctx;
	struct split *s = b->owner;
	unsigned char *out = NULL;

	pthread_mutex_lock(&s->mu);
	if (full && len) {
		struct batch *bt;
		/* back-pressure on the block the model builds (one read on alone is otherwise
		 * unbounded) */
		while (s->model_at == b->k && b->batches.len - b->consumed >= MAX_QUEUED &&
		       !b->dropped && !s->model_done)
			pthread_cond_wait(&s->cv, &s->mu);
		bt = td_vec_push(&b->batches);
		bt->buf = full;
		bt->len = len;
		pthread_cond_broadcast(&s->cv);
	} else if (full) {
		pool_put(&s->batch_pool, full);
	}
	if (want && s->batch_pool.len)
		out = TD_VEC_AT(&s->batch_pool, unsigned char *, --s->batch_pool.len);
	pthread_mutex_unlock(&s->mu);
	return want && !out ? td_malloc(TD_BATCH_BYTES) : out;
}

/* --- the workers ---------------------------------------------------------------------------- */

static void parse_block(struct split *s, struct blk *b)
{
	unsigned char *piece = NULL;

	pthread_mutex_lock(&s->mu);
	if (s->piece_pool.len)
		piece = TD_VEC_AT(&s->piece_pool, unsigned char *, --s->piece_pool.len);
	pthread_mutex_unlock(&s->mu);
	td_trace_init(&b->shadow);
	b->p = td_parser_new_worker(&b->shadow, sink, b, piece);
	if (!b->p) {
		b->rc = td_error_set(&b->err, TD_ENOMEM, "%s", "cannot start the JSON parser");
		return;
	}
	if (b->k > 0)
		td_parser_prime(b->p, s->array_layout, b->start + b->body, b->lines, b->line_start,
				b->before, b->before_len);
	b->rc = td_parser_feed_counted(b->p, b->buf + b->body, b->len - b->body, b->body_lines,
				       b->body_nl, &b->err);
	td_parser_flush(b->p);
	b->ok_end = !b->rc && (b->last || (!b->forced && td_parser_at_boundary(b->p)));
	if (b->ok_end && !b->last) { /* only the last block's parser, or a failed one's, goes on */
		piece = td_parser_trim(b->p);
		pthread_mutex_lock(&s->mu);
		pool_put(&s->piece_pool, piece);
		pthread_mutex_unlock(&s->mu);
	}
}

static void *worker_main(void *arg)
{
	struct split *s = arg;

	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct blk *b;
		while (s->next_work >= s->n && !s->reading_done && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->stop || s->next_work >= s->n)
			break;
		b = s->b[s->next_work++];
		s->busy++;
		pthread_mutex_unlock(&s->mu);
		parse_block(s, b);
		pthread_mutex_lock(&s->mu);
		s->busy--;
		b->parsed = 1;
		/* a cut that did not hold, or an error: dispatch no more, sort it out below */
		if (!b->ok_end || b->rc)
			s->stop = 1;
		else if (!b->last)
			b->final = 1;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* --- the reader: blocks at verified-to-be cuts ------------------------------------------------ */

static int ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The `}` of the first `}` WS* `,` WS* `{` at or after `from` in buf[0..n) (one with a newline in
 * its white space when there is one before `prefer_by`), or (size_t)-1 with *resume set to where
 * a later search, with more bytes, must start. */
static size_t find_cut(const unsigned char *buf, size_t n, size_t from, size_t prefer_by,
		       size_t *resume)
{
	size_t i, plain = (size_t)-1;

	*resume = n;
	for (i = from; i < n; i++) {
		size_t j;
		int nl = 0, comma = 0;
		const unsigned char *q = memchr(buf + i, '}', n - i);
		if (!q)
			break;
		i = (size_t)(q - buf);
		for (j = i + 1; j < n && ws(buf[j]); j++)
			nl |= buf[j] == '\n';
		if (j < n && buf[j] == ',') {
			comma = 1;
			for (j++; j < n && ws(buf[j]); j++)
				nl |= buf[j] == '\n';
		}
		if (j >= n) { /* the bytes end inside the pattern */
			*resume = i;
			break;
		}
		if (!comma || buf[j] != '{')
			continue;
		if (nl)
			return i;
		if (plain == (size_t)-1)
			plain = i;
		if (i > prefer_by)
			break;
	}
	return plain;
}

/* In the first block of an object document: at least `from`, and past the '[' of the first
 * "traceEvents": [ (whatever comes before it - deviceProperties and the like - holds `},{`
 * too); (size_t)-1 while that is not read yet. */
static size_t events_open(const unsigned char *buf, size_t n, size_t from)
{
	static const char key[] = "\"traceEvents\"";
	const unsigned char *q = buf;

	while ((q = memchr(q, '"', n - (size_t)(q - buf))) != NULL) {
		size_t j = (size_t)(q - buf) + sizeof(key) - 1;
		if (j > n)
			return (size_t)-1;
		if (memcmp(q, key, sizeof(key) - 1)) {
			q++;
			continue;
		}
		while (j < n && ws(buf[j]))
			j++;
		if (j < n && buf[j] == ':') {
			for (j++; j < n && ws(buf[j]); j++)
				;
			if (j < n && buf[j] == '[')
				return j + 1 > from ? j + 1 : from;
		}
		if (j >= n)
			return (size_t)-1;
		q++;
	}
	return (size_t)-1;
}

/* A buffer for a block: from the pool when it is of the usual size. */
static unsigned char *block_buf(struct split *s, size_t cap)
{
	unsigned char *buf = NULL;

	pthread_mutex_lock(&s->mu);
	if (cap == s->bcap && s->block_pool.len)
		buf = TD_VEC_AT(&s->block_pool, unsigned char *, --s->block_pool.len);
	pthread_mutex_unlock(&s->mu);
	return buf ? buf : td_malloc(cap);
}

static struct blk *new_block(struct split *s)
{
	struct blk *b = td_calloc(1, sizeof(*b));

	td_vec_init(&b->batches, sizeof(struct batch));
	b->owner = s;
	pthread_mutex_lock(&s->mu);
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->b = td_realloc(s->b, s->cap * sizeof(*s->b));
	}
	b->k = s->n;
	pthread_mutex_unlock(&s->mu);
	return b;
}

static void publish(struct split *s, struct blk *b)
{
	pthread_mutex_lock(&s->mu);
	s->b[s->n++] = b;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* the last bytes read before a point: for an error's context in the next block */
struct hist {
	unsigned char b[48];
	size_t n;
};

static void roll(struct hist *h, const unsigned char *b, size_t n)
{
	size_t keep;

	if (n >= sizeof(h->b)) {
		memcpy(h->b, b + n - sizeof(h->b), sizeof(h->b));
		h->n = sizeof(h->b);
		return;
	}
	keep = sizeof(h->b) - n < h->n ? sizeof(h->b) - n : h->n;
	memmove(h->b, h->b + h->n - keep, keep);
	memcpy(h->b + keep, b, n);
	h->n = keep + n;
}

/* the block's separator, counted: its lines before the body */
static void place(struct blk *b, uint64_t *lines, uint64_t *line_start)
{
	size_t last;
	uint64_t nl = td_scan_lines(b->buf, b->body, &last);

	if (nl) {
		*lines += nl;
		*line_start = b->start + last + 1;
	}
	b->lines = *lines;
	b->line_start = *line_start;
	nl = td_scan_lines(b->buf + b->body, b->len - b->body, &last);
	b->body_lines = nl;
	b->body_nl = last;
	if (nl) {
		*lines += nl;
		*line_start = b->start + b->body + last + 1;
	}
}

/* Reads the input into blocks; returns 0 or the reader's error. */
static int read_blocks(struct split *s, struct td_error *err,
		       void (*progress)(void *, unsigned long long, unsigned long long),
		       void *pctx, unsigned long long total)
{
	unsigned char *pend = NULL;
	size_t plen = 0, pcap = 0, body = 0, scan = 0;
	uint64_t start = 0, lines = 0, line_start = 0;
	int first = 1, rc = 0;
	struct hist hist = {{0}, 0};

	for (;;) {
		ssize_t r;
		size_t cut;
		/* back-pressure: at most inflight blocks the model has not built */
		pthread_mutex_lock(&s->mu);
		while (s->n - s->model_at >= s->inflight && !s->stop && !s->model_done)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->stop || s->model_done) {
			pthread_mutex_unlock(&s->mu);
			s->rest = pend; /* for a worker that reads on alone */
			s->rest_len = plen;
			pend = NULL;
			break;
		}
		pthread_mutex_unlock(&s->mu);
		if (!pend) {
			pcap = s->bcap;
			pend = block_buf(s, pcap);
		} else if (pcap - plen < s->chunk) {
			pcap *= 2;
			pend = td_realloc(pend, pcap);
		}
		r = td_input_read(s->in, pend + plen, s->chunk, err);
		if (r < 0) {
			rc = (int)r;
			break;
		}
		if (r > 0 && progress)
			progress(pctx, td_input_raw_offset(s->in), total);
		if (first && r > 0) { /* the layout, from the first byte that is not space or a BOM */
			size_t i = 0;
			if (r >= 3 && pend[0] == 0xef && pend[1] == 0xbb && pend[2] == 0xbf)
				i = 3;
			while (i < (size_t)r && ws(pend[i]))
				i++;
			s->array_layout = i < (size_t)r && pend[i] == '[';
			first = 0;
		}
		plen += (size_t)r;
		/* cut full blocks: at the first good boundary past the block size; with none in
		 * max(FORCE_AT, 4 blocks) (one huge event), a forced cut, which its worker will not
		 * verify: the rest is then read by that worker alone */
		while (r > 0 && plen - body > s->block + s->chunk) {
			struct blk *b;
			size_t j, from = body + s->block, resume = scan, keep;
			int forced = 0;
			if (!start && !s->array_layout) /* the first block: past the events' '[' */
				from = events_open(pend, plen, from);
			cut = from == (size_t)-1 ? (size_t)-1
			      : find_cut(pend, plen, from > scan ? from : scan, from + s->chunk, &resume);
			if (cut == (size_t)-1) {
				scan = resume;
				if (plen - body < FORCE_AT || plen - body < 4 * s->block)
					break;
				cut = plen - 1;
				forced = 1;
			}
			b = new_block(s);
			b->buf = pend;
			b->cap = pcap;
			b->len = cut + 1;
			b->body = body;
			b->start = start;
			b->forced = forced;
			memcpy(b->before, hist.b, hist.n);
			b->before_len = hist.n;
			place(b, &lines, &line_start);
			roll(&hist, b->buf + body, cut + 1 - body);
			/* the next block: the separator, then the '{' of its first event */
			keep = plen - cut - 1;
			pend = block_buf(s, pcap);
			memcpy(pend, b->buf + cut + 1, keep);
			publish(s, b);
			start += cut + 1;
			plen = keep;
			scan = 0;
			for (j = 0; j < plen && !forced && pend[j] != '{'; j++)
				;
			body = j;
			roll(&hist, pend, body);
		}
		if (r == 0) { /* the end: what is left is the last block */
			struct blk *b = new_block(s);
			b->buf = pend;
			b->cap = pcap;
			b->len = plen;
			memcpy(b->before, hist.b, hist.n);
			b->before_len = hist.n;
			b->body = body;
			b->start = start;
			b->last = 1;
			place(b, &lines, &line_start);
			pend = NULL;
			publish(s, b);
			break;
		}
	}
	free(pend);
	pthread_mutex_lock(&s->mu);
	s->reading_done = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

/* --- after a cut that did not hold: the block's worker goes on alone ------------------------ */

static int continue_alone(struct split *s, struct blk *b, struct td_error *err,
			  void (*progress)(void *, unsigned long long, unsigned long long),
			  void *pctx, unsigned long long total)
{
	size_t j;
	unsigned char *buf = td_malloc(READ_CHUNK);
	int rc = 0;

	/* the blocks already read after it, whole (their separators too), then the rest */
	pthread_mutex_lock(&s->mu);
	for (j = b->k + 1; j < s->n; j++)
		s->b[j]->dropped = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	for (j = b->k + 1; j < s->n && !rc; j++)
		rc = td_parser_feed(b->p, s->b[j]->buf, s->b[j]->len, &b->err);
	if (!rc && s->rest_len)
		rc = td_parser_feed(b->p, s->rest, s->rest_len, &b->err);
	while (!rc) {
		ssize_t r = td_input_read(s->in, buf, READ_CHUNK, err);
		if (r < 0) {
			free(buf);
			return (int)r;
		}
		if (r == 0)
			break;
		if (progress)
			progress(pctx, td_input_raw_offset(s->in), total);
		rc = td_parser_feed(b->p, buf, (size_t)r, &b->err);
	}
	free(buf);
	b->rc = rc;
	b->last = 1;
	b->ok_end = 1;
	return 0;
}

/* --- the load ------------------------------------------------------------------------------- */

static void intern_cb(void *ctx, const char *name, uint32_t len, uint32_t *id)
{
	*id = td_builder_intern(ctx, name, len);
}

int td_split_load(struct td_input *in, struct td_trace *t, int jobs, size_t block,
		  void (*progress)(void *, unsigned long long, unsigned long long), void *pctx,
		  unsigned long long total, struct td_error *err)
{
	struct split s;
	pthread_t model, *work;
	int started = 0, i, rc = 0, model_ok;
	size_t k, nkeep, fail = (size_t)-1;
	struct blk *last = NULL;
	struct td_parser **ps;
	uint64_t events = 0;

	memset(&s, 0, sizeof(s));
	s.in = in;
	s.t = t;
	s.block = block ? block : TD_SPLIT_BLOCK;
	s.chunk = s.block < READ_CHUNK ? s.block : READ_CHUNK;
	s.bcap = s.block + 2 * s.chunk;
	td_vec_init(&s.batch_pool, sizeof(unsigned char *));
	td_vec_init(&s.block_pool, sizeof(unsigned char *));
	td_vec_init(&s.piece_pool, sizeof(unsigned char *));
	s.inflight = (size_t)jobs + 2; /* the model's, the workers', one read ahead */
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	td_builder_init(&s.builder, t);
	model_ok = pthread_create(&model, NULL, model_main, &s) == 0;
	if (!model_ok) {
		td_builder_free(&s.builder);
		return 1; /* the caller reads sequentially */
	}
	work = td_calloc((size_t)jobs, sizeof(*work));
	for (i = 0; i < jobs; i++)
		if (pthread_create(&work[started], NULL, worker_main, &s) == 0)
			started++;
	if (!started) { /* nothing read yet: the caller reads sequentially */
		pthread_mutex_lock(&s.mu);
		s.reading_done = 1;
		pthread_cond_broadcast(&s.cv);
		pthread_mutex_unlock(&s.mu);
		pthread_join(model, NULL);
		free(work);
		td_builder_free(&s.builder);
		pthread_mutex_destroy(&s.mu);
		pthread_cond_destroy(&s.cv);
		return 1;
	}
	rc = read_blocks(&s, err, progress, pctx, total);
	/* the workers end when every block is parsed, or after a failed one (stop) */
	for (i = 0; i < started; i++)
		pthread_join(work[i], NULL);
	free(work);
	/* the first block that failed or did not end between two events; every block before
	 * next_work is parsed, those after it come after a failure */
	for (k = 0; k < s.next_work; k++)
		if (s.b[k]->rc || !s.b[k]->ok_end) {
			fail = k;
			break;
		}
	if (!rc && fail != (size_t)-1) {
		struct blk *b = s.b[fail];
		if (b->rc) { /* a real error: the cut before it held */
			*err = b->err;
			rc = b->rc;
		} else { /* a cut that did not hold: its worker reads on alone */
			rc = continue_alone(&s, b, err, progress, pctx, total);
			if (!rc && b->rc) {
				*err = b->err;
				rc = b->rc;
			}
		}
	}
	/* which blocks make the trace, and the last of them */
	for (k = 0, nkeep = 0; k < s.n; k++) {
		if (s.b[k]->dropped || !s.b[k]->p)
			break;
		nkeep++;
		last = s.b[k];
		if (last->last)
			break;
	}
	if (!rc && last) { /* the document's end, on the last block's worker */
		for (k = 0; k + 1 < nkeep; k++)
			events += s.b[k]->shadow.n_trace_events;
		rc = td_parser_finish_worker(last->p, events, err);
	}
	pthread_mutex_lock(&s.mu);
	for (k = 0; k < nkeep; k++)
		s.b[k]->final = 1;
	if (rc) /* the model stops where it is */
		for (k = 0; k < s.n; k++)
			s.b[k]->dropped = 1;
	pthread_cond_broadcast(&s.cv);
	pthread_mutex_unlock(&s.mu);
	pthread_join(model, NULL);
	if (!rc) {
		/* the shadows' scalars and counts, in block order */
		ps = td_malloc((nkeep ? nkeep : 1) * sizeof(*ps));
		for (k = 0; k < nkeep; k++) {
			const struct td_trace *sh = &s.b[k]->shadow;
			ps[k] = s.b[k]->p;
			t->n_trace_events += sh->n_trace_events;
			if (k == 0)
				t->layout = sh->layout;
			if (sh->schema_version >= 0)
				t->schema_version = sh->schema_version;
			if (sh->base_time_ns >= 0)
				t->base_time_ns = sh->base_time_ns;
			if (sh->rank >= 0)
				t->rank = sh->rank;
			if (sh->world_size >= 0)
				t->world_size = sh->world_size;
			if (sh->dropped_records >= 0)
				t->dropped_records = sh->dropped_records;
			if (sh->events_close >= 0)
				t->events_close = sh->events_close;
		}
		if (last)
			t->bytes_in = last->shadow.bytes_in;
		if (last && last->shadow.partial) {
			t->partial = 1;
			t->partial_offset = last->shadow.partial_offset;
			memcpy(t->partial_msg, last->shadow.partial_msg, sizeof(t->partial_msg));
		}
		td_parser_merge(ps, nkeep, t, intern_cb, &s.builder);
		td_builder_finish(&s.builder);
		free(ps);
	}
	for (k = 0; k < s.n; k++) {
		struct blk *b = s.b[k];
		size_t j;
		for (j = b->consumed; j < b->batches.len; j++)
			free(TD_VEC_AT(&b->batches, struct batch, j).buf);
		td_vec_free(&b->batches);
		td_parser_free(b->p);
		td_trace_free(&b->shadow);
		free(b->buf);
		free(b);
	}
	free(s.b);
	free(s.rest);
	for (k = 0; k < s.batch_pool.len; k++)
		free(TD_VEC_AT(&s.batch_pool, unsigned char *, k));
	for (k = 0; k < s.block_pool.len; k++)
		free(TD_VEC_AT(&s.block_pool, unsigned char *, k));
	for (k = 0; k < s.piece_pool.len; k++)
		free(TD_VEC_AT(&s.piece_pool, unsigned char *, k));
	td_vec_free(&s.batch_pool);
	td_vec_free(&s.block_pool);
	td_vec_free(&s.piece_pool);
	td_builder_free(&s.builder);
	pthread_mutex_destroy(&s.mu);
	pthread_cond_destroy(&s.cv);
	return rc;
}
