/* SPDX-License-Identifier: MIT */
#include "diagnose/doc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/utf8.h"
#include "diagnose/cli.h"
#include "diagnose/out.h"
#include "parser/input.h"
#include "tables/snapshot.h"

static int grow_read(struct cli_doc *d, size_t want, char *msg, size_t cap)
{
	struct td_error err;
	ssize_t n;

	if (d->len + want + 1 > d->cap) { /* doubled: a large document is read in linear time */
		d->cap = d->cap * 2 > d->len + want + 1 ? d->cap * 2 : d->len + want + 1;
		d->buf = td_realloc(d->buf, d->cap);
	}
	memset(&err, 0, sizeof(err));
	n = td_input_read(d->in, d->buf + d->len, want, &err);
	if (n < 0) {
		char s[512];
		snprintf(msg, cap, "%s: %s", cli_shown(d->path, s, sizeof(s)), err.msg);
		return -1;
	}
	d->len += (size_t)n;
	d->buf[d->len] = '\0';
	if (!n)
		d->ended = 1;
	return (int)(n > 0);
}

int cli_doc_open(const char *path, size_t max, struct cli_doc *d, char *msg, size_t cap)
{
	struct td_error err;
	struct td_sniffer *sn;
	struct stat st;
	size_t step = 4096;
	char s[512];

	memset(d, 0, sizeof(*d));
	d->path = path;
	d->regular = strcmp(path, "-") && stat(path, &st) == 0 && S_ISREG(st.st_mode);
	memset(&err, 0, sizeof(err));
	if (td_input_open(path, &d->in, &err) != 0) {
		snprintf(msg, cap, "%s: %s", cli_shown(path, s, sizeof(s)), err.msg);
		return EXIT_INPUT;
	}
	sn = td_sniff_new();
	while (d->kind == TD_SNIFF_MORE) {
		size_t from = d->len;
		int r;
		if (d->len >= max) {
			d->kind = TD_SNIFF_OTHER;
			break;
		}
		r = grow_read(d, d->len + step > max ? max - d->len : step, msg, cap);
		if (r < 0) {
			td_sniff_free(sn);
			cli_doc_close(d);
			return EXIT_INPUT;
		}
		d->kind = td_sniff_feed(sn, d->buf + from, d->len - from);
		if (step < (1u << 20))
			step *= 2;
	}
	snprintf(d->schema, sizeof(d->schema), "%s", td_sniff_schema(sn));
	td_sniff_free(sn);
	return EXIT_OK;
}

char *cli_doc_text(struct cli_doc *d, size_t max, char *msg, size_t cap)
{
	char *t, s[512];

	while (!d->ended && d->len < max)
		if (grow_read(d, max - d->len < (1u << 20) ? max - d->len : 1u << 20, msg, cap) < 0)
			return NULL;
	if (!d->ended) {
		snprintf(msg, cap, "%s: larger than %zu MiB: not a document tracedoc writes",
			 cli_shown(d->path, s, sizeof(s)), max >> 20);
		return NULL;
	}
	t = d->buf ? d->buf : td_strndup("", 0);
	if (d->len >= 3 && !memcmp(t, "\xef\xbb\xbf", 3)) /* a byte order mark, skipped as the */
		memmove(t, t + 3, d->len - 2);             /* trace reader and the sniffer skip it */
	d->buf = NULL;
	d->len = d->cap = 0;
	return t;
}

/* d's input for the trace reader, d closed: NULL for a regular file, opened again by its path
 * (read on threads, its size known), else the input from its first byte */
static struct td_input *take_input(struct cli_doc *d)
{
	struct td_input *in = d->regular ? NULL : cli_doc_input(d);

	if (in)
		d->in = NULL; /* closed by the load */
	cli_doc_close(d);
	return in;
}

int cli_doc_trace(struct cli_doc *d, struct td_trace *t)
{
	struct td_input *in;

	if (d->kind == TD_SNIFF_SNAPSHOT) { /* known by its head, a pipe's too */
		char msg[1200];
		cli_doc_close(d);
		cli_snapshot_msg(d->path, msg, sizeof(msg));
		fprintf(stderr, "tracedoc: %s\n", msg);
		return EXIT_INPUT;
	}
	in = take_input(d);
	return cli_load_from(d->path, in, t);
}

int cli_doc_trace_quiet(struct cli_doc *d, struct td_trace *t, char *msg, size_t cap)
{
	struct td_input *in;

	if (d->kind == TD_SNIFF_SNAPSHOT) {
		cli_doc_close(d);
		cli_snapshot_msg(d->path, msg, cap);
		return EXIT_INPUT;
	}
	in = take_input(d);
	return cli_load_quiet(d->path, in, t, msg, cap);
}

int cli_doc_snapshot(struct cli_doc *d, struct td_snapshot *s)
{
	struct td_error err;
	char sh[512];
	int rc;

	memset(&err, 0, sizeof(err));
	rc = td_snapshot_read(cli_doc_input(d), cli_shown(d->path, sh, sizeof(sh)), s, &err);
	cli_doc_close(d);
	if (rc == 0)
		return EXIT_OK;
	fprintf(stderr, "tracedoc: ");
	out_text_wrap(stderr, err.msg, 10, 2, 100);
	fputc('\n', stderr);
	return err.code == TD_ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
}

struct td_input *cli_doc_input(struct cli_doc *d)
{
	td_input_unread(d->in, d->buf, d->len);
	free(d->buf);
	d->buf = NULL;
	d->len = d->cap = 0;
	return d->in;
}

void cli_doc_close(struct cli_doc *d)
{
	td_input_close(d->in);
	d->in = NULL;
	free(d->buf);
	d->buf = NULL;
	d->len = d->cap = 0;
}

int cli_doc_schema_is(const struct cli_doc *d, const char *const *schemas, const char *what,
		      char *msg, size_t cap)
{
	char s[512], sch[256];
	size_t i, k;

	for (i = 0; schemas[i]; i++)
		if (!strcmp(d->schema, schemas[i]))
			return 1;
	td_utf8_escape_controls(sch, sizeof(sch), d->schema, strlen(d->schema));
	k = (size_t)snprintf(msg, cap, "%s: its \"schema\" is \"%s\"; this tracedoc reads ",
			     cli_shown(d->path, s, sizeof(s)), sch);
	for (i = 0; schemas[i] && k < cap; i++)
		k += (size_t)snprintf(msg + k, cap - k, "%s%s", i ? " or " : "", schemas[i]);
	if (k < cap && what)
		snprintf(msg + k, cap - k, " %s", what);
	return 0;
}
