/* SPDX-License-Identifier: MIT */
/* tracedoc mcp [--root DIR]... [--max-output BYTES]
 * A Model Context Protocol server on stdio (protocol 2025-06-18): JSON-RPC 2.0, one message a
 * line on stdin and stdout, whose tools run tracedoc's commands in this process on paths under
 * the roots (mcp_tools.c). Nothing but the protocol reaches stdout: fd 1 points at /dev/null
 * and the commands' output is captured (mcp_result.c); stdin is read from a copy of fd 0, which
 * points at /dev/null too, so no command can read the client's messages. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/alloc.h"
#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "diagnose/mcp.h"
#include "diagnose/mcp_evidence.h"
#include "diagnose/mcp_rpc.h"
#include "diagnose/mcp_tools.h"
#include "diagnose/out.h"

#define MAX_OUTPUT_DEFAULT (256u << 10)

/* the protocol versions this server speaks, the latest first */
static const char *const versions[] = {"2025-06-18", "2025-03-26", "2024-11-05", NULL};

static void mcp_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc mcp [--root DIR]... [--max-output BYTES]\n"
		   "  a Model Context Protocol server on stdin and stdout (JSON-RPC 2.0, one\n"
		   "  message a line, protocol 2025-06-18) for an agent: its tools run\n"
		   "  diagnose, whatif, ops, kernels, memory, diff, check, critical-path and\n"
		   "  evidence (the events around a time) and answer with their JSON\n"
		   "  --root DIR          read traces only under DIR (repeatable; default: the\n"
		   "                      current directory); a relative path is taken from\n"
		   "                      the first root, and symlinks leading out are refused\n"
		   "  --max-output BYTES  the most of a command's output one answer holds\n"
		   "                      (default 262144); more is cut with a note\n"
		   "  add it to an agent's MCP config as: {\"command\": \"tracedoc\", \"args\":\n"
		   "  [\"mcp\", \"--root\", \"/path/to/traces\"]}\n");
}

/* stderr as the server started, for the out-of-memory message: during a command fd 2 is the
 * command's captured stderr */
static int real_stderr = -1;

static void mcp_oom(size_t n)
{
	char msg[128];
	int k = snprintf(msg, sizeof(msg), "tracedoc mcp: out of memory (allocating %zu bytes)\n", n);

	if (k > 0 && write(real_stderr >= 0 ? real_stderr : 2, msg, (size_t)k) < 0)
		k = 0;
	exit(EXIT_INTERNAL);
}

static int initialize(struct mcp_server *s, yajl_val id, yajl_val params)
{
	yajl_val want = mcp_get(params, "protocolVersion");
	const char *v = versions[0];
	yajl_gen g;
	size_t i;

	if (!want || !YAJL_IS_STRING(want))
		return mcp_error(s->out, id, MCP_INVALID_PARAMS,
				 "initialize needs \"protocolVersion\" (a string)");
	/* the client's version when this server speaks it, else the latest it speaks */
	for (i = 0; versions[i]; i++)
		if (!strcmp(versions[i], want->u.string))
			v = versions[i];
	s->structured = strcmp(v, "2025-06-18") >= 0;
	g = mcp_begin(s->out, id);
	out_json_kmap(g, "result");
	out_json_kstr(g, "protocolVersion", v);
	out_json_kmap(g, "capabilities");
	out_json_kmap(g, "tools");
	out_json_kbool(g, "listChanged", 0);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	out_json_kmap(g, "serverInfo");
	out_json_kstr(g, "name", "tracedoc");
	out_json_kstr(g, "title", "tracedoc: GPU profiler traces diagnosed");
	out_json_kstr(g, "version", TD_VERSION);
	yajl_gen_map_close(g);
	out_json_kstr(g, "instructions",
		      "tracedoc reads PyTorch/Kineto profiler traces offline. Start with diagnose "
		      "on a trace: findings in order of the time a fix wins back (est_savings_ns, "
		      "replayed). whatif sizes the fixes together; ops and kernels are the tables; "
		      "evidence shows the events around a finding's time. Times are integer "
		      "nanoseconds on the trace's clock. Paths must lie under the server's roots.");
	yajl_gen_map_close(g);
	return mcp_end(g, s->out);
}

static int empty_result(struct mcp_server *s, yajl_val id)
{
	yajl_gen g = mcp_begin(s->out, id);

	out_json_kmap(g, "result");
	yajl_gen_map_close(g);
	return mcp_end(g, s->out);
}

/* one message answered; -1 when the client cannot be written */
static int handle(struct mcp_server *s, const char *line, size_t n)
{
	struct mcp_req r;
	char msg[1024];
	int code = mcp_req_parse(line, n, &r, msg, sizeof(msg)), rc = 0;

	if (code) {
		rc = mcp_error(s->out, r.id, code, msg);
	} else if (!r.method || !r.id) {
		/* a notification (initialized, cancelled...) or a response: nothing to answer */
	} else if (r.params && !YAJL_IS_OBJECT(r.params)) {
		rc = mcp_error(s->out, r.id, MCP_INVALID_PARAMS, "\"params\" must be an object");
	} else if (!strcmp(r.method, "initialize")) {
		rc = initialize(s, r.id, r.params);
	} else if (!strcmp(r.method, "ping")) {
		rc = empty_result(s, r.id);
	} else if (!strcmp(r.method, "tools/list")) {
		rc = mcp_tools_list(s, r.id);
	} else if (!strcmp(r.method, "tools/call")) {
		rc = r.params ? mcp_tools_call(s, r.id, r.params)
			      : mcp_error(s->out, r.id, MCP_INVALID_PARAMS, "tools/call needs params");
	} else {
		snprintf(msg, sizeof(msg), "no method \"%.200s\" (this server has initialize, ping, "
			 "tools/list and tools/call)", r.method);
		rc = mcp_error(s->out, r.id, MCP_METHOD_NOT_FOUND, msg);
	}
	mcp_req_free(&r);
	return rc;
}

/* the next line of in into *buf (at most MCP_LINE_MAX bytes, without its newline): 1, 0 at
 * the end, -1 when the line was longer (read to its end and dropped) */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *n)
{
	int c, over = 0;

	*n = 0;
	while ((c = getc(in)) != EOF && c != '\n') {
		if (*n >= MCP_LINE_MAX) {
			over = 1;
			continue;
		}
		if (*n + 1 >= *cap) {
			*cap = *cap ? *cap * 2 : 4096;
			*buf = td_realloc(*buf, *cap);
		}
		(*buf)[(*n)++] = (char)c;
	}
	if (c == EOF && !*n && !over)
		return 0;
	if (*n && (*buf)[*n - 1] == '\r')
		(*n)--;
	if (*buf)
		(*buf)[*n] = '\0';
	return over ? -1 : 1;
}

static int serve(struct mcp_server *s, FILE *in)
{
	char *buf = NULL, msg[128];
	size_t cap = 0, n;
	int got, rc = 0;

	while (!rc && (got = read_line(in, &buf, &cap, &n)) != 0) {
		if (got < 0) {
			snprintf(msg, sizeof(msg), "a message over %u bytes: not read", MCP_LINE_MAX);
			rc = mcp_error(s->out, NULL, MCP_INVALID_REQUEST, msg);
		} else if (n) {
			rc = handle(s, buf, n);
		}
	}
	free(buf);
	return rc;
}

/* --root DIR and --root=DIR taken out of argv into s's roots, the rest left for cli_parse */
static int take_roots(struct mcp_server *s, int *argc, char **argv)
{
	char msg[1024];
	int i, k = 1;

	for (i = 1; i < *argc; i++) {
		const char *dir = NULL;
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--root")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "tracedoc mcp: --root needs a value\n");
				return EXIT_USAGE;
			}
			dir = argv[++i];
		} else if (!strncmp(argv[i], "--root=", 7)) {
			dir = argv[i] + 7;
		} else {
			argv[k++] = argv[i];
			continue;
		}
		if (mcp_roots_add(&s->roots, dir, msg, sizeof(msg)) != 0) {
			fprintf(stderr, "tracedoc mcp: %s\n", msg);
			return EXIT_USAGE;
		}
	}
	for (; i < *argc; i++)
		argv[k++] = argv[i];
	*argc = k;
	return EXIT_OK;
}

/* fd 0 and fd 1 kept for the protocol as in and s->out, both then pointed at /dev/null */
static int take_stdio(struct mcp_server *s, FILE **in)
{
	int fin = dup(0), fout = dup(1);

	s->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fin < 0 || fout < 0 || s->devnull < 0 || !(*in = fdopen(fin, "r")) ||
	    !(s->out = fdopen(fout, "w")) || dup2(s->devnull, 0) < 0 || dup2(s->devnull, 1) < 0) {
		fprintf(stderr, "tracedoc mcp: cannot set up stdin and stdout: %s\n",
			strerror(errno));
		return EXIT_INTERNAL;
	}
	(void)fcntl(fin, F_SETFD, FD_CLOEXEC);
	(void)fcntl(fout, F_SETFD, FD_CLOEXEC);
	return EXIT_OK;
}

int cmd_mcp(int argc, char **argv)
{
	struct mcp_server s;
	struct cli_operands ops = {0};
	const char *maxo = NULL;
	FILE *in = NULL;
	int rc, max = (int)MAX_OUTPUT_DEFAULT;
	char **av = td_malloc((size_t)(argc + 1) * sizeof(*av));
	char msg[1024];
	const struct cli_opt opts[] = {
		{"--max-output", 0, &maxo, NULL}, {NULL, 0, NULL, NULL}, /* --root: take_roots */
	};

	memset(&s, 0, sizeof(s));
	s.devnull = -1;
	memcpy(av, argv, (size_t)argc * sizeof(*av));
	av[argc] = NULL;
	if ((rc = take_roots(&s, &argc, av)) == EXIT_OK)
		rc = cli_parse_exactly("mcp", argc, av, opts, &ops, mcp_usage, 0);
	if (rc == EXIT_OK) {
		cli_operands_free(&ops);
		if (maxo && cli_count("mcp", "--max-output", maxo, 1024, 1 << 30, &max))
			rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK && !s.roots.n && mcp_roots_add(&s.roots, ".", msg, sizeof(msg)) != 0) {
		fprintf(stderr, "tracedoc mcp: %s\n", msg);
		rc = EXIT_USAGE;
	}
	free(av);
	if (rc != EXIT_OK) {
		mcp_roots_free(&s.roots);
		return rc == CLI_DONE ? EXIT_OK : rc;
	}
	s.max_output = (size_t)max;
	real_stderr = fcntl(2, F_DUPFD_CLOEXEC, 3);
	td_set_oom_handler(mcp_oom);
	if ((rc = take_stdio(&s, &in)) == EXIT_OK && serve(&s, in) != 0) {
		fprintf(stderr, "tracedoc mcp: cannot write to the client: %s\n", strerror(errno));
		rc = EXIT_INTERNAL;
	}
	mcp_evidence_free();
	mcp_roots_free(&s.roots);
	if (in)
		fclose(in);
	if (s.out)
		fclose(s.out);
	if (s.devnull >= 0)
		close(s.devnull);
	if (real_stderr >= 0)
		close(real_stderr);
	real_stderr = -1;
	return rc;
}
