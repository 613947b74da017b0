/* SPDX-License-Identifier: MIT */
/* Internal to parser/nsys*.c: the state of one export's read and the helpers over the
 * database (nsys_db.c: its tables and columns, StringIds, the ENUM_* tables, thread names,
 * devices, what it lacks) that the reader (nsys.c) calls. Only with libsqlite3. */
#ifndef TD_PARSER_NSYS_DB_H
#define TD_PARSER_NSYS_DB_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "parser/builder.h"

struct td_error;

#define STR_MAX (1u << 20)       /* a name is cut there, as the JSON reader cuts strings */
#define SQL_LENGTH_MAX (16 << 20) /* a longer value is refused by SQLite (SQLITE_TOOBIG) */
#define MAXCOLS 20

enum src_kind { S_KERNEL, S_MEMCPY, S_MEMSET, S_RUNTIME, S_DRIVER, S_SYNC, S_NVTX, S_GRAPH,
		S_OSRT, S_COUNT };

/* Each table's columns, by their names in the export; the first two are start and end. */
enum { C_START, C_END };
enum { K_DEV = 2, K_STREAM, K_CORR, K_DEMANGLED, K_SHORT, K_MANGLED, K_GX, K_GY, K_GZ, K_BX,
       K_BY, K_BZ, K_REGS, K_SSMEM, K_DSMEM };
enum { M_DEV = 2, M_STREAM, M_CORR, M_BYTES, M_COPYKIND, M_SRC, M_DST };
enum { Z_DEV = 2, Z_STREAM, Z_CORR, Z_BYTES, Z_MEMKIND };
enum { R_TID = 2, R_CORR, R_NAME }; /* also OSRT_API's (no correlationId: NULL) */
enum { Y_DEV = 2, Y_STREAM, Y_CORR, Y_TYPE, Y_DEPRECATED };
enum { N_TYPE = 2, N_TID, N_TEXT, N_TEXTID };
enum { G_DEV = 2, G_STREAM, G_CORR, G_GRAPH };

struct spec {
	const char *table;
	const char *cols[MAXCOLS];
	unsigned req; /* bits: columns without which the table cannot be read */
};

struct src {
	sqlite3_stmt *st;
	int live;           /* a row is current */
	int64_t start;      /* its start (INT64_MIN: NULL, read first and left out) */
	uint64_t row;       /* rows read */
	unsigned has;       /* bits: the columns the table has */
};

struct sid_slot {
	int64_t key;
	uint32_t off, len;  /* the string in rd.arena */
	uint8_t used, found; /* found: StringIds has it */
};

/* An ENUM_* table's labels, by id (small: a few dozen rows). */
#define ENUM_MAX 64
struct enum_tab {
	char name[ENUM_MAX][40];
	int has;
};

struct rd {
	sqlite3 *db;
	struct td_trace *t;
	struct td_builder b;
	struct td_error *err;
	struct src s[S_COUNT];
	sqlite3_stmt *str_st;      /* SELECT value FROM StringIds WHERE id = ? */
	struct sid_slot *sids;
	size_t nsids, sid_cap;
	char *sb;                  /* a row's string area */
	size_t sb_len, sb_cap;
	struct enum_tab mem_kind, copy_kind;
	char *arena;               /* the StringIds entries looked up, each once */
	size_t arena_len, arena_cap;
	uint64_t long_strings, rows, instants; /* counted on the reading thread */
	int rc;                    /* the reading thread's result */
	/* the records (td_raw_put) of the rows read, shipped to the model's thread when full */
	unsigned char *batch;
	size_t batch_len, batch_cap;
	void (*ship)(struct rd *r); /* hands batch over and sets an empty one */
	void *pipe;
};

int nsys_fail(struct rd *r, const char *what);
/* 1 when the export has a table (not a view: a view runs what the file says) of that name,
 * 0 when not, -1 on a database error. */
int nsys_has_table(struct rd *r, const char *name);
/* The bits of the spec's columns the table has (PRAGMA table_info). */
int nsys_table_cols(struct rd *r, const struct spec *sp, unsigned *has);
/* StringIds entry sid at r->arena + *off, *len bytes (cut at STR_MAX), looked up once:
 * 1, or 0 when there is none, or a negative code. Valid until the next lookup. */
int nsys_sid_str(struct rd *r, int64_t sid, uint32_t *off, uint32_t *len);
/* Appends n bytes to the row's string area; returns the slice. */
struct td_slice nsys_put(struct rd *r, const char *s, size_t n);
/* globalTid: the process id in bits 24-47, the thread id in bits 0-23. */
void nsys_thread_of(int64_t gtid, struct td_raw *e);
int nsys_read_enum(struct rd *r, const char *table, const char *prefix, struct enum_tab *e);
/* Kineto's names of a memory kind ("Pageable") and a copy kind ("HtoD"). */
const char *nsys_mem_kind(struct rd *r, int64_t k, char *buf, size_t cap);
const char *nsys_copy_kind(struct rd *r, int64_t k, char *buf, size_t cap);
/* An export: a StringIds table. */
int nsys_check(struct rd *r);
/* Thread names and the devices' properties, after the events. */
int nsys_meta(struct rd *r);
/* What the export lacks into t->lacks, with the nsys option that records it. */
void nsys_lacks(struct rd *r);

#endif
