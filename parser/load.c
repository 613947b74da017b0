/* SPDX-License-Identifier: MIT */
#include "parser/load.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "parser/input.h"
#include "parser/nsys.h"
#include "parser/parser.h"
#include "parser/scan.h"
#include "parser/split.h"
#include "parser/trace.h"

#define NBUF 4

struct slot {
	unsigned char *buf;
	ssize_t len;       /* bytes, 0 = end of input, < 0 = error */
	uint64_t lines;    /* newlines in buf, counted here so the parser need not */
	size_t last_nl;
};

struct pipe {
	struct td_input *in;
	size_t chunk;
	const struct td_load_opts *opts;
	unsigned long long total;
	struct slot slots[NBUF];
	unsigned head, tail;  /* filled slots are [tail, head) */
	int stop;
	struct td_error rerr; /* the reader's error */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *reader(void *arg)
{
	struct pipe *pp = arg;

	for (;;) {
		struct slot *s;
		ssize_t n;

		pthread_mutex_lock(&pp->mu);
		while (pp->head - pp->tail == NBUF && !pp->stop)
			pthread_cond_wait(&pp->cv, &pp->mu);
		if (pp->stop) {
			pthread_mutex_unlock(&pp->mu);
			return NULL;
		}
		s = &pp->slots[pp->head % NBUF];
		pthread_mutex_unlock(&pp->mu);

		n = td_input_read(pp->in, s->buf, pp->chunk, &pp->rerr);
		if (n > 0)
			s->lines = td_scan_lines(s->buf, (size_t)n, &s->last_nl);
		if (n > 0 && pp->opts && pp->opts->progress)
			pp->opts->progress(pp->opts->progress_ctx, td_input_raw_offset(pp->in), pp->total);
		pthread_mutex_lock(&pp->mu);
		s->len = n;
		pp->head++;
		pthread_cond_broadcast(&pp->cv);
		pthread_mutex_unlock(&pp->mu);
		if (n <= 0)
			return NULL;
	}
}

static int mark_truncated_input(struct td_input *in, struct td_trace *t)
{
	if (!td_input_truncated(in))
		return 0;
	if (!t->partial) {
		t->partial = 1;
		t->partial_offset = t->bytes_in;
		snprintf(t->partial_msg, sizeof(t->partial_msg),
			 "the compressed stream ends early (after %llu compressed bytes, %llu "
			 "uncompressed); results cover the complete events before it",
			 td_input_raw_offset(in), (unsigned long long)t->bytes_in);
	}
	return 1;
}

static int run_threaded(struct td_input *in, struct td_parser *p, size_t chunk,
			const struct td_load_opts *opts, unsigned long long total,
			struct td_error *err)
{
	struct pipe pp;
	pthread_t th;
	int rc = 0, i;

	memset(&pp, 0, sizeof(pp));
	pp.in = in;
	pp.chunk = chunk;
	pp.opts = opts;
	pp.total = total;
	for (i = 0; i < NBUF; i++)
		pp.slots[i].buf = td_malloc(chunk);
	pthread_mutex_init(&pp.mu, NULL);
	pthread_cond_init(&pp.cv, NULL);
	if (pthread_create(&th, NULL, reader, &pp) != 0) {
		for (i = 0; i < NBUF; i++)
			free(pp.slots[i].buf);
		return 1; /* caller falls back to one thread */
	}
	for (;;) {
		struct slot *s;

		pthread_mutex_lock(&pp.mu);
		while (pp.head == pp.tail)
			pthread_cond_wait(&pp.cv, &pp.mu);
		s = &pp.slots[pp.tail % NBUF];
		pthread_mutex_unlock(&pp.mu);
		if (s->len < 0) {
			*err = pp.rerr;
			rc = err->code;
			break;
		}
		if (s->len == 0)
			break;
		rc = td_parser_feed_counted(p, s->buf, (size_t)s->len, s->lines, s->last_nl, err);
		pthread_mutex_lock(&pp.mu);
		pp.tail++;
		pthread_cond_broadcast(&pp.cv);
		pthread_mutex_unlock(&pp.mu);
		if (rc)
			break;
	}
	pthread_mutex_lock(&pp.mu);
	pp.stop = 1;
	pthread_cond_broadcast(&pp.cv);
	pthread_mutex_unlock(&pp.mu);
	pthread_join(th, NULL);
	pthread_mutex_destroy(&pp.mu);
	pthread_cond_destroy(&pp.cv);
	for (i = 0; i < NBUF; i++)
		free(pp.slots[i].buf);
	return rc < 0 ? rc : 0;
}

static int run_inline(struct td_input *in, struct td_parser *p, size_t chunk,
		      const struct td_load_opts *opts, unsigned long long total,
		      struct td_error *err)
{
	unsigned char *buf = td_malloc(chunk);
	int rc = 0;

	for (;;) {
		ssize_t n = td_input_read(in, buf, chunk, err);
		if (n < 0) {
			rc = (int)n;
			break;
		}
		if (n == 0)
			break;
		if (opts && opts->progress)
			opts->progress(opts->progress_ctx, td_input_raw_offset(in), total);
		if ((rc = td_parser_feed(p, buf, (size_t)n, err)) != 0)
			break;
	}
	free(buf);
	return rc;
}

/* After the document's end (rc: its result): the input's own state, and the model's end. */
static void finish_load(struct td_input *in, struct td_trace *t, int rc, struct td_error *err)
{
	if (rc == 0) {
		mark_truncated_input(in, t);
		t->input_garbage = td_input_garbage(in);
		td_trace_finalize(t);
	} else if ((rc == TD_EPARSE || rc == TD_EFORMAT) && td_input_truncated(in) &&
		   t->bytes_in == 0)
		td_error_set(err, TD_EPARSE, "the %s stream ends before any data could be "
			     "decompressed (truncated file)",
			     t->compression == TD_COMP_ZSTD ? "zstd" : "gzip");
}

/* An Nsight Systems export or report from a pipe: SQLite reads a file. Its head given back. */
static int refuse_nsys(struct td_input *in, struct td_error *err)
{
	unsigned char head[TD_NSYS_HEAD];
	size_t n = 0;
	ssize_t k = 1;

	while (n < sizeof(head) && (k = td_input_read(in, head + n, sizeof(head) - n, err)) > 0)
		n += (size_t)k;
	if (k < 0)
		return (int)k;
	td_input_unread(in, head, n);
	if (td_nsys_is_sqlite(head, n) || td_nsys_is_report(head, n))
		return td_error_set(err, TD_EFORMAT, "an Nsight Systems %s read from a pipe: it is "
				    "read from a file (save it and name the file)",
				    td_nsys_is_sqlite(head, n) ? "export" : "report");
	return 0;
}

int td_trace_load(const char *path, const struct td_load_opts *opts, struct td_trace *t,
		  struct td_error *err)
{
	struct td_input *in;
	unsigned long long total = 0;
	struct stat st;
	int rc;

	memset(err, 0, sizeof(*err));
	/* an Nsight Systems export or report, by its first bytes: of a regular file only (a
	 * FIFO's would be gone; one from a pipe is refused by td_trace_load_input) */
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		unsigned char head[TD_NSYS_HEAD];
		ssize_t n = 0;
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			n = read(fd, head, sizeof(head));
			close(fd);
		}
		if (n > 0 && td_nsys_is_sqlite(head, (size_t)n))
			return td_nsys_load(path, t, err);
		if (n > 0 && td_nsys_is_report(head, (size_t)n))
			return td_nsys_load_report(path, t, err);
	}
	if ((rc = td_input_open(path, &in, err)) != 0)
		return rc;
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode))
		total = (unsigned long long)st.st_size;
	return td_trace_load_input(in, total, opts, t, err);
}

int td_trace_load_input(struct td_input *in, unsigned long long total,
			const struct td_load_opts *opts, struct td_trace *t, struct td_error *err)
{
	struct td_parser *p;
	size_t chunk = opts && opts->chunk ? opts->chunk : 1024 * 1024;
	int rc;

	memset(err, 0, sizeof(*err));
	if ((rc = refuse_nsys(in, err)) != 0) {
		td_input_close(in);
		return rc;
	}
	t->compression = td_input_compression(in);
	t->jobs = opts && !opts->no_thread && opts->jobs > 1 ? opts->jobs : 1;
	rc = 1;
	if (opts && !opts->no_thread && opts->jobs > 1) {
		td_input_set_threads(in, opts->zstd_threads ? opts->zstd_threads : opts->jobs / 4);
		rc = td_split_load(in, t, opts->jobs, opts->block, opts->progress,
				   opts->progress_ctx, total, err);
	}
	if (rc != 1) {
		finish_load(in, t, rc, err);
		td_input_close(in);
		return rc;
	}
	p = opts && opts->no_thread ? td_parser_new(t) : td_parser_new_threaded(t);
	if (!p) {
		td_input_close(in);
		return td_error_set(err, TD_ENOMEM, "%s", "cannot start the JSON parser");
	}
	rc = opts && opts->no_thread ? 1 : run_threaded(in, p, chunk, opts, total, err);
	if (rc == 1)
		rc = run_inline(in, p, chunk, opts, total, err);
	if (rc == 0)
		rc = td_parser_finish(p, err);
	finish_load(in, t, rc, err);
	td_parser_free(p);
	td_input_close(in);
	return rc;
}
