/* SPDX-License-Identifier: MIT */
/* A device's trace entries kept compact (parser/snapshot.h, struct td_snap_evlog): each entry a
 * header byte and varints, deltas from the entry before, read back in order. */
#include "parser/snapshot.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

/* the header byte: the action in the low 3 bits, then what follows */
#define H_TIME 0x08u      /* a time_us (else -1) */
#define H_UNITS 0x10u     /* the size in 512-byte units (the allocator's rounding) */
#define H_FREE 0x20u      /* a device_free (else -1) */
#define H_SITE 0x40u      /* the site of the entry before */
#define H_HINT 0x80u      /* the hint of the entry before */
#define MAX_ENTRY 48u     /* bytes an entry takes at most: 1 + 1 + 5 + 4 * 10, rounded up */

static uint64_t zig(uint64_t u)
{
	return (u << 1) ^ (0 - (u >> 63));
}

static uint64_t unzig(uint64_t z)
{
	return (z >> 1) ^ (0 - (z & 1));
}

static unsigned char *put_var(unsigned char *p, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*p++ = (unsigned char)(v | 0x80);
	*p++ = (unsigned char)v;
	return p;
}

static const unsigned char *get_var(const unsigned char *p, uint64_t *v)
{
	uint64_t x = 0;
	unsigned s = 0;

	for (; *p & 0x80; p++, s += 7)
		if (s < 64)
			x |= (uint64_t)(*p & 0x7f) << s;
	if (s < 64)
		x |= (uint64_t)*p << s;
	*v = x;
	return p + 1;
}

void td_snap_ev_put(struct td_snap_evlog *l, const struct td_snap_event *e)
{
	unsigned char *p;
	unsigned h = e->act & 7u;
	uint64_t size = (uint64_t)e->size;

	if (l->cap - l->len < MAX_ENTRY) {
		l->cap = l->cap ? l->cap + l->cap / 2 + MAX_ENTRY : 4096;
		l->b = td_realloc(l->b, l->cap);
	}
	if (e->time_us != -1)
		h |= H_TIME;
	if (size && !(size & 511))
		h |= H_UNITS;
	if (e->device_free != -1)
		h |= H_FREE;
	if (l->n && e->site == l->site)
		h |= H_SITE;
	if (l->n && e->hint == l->hint)
		h |= H_HINT;
	p = l->b + l->len;
	*p++ = (unsigned char)h;
	if (!(h & H_HINT))
		*p++ = e->hint;
	if (!(h & H_SITE))
		p = put_var(p, e->site);
	p = put_var(p, zig(e->addr - l->addr));
	p = put_var(p, h & H_UNITS ? size >> 9 : size);
	if (h & H_TIME) {
		p = put_var(p, zig((uint64_t)e->time_us - (uint64_t)l->time));
		l->time = e->time_us;
	}
	if (h & H_FREE)
		p = put_var(p, zig((uint64_t)e->device_free));
	l->len = (size_t)(p - l->b);
	l->addr = e->addr;
	l->site = e->site;
	l->hint = e->hint;
	l->n++;
}

void td_snap_ev_free(struct td_snap_evlog *l)
{
	free(l->b);
	memset(l, 0, sizeof(*l));
}

void td_snap_ev_begin(const struct td_snap_evlog *l, struct td_snap_ev_it *it)
{
	memset(it, 0, sizeof(*it));
	it->p = l->b;
	it->end = l->b + l->len;
}

int td_snap_ev_next(struct td_snap_ev_it *it, struct td_snap_event *e)
{
	const unsigned char *p = it->p;
	unsigned h;
	uint64_t v;

	if (!p || p >= it->end)
		return 0;
	h = *p++;
	e->act = (uint8_t)(h & 7u);
	if (!(h & H_HINT))
		it->hint = *p++;
	if (!(h & H_SITE)) {
		p = get_var(p, &v);
		it->site = (uint32_t)v;
	}
	p = get_var(p, &v);
	it->addr += unzig(v);
	p = get_var(p, &v);
	e->size = (int64_t)(h & H_UNITS ? v << 9 : v);
	e->time_us = -1;
	if (h & H_TIME) {
		p = get_var(p, &v);
		it->time = (int64_t)((uint64_t)it->time + unzig(v));
		e->time_us = it->time;
	}
	e->device_free = -1;
	if (h & H_FREE) {
		p = get_var(p, &v);
		e->device_free = (int64_t)unzig(v);
	}
	e->addr = it->addr;
	e->site = it->site;
	e->hint = it->hint;
	it->p = p;
	return 1;
}
