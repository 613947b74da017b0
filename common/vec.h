/* SPDX-License-Identifier: MIT */
/* A growable array of fixed-size elements. Large arrays are realloc'd, which glibc does with
 * mremap, so growth does not double the resident size. The vec owns its storage. */
#ifndef TD_COMMON_VEC_H
#define TD_COMMON_VEC_H

#include <stddef.h>

struct td_vec {
	void *data;
	size_t len, cap, elem;
};

void td_vec_init(struct td_vec *v, size_t elem);
/* Appends one zeroed element and returns it (valid until the next push). */
void *td_vec_push(struct td_vec *v);
void td_vec_reserve(struct td_vec *v, size_t cap);
void td_vec_free(struct td_vec *v);
#define TD_VEC_AT(v, type, i) (((type *)(v)->data)[i])

#endif
