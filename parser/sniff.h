/* SPDX-License-Identifier: MIT */
/* What a JSON document is, read from its top-level keys wherever they stand (a JSON object has
 * no key order: `jq -S` and pretty-printers move them): a trace (an array of events, or an
 * object with "traceEvents"), a document of ours (its "schema" string: tracedoc.report/1, ...),
 * or a caching-allocator snapshot ("segments", "device_traces"). Fed the head of the input a
 * piece at a time; it decides as soon as a key tells, so a trace is known from its first bytes
 * and only a small document is read to its end. */
#ifndef TD_PARSER_SNIFF_H
#define TD_PARSER_SNIFF_H

#include <stddef.h>

enum td_sniff_kind {
	TD_SNIFF_MORE,     /* not decided yet: feed more */
	TD_SNIFF_TRACE,    /* an array (but of segments), or an object with "traceEvents" (or
			    * "schemaVersion", "deviceProperties", "displayTimeUnit": Kineto's)
			    * at the top */
	TD_SNIFF_SCHEMA,   /* an object whose top-level "schema" is a string: td_sniff_schema() */
	TD_SNIFF_SNAPSHOT, /* an object with "segments" or "device_traces" at the top, an array
			    * whose first object has a segment's keys ("total_size", "blocks",
			    * torch.cuda.memory_snapshot()), or a pickle (its first byte 0x80:
			    * _dump_snapshot()'s file, read by parser/snapshot.h) */
	TD_SNIFF_OTHER,    /* none of these: the document ended, is not JSON or nests too deep */
};

struct td_sniffer;

struct td_sniffer *td_sniff_new(void);
/* Feeds the next len bytes (len 0: the input ended). Returns the decision so far; once it is
 * not TD_SNIFF_MORE further feeds return it unchanged. */
enum td_sniff_kind td_sniff_feed(struct td_sniffer *s, const void *buf, size_t len);
/* The "schema" string (TD_SNIFF_SCHEMA; cut at 63 bytes), else "". */
const char *td_sniff_schema(const struct td_sniffer *s);
void td_sniff_free(struct td_sniffer *s);

#endif
