/* SPDX-License-Identifier: MIT */
/* zstd output as a sequence of complete frames: each tdc_zw_frame() ends one, so a process
 * that dies leaves every completed frame readable. Internal to collector/. */
#ifndef TD_COLLECTOR_ZWRITER_H
#define TD_COLLECTOR_ZWRITER_H

#include <stddef.h>

struct tdc_zw;

/* Creates (truncates) path. Returns NULL on failure (errno set). */
struct tdc_zw *tdc_zw_open(const char *path, int level);
/* Compresses len bytes into the current frame. 0 or -1. */
int tdc_zw_write(struct tdc_zw *w, const void *buf, size_t len);
/* Ends the current frame and writes it out. 0 or -1. */
int tdc_zw_frame(struct tdc_zw *w);
/* Ends the frame and closes the file. 0 or -1. */
int tdc_zw_close(struct tdc_zw *w);

#endif
