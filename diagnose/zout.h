/* SPDX-License-Identifier: MIT */
/* Output compressed by the name's suffix: .gz with zlib (gzip), .zst with zstd, else plain;
 * written to an out_file (atomic -o). */
#ifndef TD_DIAGNOSE_ZOUT_H
#define TD_DIAGNOSE_ZOUT_H

#include <stddef.h>
#include <stdio.h>

struct zout;

/* A writer over f for a file named name. Returns NULL when the compressor cannot start. */
struct zout *zout_open(FILE *f, const char *name);
/* Returns 0, or -1 when compressing or writing failed. */
int zout_write(struct zout *z, const void *buf, size_t n);
/* Flushes the compressor's end; returns 0 or -1. Frees z. */
int zout_close(struct zout *z);

#endif
