/* SPDX-License-Identifier: MIT */
/* Interval sets (struct td_interval, parser/trace.h): sorted, merged, differences, totals. */
#ifndef TD_RULES_INTERVALS_H
#define TD_RULES_INTERVALS_H

#include <stddef.h>
#include <stdint.h>

#include "parser/trace.h"

/* td_iv_merge (sort and merge in place) is the model's: parser/trace.h. */
/* c minus p into out (both sorted and merged; out holds nc + np intervals); returns the count. */
size_t td_iv_minus(const struct td_interval *c, size_t nc, const struct td_interval *p,
		   size_t np, struct td_interval *out);
/* Time of v (sorted, merged) within [from, to). */
int64_t td_iv_total_in(const struct td_interval *v, size_t n, int64_t from, int64_t to);

/* The kernels of a device within [from, to) (kernels only, not copies): those matching the
 * communication patterns into *comm, the others into *comp, both merged. want_comm, want_comp
 * select; the caller frees. Returns 0. */
struct td_analysis;
void td_an_kernel_sets(const struct td_analysis *a, int32_t device, int64_t from, int64_t to,
		       struct td_interval **comp, size_t *ncomp, struct td_interval **comm,
		       size_t *ncomm);

#endif
