/* SPDX-License-Identifier: MIT */
/* Test helpers: whole-file loading (decompressed), chunked parsing from memory and a digest
 * of everything the model holds, so two ways of reading a trace can be compared exactly. */
#ifndef TD_TESTS_HELPERS_H
#define TD_TESTS_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "parser/trace.h"

/* Reads and decompresses a whole file (test sizes only). Returns NULL if it cannot be opened. */
unsigned char *th_slurp(const char *path, size_t *len);
/* Parses buf in chunks of `chunk` bytes into t (initialised here) and finalizes it on success.
 * Returns the parser's code; err is filled on failure. */
int th_parse_mem(const unsigned char *buf, size_t len, size_t chunk, struct td_trace *t,
		 struct td_error *err);
/* Digest of the finalized model: events, links, steps, devices, counts, anomalies, metadata. */
uint64_t th_digest(const struct td_trace *t);
/* Path under fixtures/. Returns a static buffer. */
const char *th_fixture(const char *name);
/* 1 when ../shared/traces is there. */
int th_have_shared(void);
/* In a cmocka test: skip it, saying why, when ../shared/traces is not there. */
#define TH_SKIP_WITHOUT_SHARED()                                                                \
	do {                                                                                    \
		if (!th_have_shared()) {                                                        \
			print_message("skipped: %s is not there\n", TD_SHARED_TRACES);          \
			skip();                                                                 \
		}                                                                               \
	} while (0)
/* Path of a trace under ../shared/traces. Returns a static buffer. */
const char *th_shared(const char *name);

#endif
