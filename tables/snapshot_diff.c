/* SPDX-License-Identifier: MIT */
/* Two snapshots compared (tables/snapshot_diff.h). */
#include "tables/snapshot_diff.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

struct named {
	const char *site;
	const struct td_snap_site *x;
};

static int by_name(const void *x, const void *y)
{
	return strcmp(((const struct named *)x)->site, ((const struct named *)y)->site);
}

static struct named *named(const struct td_snapshot *s, const struct td_snap_dev *d)
{
	struct named *v;
	size_t i, n = d ? d->nat_peak : 0;

	v = td_malloc((n ? n : 1) * sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].site = td_strtab_str(&s->strs, d->at_peak[i].site);
		v[i].x = &d->at_peak[i];
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_name);
	return v;
}

static uint64_t mag(const struct td_snap_change *c)
{
	return c->b >= c->a ? (uint64_t)c->b - (uint64_t)c->a : (uint64_t)c->a - (uint64_t)c->b;
}

static int by_change(const void *x, const void *y)
{
	const struct td_snap_change *a = x, *b = y;
	uint64_t ma = mag(a), mb = mag(b);

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->site, b->site);
}

/* the sites of one device whose bytes at the peak differ, merged by name */
static void changes(const struct td_snapshot *sa, const struct td_snapshot *sb,
		    struct td_snap_devdiff *o)
{
	size_t na = o->a ? o->a->nat_peak : 0, nb = o->b ? o->b->nat_peak : 0, i = 0, j = 0;
	struct named *va = named(sa, o->a), *vb = named(sb, o->b);

	o->ch = td_malloc((na + nb ? na + nb : 1) * sizeof(*o->ch));
	while (i < na || j < nb) {
		int c = i >= na ? 1 : j >= nb ? -1 : strcmp(va[i].site, vb[j].site);
		struct td_snap_change x;
		memset(&x, 0, sizeof(x));
		if (c <= 0) {
			x.site = va[i].site;
			x.a = va[i].x->bytes;
			x.blocks_a = va[i++].x->blocks;
		}
		if (c >= 0) {
			x.site = vb[j].site;
			x.b = vb[j].x->bytes;
			x.blocks_b = vb[j++].x->blocks;
		}
		if (x.a != x.b)
			o->ch[o->nch++] = x;
	}
	if (o->nch > 1)
		qsort(o->ch, o->nch, sizeof(*o->ch), by_change);
	free(va);
	free(vb);
}

void td_snapshot_diff(const struct td_snapshot *a, const struct td_snapshot *b,
		      struct td_snap_diff *out)
{
	size_t i = 0, j = 0;

	memset(out, 0, sizeof(*out));
	out->dev = td_calloc(a->ndev + b->ndev ? a->ndev + b->ndev : 1, sizeof(*out->dev));
	while (i < a->ndev || j < b->ndev) { /* both by device id */
		struct td_snap_devdiff *o = &out->dev[out->ndev++];
		int c = i >= a->ndev ? 1 : j >= b->ndev ? -1 : a->dev[i].device < b->dev[j].device
			? -1 : a->dev[i].device > b->dev[j].device;
		if (c <= 0)
			o->a = &a->dev[i++];
		if (c >= 0)
			o->b = &b->dev[j++];
		o->device = o->a ? o->a->device : o->b->device;
		changes(a, b, o);
	}
}

void td_snap_diff_free(struct td_snap_diff *d)
{
	size_t i;

	for (i = 0; i < d->ndev; i++)
		free(d->dev[i].ch);
	free(d->dev);
	memset(d, 0, sizeof(*d));
}
