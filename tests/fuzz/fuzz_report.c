/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a saved report or job report (a --baseline the
 * repository holds) and as a rank's summary: read the way gate and diagnose read them. Must
 * never crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "job/summary.h"
#include "analysis/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = td_malloc(size + 1);
	struct td_metrics m;
	struct td_summary sum;
	struct td_error err;

	memcpy(s, data, size);
	s[size] = '\0';
	memset(&err, 0, sizeof(err));
	(void)td_metrics_from_report(s, &m, &err);
	if (td_summary_parse(s, &sum, &err) == 0)
		td_summary_free(&sum);
	free(s);
	return 0;
}
