/* SPDX-License-Identifier: MIT */
/* Inside the trace model: how a track's events are held while parsing (parser/trace.c pushes
 * them, parser/finalize.c gathers them into td_trace.events). */
#ifndef TD_PARSER_TRACE_CHUNK_H
#define TD_PARSER_TRACE_CHUNK_H

#include <stdint.h>

#include "parser/trace.h"

#define CHUNK_EVENTS 16384 /* the largest chunk; a track's first holds 16, each next twice */
#define CHUNK_FIRST 16

/* a piece of one track's events */
struct td_chunk {
	struct td_chunk *next;
	uint32_t len, cap;
	struct td_event ev[];
};

#endif
