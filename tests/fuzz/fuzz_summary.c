/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as the summaries of a job's ranks (files a shared cluster
 * directory holds): read as diagnose reads them, then - when they parse - two ranks of it
 * built into a job and its collectives matched, as the reduce does. Must never crash, leak,
 * overflow or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "job/job.h"
#include "job/summary.h"
#include "config/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = td_malloc(size + 1);
	struct td_summary *sum = td_calloc(2, sizeof(*sum));
	struct td_config cfg;
	struct td_error err;
	struct td_job j;
	int k;

	memcpy(s, data, size);
	s[size] = '\0';
	memset(&err, 0, sizeof(err));
	for (k = 0; k < 2; k++)
		if (td_summary_parse(s, &sum[k], &err) != 0) {
			if (k)
				td_summary_free(&sum[0]);
			free(sum);
			free(s);
			return 0;
		}
	free(s);
	/* the second is the next rank of the same world */
	sum[1].rank = sum[0].rank >= 0 ? sum[0].rank + 1 : -1;
	if (sum[0].world_size > TD_JOB_WORLD_MAX)
		sum[0].world_size = sum[1].world_size = TD_JOB_WORLD_MAX; /* refused before, by name */
	td_config_default(&cfg);
	td_job_init(&j);
	(void)td_job_build(&j, sum, 2, &cfg, &err);
	td_job_free(&j);
	td_config_free(&cfg);
	return 0;
}
