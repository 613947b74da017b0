/* SPDX-License-Identifier: MIT */
/* Loading one trace for a command: the reader's options from the environment, the progress
 * line, and the error or warning printed as every command prints it. Below doc.c (which reads
 * a trace through it) and the commands; above args.c (-j, --progress) and msg.c. */
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/fmt.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/msg.h"
#include "diagnose/out.h"
#include "parser/input.h"
#include "parser/load.h"
#include "parser/scan.h"
#include "parser/sniff.h"
#include "parser/trace.h"

int cli_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 && n < 1024 ? (int)n : 1;
}

#define SNAPSHOT_SNIFF_MAX (1u << 20) /* a snapshot says so in its first bytes or keys */

int cli_snapshot_msg(const char *path, char *msg, size_t cap)
{
	char buf[512];
	const char *shown = cli_shown(path, buf, sizeof(buf));

	return snprintf(msg, cap, "%s is a PyTorch memory snapshot (torch.cuda.memory."
			"_dump_snapshot()), not a trace: run tracedoc memory %s", shown,
			strcmp(path, "-") ? shown : "- (the snapshot on standard input)");
}

/* 1 when in's head is a caching-allocator snapshot (a pickle, or its dict as JSON:
 * parser/sniff.h), its first bytes read (decompressed) and given back; 0 otherwise or
 * unreadable (the trace reader then says why). */
static int head_is_snapshot(struct td_input *in)
{
	struct td_error err;
	struct td_sniffer *sn = td_sniff_new();
	enum td_sniff_kind k = TD_SNIFF_MORE;
	char *buf = td_malloc(SNAPSHOT_SNIFF_MAX);
	size_t len = 0;

	memset(&err, 0, sizeof(err));
	while (k == TD_SNIFF_MORE && len < SNAPSHOT_SNIFF_MAX) {
		size_t want = SNAPSHOT_SNIFF_MAX - len < 4096 ? SNAPSHOT_SNIFF_MAX - len : 4096;
		ssize_t n = td_input_read(in, buf + len, want, &err);
		if (n <= 0)
			break;
		k = td_sniff_feed(sn, buf + len, (size_t)n);
		len += (size_t)n;
	}
	td_input_unread(in, buf, len);
	free(buf);
	td_sniff_free(sn);
	return k == TD_SNIFF_SNAPSHOT;
}

/* 1 when the regular file path is a snapshot; its own input, closed */
static int is_snapshot_file(const char *path)
{
	struct td_error err;
	struct td_input *in;
	struct stat st;
	int r;

	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	memset(&err, 0, sizeof(err));
	if (td_input_open(path, &in, &err) != 0)
		return 0;
	r = head_is_snapshot(in);
	td_input_close(in);
	return r;
}

/* Loads path, or the input in already open on it (closed here) when in is set. */
static int load_with(const char *path, struct td_input *in, struct td_trace *t, char *msg,
		     size_t cap, int jobs,
		     void (*fn)(void *, unsigned long long, unsigned long long), void *ctx)
{
	struct td_error err;
	/* TD_NO_THREAD=1 reads and parses on one thread (for benchmarks and debugging) */
	const char *nt = getenv("TD_NO_THREAD");
	/* TD_SPLIT_BLOCK=BYTES: the split reader's block size (tests cut traces into tiny ones) */
	const char *bs = getenv("TD_SPLIT_BLOCK");
	/* TD_SCAN=portable|sse|avx2, TD_SQUEEZE=0|1: the byte scan's implementation and whether
	 * whitespace is left out before yajl (parser/scan.h; for benchmarks) */
	const char *sc = getenv("TD_SCAN"), *sq = getenv("TD_SQUEEZE");
	/* TD_ZSTD_THREADS=N: threads decoding a zstd file of many frames (-1 none; default one
	 * per four -j; for tests and benchmarks on small machines) */
	const char *zt = getenv("TD_ZSTD_THREADS");
	struct td_load_opts opts = {.chunk = 0, .no_thread = nt && *nt == '1', .jobs = jobs,
				    .block = bs ? strtoul(bs, NULL, 10) : 0,
				    .zstd_threads = zt ? atoi(zt) : 0,
				    .progress = fn, .progress_ctx = ctx};
	int rc;

	if (sc && td_scan_use(sc) != 0)
		fprintf(stderr, "tracedoc: TD_SCAN=%s is not available here; using %s\n", sc,
			td_scan_impl());
	if (sq && (*sq == '0' || *sq == '1'))
		td_scan_set_squeeze(*sq == '1');
	memset(&err, 0, sizeof(err));
	if (!in && !strcmp(path, "-") && td_input_open(path, &in, &err) != 0)
		in = NULL; /* the reader says why */
	/* a snapshot is not read as a trace: the command that reads it is named */
	if (in ? head_is_snapshot(in) : is_snapshot_file(path)) {
		td_input_close(in);
		cli_snapshot_msg(path, msg, cap);
		return EXIT_INPUT;
	}
	rc = in ? td_trace_load_input(in, 0, &opts, t, &err) : td_trace_load(path, &opts, t, &err);
	char sbuf[512];
	const char *shown = cli_shown(path, sbuf, sizeof(sbuf));

	msg[0] = '\0';
	if (rc != 0) {
		if (err.has_pos)
			snprintf(msg, cap, "%s:%u:%u (byte %llu): %s", shown, err.line, err.col,
				 (unsigned long long)err.offset, err.msg);
		else
			snprintf(msg, cap, "%s: %s", shown, err.msg);
		return rc == TD_ENOMEM ? EXIT_INTERNAL : EXIT_INPUT;
	}
	if (t->partial)
		snprintf(msg, cap, "%s: partial trace: %s", shown, t->partial_msg);
	else if (t->input_garbage)
		snprintf(msg, cap, "%s: %llu bytes after the gzip stream, ignored (as gzip -d does)",
			 shown, (unsigned long long)t->input_garbage);
	return EXIT_OK;
}

/* The progress line on stderr: redrawn at most 10 times a second on a terminal, a line a
 * second in a log (--progress), gone when the input is read. */
struct progress {
	const char *path;
	struct timespec t0, last;
	int tty, shown;
};

static double since(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void progress(void *ctx, unsigned long long done, unsigned long long total)
{
	struct progress *p = ctx;
	struct timespec now;
	double secs, rate;
	char b1[32], b2[32], line[600];

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (p->shown && since(&p->last, &now) < (p->tty ? 0.1 : 1.0))
		return;
	secs = since(&p->t0, &now);
	if (secs < 0.5 && !p->shown)
		return; /* a short read needs no progress */
	rate = secs > 0 ? (double)done / secs : 0;
	if (total)
		snprintf(line, sizeof(line), "tracedoc: reading %s: %s of %s (%.0f%%), %.0f MB/s, %.0f s "
			 "left", p->path, td_fmt_bytes(b1, sizeof(b1), (double)done),
			 td_fmt_bytes(b2, sizeof(b2), (double)total), 100.0 * (double)done /
			 (double)total, rate / 1e6, rate > 0 && total > done
			 ? (double)(total - done) / rate : 0.0);
	else
		snprintf(line, sizeof(line), "tracedoc: reading %s: %s, %.0f MB/s", p->path,
			 td_fmt_bytes(b1, sizeof(b1), (double)done), rate / 1e6);
	if (p->tty)
		fprintf(stderr, "\r\033[K%.*s", 99, line);
	else
		fprintf(stderr, "%s\n", line);
	p->last = now;
	p->shown = 1;
}

/* The threads that parse one trace: -j, else the cores; at most 8 unless asked (past that the
 * one thread that builds the model is the limit), never more than 64. */
int cli_threads(void)
{
	int n = cli_jobs ? cli_jobs : cli_cores();

	return n > 64 ? 64 : !cli_jobs && n > 8 ? 8 : n;
}

static int load_shown(const char *path, struct td_input *in, struct td_trace *t)
{
	char msg[1024], shown[512];
	struct progress pr;
	struct stat st;
	int rc, on = cli_progress > 0;

#ifdef __GLIBC__
	/* One trace, maybe of many GB: its large blocks (the reader's buffers, the model's
	 * arrays, a rule's scratch) are mapped and go back to the system when freed. glibc
	 * otherwise raises the threshold after the first such free and serves the next ones from
	 * heaps that keep the freed memory, per thread: the peak then holds the reader's dead
	 * buffers beside the analysis's arrays (diagnose of 1 GB: 101 MB against 95 MB). Not for
	 * the ranks of a job (cli_load_quiet): hundreds of small reads would pay the page faults
	 * of fresh mappings each time for no gain. */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
#endif
	memset(&pr, 0, sizeof(pr));
	pr.path = cli_shown(path, shown, sizeof(shown));
	pr.tty = isatty(2);
	if (!cli_progress && pr.tty && (strcmp(path, "-") ? stat(path, &st) == 0 &&
				     st.st_size > 100 * 1000 * 1000 : 1))
		on = 1;
	clock_gettime(CLOCK_MONOTONIC, &pr.t0);
	rc = load_with(path, in, t, msg, sizeof(msg), cli_threads(), on ? progress : NULL, &pr);
	if (pr.shown && pr.tty)
		fputs("\r\033[K", stderr); /* gone when done */

	if (rc != EXIT_OK) {
		fprintf(stderr, "tracedoc: %s\n", msg);
	} else if (*msg && strstr(msg, ": partial trace: ")) {
		const char *p = strstr(msg, ": partial trace: ");
		fprintf(stderr, "tracedoc: warning: %.*s: partial trace:\n  ", (int)(p - msg), msg);
		out_text_wrap(stderr, p + 17, 2, 2, 100);
		fputc('\n', stderr);
	} else if (*msg) {
		fputs("tracedoc: warning: ", stderr);
		out_text_wrap(stderr, msg, 19, 2, 100);
		fputc('\n', stderr);
	}
	return rc;
}

int cli_load(const char *path, struct td_trace *t)
{
	return load_shown(path, NULL, t);
}

int cli_load_from(const char *path, struct td_input *in, struct td_trace *t)
{
	return load_shown(path, in, t);
}

int cli_load_quiet(const char *path, struct td_input *in, struct td_trace *t, char *msg,
		   size_t cap)
{
	return load_with(path, in, t, msg, cap, 1, NULL, NULL); /* ranks are read in parallel */
}
