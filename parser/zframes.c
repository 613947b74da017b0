/* SPDX-License-Identifier: MIT */
/* Frame-parallel zstd decoding (parser/zframes.h). The calling thread reads the compressed
 * bytes, cuts them into frames (ZSTD_findFrameCompressedSize) and queues a copy of each; the
 * decoders take the queued frames in turn; the caller hands out their output in stream order.
 * At most threads + 1 frames are out at once (queued, being decoded, or decoded and waiting),
 * each at most TD_ZF_FRAME_MAX bytes decoded. */
#include "parser/zframes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "common/alloc.h"
#include "common/error.h"

enum { J_QUEUED, J_RUNNING, J_DONE, J_FAILED };

struct job {
	unsigned char *src;        /* the frame's compressed bytes (a copy) */
	size_t src_len;
	unsigned long long off;    /* where they begin in the stream */
	unsigned char *out;
	size_t out_len, out_cap;
	int state;
};

struct buf {
	unsigned char *p;
	size_t cap;
};

struct td_zframes {
	int fd;
	size_t unit;
	/* compressed bytes read and not yet cut: cbuf[cpos, cpos + clen), at stream offset coff */
	unsigned char *cbuf;
	size_t cpos, clen, ccap;
	unsigned long long coff;
	int eof;
	int cut_done;              /* no more frames are cut: the end, or the rest is not ours */
	int rest;                  /* the bytes from the first frame not handed out are not ours */
	struct job *q;             /* jobs [head, tail) in stream order, slot i % qcap */
	size_t qcap, head, tail, next_run;
	unsigned long long consumed;
	struct buf last;           /* handed out last: back to the pool at the next call */
	struct buf *pool;          /* output buffers for reuse (a fresh 8 MiB of pages per
				    * frame costs more in page faults than the decoding) */
	size_t npool;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	pthread_t *th;
	int nth;
};

static int skippable(const unsigned char *b, size_t n)
{
	return n >= 4 && (b[0] & 0xf0) == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18;
}

/* One frame, whole; 0 when it cannot be decoded here (corrupt, or over TD_ZF_FRAME_MAX). */
static int decode(ZSTD_DCtx *dc, struct job *j)
{
	unsigned long long cs = ZSTD_getFrameContentSize(j->src, j->src_len);
	size_t cap;
	ZSTD_inBuffer ib = {j->src, j->src_len, 0};
	ZSTD_outBuffer ob;

	if (skippable(j->src, j->src_len)) { /* pzstd's sizes, or a user's metadata */
		j->out_len = 0;
		return 1;
	}
	if (!dc || cs == ZSTD_CONTENTSIZE_ERROR)
		return 0;
	if (cs != ZSTD_CONTENTSIZE_UNKNOWN)
		cap = (size_t)cs + 1; /* one over: the end is seen without a second round */
	else
		cap = j->src_len * 8 < ((size_t)1 << 20) ? (size_t)1 << 20 : j->src_len * 8;
	if (cap > TD_ZF_FRAME_MAX)
		cap = TD_ZF_FRAME_MAX;
	ZSTD_DCtx_reset(dc, ZSTD_reset_session_only);
	if (j->out_cap < cap) { /* the pool's buffer (if any) is too small */
		j->out = td_realloc(j->out, cap);
		j->out_cap = cap;
	}
	cap = j->out_cap;
	ob.dst = j->out;
	ob.size = cap;
	ob.pos = 0;
	for (;;) {
		size_t r = ZSTD_decompressStream(dc, &ob, &ib);
		if (ZSTD_isError(r))
			break;
		if (r == 0) { /* the frame is complete (its checksum checked) */
			if (ib.pos != ib.size)
				break;
			j->out_len = ob.pos;
			return 1;
		}
		if (ob.pos < ob.size && ib.pos == ib.size)
			break; /* wants bytes the frame does not have */
		if (ob.pos == ob.size) {
			if (cap >= TD_ZF_FRAME_MAX)
				break;
			cap = cap * 2 < TD_ZF_FRAME_MAX ? cap * 2 : TD_ZF_FRAME_MAX;
			ob.dst = j->out = td_realloc(j->out, cap);
			ob.size = j->out_cap = cap;
		}
	}
	return 0; /* j->out goes back to the pool with the job */
}

static void *decoder(void *arg)
{
	struct td_zframes *z = arg;
	ZSTD_DCtx *dc = ZSTD_createDCtx();

	if (dc)
		ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, 30); /* as the streaming decoder */
	pthread_mutex_lock(&z->mu);
	for (;;) {
		struct job *j;
		int ok;
		while (!z->stop && z->next_run == z->tail)
			pthread_cond_wait(&z->cv, &z->mu);
		if (z->stop)
			break;
		j = &z->q[z->next_run++ % z->qcap];
		j->state = J_RUNNING;
		pthread_mutex_unlock(&z->mu);
		ok = decode(dc, j);
		pthread_mutex_lock(&z->mu);
		j->state = ok ? J_DONE : J_FAILED;
		pthread_cond_broadcast(&z->cv);
	}
	pthread_mutex_unlock(&z->mu);
	ZSTD_freeDCtx(dc);
	return NULL;
}

struct td_zframes *td_zf_start(int threads, int fd, size_t unit, const unsigned char *have,
			       size_t have_len, int eof)
{
	struct td_zframes *z = td_calloc(1, sizeof(*z));
	int i;

	z->fd = fd;
	z->unit = unit;
	z->ccap = have_len + 2 * unit;
	z->cbuf = td_malloc(z->ccap);
	if (have_len)
		memcpy(z->cbuf, have, have_len);
	z->clen = have_len;
	z->eof = eof;
	z->qcap = (size_t)threads + 1;
	z->q = td_calloc(z->qcap, sizeof(*z->q));
	z->pool = td_calloc(z->qcap + 1, sizeof(*z->pool));
	pthread_mutex_init(&z->mu, NULL);
	pthread_cond_init(&z->cv, NULL);
	z->th = td_calloc((size_t)threads, sizeof(*z->th));
	for (i = 0; i < threads; i++)
		if (pthread_create(&z->th[z->nth], NULL, decoder, z) == 0)
			z->nth++;
	if (!z->nth) {
		td_zf_free(z);
		return NULL;
	}
	return z;
}

/* Reads `unit` more bytes into cbuf. */
static int read_more(struct td_zframes *z, struct td_error *err)
{
	ssize_t r;

	if (z->cpos && z->cpos + z->clen + z->unit > z->ccap) { /* the cut part goes first */
		memmove(z->cbuf, z->cbuf + z->cpos, z->clen);
		z->cpos = 0;
	}
	if (z->cpos + z->clen + z->unit > z->ccap) {
		z->ccap = (z->clen + z->unit) * 2;
		z->cbuf = td_realloc(z->cbuf, z->ccap);
	}
	do
		r = read(z->fd, z->cbuf + z->cpos + z->clen, z->unit);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return td_error_set(err, TD_EIO, "read error: %s", strerror(errno));
	if (r == 0)
		z->eof = 1;
	z->clen += (size_t)r;
	return 0;
}

/* The next frame into *j: 1, or 0 when no more are cut here (the end, or the rest is the
 * streaming decoder's: z->rest), or TD_EIO. */
static int cut(struct td_zframes *z, struct job *j, struct td_error *err)
{
	for (;;) {
		const unsigned char *b = z->cbuf + z->cpos;
		if (z->clen) {
			size_t fs = ZSTD_findFrameCompressedSize(b, z->clen);
			if (!ZSTD_isError(fs) && fs <= TD_ZF_LOOKAHEAD) {
				unsigned long long cs = ZSTD_getFrameContentSize(b, z->clen);
				if (cs == ZSTD_CONTENTSIZE_ERROR ||
				    (cs != ZSTD_CONTENTSIZE_UNKNOWN && cs > TD_ZF_FRAME_MAX))
					break;
				j->src = td_malloc(fs);
				memcpy(j->src, b, fs);
				j->src_len = fs;
				j->off = z->coff;
				j->out = NULL;
				j->out_len = j->out_cap = 0;
				if (z->npool) {
					j->out = z->pool[--z->npool].p;
					j->out_cap = z->pool[z->npool].cap;
				}
				j->state = J_QUEUED;
				z->cpos += fs;
				z->clen -= fs;
				z->coff += fs;
				return 1;
			}
			/* not a whole frame yet: read on, unless it never will be one here */
			if (!ZSTD_isError(fs) || ZSTD_getErrorCode(fs) != ZSTD_error_srcSize_wrong ||
			    z->eof || z->clen >= TD_ZF_LOOKAHEAD)
				break;
		} else if (z->eof) {
			return 0; /* the end, between two frames */
		}
		{
			int rc = read_more(z, err);
			if (rc)
				return rc;
		}
	}
	z->rest = 1;
	return 0;
}

/* a buffer the caller is done with, kept for the next frames (as many as can be out) */
static void unuse(struct td_zframes *z, unsigned char *p, size_t cap)
{
	if (!p)
		return;
	if (z->npool < z->qcap + 1) {
		z->pool[z->npool].p = p;
		z->pool[z->npool++].cap = cap;
	} else {
		free(p);
	}
}

ssize_t td_zf_next(struct td_zframes *z, const unsigned char **out, struct td_error *err)
{
	unuse(z, z->last.p, z->last.cap);
	z->last.p = NULL;
	for (;;) {
		struct job *j;
		int state;
		/* keep the decoders busy: frames into every free slot */
		while (!z->cut_done && z->tail - z->head < z->qcap) {
			struct job nj;
			int r = cut(z, &nj, err);
			if (r < 0)
				return r;
			if (r == 0) {
				z->cut_done = 1;
				break;
			}
			pthread_mutex_lock(&z->mu);
			z->q[z->tail % z->qcap] = nj;
			z->tail++;
			pthread_cond_broadcast(&z->cv);
			pthread_mutex_unlock(&z->mu);
		}
		if (z->head == z->tail)
			return z->rest ? TD_ZF_REST : 0;
		pthread_mutex_lock(&z->mu);
		j = &z->q[z->head % z->qcap];
		while (j->state != J_DONE && j->state != J_FAILED)
			pthread_cond_wait(&z->cv, &z->mu);
		state = j->state;
		pthread_mutex_unlock(&z->mu);
		if (state == J_FAILED) { /* this frame and all after it: the streaming decoder's */
			z->rest = 1;
			z->cut_done = 1;
			return TD_ZF_REST;
		}
		z->head++;
		z->consumed = j->off + j->src_len;
		free(j->src);
		j->src = NULL;
		if (!j->out_len) {
			unuse(z, j->out, j->out_cap);
			continue;
		}
		z->last.p = j->out;
		z->last.cap = j->out_cap;
		*out = j->out;
		return (ssize_t)j->out_len;
	}
}

static void stop_threads(struct td_zframes *z)
{
	int i;

	pthread_mutex_lock(&z->mu);
	z->stop = 1;
	pthread_cond_broadcast(&z->cv);
	pthread_mutex_unlock(&z->mu);
	for (i = 0; i < z->nth; i++)
		pthread_join(z->th[i], NULL);
	z->nth = 0;
}

void td_zf_rest(struct td_zframes *z, unsigned char **buf, size_t *len, unsigned long long *off)
{
	size_t i, n = z->clen, at = 0;
	unsigned char *b;

	stop_threads(z); /* the jobs left are not touched any more */
	for (i = z->head; i < z->tail; i++)
		n += z->q[i % z->qcap].src_len;
	b = td_malloc(n ? n : 1);
	for (i = z->head; i < z->tail; i++) {
		struct job *j = &z->q[i % z->qcap];
		memcpy(b + at, j->src, j->src_len);
		at += j->src_len;
	}
	memcpy(b + at, z->cbuf + z->cpos, z->clen);
	*off = z->head < z->tail ? z->q[z->head % z->qcap].off : z->coff;
	*buf = b;
	*len = n;
}

unsigned long long td_zf_consumed(const struct td_zframes *z)
{
	return z->consumed;
}

void td_zf_free(struct td_zframes *z)
{
	size_t i;

	if (!z)
		return;
	stop_threads(z);
	for (i = z->head; i < z->tail; i++) {
		free(z->q[i % z->qcap].src);
		free(z->q[i % z->qcap].out);
	}
	for (i = 0; i < z->npool; i++)
		free(z->pool[i].p);
	free(z->pool);
	free(z->q);
	free(z->th);
	free(z->cbuf);
	free(z->last.p);
	pthread_mutex_destroy(&z->mu);
	pthread_cond_destroy(&z->cv);
	free(z);
}
