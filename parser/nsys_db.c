/* SPDX-License-Identifier: MIT */
/* The Nsight Systems export's database, for the reader (parser/nsys_db.h). */
#ifdef TD_HAVE_SQLITE
#include "parser/nsys_db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "parser/trace.h"

int nsys_fail(struct rd *r, const char *what)
{
	int code = sqlite3_errcode(r->db);

	if (code == SQLITE_TOOBIG)
		return td_error_set(r->err, TD_EFORMAT, "a value in %s is larger than %d MiB: no "
				    "export nsys writes has one (a damaged or forged file)", what,
				    SQL_LENGTH_MAX >> 20);

	return td_error_set(r->err, code == SQLITE_NOMEM ? TD_ENOMEM : code == SQLITE_CANTOPEN ||
			    code == SQLITE_IOERR ? TD_EIO : TD_EPARSE,
			    "SQLite: %s (%s); the file is damaged or not a complete export: export "
			    "it again with nsys export --type sqlite", sqlite3_errmsg(r->db), what);
}

/* 1 when the export has a table (not a view: a view runs what the file says) of that name. */
int nsys_has_table(struct rd *r, const char *name)
{
	sqlite3_stmt *st;
	int yes = 0;

	if (sqlite3_prepare_v2(r->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
			       "name = ?1", -1, &st, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st);
	sqlite3_finalize(st);
	return yes == SQLITE_ROW ? 1 : yes == SQLITE_DONE ? 0 : -1;
}

/* The bits of the spec's columns the table has. */
int nsys_table_cols(struct rd *r, const struct spec *sp, unsigned *has)
{
	sqlite3_stmt *st;
	int rc;

	*has = 0;
	if (sqlite3_prepare_v2(r->db, "SELECT name FROM pragma_table_info(?1)", -1, &st, NULL) !=
	    SQLITE_OK)
		return nsys_fail(r, sp->table);
	sqlite3_bind_text(st, 1, sp->table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *n = (const char *)sqlite3_column_text(st, 0);
		int i;
		for (i = 0; n && i < MAXCOLS && sp->cols[i]; i++)
			if (!strcmp(n, sp->cols[i]))
				*has |= 1u << i;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : nsys_fail(r, sp->table);
}

/* --- strings ----------------------------------------------------------------------------- */

int nsys_sid_str(struct rd *r, int64_t sid, uint32_t *off, uint32_t *len)
{
	size_t i, mask;
	int rc;

	*off = *len = 0;
	if (!r->str_st)
		return 0;
	if ((r->nsids + 1) * 2 > r->sid_cap) {
		size_t n = r->sid_cap ? r->sid_cap * 2 : 1024, k;
		struct sid_slot *ns = td_calloc(n, sizeof(*ns));
		for (k = 0; k < r->sid_cap; k++) {
			if (!r->sids[k].used)
				continue;
			for (i = (size_t)((uint64_t)r->sids[k].key * 0x9e3779b97f4a7c15ull >> 20) &
				 (n - 1); ns[i].used; i = (i + 1) & (n - 1))
				;
			ns[i] = r->sids[k];
		}
		free(r->sids);
		r->sids = ns;
		r->sid_cap = n;
	}
	mask = r->sid_cap - 1;
	for (i = (size_t)((uint64_t)sid * 0x9e3779b97f4a7c15ull >> 20) & mask; r->sids[i].used;
	     i = (i + 1) & mask)
		if (r->sids[i].key == sid) {
			*off = r->sids[i].off;
			*len = r->sids[i].len;
			return r->sids[i].found;
		}
	sqlite3_bind_int64(r->str_st, 1, sid);
	rc = sqlite3_step(r->str_st);
	r->sids[i].key = sid;
	r->sids[i].used = 1;
	r->sids[i].found = 0;
	r->nsids++;
	if (rc == SQLITE_ROW && sqlite3_column_type(r->str_st, 0) != SQLITE_NULL) {
		const char *v = (const char *)sqlite3_column_blob(r->str_st, 0);
		size_t n = (size_t)sqlite3_column_bytes(r->str_st, 0);
		if (n > STR_MAX) {
			n = STR_MAX;
			r->long_strings++;
		}
		if (r->arena_len + n > r->arena_cap) {
			r->arena_cap = (r->arena_len + n) * 2 + 4096;
			r->arena = td_realloc(r->arena, r->arena_cap);
		}
		if (n)
			memcpy(r->arena + r->arena_len, v, n);
		r->sids[i].off = *off = (uint32_t)r->arena_len;
		r->sids[i].len = *len = (uint32_t)n;
		r->sids[i].found = 1;
		r->arena_len += n;
	} else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		sqlite3_reset(r->str_st);
		return nsys_fail(r, "StringIds");
	}
	sqlite3_reset(r->str_st);
	return r->sids[i].found;
}

/* Appends n bytes to the row's string area; returns the slice. */
struct td_slice nsys_put(struct rd *r, const char *s, size_t n)
{
	struct td_slice sl;

	if (r->sb_len + n + 1 > r->sb_cap) {
		r->sb_cap = (r->sb_len + n + 1) * 2;
		r->sb = td_realloc(r->sb, r->sb_cap);
	}
	memcpy(r->sb + r->sb_len, s, n);
	sl.off = (uint32_t)r->sb_len;
	sl.len = (uint32_t)n;
	sl.set = 1;
	r->sb_len += n;
	return sl;
}

/* An ENUM_* table into e (absent: e->has 0 and the caller's constants hold). Labels are the
 * short form of the enumerator's name after prefix (CUDA_MEMCPY_KIND_HTOD: "HTOD"). */
int nsys_read_enum(struct rd *r, const char *table, const char *prefix, struct enum_tab *e)
{
	sqlite3_stmt *st;
	char sql[160];
	int rc;

	memset(e, 0, sizeof(*e));
	if ((rc = nsys_has_table(r, table)) <= 0)
		return rc < 0 ? nsys_fail(r, table) : 0;
	snprintf(sql, sizeof(sql), "SELECT id, name FROM \"%s\"", table);
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0; /* other columns: the constants hold */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		const char *n = (const char *)sqlite3_column_text(st, 1);
		size_t pl = strlen(prefix);
		if (id < 0 || id >= ENUM_MAX || !n)
			continue;
		if (!strncmp(n, prefix, pl))
			n += pl;
		snprintf(e->name[id], sizeof(e->name[id]), "%s", n);
		e->has = 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : nsys_fail(r, table);
}

/* Enumerator k of e, else of the constants nsys has written since 2022 (fallback). */
static const char *enum_name(const struct enum_tab *e, int64_t k, const char *const *fallback,
			     size_t nfallback)
{
	if (e->has)
		return k >= 0 && k < ENUM_MAX && e->name[k][0] ? e->name[k] : "UNKNOWN";
	return k >= 0 && (size_t)k < nfallback ? fallback[k] : "UNKNOWN";
}

/* "PAGEABLE" -> "Pageable", "DEVICE_STATIC" -> "Device Static": Kineto's spelling. */
static void title_case(char *out, size_t cap, const char *in)
{
	size_t i;
	int up = 1;

	for (i = 0; in[i] && i + 1 < cap; i++) {
		char c = in[i] == '_' ? ' ' : in[i];
		out[i] = up ? c : (c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c);
		up = c == ' ';
	}
	out[i] = '\0';
}

const char *nsys_mem_kind(struct rd *r, int64_t k, char *buf, size_t cap)
{
	static const char *const fb[] = {"PAGEABLE", "PINNED", "DEVICE", "ARRAY", "MANAGED",
					 "DEVICE_STATIC", "MANAGED_STATIC", "UNKNOWN"};
	title_case(buf, cap, enum_name(&r->mem_kind, k, fb, sizeof(fb) / sizeof(fb[0])));
	return buf;
}

/* "HTOD" -> "HtoD", "UVM_HTOD" -> "UVM HtoD" */
const char *nsys_copy_kind(struct rd *r, int64_t k, char *buf, size_t cap)
{
	static const char *const fb[] = {"UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD",
					 "DTOA", "DTOD", "HTOH", "PTOP", "UVM_HTOD", "UVM_DTOH",
					 "UVM_DTOD"};
	const char *n = enum_name(&r->copy_kind, k, fb, sizeof(fb) / sizeof(fb[0]));
	size_t i;

	snprintf(buf, cap, "%s", n);
	for (i = 0; buf[i]; i++) {
		if (buf[i] == '_')
			buf[i] = ' ';
		else if (buf[i] == 'T' && buf[i + 1] == 'O' && i > 0 && buf[i - 1] != ' ')
			buf[i + 1] = 'o', buf[i] = 't';
	}
	if (!strcmp(buf, "UNKNOWN"))
		snprintf(buf, cap, "%s", "<unknown>");
	return buf;
}

/* globalTid: the process id in bits 24-47, the thread id in bits 0-23. */
void nsys_thread_of(int64_t gtid, struct td_raw *e)
{
	e->pid = (gtid >> 24) & 0xffffff;
	e->tid = gtid & 0xffffff;
	e->has_pid = e->has_tid = 1;
}

/* --- what is not an event: the export's check, thread names, devices, what it lacks -- */

int nsys_check(struct rd *r)
{
	int rc = nsys_has_table(r, "StringIds");

	if (rc < 0)
		return nsys_fail(r, "reading its tables");
	if (!rc)
		return td_error_set(r->err, TD_EFORMAT, "%s", "a SQLite database, but not an Nsight "
				    "Systems export: it has no StringIds table (export a report "
				    "with nsys export --type sqlite)");
	if (sqlite3_prepare_v2(r->db, "SELECT value FROM StringIds WHERE id = ?1", -1, &r->str_st,
			       NULL) != SQLITE_OK)
		return nsys_fail(r, "StringIds");
	return 0;
}

static int thread_names(struct rd *r)
{
	static const struct spec sp = {"ThreadNames", {"nameId", "globalTid"}, 3};
	sqlite3_stmt *st;
	unsigned has;
	int rc;

	if ((rc = nsys_has_table(r, sp.table)) <= 0)
		return rc < 0 ? nsys_fail(r, sp.table) : 0;
	if ((rc = nsys_table_cols(r, &sp, &has)) != 0)
		return rc;
	if (has != 3)
		return 0; /* names are a nicety: an export without them is read */
	if (sqlite3_prepare_v2(r->db, "SELECT nameId, globalTid FROM ThreadNames", -1, &st,
			       NULL) != SQLITE_OK)
		return nsys_fail(r, sp.table);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct td_raw e;
		uint32_t off, len, k;
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER ||
		    sqlite3_column_type(st, 1) != SQLITE_INTEGER)
			continue;
		/* the names of threads with events only: an export names every thread of the
		 * machine's processes (another program's "sglang::scheduler" is no context) */
		nsys_thread_of(sqlite3_column_int64(st, 1), &e);
		k = td_trace_find_cpu_track(r->t, e.pid, 0, e.tid, 0);
		if (k == TD_NONE)
			continue;
		if ((rc = nsys_sid_str(r, sqlite3_column_int64(st, 0), &off, &len)) < 0)
			break;
		if (rc)
			td_trace_track(r->t, k)->name = td_builder_intern(&r->b, r->arena + off, len);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : rc < 0 ? rc : nsys_fail(r, sp.table);
}

/* TARGET_INFO_GPU: name, SMs, memory, compute capability of the devices the GPU work ran on
 * (an export lists every adapter: a laptop's integrated GPU too). */
static int devices(struct rd *r)
{
	static const struct spec sp = {"TARGET_INFO_GPU", {"id", "name", "totalMemory",
				       "smCount", "computeMajor", "computeMinor"}, 1};
	struct td_trace *t = r->t;
	sqlite3_stmt *st;
	unsigned has;
	char sql[256];
	size_t o;
	int rc, i;

	if ((rc = nsys_has_table(r, sp.table)) <= 0)
		return rc < 0 ? nsys_fail(r, sp.table) : 0;
	if ((rc = nsys_table_cols(r, &sp, &has)) != 0)
		return rc;
	if (!(has & 1))
		return 0;
	o = (size_t)snprintf(sql, sizeof(sql), "SELECT ");
	for (i = 0; sp.cols[i]; i++)
		o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s%s", i ? ", " : "",
				      has >> i & 1 ? sp.cols[i] : "NULL");
	snprintf(sql + o, sizeof(sql) - o, " FROM TARGET_INFO_GPU");
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return nsys_fail(r, sp.table);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		struct td_device *d = NULL;
		size_t k;
		for (k = 0; k < t->devices.len; k++)
			if (TD_VEC_AT(&t->devices, struct td_device, k).id == id)
				d = &TD_VEC_AT(&t->devices, struct td_device, k);
		if (!d || sqlite3_column_type(st, 0) != SQLITE_INTEGER || d->has_props)
			continue;
		if (sqlite3_column_type(st, 1) == SQLITE_TEXT) {
			size_t n = (size_t)sqlite3_column_bytes(st, 1);
			d->name = td_builder_intern(&r->b, (const char *)sqlite3_column_text(st, 1),
						    (uint32_t)(n > 256 ? 256 : n));
		}
		d->total_mem = sqlite3_column_int64(st, 2);
		d->num_sms = (int32_t)sqlite3_column_int(st, 3);
		d->cc_major = (int32_t)sqlite3_column_int(st, 4);
		d->cc_minor = (int32_t)sqlite3_column_int(st, 5);
		d->has_props = 1;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : nsys_fail(r, sp.table);
}

int nsys_meta(struct rd *r)
{
	int rc = thread_names(r);

	return rc ? rc : devices(r);
}

/* What the export lacks, for the report's notes, with the nsys option that records it. */
void nsys_lacks(struct rd *r)
{
	struct td_trace *t = r->t;
	size_t o = 0, cap = sizeof(t->lacks);

#define NOTE(...) (o += (size_t)snprintf(t->lacks + o, o < cap ? cap - o : 0, __VA_ARGS__), \
		   o = o < cap ? o : cap - 1)
	if (!r->s[S_KERNEL].has && !r->s[S_MEMCPY].has && !r->s[S_MEMSET].has &&
	    !r->s[S_GRAPH].has && !r->s[S_RUNTIME].has)
		NOTE("no CUDA activity was recorded (the export has no CUPTI_ACTIVITY_KIND_* "
		     "tables): record with nsys profile --trace=cuda,nvtx,osrt");
	else if (!r->s[S_RUNTIME].has && !r->s[S_DRIVER].has)
		NOTE("no CUDA API calls: GPU work cannot be linked to its launches; record with "
		     "--trace=cuda");
	if (!r->s[S_NVTX].has)
		NOTE("%sno NVTX: steps cannot be found; record with --trace=nvtx (and "
		     "--pytorch=autograd-nvtx for PyTorch's ops)", o ? "; " : "");
	if (r->s[S_GRAPH].has)
		NOTE("%sCUDA graphs were traced whole: each launch is one kernel here; record with "
		     "--cuda-graph-trace=node for their kernels", o ? "; " : "");
#undef NOTE
}
#else
typedef int td_nsys_db_unused; /* ISO C: no empty unit */
#endif
