/* SPDX-License-Identifier: MIT */
#include "common/vec.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

void td_vec_init(struct td_vec *v, size_t elem)
{
	v->data = NULL;
	v->len = v->cap = 0;
	v->elem = elem;
}

void td_vec_reserve(struct td_vec *v, size_t cap)
{
	if (cap <= v->cap)
		return;
	v->data = td_realloc(v->data, cap * v->elem);
	v->cap = cap;
}

void *td_vec_push(struct td_vec *v)
{
	char *p;

	if (v->len == v->cap)
		td_vec_reserve(v, v->cap ? v->cap + v->cap / 2 : 64);
	p = (char *)v->data + v->len++ * v->elem;
	memset(p, 0, v->elem);
	return p;
}

void td_vec_free(struct td_vec *v)
{
	free(v->data);
	v->data = NULL;
	v->len = v->cap = 0;
}
