/* SPDX-License-Identifier: MIT */
/* An input the user names - a trace, a saved report, a rank's summary, a snapshot, a config -
 * opened once and told apart by its top-level keys (parser/sniff.h), so a pipe or `-` is read
 * once, as what the option says it is, and a document whose keys were re-ordered is still
 * known by its "schema". */
#ifndef TD_DIAGNOSE_DOC_H
#define TD_DIAGNOSE_DOC_H

#include <stddef.h>

#include "diagnose/msg.h" /* cli_shown(): how a path is shown */
#include "parser/sniff.h"

struct td_input;
struct td_trace;
struct td_snapshot;

#define SUMMARY_DOC_MAX (256u << 20) /* a rank's summary is a few KB */
#define REPORT_DOC_MAX (64u << 20)   /* a saved report, likewise */

struct cli_doc {
	const char *path;  /* as given; "-" is standard input */
	struct td_input *in;
	char *buf;         /* the bytes read so far, uncompressed, NUL-terminated */
	size_t len, cap;
	int ended;         /* the whole input is in buf */
	int regular;       /* a regular file: a trace is opened again to be read on threads */
	enum td_sniff_kind kind;
	char schema[64];   /* kind TD_SNIFF_SCHEMA: "tracedoc.report/1", ... */
};

/* Opens path and reads until its kind is known, at most max bytes (past that: a trace, or a
 * document too large to be ours). Returns EXIT_OK, or EXIT_INPUT with why in msg. */
int cli_doc_open(const char *path, size_t max, struct cli_doc *d, char *msg, size_t cap);
/* The whole document, NUL-terminated (the caller frees it), or NULL with why in msg: larger
 * than max, or unreadable. */
char *cli_doc_text(struct cli_doc *d, size_t max, char *msg, size_t cap);
/* Reads the document as a trace (cli_load's messages and exit codes); d is closed. */
int cli_doc_trace(struct cli_doc *d, struct td_trace *t);
/* The same without printing (cli_load_quiet). */
int cli_doc_trace_quiet(struct cli_doc *d, struct td_trace *t, char *msg, size_t cap);
/* Reads the document (kind TD_SNIFF_SNAPSHOT) as a caching-allocator snapshot into s
 * (td_snapshot_free() it); d is closed. Returns EXIT_OK, or the exit code with the reader's
 * error printed. */
int cli_doc_snapshot(struct cli_doc *d, struct td_snapshot *s);
void cli_doc_close(struct cli_doc *d);
/* The input from its first byte again (what was read given back); d still owns it. */
struct td_input *cli_doc_input(struct cli_doc *d);

/* What d is by its "schema" (kind TD_SNIFF_SCHEMA): 1 when it is one of the NULL-ended
 * schemas; else 0 with msg naming what it is and what is read here ("its schema is
 * "tracedoc.report/2"; this tracedoc reads tracedoc.report/1 or a trace"). */
int cli_doc_schema_is(const struct cli_doc *d, const char *const *schemas, const char *what,
		      char *msg, size_t cap);

#endif
