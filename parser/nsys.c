/* SPDX-License-Identifier: MIT */
/* The Nsight Systems SQLite export's reader (parser/nsys.h): each table nsys writes for CUDA
 * work stepped through in time order (as stored where it is, else ORDER BY start), the tables
 * merged by time, each row made the record the JSON reader makes of a Kineto event (struct
 * td_raw) and handed to the same builder, so the model is the one Kineto's traces give:
 *   CUPTI_ACTIVITY_KIND_KERNEL / MEMCPY / MEMSET -> kernels, copies, memsets on (deviceId,
 *     streamId), named as Kineto names them ("Memcpy HtoD (Pageable -> Device)");
 *   CUPTI_ACTIVITY_KIND_GRAPH_TRACE (graphs traced whole) -> one kernel a graph launch;
 *   CUPTI_ACTIVITY_KIND_RUNTIME / DRIVER -> runtime calls on the thread globalTid names (its
 *     pid and tid), their "_v7000" version suffix left out, linked by correlationId;
 *   CUPTI_ACTIVITY_KIND_SYNCHRONIZATION -> sync records;
 *   NVTX_EVENTS push/pop and start/end ranges -> user annotations (aten:: ranges of
 *     --pytorch=autograd-nvtx: CPU ops), from which the analysis finds steps;
 *   OSRT_API calls of 100 us or more (--trace=osrt) -> CPU ops named by the call, on their
 *     thread, so that idle under a blocking poll or pthread_cond_wait is named by it;
 *   ThreadNames -> thread names; TARGET_INFO_GPU -> the devices' properties.
 * Names are StringIds ids, each looked up once. The columns read are those the table has
 * (PRAGMA table_info), not those a version is known for. */
#include "parser/nsys.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/alloc.h"
#include "common/error.h"
#include "parser/builder.h"
#include "parser/trace.h"

int td_nsys_is_sqlite(const void *head, size_t n)
{
	return n >= 16 && !memcmp(head, "SQLite format 3", 16);
}

int td_nsys_is_report(const void *head, size_t n)
{
	return n >= 28 && !memcmp(head, "NVIDIA Tegra Profiler Report", 28);
}

#ifndef TD_HAVE_SQLITE

int td_nsys_available(void)
{
	return 0;
}

int td_nsys_load(const char *path, struct td_trace *t, struct td_error *err)
{
	(void)path;
	(void)t;
	return td_error_set(err, TD_EFORMAT, "%s", "an Nsight Systems SQLite export, but this "
			    "tracedoc was built without SQLite (install libsqlite3-dev and build "
			    "again)");
}

#else

#include <sqlite3.h>

int td_nsys_available(void)
{
	return 1;
}

#include "parser/nsys_db.h"

static const struct spec specs[S_COUNT] = {
	[S_KERNEL] = {"CUPTI_ACTIVITY_KIND_KERNEL",
		      {"start", "end", "deviceId", "streamId", "correlationId", "demangledName",
		       "shortName", "mangledName", "gridX", "gridY", "gridZ", "blockX", "blockY",
		       "blockZ", "registersPerThread", "staticSharedMemory",
		       "dynamicSharedMemory"}, 0xf},
	[S_MEMCPY] = {"CUPTI_ACTIVITY_KIND_MEMCPY",
		      {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "copyKind",
		       "srcKind", "dstKind"}, 0xf},
	[S_MEMSET] = {"CUPTI_ACTIVITY_KIND_MEMSET",
		      {"start", "end", "deviceId", "streamId", "correlationId", "bytes", "memKind"},
		      0xf},
	[S_RUNTIME] = {"CUPTI_ACTIVITY_KIND_RUNTIME",
		       {"start", "end", "globalTid", "correlationId", "nameId"}, 0x17},
	[S_DRIVER] = {"CUPTI_ACTIVITY_KIND_DRIVER",
		      {"start", "end", "globalTid", "correlationId", "nameId"}, 0x17},
	[S_SYNC] = {"CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
		    {"start", "end", "deviceId", "streamId", "correlationId", "syncType",
		     "deprecatedSyncType"}, 0xf},
	[S_NVTX] = {"NVTX_EVENTS", {"start", "end", "eventType", "globalTid", "text", "textId"},
		    0xf},
	[S_GRAPH] = {"CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
		     {"start", "end", "deviceId", "streamId", "correlationId", "graphId"}, 0xf},
	[S_OSRT] = {"OSRT_API", {"start", "end", "globalTid", "correlationId", "nameId"}, 0x17},
};

/* OS runtime calls (OSRT_API: pthread_cond_wait, poll, ioctl, sem_wait...) that block at least
 * this long are host spans named by the call, so that GPU idle under them names them; the
 * shorter ones (most of the rows) are left out, unread into the model. */
#define OSRT_MIN_NS 100000

static int step_src(struct rd *r, int k);

/* 1 when the table's rows are in time order already (nsys writes them so, most often): read
 * as they stand, a pass over one column, rather than sorted (SQLite's sort of a large table
 * took four times the read); 0 when not, or a negative code. */
static int in_order(struct rd *r, const char *table)
{
	sqlite3_stmt *st;
	char sql[160];
	int64_t last = INT64_MIN;
	int rc, sorted = 1;

	snprintf(sql, sizeof(sql), "SELECT \"start\" FROM \"%s\"", table);
	if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
		return nsys_fail(r, table);
	while (sorted && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t v = sqlite3_column_int64(st, 0);
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER || v < last)
			sorted = 0;
		last = v;
	}
	sqlite3_finalize(st);
	return !sorted ? 0 : rc == SQLITE_DONE ? 1 : nsys_fail(r, table);
}

/* Prepares table k's rows in time order, the columns it lacks read as NULL. */
static int open_src(struct rd *r, int k)
{
	const struct spec *sp = &specs[k];
	struct src *s = &r->s[k];
	char sql[1024];
	size_t o;
	int i, rc;

	if ((rc = nsys_has_table(r, sp->table)) <= 0)
		return rc < 0 ? nsys_fail(r, sp->table) : 0;
	if ((rc = nsys_table_cols(r, sp, &s->has)) != 0)
		return rc;
	for (i = 0; sp->cols[i]; i++)
		if ((sp->req >> i & 1) && !(s->has >> i & 1))
			return td_error_set(r->err, TD_EFORMAT, "table %s has no column %s: not an "
					    "Nsight Systems export tracedoc knows (export it again "
					    "with nsys export --type sqlite)", sp->table, sp->cols[i]);
	if (k == S_KERNEL && !(s->has & (7u << K_DEMANGLED)))
		return td_error_set(r->err, TD_EFORMAT, "table %s has no kernel name column "
				    "(demangledName, shortName or mangledName)", sp->table);
	o = (size_t)snprintf(sql, sizeof(sql), "SELECT ");
	for (i = 0; sp->cols[i]; i++)
		o += (size_t)snprintf(sql + o, sizeof(sql) - o, "%s%s%s%s", i ? ", " : "",
				      s->has >> i & 1 ? "\"" : "NULL",
				      s->has >> i & 1 ? sp->cols[i] : "", s->has >> i & 1 ? "\"" : "");
	if ((rc = in_order(r, sp->table)) < 0)
		return rc;
	snprintf(sql + o, sizeof(sql) - o, " FROM \"%s\"%s", sp->table,
		 rc ? "" : " ORDER BY \"start\"");
	if (sqlite3_prepare_v2(r->db, sql, -1, &s->st, NULL) != SQLITE_OK)
		return nsys_fail(r, sp->table);
	return step_src(r, k);
}

static const char *type_name(int type)
{
	return type == SQLITE_TEXT ? "text" : type == SQLITE_FLOAT ? "a real number"
		: type == SQLITE_BLOB ? "a blob" : "a value";
}

/* Column c of table k's current row as an integer: 1, or 0 when NULL; a value of another
 * type is an error (TD_EFORMAT, returned as a negative code). */
static int col_int(struct rd *r, int k, int c, int64_t *v)
{
	int type = sqlite3_column_type(r->s[k].st, c);

	if (type == SQLITE_NULL)
		return 0;
	if (type != SQLITE_INTEGER)
		return td_error_set(r->err, TD_EFORMAT, "table %s, row %llu: column %s holds %s "
				    "where Nsight Systems writes an integer: not an export nsys "
				    "wrote", specs[k].table, (unsigned long long)r->s[k].row,
				    specs[k].cols[c], type_name(type));
	*v = sqlite3_column_int64(r->s[k].st, c);
	return 1;
}

/* The next row of table k: its start read, or the table ended. */
static int step_src(struct rd *r, int k)
{
	struct src *s = &r->s[k];
	int rc = sqlite3_step(s->st);
	int64_t v;

	if (rc == SQLITE_DONE) {
		s->live = 0;
		sqlite3_finalize(s->st);
		s->st = NULL;
		return 0;
	}
	if (rc != SQLITE_ROW)
		return nsys_fail(r, specs[k].table);
	s->row++;
	s->live = 1;
	rc = col_int(r, k, C_START, &v);
	if (rc < 0)
		return rc;
	s->start = rc ? v : INT64_MIN;
	return 0;
}

/* --- rows into records ------------------------------------------------------------------- */

static int ival(struct rd *r, int k, int c, int64_t *v, int64_t dflt)
{
	int rc = col_int(r, k, c, v);

	if (rc == 0)
		*v = dflt;
	return rc;
}

/* The fields every row has: its time, and for GPU rows the device and stream. */
static int row_common(struct rd *r, int k, struct td_raw *e)
{
	int64_t end;
	int rc;

	memset(e, 0, sizeof(*e));
	r->sb_len = 0;
	e->ph = 'X';
	e->has_ts = r->s[k].start != INT64_MIN;
	e->ts = e->has_ts ? r->s[k].start : 0;
	if ((rc = col_int(r, k, C_END, &end)) < 0)
		return rc;
	e->has_dur = rc == 1;
	e->dur = rc ? end - e->ts : 0;
	return 0;
}

static int gpu_place(struct rd *r, int k, int cdev, int cstream, int ccorr, struct td_raw *e)
{
	int rc;

	if ((rc = ival(r, k, cdev, &e->device, 0)) < 0)
		return rc;
	e->has_device = 1;
	if ((rc = ival(r, k, cstream, &e->stream, -1)) < 0)
		return rc;
	e->has_stream = 1;
	if ((rc = ival(r, k, ccorr, &e->corr, 0)) < 0)
		return rc;
	e->has_corr = rc == 1;
	return 0;
}


/* "[24, 1, 1]" (Kineto's text of a grid or block) into buf (96 bytes): a kernel each, so no
 * printf. Returns its length. */
static size_t dims(char *buf, const int64_t *v)
{
	size_t o = 0;
	int i;

	buf[o++] = '[';
	for (i = 0; i < 3; i++) {
		char d[24];
		int n = 0;
		uint64_t x = v[i] < 0 ? (uint64_t)0 - (uint64_t)v[i] : (uint64_t)v[i];
		if (i) {
			buf[o++] = ',';
			buf[o++] = ' ';
		}
		if (v[i] < 0)
			buf[o++] = '-';
		do {
			d[n++] = (char)('0' + x % 10);
			x /= 10;
		} while (x);
		while (n)
			buf[o++] = d[--n];
	}
	buf[o++] = ']';
	return o;
}

static int kernel_row(struct rd *r, struct td_raw *e)
{
	int64_t v[MAXCOLS];
	uint32_t off, len;
	int i, rc, found = 0;

	if ((rc = gpu_place(r, S_KERNEL, K_DEV, K_STREAM, K_CORR, e)) < 0)
		return rc;
	e->cat = CAT_KERNEL;
	for (i = K_DEMANGLED; i <= K_MANGLED && !found; i++) {
		if ((rc = col_int(r, S_KERNEL, i, &v[i])) < 0)
			return rc;
		if (rc && (found = nsys_sid_str(r, v[i], &off, &len)) < 0)
			return found;
	}
	if (found)
		e->name = nsys_put(r, r->arena + off, len);
	for (i = K_GX; i <= K_DSMEM; i++)
		if ((rc = ival(r, S_KERNEL, i, &v[i], -1)) < 0)
			return rc;
	if (v[K_GX] >= 0 && v[K_BX] >= 0) {
		char g[96], bl[96];
		e->grid = nsys_put(r, g, dims(g, &v[K_GX]));
		e->block = nsys_put(r, bl, dims(bl, &v[K_BX]));
		e->has_launch = 1;
	}
	if (v[K_REGS] >= 0) {
		e->regs = v[K_REGS];
		e->launch_has |= 1;
		e->has_launch = 1;
	}
	if (v[K_SSMEM] >= 0 || v[K_DSMEM] >= 0) {
		e->smem = (v[K_SSMEM] > 0 ? v[K_SSMEM] : 0) + (v[K_DSMEM] > 0 ? v[K_DSMEM] : 0);
		e->launch_has |= 2;
		e->has_launch = 1;
	}
	e->full = (uint8_t)e->has_launch;
	return 0;
}

static int memcpy_row(struct rd *r, struct td_raw *e, int k)
{
	int64_t bytes, a, b, c;
	char n[160], k1[40], k2[40], k3[40];
	int rc;

	if ((rc = gpu_place(r, k, M_DEV, M_STREAM, M_CORR, e)) < 0)
		return rc;
	if ((rc = ival(r, k, k == S_MEMCPY ? M_BYTES : Z_BYTES, &bytes, -1)) < 0)
		return rc;
	e->bytes = bytes;
	e->has_bytes = bytes >= 0;
	if (k == S_MEMCPY) {
		if ((rc = ival(r, k, M_COPYKIND, &a, 0)) < 0 || (rc = ival(r, k, M_SRC, &b, 7)) < 0 ||
		    (rc = ival(r, k, M_DST, &c, 7)) < 0)
			return rc;
		e->cat = CAT_MEMCPY;
		snprintf(n, sizeof(n), "Memcpy %s (%s -> %s)", nsys_copy_kind(r, a, k1, sizeof(k1)),
			 nsys_mem_kind(r, b, k2, sizeof(k2)), nsys_mem_kind(r, c, k3, sizeof(k3)));
	} else {
		if ((rc = ival(r, k, Z_MEMKIND, &a, 7)) < 0)
			return rc;
		e->cat = CAT_MEMSET;
		snprintf(n, sizeof(n), "Memset (%s)", nsys_mem_kind(r, a, k1, sizeof(k1)));
	}
	e->name = nsys_put(r, n, strlen(n));
	return 0;
}

/* The length of a runtime function's name without nsys's "_v7000" version suffix. */
static size_t api_len(const char *s, size_t n)
{
	size_t i = n;

	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	return i < n && i >= 2 && s[i - 1] == 'v' && s[i - 2] == '_' ? i - 2 : n;
}

static int api_row(struct rd *r, struct td_raw *e, int k)
{
	int64_t gtid, sid;
	uint32_t off, len;
	int rc, found = 0;

	if ((rc = ival(r, k, R_TID, &gtid, 0)) < 0 || (rc = ival(r, k, R_CORR, &e->corr, 0)) < 0)
		return rc;
	e->has_corr = rc == 1;
	nsys_thread_of(gtid, e);
	if ((rc = col_int(r, k, R_NAME, &sid)) < 0)
		return rc;
	if (rc && (found = nsys_sid_str(r, sid, &off, &len)) < 0)
		return found;
	e->cat = k == S_DRIVER ? CAT_DRIVER : CAT_RUNTIME;
	if (found) {
		const char *s = r->arena + off;
		size_t n = api_len(s, len);
		e->name = nsys_put(r, s, n);
		/* the driver's calls (cuLaunchKernel) come in the runtime's table too */
		if (n > 2 && s[0] == 'c' && s[1] == 'u' && s[2] >= 'A' && s[2] <= 'Z')
			e->cat = CAT_DRIVER;
	}
	return 0;
}

static int sync_row(struct rd *r, struct td_raw *e)
{
	static const char *const kinds[] = {"Unknown Sync", "Event Sync", "Stream Wait Event",
					    "Stream Sync", "Context Sync"};
	const char *n;
	int64_t type;
	int rc;

	if ((rc = gpu_place(r, S_SYNC, Y_DEV, Y_STREAM, Y_CORR, e)) < 0)
		return rc;
	if (e->stream == 4294967295ll)
		e->stream = -1;
	if ((rc = ival(r, S_SYNC, Y_TYPE, &type, 0)) < 0)
		return rc;
	/* syncType is CUPTI's enumeration where the table has deprecatedSyncType beside it
	 * (2026 on); before, its values do not follow any one enumeration: the stream tells */
	if (r->s[S_SYNC].has >> Y_DEPRECATED & 1)
		n = type >= 0 && type < 5 ? kinds[type] : kinds[0];
	else
		n = e->stream < 0 ? kinds[4] : kinds[3];
	e->cat = CAT_SYNC;
	e->name = nsys_put(r, n, strlen(n));
	return 0;
}

/* NVTX ranges (push/pop 59, start/end 60, their NVTXT forms 70, 71) with an end. 0 when the
 * row is no range (marks, domains: counted). */
static int nvtx_row(struct rd *r, struct td_raw *e, int *range)
{
	int64_t type, gtid, tid;
	const char *s = NULL;
	size_t n = 0;
	uint32_t off, len;
	int rc;

	*range = 0;
	if ((rc = ival(r, S_NVTX, N_TYPE, &type, -1)) < 0)
		return rc;
	if (type != 59 && type != 60 && type != 70 && type != 71)
		return 0;
	*range = 1;
	if ((rc = ival(r, S_NVTX, N_TID, &gtid, 0)) < 0)
		return rc;
	nsys_thread_of(gtid, e);
	if (sqlite3_column_type(r->s[S_NVTX].st, N_TEXT) != SQLITE_NULL) {
		s = (const char *)sqlite3_column_blob(r->s[S_NVTX].st, N_TEXT);
		n = (size_t)sqlite3_column_bytes(r->s[S_NVTX].st, N_TEXT);
	} else if ((rc = col_int(r, S_NVTX, N_TEXTID, &tid)) < 0) {
		return rc;
	} else if (rc) {
		if ((rc = nsys_sid_str(r, tid, &off, &len)) < 0)
			return rc;
		if (rc) {
			s = r->arena + off;
			n = len;
		}
	}
	if (n > STR_MAX) {
		n = STR_MAX;
		r->long_strings++;
	}
	e->cat = CAT_USER_ANN;
	if (s && n > 6 && !memcmp(s, "aten::", 6)) { /* --pytorch=autograd-nvtx: "aten::mm, seq" */
		const char *comma = memchr(s, ',', n);
		if (comma)
			n = (size_t)(comma - s);
		e->cat = CAT_CPU_OP;
	}
	if (s)
		e->name = nsys_put(r, s, n);
	return 0;
}

static int graph_row(struct rd *r, struct td_raw *e)
{
	int64_t g;
	char n[96];
	int rc;

	if ((rc = gpu_place(r, S_GRAPH, G_DEV, G_STREAM, G_CORR, e)) < 0 ||
	    (rc = ival(r, S_GRAPH, G_GRAPH, &g, -1)) < 0)
		return rc;
	e->cat = CAT_KERNEL;
	snprintf(n, sizeof(n), "CUDA graph %lld (traced whole)", (long long)g);
	e->name = nsys_put(r, n, strlen(n));
	return 0;
}

/* One row of table k into the model. */
static int add_row(struct rd *r, int k)
{
	struct td_raw e;
	int rc, range = 1;

	if ((rc = row_common(r, k, &e)) < 0)
		return rc;
	switch (k) {
	case S_KERNEL: rc = kernel_row(r, &e); break;
	case S_MEMCPY:
	case S_MEMSET: rc = memcpy_row(r, &e, k); break;
	case S_RUNTIME:
	case S_DRIVER: rc = api_row(r, &e, k); break;
	case S_SYNC: rc = sync_row(r, &e); break;
	case S_NVTX: rc = nvtx_row(r, &e, &range); break;
	case S_OSRT:
		if (!e.has_dur || e.dur < OSRT_MIN_NS)
			return 0;
		if ((rc = api_row(r, &e, k)) == 0)
			e.cat = CAT_CPU_OP; /* host work the attribution names, as a CPU op */
		break;
	default: rc = graph_row(r, &e); break;
	}
	if (rc < 0)
		return rc;
	r->rows++;
	if (!range) {
		r->instants++;
		return 0;
	}
	e.str_len = (uint32_t)r->sb_len;
	if (r->batch_len + td_raw_size(&e) > r->batch_cap)
		r->ship(r);
	td_raw_put(r->batch + r->batch_len, &e, r->sb ? r->sb : "");
	r->batch_len += td_raw_size(&e);
	return 0;
}

/* --- the rows read on a thread of their own, the model built on the caller's ------------- */

#define NBATCH 4
#define BATCH_CAP ((size_t)2 << 20) /* a record is at most a 1 MiB name and its fields */

struct pipe {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned char *buf[NBATCH];
	size_t len[NBATCH];
	unsigned head, tail; /* shipped: [tail, head) */
	int done;
};

/* Every table's rows, merged by time, into records shipped as batches fill (r->ship). */
static int read_rows(struct rd *r)
{
	int k, rc = nsys_check(r);

	if (!rc)
		rc = nsys_read_enum(r, "ENUM_CUDA_MEM_KIND", "CUDA_MEMOPR_MEMORY_KIND_", &r->mem_kind);
	if (!rc)
		rc = nsys_read_enum(r, "ENUM_CUDA_MEMCPY_OPER", "CUDA_MEMCPY_KIND_", &r->copy_kind);
	for (k = 0; !rc && k < S_COUNT; k++)
		rc = open_src(r, k);
	while (!rc) {
		int best = -1;
		for (k = 0; k < S_COUNT; k++)
			if (r->s[k].live && (best < 0 || r->s[k].start < r->s[best].start))
				best = k;
		if (best < 0)
			break;
		if ((rc = add_row(r, best)) == 0)
			rc = step_src(r, best);
	}
	if (!rc && r->batch_len)
		r->ship(r);
	return rc;
}

/* On one thread: a full batch goes straight to the builder. */
static void ship_inline(struct rd *r)
{
	td_builder_add_records(&r->b, r->batch, r->batch_len);
	r->batch_len = 0;
}

/* On the reading thread: the batch queued for the model's thread, the next free one taken. */
static void ship_queued(struct rd *r)
{
	struct pipe *p = r->pipe;

	pthread_mutex_lock(&p->mu);
	p->len[p->head % NBATCH] = r->batch_len;
	p->head++;
	pthread_cond_broadcast(&p->cv);
	while (p->head - p->tail == NBATCH)
		pthread_cond_wait(&p->cv, &p->mu);
	if (!p->buf[p->head % NBATCH]) /* made as needed: a small export fills one */
		p->buf[p->head % NBATCH] = td_malloc(BATCH_CAP);
	r->batch = p->buf[p->head % NBATCH];
	r->batch_len = 0;
	pthread_mutex_unlock(&p->mu);
}

static void *reader(void *arg)
{
	struct rd *r = arg;
	struct pipe *p = r->pipe;

	r->rc = read_rows(r);
	pthread_mutex_lock(&p->mu);
	p->done = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Reads the rows on a second thread while this one builds the model from their records (the
 * JSON reader's split); on one thread when none can be started. */
static int read_all(struct rd *r)
{
	struct pipe p;
	pthread_t th;
	int i;

	memset(&p, 0, sizeof(p));
	p.buf[0] = td_malloc(BATCH_CAP);
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	r->pipe = &p;
	r->batch = p.buf[0];
	r->batch_cap = BATCH_CAP;
	r->ship = ship_queued;
	if (pthread_create(&th, NULL, reader, r) != 0) {
		r->ship = ship_inline;
		r->rc = read_rows(r);
	} else {
		for (;;) {
			unsigned char *b;
			size_t n;
			pthread_mutex_lock(&p.mu);
			while (p.head == p.tail && !p.done)
				pthread_cond_wait(&p.cv, &p.mu);
			if (p.head == p.tail) {
				pthread_mutex_unlock(&p.mu);
				break;
			}
			b = p.buf[p.tail % NBATCH];
			n = p.len[p.tail % NBATCH];
			pthread_mutex_unlock(&p.mu);
			td_builder_add_records(&r->b, b, n);
			pthread_mutex_lock(&p.mu);
			p.tail++;
			pthread_cond_broadcast(&p.cv);
			pthread_mutex_unlock(&p.mu);
		}
		pthread_join(th, NULL);
	}
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	for (i = 0; i < NBATCH; i++)
		free(p.buf[i]);
	r->batch = NULL;
	r->pipe = NULL;
	return r->rc;
}

/* path as a file: URI, read-only and immutable; every byte but [A-Za-z0-9/._-] escaped */
static char *nsys_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), o = 0, i;
	char *u = td_malloc(n * 3 + 48);

	memcpy(u, path[0] == '/' ? "file://" : "file:", path[0] == '/' ? 7 : 5);
	o = path[0] == '/' ? 7 : 5;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)path[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '/' || c == '.' || c == '_' || c == '-') {
			u[o++] = (char)c;
		} else {
			u[o++] = '%';
			u[o++] = hex[c >> 4];
			u[o++] = hex[c & 15];
		}
	}
	memcpy(u + o, "?mode=ro&immutable=1", 21);
	return u;
}

static void rd_free(struct rd *r)
{
	int k;

	for (k = 0; k < S_COUNT; k++)
		sqlite3_finalize(r->s[k].st);
	sqlite3_finalize(r->str_st);
	sqlite3_close(r->db);
	td_builder_free(&r->b);
	free(r->sids);
	free(r->sb);
	free(r->arena);
}

int td_nsys_load(const char *path, struct td_trace *t, struct td_error *err)
{
	struct rd r;
	struct stat st;
	char *uri;
	int rc;

	memset(err, 0, sizeof(*err));
	memset(&r, 0, sizeof(r));
	r.t = t;
	r.err = err;
	td_builder_init(&r.b, t);
	/* immutable: no locks, no journal or WAL files looked for or made beside it (a
	 * WAL-mode file opened read-only would get its -wal and -shm created) */
	uri = nsys_uri(path);
	if (sqlite3_open_v2(uri, &r.db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX |
			    SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
		free(uri);
		rc = nsys_fail(&r, "opening it read-only");
		rd_free(&r);
		return rc;
	}
	free(uri);
	/* the file's schema is not trusted: no functions with side effects in it, no writes */
	sqlite3_db_config(r.db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(r.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_limit(r.db, SQLITE_LIMIT_LENGTH, SQL_LENGTH_MAX);
	if (stat(path, &st) == 0)
		t->bytes_in = (uint64_t)st.st_size;
	t->nsys = 1;
	rc = read_all(&r);
	t->n_trace_events += r.rows;
	t->by_kind[TD_K_INSTANT] += r.instants;
	t->anom.long_strings += r.long_strings;
	if (!rc)
		rc = nsys_meta(&r);
	if (!rc) {
		td_builder_finish(&r.b);
		nsys_lacks(&r);
	}
	rd_free(&r);
	if (!rc)
		td_trace_finalize(t);
	return rc;
}

#endif
