/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes through the pickle reader (parser/pickle.h) alone, read in
 * pieces of 1..13 bytes, into a sink that builds some containers and streams others, notes and
 * skips what it met, and keeps half of what it is offered. Must never crash, leak, hang,
 * overflow or trip a sanitizer, whatever the opcodes. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "parser/pickle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct src {
	const uint8_t *p;
	size_t n, at;
};

struct sink {
	unsigned depth, events;
};

static ssize_t rd(void *s, void *buf, size_t cap, struct td_error *err)
{
	struct src *x = s;
	size_t k = 1 + x->at % 13;

	(void)err;
	if (k > cap)
		k = cap;
	if (k > x->n - x->at)
		k = x->n - x->at;
	memcpy(buf, x->p + x->at, k);
	x->at += k;
	return (ssize_t)k;
}

static int ev(void *c)
{
	return ++((struct sink *)c)->events < 1000000;
}
static int ev_b(void *c, int b)
{
	(void)b;
	return ev(c);
}
static int ev_n(void *c, const char *s, size_t n)
{
	(void)s;
	(void)n;
	return ev(c);
}
static int ev_s(void *c, const unsigned char *s, size_t n)
{
	(void)s;
	(void)n;
	return ev(c);
}
static int open_(void *c)
{
	((struct sink *)c)->depth++;
	return ev(c);
}
static int close_(void *c)
{
	((struct sink *)c)->depth--;
	return ev(c);
}
static int tree(void *c)
{
	return ((struct sink *)c)->depth % 2;
}
static int enter(void *c, uint32_t *note)
{
	(void)c;
	if (*note)
		return 1;
	*note = 7;
	return 0;
}
static int keep(void *c)
{
	return ((struct sink *)c)->events % 2;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const yajl_callbacks cb = {ev, ev_b, NULL, NULL, ev_n, ev_s, open_, ev_s, close_,
					  open_, close_};
	struct src s = {data, size, 0};
	struct sink k = {0, 0};
	struct td_pk_sink sink = {&cb, &k, tree, enter, keep};
	struct td_error err;

	memset(&err, 0, sizeof(err));
	(void)td_pickle_read(rd, &s, "fuzz", &sink, &err);
	return 0;
}
