/* SPDX-License-Identifier: MIT */
#include "analysis/flops.h"

#include <string.h>

#include "common/sat.h"

static const char *ws(const char *s)
{
	while (*s == ' ')
		s++;
	return s;
}

int td_dims_parse(const char *s, struct td_dims *o)
{
	memset(o, 0, sizeof(*o));
	s = ws(s);
	if (*s++ != '[')
		return 0;
	for (s = ws(s); *s && *s != ']'; s = ws(s)) {
		int k = o->n < TD_DIMS_MAX_IN ? o->n : -1, depth = 0;
		if (*s != '[')
			return 0;
		if (k >= 0)
			o->rank[k] = 0;
		for (; *s; s++) { /* one input: [a, b] (or deeper: not a tensor's sizes) */
			if (*s == '[') {
				if (++depth > 1 && k >= 0)
					o->rank[k] = -1;
			} else if (*s == ']') {
				if (--depth == 0) {
					s++;
					break;
				}
			} else if (*s >= '0' && *s <= '9' && depth == 1 && k >= 0 && o->rank[k] >= 0) {
				int64_t v = 0;
				while (*s >= '0' && *s <= '9')
					v = td_sat_add(td_sat_mul(v, 10), *s++ - '0');
				s--;
				if (o->rank[k] < TD_DIMS_MAX_RANK)
					o->d[k][o->rank[k]] = v;
				o->rank[k] = o->rank[k] < TD_DIMS_MAX_RANK ? o->rank[k] + 1 : -1;
			}
		}
		if (depth)
			return 0;
		o->n++;
		s = ws(s);
		if (*s == ',')
			s++;
	}
	return *s == ']';
}

static int64_t prod(const int64_t *v, int n)
{
	int64_t p = 1;
	int i;

	for (i = 0; i < n; i++)
		p = td_sat_mul(p, v[i]);
	return p;
}

/* 2 * (b *) n * k * m for inputs a (n x k) and b (k x m), rank 2 or 3 (batched) */
static int64_t matmul(const struct td_dims *x, int a, int b, int rank)
{
	const int64_t *p, *q;

	if (x->n <= a || x->n <= b || x->rank[a] != rank || x->rank[b] != rank)
		return -1;
	p = x->d[a];
	q = x->d[b];
	if (rank == 2)
		return td_sat_mul(2, td_sat_mul(td_sat_mul(p[0], p[1]), q[1]));
	return td_sat_mul(2, td_sat_mul(td_sat_mul(td_sat_mul(p[0], p[1]), p[2]), q[2]));
}

static const char *const formulas[] = {"mm", "addmm", "bmm", "baddbmm", "mul", "add", "conv2d"};

int td_op_has_flops(const char *name)
{
	size_t i;

	if (!name || strncmp(name, "aten::", 6))
		return 0;
	for (i = 0; i < sizeof(formulas) / sizeof(formulas[0]); i++)
		if (!strcmp(name + 6, formulas[i]))
			return 1;
	return 0;
}

int td_concrete_ints(const char *s, int i, int64_t *v, int max)
{
	int k = 0, n = 0;

	if (!s || *(s = ws(s)) != '[')
		return 0;
	for (s++; *s && k <= i; s++) {
		if (*s != '"')
			continue;
		for (s++; *s && *s != '"'; s++) /* one string: its numbers when it is the i-th */
			if (k == i && *s >= '0' && *s <= '9' && n < max) {
				int64_t x = 0;
				while (*s >= '0' && *s <= '9')
					x = td_sat_add(td_sat_mul(x, 10), *s++ - '0');
				v[n++] = x;
				s--;
			}
		if (!*s)
			return 0;
		k++;
	}
	return n;
}

/* aten::conv2d as PyTorch's computeFlops counts it */
static int64_t conv2d(const struct td_dims *x, const char *concrete)
{
	int64_t st[2], pad[2], dil[2], g[2], oh, ow;
	const int64_t *in, *w;

	if (x->n < 2 || x->rank[0] != 4 || x->rank[1] != 4 || td_concrete_ints(concrete, 3, st, 2) != 2 ||
	    td_concrete_ints(concrete, 4, pad, 2) != 2 || td_concrete_ints(concrete, 5, dil, 2) != 2 ||
	    td_concrete_ints(concrete, 6, g, 2) != 1 || !st[0] || !st[1] || !g[0])
		return -1;
	in = x->d[0];
	w = x->d[1];
	oh = (in[2] + 2 * pad[0] - dil[0] * (w[2] - 1) - 1) / st[0] + 1;
	ow = (in[3] + 2 * pad[1] - dil[1] * (w[3] - 1) - 1) / st[1] + 1;
	return td_sat_mul(2, td_sat_mul(td_sat_mul(td_sat_mul(in[0], oh), td_sat_mul(ow, w[2])),
					td_sat_mul(td_sat_mul(w[3], in[1]), w[0]))) / g[0];
}

int64_t td_op_flops(const char *name, const char *dims, const char *concrete)
{
	struct td_dims x;

	if (!name || !dims || strncmp(name, "aten::", 6) || !td_dims_parse(dims, &x))
		return -1;
	name += 6;
	if (!strcmp(name, "mm"))
		return matmul(&x, 0, 1, 2);
	if (!strcmp(name, "addmm"))
		return matmul(&x, 1, 2, 2);
	if (!strcmp(name, "bmm"))
		return matmul(&x, 0, 1, 3);
	if (!strcmp(name, "baddbmm"))
		return matmul(&x, 1, 2, 3);
	if (!strcmp(name, "mul") || !strcmp(name, "add"))
		return x.n && x.rank[0] >= 0 ? prod(x.d[0], x.rank[0]) : -1;
	if (!strcmp(name, "conv2d"))
		return conv2d(&x, concrete);
	return -1;
}
