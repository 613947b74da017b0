/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a --config file (the repository holds it, so a pull
 * request controls it), and as a --peaks file (config/peaks.h): parsed, checked, freed. Must
 * never crash, leak or trip a sanitizer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "config/config.h"
#include "config/peaks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = td_malloc(size + 1);
	struct td_config c;
	struct td_error err;
	struct td_peaks p;

	memcpy(s, data, size);
	s[size] = '\0';
	memset(&err, 0, sizeof(err));
	td_config_default(&c);
	(void)td_config_parse(&c, s, &err);
	td_config_free(&c);
	memset(&p, 0, sizeof(p));
	(void)td_peaks_parse(s, &p, &err);
	free(s);
	return 0;
}
