/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes through the reader (in chunks whose size the input picks),
 * the model's finalize and the busy-time query. Must never crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/error.h"
#include "parser/parser.h"
#include "parser/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_trace t;
	struct td_error err;
	struct td_parser *p;
	size_t chunk, off = 0, i;
	int rc = 0;

	if (size == 0)
		return 0;
	chunk = (size_t)(data[0] % 64) + 1;
	data++;
	size--;
	td_trace_init(&t);
	p = td_parser_new(&t);
	while (off < size && rc == 0) {
		size_t n = size - off < chunk ? size - off : chunk;
		rc = td_parser_feed(p, data + off, n, &err);
		off += n;
	}
	if (rc == 0)
		rc = td_parser_finish(p, &err);
	td_parser_free(p);
	if (rc == 0) {
		td_trace_finalize(&t);
		for (i = 0; i < t.devices.len; i++) {
			struct td_interval *iv;
			const struct td_device *d = &TD_VEC_AT(&t.devices, struct td_device, i);
			size_t n = td_trace_busy(&t, d->id, INT64_MIN, INT64_MAX, &iv);
			(void)td_intervals_total(iv, n);
			free(iv);
		}
		(void)td_trace_median_step(&t);
	}
	td_trace_free(&t);
	return 0;
}
