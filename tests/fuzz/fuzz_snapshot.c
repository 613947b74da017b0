/* SPDX-License-Identifier: MIT */
/* libFuzzer target: arbitrary bytes as a caching-allocator snapshot (tracedoc memory FILE),
 * read through the same input layer from a memory file, and told apart by the sniffer as the
 * command tells it. Must never crash, leak, overflow or trip a sanitizer. */
#define _GNU_SOURCE /* memfd_create */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/error.h"
#include "parser/input.h"
#include "parser/sniff.h"
#include "tables/snapshot.h"
#include "tables/snapshot_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct td_sniffer *sn = td_sniff_new();
	struct td_snapshot snap;
	struct td_input *in;
	struct td_error err;
	char path[64];
	size_t i;
	int fd;

	/* the sniffer fed in pieces of 1..7 bytes */
	for (i = 0; i < size;) {
		size_t k = 1 + (i % 7);
		if (k > size - i)
			k = size - i;
		td_sniff_feed(sn, data + i, k);
		i += k;
	}
	td_sniff_feed(sn, NULL, 0);
	(void)td_sniff_schema(sn);
	td_sniff_free(sn);

	fd = memfd_create("snapshot", 0);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	memset(&err, 0, sizeof(err));
	if (td_input_open(path, &in, &err) == 0) {
		if (td_snapshot_read(in, "fuzz", &snap, &err) == 0) {
			struct td_snapshot none; /* no device: every site on one side */
			struct td_snap_diff d;
			memset(&none, 0, sizeof(none));
			td_snapshot_diff(&snap, &snap, &d); /* tracedoc memory A A */
			td_snap_diff_free(&d);
			td_snapshot_diff(&none, &snap, &d);
			td_snap_diff_free(&d);
			td_snapshot_free(&snap);
		}
		td_input_close(in);
	}
	close(fd);
	return 0;
}
