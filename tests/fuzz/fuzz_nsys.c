/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as an Nsight Systems SQLite export, written to a temporary
 * file and read by its path as `tracedoc diagnose FILE` reads one (SQLite reads a file, and
 * resolves /proc/self/fd links: a memory file's name is no file to it); the
 * loader's routing by the first bytes as well. Must never crash, hang, leak or trip a
 * sanitizer: a damaged database is an error. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
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
	char path[] = "/tmp/td-fuzz-nsys-XXXXXX";
	int fd;

	/* past the header the fuzzer's bytes: most inputs then reach the SQLite reader */
	fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (size < 16 || memcmp(data, magic, 16)) {
		if (write(fd, magic, 16) != 16) {
			close(fd);
			unlink(path);
			return 0;
		}
	}
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	memset(&opts, 0, sizeof(opts));
	opts.no_thread = 1;
	td_trace_init(&t);
	memset(&err, 0, sizeof(err));
	(void)td_trace_load(path, &opts, &t, &err);
	td_trace_free(&t);
	unlink(path);
	return 0;
}
