/* SPDX-License-Identifier: MIT */
/* What test_reader.c takes from test_reader_split.c, the two files of the test_reader suite:
 * the tests of the reader's parallel paths, and a temporary file written with text (which
 * both use). */
#ifndef TD_TESTS_TEST_READER_H
#define TD_TESTS_TEST_READER_H

#include <stddef.h>

/* A temporary file holding text[0..len): its path, to unlink and free. */
char *write_temp(const char *text, size_t len);

void test_split_sweep(void **state);
void test_split_evil_cuts(void **state);
void test_split_huge_event(void **state);
void test_split_real_traces(void **state);
void test_records_short_and_full(void **state);
void test_finalize_threads(void **state);
void test_zstd_frame_decoders(void **state);
void test_zstd_frames(void **state);

#endif
