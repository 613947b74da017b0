/* SPDX-License-Identifier: MIT */
/* Loading a trace file into the model: one thread reads and decompresses while the caller's
 * thread parses, so decompression overlaps parsing. */
#ifndef TD_PARSER_LOAD_H
#define TD_PARSER_LOAD_H

#include <stddef.h>

struct td_trace;
struct td_error;

struct td_load_opts {
	size_t chunk;   /* bytes per chunk handed to the parser; 0 = default (1 MiB) */
	int no_thread;  /* read and parse on the calling thread */
	int jobs;       /* > 1: that many threads parse blocks of the input (parser/split.c) */
	size_t block;   /* their block size; 0 = default (TD_SPLIT_BLOCK) */
	/* with jobs > 1, threads decoding a zstd file of many frames: 0 = one per four jobs
	 * (none under four: zstd decodes about five times faster than a parse thread reads),
	 * -1 = none */
	int zstd_threads;
	/* called as the input is read (on the reading thread): bytes of the file read so far
	 * (compressed bytes for a compressed file) and its size (0: unknown, as for stdin) */
	void (*progress)(void *ctx, unsigned long long done, unsigned long long total);
	void *progress_ctx;
};

/* Reads `path` ("-" = stdin) into `t` (initialised by the caller) and finalizes it.
 * Returns 0 (t->partial set when the input was cut short), or TD_EIO / TD_EPARSE / TD_EFORMAT
 * with err filled; err->has_pos says whether line, column and offset are known. */
int td_trace_load(const char *path, const struct td_load_opts *opts, struct td_trace *t,
		  struct td_error *err);

/* The same from an input already open (and maybe read a little, its bytes given back with
 * td_input_unread); total: its size for the progress callback (0: unknown). Closes in. */
struct td_input;
int td_trace_load_input(struct td_input *in, unsigned long long total,
			const struct td_load_opts *opts, struct td_trace *t, struct td_error *err);

#endif
