/* SPDX-License-Identifier: MIT */
/* Nsight Systems input: a SQLite export (`nsys export --type sqlite`) read into the same model
 * the Kineto JSON reader builds, and a report file (.nsys-rep, .qdrep) exported to SQLite by
 * the `nsys` on PATH first. Both are told apart by their first bytes, not their names. */
#ifndef TD_PARSER_NSYS_H
#define TD_PARSER_NSYS_H

#include <stddef.h>

struct td_trace;
struct td_error;

/* Bytes needed to tell these inputs apart. */
#define TD_NSYS_HEAD 32

/* 1 when the first n bytes are a SQLite 3 database's ("SQLite format 3\0"). */
int td_nsys_is_sqlite(const void *head, size_t n);
/* 1 when they are an Nsight Systems report's ("NVIDIA Tegra Profiler Report", .nsys-rep and
 * .qdrep alike). */
int td_nsys_is_report(const void *head, size_t n);
/* 1 when this tracedoc was built with libsqlite3 (else the loaders below return TD_EFORMAT
 * saying so). */
int td_nsys_available(void);

/* Reads the SQLite export at path into t (initialised by the caller) and finalizes it.
 * Opened read-only; every table read row by row in time order. Returns 0, or TD_EIO /
 * TD_EPARSE (a corrupt database) / TD_EFORMAT (not an export, a column missing or of the
 * wrong type) with err filled. */
int td_nsys_load(const char *path, struct td_trace *t, struct td_error *err);

/* A report file: exported with `nsys export --type sqlite --output TMP path` (run directly,
 * no shell, its output on stderr) into a directory of its own under $TMPDIR (else /tmp), read
 * as above and removed. Without nsys on PATH: TD_EFORMAT, the message giving the command to
 * run. */
int td_nsys_load_report(const char *path, struct td_trace *t, struct td_error *err);

#endif
