/* SPDX-License-Identifier: MIT */
/* Host calls that block until the GPU catches up (synchronize, .item(), copies into or out of
 * pageable memory, synchronous cudaMemcpy), grouped into the user's calls: one .item() is one
 * unit even though it makes a cudaMemcpyAsync and a cudaStreamSynchronize. Shared by
 * sync-stall, transfer and the gate's metrics, so they count the same things. */
#ifndef TD_RULES_BLOCKING_H
#define TD_RULES_BLOCKING_H

#include <stddef.h>
#include <stdint.h>

struct td_analysis;
struct td_claims;

#define BK_ITEM 0x01      /* under .item() / .tolist() / _local_scalar_dense */
#define BK_NONZERO 0x02   /* under nonzero / masked_select / boolean indexing */
#define BK_DTOH 0x04      /* a copy into pageable host memory */
#define BK_HTOD 0x08      /* a copy from pageable host memory (a pageable upload) */
#define BK_EXPLICIT 0x10  /* a synchronize called directly, under no CPU op */
#define BK_MEMCPY 0x20    /* a synchronous cudaMemcpy */
#define BK_USER 0x40      /* an op the config says synchronizes */
#define BK_STREAM 0x80    /* has a stream synchronize */
#define BK_DEVICE 0x100   /* has a device / context synchronize */
#define BK_EVENT 0x200    /* has an event synchronize */

struct td_block_unit {
	uint32_t first, last;   /* its first and last blocking call (events of one thread) */
	uint32_t user;          /* the user's call: the innermost public op, or the call itself */
	uint32_t copy;          /* the GPU copy one of its calls made, or TD_NONE */
	size_t dev;             /* device index */
	uint32_t site;          /* label of the call site */
	int64_t blocked;        /* time in its blocking calls */
	uint32_t ncalls;
	unsigned kinds;         /* BK_* */
};

/* The blocking units in each device's steady state (its host side), in trace order, found
 * once per analysis (which owns them). Returns the count. */
size_t td_an_block_units(struct td_analysis *a, const struct td_block_unit **out);

/* Adds the GPU idle a unit's removal wins back as a candidate claim: the host would have run
 * ahead by the time it was blocked, so the bubble that follows the wait (until the thread
 * launches again or turns to data loading) shrinks by up to that much, from its end. */
void td_claims_add_unit(const struct td_analysis *a, struct td_claims *c,
			const struct td_block_unit *u, uint32_t tag);
/* ... only the idle under the wait itself: a read whose data the host uses next (nothing
 * runs ahead of it, however the copy is made). */
void td_claims_add_wait(const struct td_analysis *a, struct td_claims *c,
			const struct td_block_unit *u, uint32_t tag);

#endif
