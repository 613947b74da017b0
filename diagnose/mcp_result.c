/* SPDX-License-Identifier: MIT */
/* A command run in this process as an MCP tool: its stdout and stderr captured on temporary
 * files (the commands write to stdout and stderr; fd 1 never reaches the protocol's stream),
 * then answered as a tool result, bounded: the JSON document as structuredContent and as text
 * after a few lines that say what it holds, or the text a person would read. */
#include "diagnose/mcp_result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/fmt.h"
#include "diagnose/cli.h"
#include "diagnose/mcp_rpc.h"
#include "diagnose/out.h"
#include "parser/jsoncheck.h"

#define ERR_MAX 16384 /* the bytes of a command's stderr kept */

/* the first max bytes of the file on fd (from its start), NUL-terminated; its size in *total */
static char *slurp(int fd, size_t max, size_t *n, uint64_t *total)
{
	struct stat st;
	char *buf;
	size_t got = 0;

	*total = fstat(fd, &st) == 0 && st.st_size > 0 ? (uint64_t)st.st_size : 0;
	if (max > *total)
		max = (size_t)*total;
	buf = td_malloc(max + 1);
	while (got < max) {
		ssize_t k = pread(fd, buf + got, max - got, (off_t)got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	buf[got] = '\0';
	*n = got;
	return buf;
}

int mcp_run_captured(int (*fn)(int, char **), int argc, char **argv, int devnull,
		     size_t max_out, struct mcp_capture *c)
{
	FILE *o = tmpfile(), *e = tmpfile();
	int saved = -1;
	uint64_t etotal;

	memset(c, 0, sizeof(*c));
	if (!o || !e || (saved = dup(2)) < 0) {
		int err = errno;
		if (o)
			fclose(o);
		if (e)
			fclose(e);
		errno = err;
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	if (dup2(fileno(o), 1) < 0 || dup2(fileno(e), 2) < 0) {
		int err = errno;
		dup2(saved, 2);
		close(saved);
		fclose(o);
		fclose(e);
		errno = err;
		return -1;
	}
	clearerr(stdout);
	clearerr(stderr);
	c->rc = fn(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(devnull, 1);
	dup2(saved, 2);
	close(saved);
	clearerr(stdout);
	clearerr(stderr);
	c->out = slurp(fileno(o), max_out, &c->nout, &c->out_total);
	c->err = slurp(fileno(e), ERR_MAX, &c->nerr, &etotal);
	fclose(o);
	fclose(e);
	while (c->nerr && (c->err[c->nerr - 1] == '\n' || c->err[c->nerr - 1] == ' '))
		c->err[--c->nerr] = '\0';
	return 0;
}

void mcp_capture_free(struct mcp_capture *c)
{
	free(c->out);
	free(c->err);
	memset(c, 0, sizeof(*c));
}

/* n cut back to the start of a UTF-8 character */
static size_t utf8_cut(const char *s, size_t n)
{
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* --- the summary ---------------------------------------------------------------------------- */

/* what names an item of a report's list, and the figure that sizes it */
static const char *const label_keys[] = {"title", "name", "rule", "what", "cause", "kind", NULL};
static const char *const figure_keys[] = {"est_savings_ns", "saves_ns", "total_ns", "violations",
					  "self_cpu_ns", "dur_ns", "duration_ns", "ns", "bytes",
					  NULL};

/* "KEY VALUE": a duration (a key ending in _ns that is no time on the clock) for people */
static void figure(FILE *m, const char *key, yajl_val v)
{
	size_t n = strlen(key);
	char dur[32];

	if (YAJL_IS_STRING(v)) {
		fprintf(m, "%s %.60s", key, v->u.string);
	} else if ((!strcmp(key, "ns") || (n > 3 && !strcmp(key + n - 3, "_ns"))) &&
		   !strstr(key, "start") && !strstr(key, "end") && strncmp(key, "ts", 2) &&
		   strncmp(key, "from_", 5) && strncmp(key, "to_", 3)) { /* no clock times */
		fprintf(m, "%s %s", key, td_fmt_dur(dur, sizeof(dur), v->u.number.i));
	} else {
		fprintf(m, "%s %lld", key, (long long)v->u.number.i);
	}
}

static int scalar(yajl_val v)
{
	return YAJL_IS_INTEGER(v) || YAJL_IS_STRING(v);
}

static void item_line(FILE *m, yajl_val item)
{
	const char *const *k;
	size_t i;

	fputs("  -", m);
	for (k = label_keys; *k; k++) {
		yajl_val v = mcp_get(item, *k);
		if (v && YAJL_IS_STRING(v)) {
			size_t n = strlen(v->u.string);
			if (n > 160)
				fprintf(m, " %.*s...", (int)utf8_cut(v->u.string, 157), v->u.string);
			else
				fprintf(m, " %s", v->u.string);
			break;
		}
	}
	if (!*k) { /* no name: its first field, or its lists' lengths (evidence's tracks) */
		for (i = 0; i < item->u.object.len && !scalar(item->u.object.values[i]); i++)
			;
		if (i < item->u.object.len) {
			fputc(' ', m);
			figure(m, item->u.object.keys[i], item->u.object.values[i]);
		}
		else
			for (i = 0; i < item->u.object.len; i++)
				if (YAJL_IS_ARRAY(item->u.object.values[i]))
					fprintf(m, " %s %zu", item->u.object.keys[i],
						item->u.object.values[i]->u.array.len);
	}
	for (k = figure_keys; *k; k++) {
		yajl_val v = mcp_get(item, *k);
		if (v && YAJL_IS_INTEGER(v)) {
			fputs(" (", m);
			figure(m, *k, v);
			fputc(')', m);
			break;
		}
	}
	fputc('\n', m);
}

/* a few lines on what doc holds: its schema, then each list of records with its length and
 * its first three items (a report's findings, whatif's fixes, a table's rows, check's rules) */
static char *summary(const char *tool, yajl_val doc, uint64_t bytes, int structured)
{
	char *buf = NULL;
	size_t len = 0, i, lists = 0;
	FILE *m = open_memstream(&buf, &len);
	yajl_val schema = mcp_get(doc, "schema");

	fprintf(m, "tracedoc %s: %s, %llu bytes of JSON (%sbelow)\n", tool,
		schema && YAJL_IS_STRING(schema) ? schema->u.string : "JSON",
		(unsigned long long)bytes, structured ? "structuredContent, and as text " : "");
	for (i = 0; i < doc->u.object.len && lists < 5; i++) { /* its first figures */
		const char *k = doc->u.object.keys[i];
		if (!scalar(doc->u.object.values[i]) || !strcmp(k, "schema") || strstr(k, "path") ||
		    !strcmp(k, "trace") || !strcmp(k, "source"))
			continue;
		fputs(lists++ ? ", " : "", m);
		figure(m, k, doc->u.object.values[i]);
	}
	fputs(lists ? "\n" : "", m);
	for (i = 0, lists = 0; i < doc->u.object.len && lists < 6; i++) {
		yajl_val v = doc->u.object.values[i];
		size_t k;
		if (!YAJL_IS_ARRAY(v) || !v->u.array.len || !YAJL_IS_OBJECT(v->u.array.values[0]))
			continue;
		lists++;
		fprintf(m, "%s: %zu\n", doc->u.object.keys[i], v->u.array.len);
		for (k = 0; k < v->u.array.len && k < 3; k++)
			if (YAJL_IS_OBJECT(v->u.array.values[k]))
				item_line(m, v->u.array.values[k]);
	}
	fclose(m);
	return buf;
}

/* --- the result ----------------------------------------------------------------------------- */

static void text_item(yajl_gen g, const char *s)
{
	yajl_gen_map_open(g);
	out_json_kstr(g, "type", "text");
	out_json_kstr(g, "text", s);
	yajl_gen_map_close(g);
}

/* the output as text, with a note when it was cut */
static void output_item(yajl_gen g, const struct mcp_server *s, const struct mcp_capture *c)
{
	char *buf;
	size_t n = c->nout;

	if (c->out_total <= c->nout) {
		text_item(g, c->out);
		return;
	}
	buf = td_malloc(n + 400);
	n = utf8_cut(c->out, n);
	memcpy(buf, c->out, n);
	snprintf(buf + n, 400, "\n[truncated: the output is %llu bytes, the first %zu shown (the "
		 "server's --max-output is %zu); ask for less: top, window, or another tool]",
		 (unsigned long long)c->out_total, n, s->max_output);
	text_item(g, buf);
	free(buf);
}

int mcp_result(struct mcp_server *s, yajl_val id, const char *tool, const char *format,
	       const struct mcp_capture *c)
{
	yajl_val doc = NULL;
	yajl_gen g;
	char msg[ERR_MAX + 256];
	int whole = c->out_total <= c->nout;

	if (c->rc == EXIT_USAGE) {
		snprintf(msg, sizeof(msg), "%s", c->nerr ? c->err : "the arguments are wrong");
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, msg);
	}
	if (c->rc == EXIT_OK && whole && !strcmp(format, "json")) {
		struct td_error err;
		memset(&err, 0, sizeof(err));
		doc = td_json_tree(c->out, "output", "", TD_EFORMAT, &err);
		if (doc && !YAJL_IS_OBJECT(doc)) {
			yajl_tree_free(doc);
			doc = NULL;
		}
	}
	g = mcp_begin(s->out, id);
	out_json_kmap(g, "result");
	out_json_karray(g, "content");
	if (c->rc != EXIT_OK) {
		snprintf(msg, sizeof(msg), "tracedoc %s failed (exit %d: %s)%s%s", tool, c->rc,
			 c->rc == EXIT_INPUT ? "bad input" : "internal error", c->nerr ? ":\n" : "",
			 c->err);
		text_item(g, msg);
	} else {
		if (doc) {
			char *sum = summary(tool, doc, c->out_total, s->structured);
			if (c->nerr) { /* a partial trace's warning */
				size_t n = strlen(sum);
				sum = td_realloc(sum, n + c->nerr + 16);
				snprintf(sum + n, c->nerr + 16, "warnings:\n%s\n", c->err);
			}
			text_item(g, sum);
			free(sum);
		} else if (c->nerr) {
			text_item(g, c->err);
		}
		output_item(g, s, c);
	}
	yajl_gen_array_close(g);
	if (doc && s->structured) {
		out_json_key(g, "structuredContent");
		mcp_emit(g, doc);
	}
	out_json_kbool(g, "isError", c->rc != EXIT_OK);
	yajl_gen_map_close(g);
	if (doc)
		yajl_tree_free(doc);
	return mcp_end(g, s->out);
}
