/* SPDX-License-Identifier: MIT */
/* Formatting shared by the library's messages and the command's output. */
#ifndef TD_COMMON_FMT_H
#define TD_COMMON_FMT_H

#include <stddef.h>
#include <stdint.h>

/* A duration for people: "850 ns", "56.7 us", "1.2 ms", "2.01 s". Returns buf. */
const char *td_fmt_dur(char *buf, size_t cap, int64_t ns);
/* "1623142623460.245": a trace's microsecond timestamp, to search for in Perfetto. */
const char *td_fmt_ts(char *buf, size_t cap, int64_t ns);
/* Ranks as "rank 3" or "ranks 0-4, 6, 9-11": runs of consecutive ranks as ranges, in the
 * order given; "... (N ranks)" ends a list that does not fit in cap. Returns buf. */
const char *td_fmt_ranks(char *buf, size_t cap, const int64_t *v, size_t n);
/* Bytes for people: "4 B", "12.3 KB", "115.6 MB", "2.31 GB" (powers of 1000). Returns buf. */
const char *td_fmt_bytes(char *buf, size_t cap, double bytes);

/* Names from a trace inside composed text (a finding's title, a label) are marked, OPEN name
 * CLOSE, so each output renders them as it should: text shortens long ones, Markdown makes them
 * code spans, JSON and matching drop the marks. */
#define TD_NAME_OPEN '\x1e'
#define TD_NAME_CLOSE '\x1f'
/* "\x1ename\x1f" into buf (the marks' bytes in name become '?'); returns buf. */
const char *td_mark(char *buf, size_t cap, const char *name);
/* s without the marks, malloc'd. */
char *td_unmark(const char *s);
/* A name of len bytes shortened to at most max bytes for a terminal, in the middle: a Python
 * frame keeps its file:line and function, a C++ symbol its function name, with its template
 * and call arguments elided ("...::vectorized_elementwise_kernel<...>(...)"); else the head and
 * tail with "..." between. Returns buf (or name itself when it fits). */
const char *td_short_name(const char *name, size_t len, size_t max, char *buf, size_t cap);

#endif
