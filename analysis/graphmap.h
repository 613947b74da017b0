/* SPDX-License-Identifier: MIT */
/* Kernels replayed from a CUDA/HIP graph, attributed to the ops that captured them. A graph
 * launch replays the kernels its capture recorded: on the host, between a StreamBeginCapture
 * and the next StreamEndCapture on one thread, each kernel launch call ran under the ops (and
 * module annotations) that would have run it eagerly; at replay the host runs none of them.
 * A capture trace of the same server (tracedoc --capture FILE), or the replay trace itself when
 * it holds the captures, gives those ops back: each graph launch's kernels, in the order they
 * ran, are matched to a capture's launch calls, the k-th kernel of a name to the k-th launch
 * of that name (the kernel name a launch call records, roctracer's "kernel" arg), by position
 * when the capture names none. A graph launch whose kernels match no capture (another server,
 * other shapes), or several captures whose ops differ, keeps its kernels unattributed, counted.
 * A replayed kernel no capture gave ops to but that carries newer PyTorch's graph annotation
 * (mark_kernels: its "name" in the kernel's args, parser/trace.h td_kernel_mark) is given that
 * name as its op. Library code: never prints. */
#ifndef TD_ANALYSIS_GRAPHMAP_H
#define TD_ANALYSIS_GRAPHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "parser/trace.h"

struct td_graph_map {
	size_t n;                  /* events of the replay trace */
	uint32_t *chain;           /* per replay event: 1 + the offset in pool of its op chain,
				    * 0: none */
	uint32_t *pool;            /* chains: a length, then op names (ids in the replay trace's
				    * strtab), innermost first */
	size_t npool, cap;
	uint64_t captures;         /* capture regions in the capture trace */
	uint64_t captured;         /* kernel launch calls under them */
	uint64_t launches;         /* graph launches in the replay trace with kernels */
	uint64_t replayed;         /* kernels they replayed */
	uint64_t matched;          /* ... attributed to a capture's ops */
	uint64_t ambiguous;        /* ... left out: several captures match with other ops */
	uint64_t annotated;        /* ... not matched, named by their own annotation instead */
};

/* Builds m: replay's graph-replayed kernels matched to cap's captures (cap may be replay, or
 * NULL: none), then its annotations. The capture's op names are interned in replay's strtab:
 * call before the analysis. */
void td_graph_map_build(struct td_graph_map *m, struct td_trace *replay,
			const struct td_trace *cap);
void td_graph_map_free(struct td_graph_map *m);

/* The op chain of replay event ev (innermost first), its length in *n; NULL when none. */
static inline const uint32_t *td_graph_map_ops(const struct td_graph_map *m, uint32_t ev,
					       size_t *n)
{
	uint32_t c;

	if (!m || ev >= m->n || !(c = m->chain[ev]))
		return NULL;
	*n = m->pool[c - 1];
	return &m->pool[c];
}

#endif
