/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes through the reader (in chunks whose size the input picks),
 * twice (the whitespace between tokens left out before yajl, and not: the outcomes must be
 * the same), the model's finalize, the busy-time query, tracedoc check's rules over the
 * model and its graph-replayed kernels matched to its own captures and annotations (every
 * chain read). Must never crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/check.h"
#include "analysis/graphmap.h"
#include "common/error.h"
#include "parser/parser.h"
#include "parser/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* one read of data[0..size) in chunks; returns the parser's code, the trace kept in *t */
static int read_all(const uint8_t *data, size_t size, size_t chunk, int squeeze, struct td_trace *t,
		    struct td_error *err)
{
	struct td_parser *p;
	size_t off = 0;
	int rc = 0;

	td_trace_init(t);
	memset(err, 0, sizeof(*err));
	p = td_parser_new(t);
	td_parser_set_squeeze(p, squeeze);
	while (off < size && rc == 0) {
		size_t n = size - off < chunk ? size - off : chunk;
		rc = td_parser_feed(p, data + off, n, err);
		off += n;
	}
	if (rc == 0)
		rc = td_parser_finish(p, err);
	td_parser_free(p);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_trace t, u;
	struct td_error err, err2;
	size_t chunk, i;
	int rc, rc2;

	if (size == 0)
		return 0;
	/* chunks of 1 to 64 bytes, times 1, 4, 16 or 64 */
	chunk = ((size_t)(data[0] % 64) + 1) << (2 * (data[0] >> 6));
	data++;
	size--;
	/* the whitespace between tokens left out, and not: the same outcome, exactly */
	rc = read_all(data, size, chunk, 1, &t, &err);
	rc2 = read_all(data, size, chunk, 0, &u, &err2);
	if (rc != rc2 || t.events.len != u.events.len || t.n_trace_events != u.n_trace_events ||
	    t.partial != u.partial || memcmp(&t.anom, &u.anom, sizeof(t.anom)) != 0 ||
	    (rc && (err.offset != err2.offset || err.line != err2.line || err.col != err2.col ||
		    strcmp(err.msg, err2.msg) != 0)))
		abort();
	td_trace_free(&u);
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
		{
			static struct td_health h;
			(void)td_health_run(&t, &h);
		}
		{
			struct td_graph_map m;
			size_t n, k, sum = 0;
			td_graph_map_build(&m, &t, &t);
			for (i = 0; i < t.events.len; i++) {
				const uint32_t *c = td_graph_map_ops(&m, (uint32_t)i, &n);
				for (k = 0; c && k < n; k++)
					sum += td_trace_name(&t, c[k])[0] != 0;
			}
			if (m.matched + m.annotated > m.replayed || sum > m.npool)
				abort();
			td_graph_map_free(&m);
		}
	}
	td_trace_free(&t);
	return 0;
}
