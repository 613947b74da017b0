/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as an Nsight Systems SQLite export, written to a memory
 * file and read by its path as `tracedoc diagnose FILE` reads one (SQLite reads a file); the
 * loader's routing by the first bytes as well. Must never crash, hang, leak or trip a
 * sanitizer: a damaged database is an error. */
#define _GNU_SOURCE /* memfd_create */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/error.h"
#include "parser/load.h"
#include "parser/nsys.h"
#include "parser/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char magic[] = "SQLite format 3";
	struct td_trace t;
	struct td_error err;
	struct td_load_opts opts;
	char path[64];
	int fd;

	/* past the header the fuzzer's bytes: most inputs then reach the SQLite reader */
	fd = memfd_create("nsys", 0);
	if (fd < 0)
		return 0;
	if (size < 16 || memcmp(data, magic, 16)) {
		if (write(fd, magic, 16) != 16) {
			close(fd);
			return 0;
		}
	}
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&opts, 0, sizeof(opts));
	opts.no_thread = 1;
	td_trace_init(&t);
	memset(&err, 0, sizeof(err));
	(void)td_trace_load(path, &opts, &t, &err);
	td_trace_free(&t);
	close(fd);
	return 0;
}
