/* SPDX-License-Identifier: MIT */
/* The MCP server's tools: a table of what each takes, and how its arguments become a
 * command line of the command of that name in main.c's table - paths resolved and held to the
 * roots, every value passed as --option=VALUE and the operands after "--", so no argument can
 * become another option. The command runs in this process (mcp_result.c captures it); no
 * shell, no exec. */
#include "diagnose/mcp_tools.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "diagnose/mcp.h"
#include "diagnose/mcp_evidence.h"
#include "diagnose/mcp_result.h"
#include "diagnose/mcp_rpc.h"
#include "diagnose/out.h"

static const struct cmd *table;
static size_t ntable;

void mcp_set_commands(const struct cmd *cmds, size_t n)
{
	table = cmds;
	ntable = n;
}

static const struct cmd *command(const char *name)
{
	size_t i;

	for (i = 0; i < ntable; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

/* A_RANKS: a path, or a directory of a job's ranks */
enum atype { A_PATH, A_RANKS, A_STR, A_INT, A_BOOL, A_LIST };

struct targ {
	const char *name;
	enum atype type;
	const char *flag; /* NULL: an operand, in the order of the table */
	int required;
	const char *const *choices;
	const char *desc;
};

struct tool {
	const char *name, *cmd; /* cmd NULL: evidence, run here */
	const char *desc;
	const char *const *formats; /* the first is the default */
	struct targ args[8];
};

static const char *const f_report[] = {"json", "text", "md", NULL};
static const char *const f_plain[] = {"json", "text", NULL};
static const char *const f_table[] = {"json", "text", "md", "csv", NULL};
static const char *const windows[] = {"steps", "all", NULL};
static const char *const groups[] = {"name", "shape", "stack", NULL};

#define TRACE_ARG {"trace", A_PATH, NULL, 1, NULL, "the trace file (.json, .json.gz, .json.zst)"}
#define CONFIG_ARG {"config", A_PATH, "--config", 0, NULL, "a tracedoc config file"}
#define SORT_ARG {"sort", A_STR, "--sort", 0, NULL, "the column to sort by (a column id, or " \
		  "key_averages' name: cuda_time_total, self_cpu_time_total, count...)"}
#define TOP_ARG {"top", A_INT, "--top", 0, NULL, "only the first N rows"}
#define WINDOW_ARG {"window", A_STR, "--window", 0, windows, "steps (the steady-state " \
		    "steps, the default when the trace has ProfilerStep#) or all"}

static const struct tool tools[] = {
	{"diagnose", "diagnose", "What slows the run, in order of the time a fix would win back, "
	 "each fix sized by replaying the trace; for a directory of a job's ranks, the job's "
	 "report (tracedoc.report/1, tracedoc.job/1).", f_report,
	 {{"trace", A_RANKS, NULL, 1, NULL, "the trace file (.json, .json.gz, .json.zst), or a "
	   "directory of a job's rank traces or summaries"}, CONFIG_ARG}},
	{"whatif", "whatif", "The replayed fixes one at a time and together: what each wins and "
	 "the step time to expect (tracedoc.whatif/1).", f_plain,
	 {TRACE_ARG, {"fix", A_LIST, "--fix", 0, NULL, "only these rules' fixes, e.g. "
		      "[\"dataloader\", \"sync-stall\"]"}, CONFIG_ARG}},
	{"ops", "ops", "The operator table (key_averages): self and total CPU and CUDA time, calls, "
	 "memory, FLOPs (tracedoc.ops/1).", f_table,
	 {TRACE_ARG, SORT_ARG, TOP_ARG, WINDOW_ARG,
	  {"group_by", A_STR, "--group-by", 0, groups, "name, shape (Input Dims) or stack (the "
	   "innermost user Python frame)"},
	  {"fold_runtime", A_BOOL, "--fold-runtime", 0, NULL, "no runtime-call or GPU rows"},
	  CONFIG_ARG}},
	{"kernels", "kernels", "The GPU kernel table: time, calls, share of GPU busy time, the op "
	 "that launched them (tracedoc.kernels/1).", f_table,
	 {TRACE_ARG, SORT_ARG, TOP_ARG, WINDOW_ARG, CONFIG_ARG}},
	{"memory", "memory", "Device memory: peaks, growth per step, headroom; or a caching-"
	 "allocator snapshot's peak and allocation sites (tracedoc.memory/1).", f_report,
	 {{"file", A_PATH, NULL, 1, NULL, "a trace recorded with profile_memory=True, or a "
	   "torch.cuda.memory._snapshot() saved as JSON"}, CONFIG_ARG}},
	{"diff", "diff", "Two traces of the same program: why CURRENT is slower than BASE, op by op "
	 "and kernel by kernel (tracedoc.diff/1).", f_table,
	 {{"base", A_PATH, NULL, 1, NULL, "the trace before the change"},
	  {"current", A_PATH, NULL, 1, NULL, "the trace after it"}, TOP_ARG, CONFIG_ARG}},
	{"check", "check", "Can the trace be trusted: PyTorch's trace-validator rules and "
	 "tracedoc's own, each with the findings it weakens (tracedoc.check/1).", f_report,
	 {TRACE_ARG, CONFIG_ARG}},
	{"critical-path", "critical-path", "The longest path through the replay graph of the "
	 "steady state: per step the time bound by each category (cpu, launch, data_loading, "
	 "gpu_compute, communication, copies, waits, kernel_delay), the longest pieces with "
	 "their ops.", f_report,
	 {TRACE_ARG, CONFIG_ARG}},
	{"evidence", NULL, "The events on every track within +-window_ns of ts_ns (the reports' "
	 "nanoseconds), the nearest first when there are more than limit (tracedoc.evidence/1).",
	 NULL,
	 {TRACE_ARG, {"ts_ns", A_INT, "--ts", 1, NULL, "the time to look at, in the reports' "
		      "integer nanoseconds"},
	  {"window_ns", A_INT, "--window", 0, NULL, "how far either side (default 1000000: 1 ms)"},
	  {"limit", A_INT, "--limit", 0, NULL, "the most events shown (default 200, at most "
	   "5000)"}}},
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

/* the tool's command is in this build (evidence always is) */
static int available(const struct tool *t)
{
	return !t->cmd || command(t->cmd);
}

static void schema_prop(yajl_gen g, const struct targ *a)
{
	size_t i;

	out_json_kmap(g, a->name);
	out_json_kstr(g, "type", a->type == A_INT ? "integer" : a->type == A_BOOL ? "boolean"
							  : a->type == A_LIST ? "array" : "string");
	if (a->type == A_LIST) {
		out_json_kmap(g, "items");
		out_json_kstr(g, "type", "string");
		yajl_gen_map_close(g);
	}
	if (a->choices) {
		out_json_karray(g, "enum");
		for (i = 0; a->choices[i]; i++)
			out_json_str(g, a->choices[i]);
		yajl_gen_array_close(g);
	}
	out_json_kstr(g, "description", a->desc);
	yajl_gen_map_close(g);
}

static void tool_json(yajl_gen g, const struct tool *t)
{
	const struct targ *a;
	struct targ fmt = {"format", A_STR, "--format", 0, t->formats,
			   "json (the default: the document as structuredContent) or text for a "
			   "person"};

	yajl_gen_map_open(g);
	out_json_kstr(g, "name", t->name);
	out_json_kstr(g, "description", t->desc);
	out_json_kmap(g, "inputSchema");
	out_json_kstr(g, "type", "object");
	out_json_kmap(g, "properties");
	for (a = t->args; a->name; a++)
		schema_prop(g, a);
	if (t->formats)
		schema_prop(g, &fmt);
	yajl_gen_map_close(g);
	out_json_karray(g, "required");
	for (a = t->args; a->name; a++)
		if (a->required)
			out_json_str(g, a->name);
	yajl_gen_array_close(g);
	out_json_kbool(g, "additionalProperties", 0);
	yajl_gen_map_close(g);
	out_json_kmap(g, "annotations");
	out_json_kbool(g, "readOnlyHint", 1);
	out_json_kbool(g, "openWorldHint", 0);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
}

int mcp_tools_list(struct mcp_server *s, yajl_val id)
{
	yajl_gen g = mcp_begin(s->out, id);
	size_t i;

	out_json_kmap(g, "result");
	out_json_karray(g, "tools");
	for (i = 0; i < NTOOLS; i++)
		if (available(&tools[i]))
			tool_json(g, &tools[i]);
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	return mcp_end(g, s->out);
}

/* --- a call ---------------------------------------------------------------------------------- */

struct argv_b {
	char **v;
	int n, cap;
};

static void push(struct argv_b *b, char *s) /* takes s */
{
	if (b->n + 1 >= b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->v = td_realloc(b->v, (size_t)b->cap * sizeof(*b->v));
	}
	b->v[b->n++] = s;
	b->v[b->n] = NULL;
}

static void pushf(struct argv_b *b, const char *flag, const char *value)
{
	size_t n = strlen(flag) + strlen(value) + 2;
	char *s = td_malloc(n);

	snprintf(s, n, "%s=%s", flag, value);
	push(b, s);
}

static void argv_free(struct argv_b *b)
{
	int i;

	for (i = 0; i < b->n; i++)
		free(b->v[i]);
	free(b->v);
}

static const struct targ *find_arg(const struct tool *t, const char *name)
{
	const struct targ *a;

	for (a = t->args; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

/* the value of a as one option value into out (cap bytes), or -1 with why in msg */
static int value_of(const struct mcp_server *s, const struct targ *a, yajl_val v, char **out,
		    char *msg, size_t cap)
{
	size_t i;

	*out = NULL;
	switch (a->type) {
	case A_PATH:
	case A_RANKS:
		if (!YAJL_IS_STRING(v))
			break;
		*out = mcp_roots_resolve(&s->roots, v->u.string, a->type == A_RANKS, msg, cap);
		return *out ? 0 : -1;
	case A_STR:
		if (!YAJL_IS_STRING(v))
			break;
		for (i = 0; a->choices && a->choices[i] && strcmp(a->choices[i], v->u.string); i++)
			;
		if (a->choices && !a->choices[i]) {
			snprintf(msg, cap, "%s: \"%.200s\" is not one of its values", a->name,
				 v->u.string);
			return -1;
		}
		*out = td_strndup(v->u.string, strlen(v->u.string));
		return 0;
	case A_INT:
		if (!YAJL_IS_INTEGER(v))
			break;
		*out = td_malloc(24);
		snprintf(*out, 24, "%lld", (long long)v->u.number.i);
		return 0;
	case A_BOOL:
		if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v))
			break;
		*out = YAJL_IS_TRUE(v) ? td_strndup("1", 1) : NULL;
		return 0;
	case A_LIST: {
		size_t n = 1;
		if (!YAJL_IS_ARRAY(v))
			break;
		for (i = 0; i < v->u.array.len; i++) {
			yajl_val e = v->u.array.values[i];
			if (!YAJL_IS_STRING(e) || !*e->u.string || strchr(e->u.string, ',')) {
				snprintf(msg, cap, "%s: every item must be a name (a string, no comma)",
					 a->name);
				return -1;
			}
			n += strlen(e->u.string) + 1;
		}
		*out = td_calloc(1, n);
		for (i = 0; i < v->u.array.len; i++) {
			if (i)
				strcat(*out, ",");
			strcat(*out, v->u.array.values[i]->u.string);
		}
		return 0;
	}
	}
	snprintf(msg, cap, "%s must be %s", a->name, a->type == A_INT ? "an integer" :
		 a->type == A_BOOL ? "true or false" : a->type == A_LIST ? "an array of strings"
					       : "a string");
	return -1;
}

/* the command line of t for args into b; -1 with why in msg */
static int build_argv(const struct mcp_server *s, const struct tool *t, yajl_val args,
		      const char **format, struct argv_b *b, char *msg, size_t cap)
{
	const struct targ *a;
	char *operands[8] = {NULL};
	size_t i;
	int rc = 0;

	push(b, td_strndup(t->cmd ? t->cmd : t->name, strlen(t->cmd ? t->cmd : t->name)));
	push(b, td_strndup("--quiet", 7));
	*format = t->formats ? t->formats[0] : "json";
	for (i = 0; args && i < args->u.object.len && !rc; i++) {
		const char *k = args->u.object.keys[i];
		yajl_val v = args->u.object.values[i];
		char *val;
		if (t->formats && !strcmp(k, "format")) {
			size_t f;
			for (f = 0; YAJL_IS_STRING(v) && t->formats[f] &&
				    strcmp(t->formats[f], v->u.string); f++)
				;
			if (!YAJL_IS_STRING(v) || !t->formats[f]) {
				size_t at = (size_t)snprintf(msg, cap, "format must be one of");
				for (f = 0; t->formats[f] && at < cap; f++)
					at += (size_t)snprintf(msg + at, cap - at, "%s %s", f ? "," : "",
							       t->formats[f]);
				rc = -1;
			} else {
				*format = t->formats[f];
			}
			continue;
		}
		if (!(a = find_arg(t, k))) {
			snprintf(msg, cap, "%s takes no argument \"%.100s\" (see its inputSchema)",
				 t->name, k);
			rc = -1;
		} else if (value_of(s, a, v, &val, msg, cap) != 0) {
			rc = -1;
		} else if (!a->flag) {
			free(operands[a - t->args]);
			operands[a - t->args] = val;
		} else if (val) {
			if (a->type == A_BOOL)
				push(b, td_strndup(a->flag, strlen(a->flag)));
			else
				pushf(b, a->flag, val);
			free(val);
		}
	}
	for (a = t->args; a->name && !rc; a++)
		if (a->required && !operands[a - t->args] && (!a->flag || !mcp_get(args, a->name))) {
			snprintf(msg, cap, "%s needs %s", t->name, a->name);
			rc = -1;
		}
	if (t->formats)
		pushf(b, "--format", *format);
	push(b, td_strndup("--", 2));
	for (i = 0; i < 8; i++)
		if (operands[i] && rc)
			free(operands[i]);
		else if (operands[i])
			push(b, operands[i]);
	return rc;
}

int mcp_tools_call(struct mcp_server *s, yajl_val id, yajl_val params)
{
	yajl_val name = mcp_get(params, "name"), args = mcp_get(params, "arguments");
	const struct tool *t = NULL;
	const struct cmd *c = NULL;
	struct argv_b b = {0};
	struct mcp_capture cap;
	const char *format;
	char msg[2048];
	size_t i;
	int rc;

	if (!name || !YAJL_IS_STRING(name))
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, "tools/call needs a \"name\"");
	if (args && YAJL_IS_NULL(args))
		args = NULL;
	if (args && !YAJL_IS_OBJECT(args))
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, "\"arguments\" must be an object");
	for (i = 0; i < NTOOLS && strcmp(tools[i].name, name->u.string); i++)
		;
	if (i == NTOOLS) {
		snprintf(msg, sizeof(msg), "unknown tool \"%.200s\" (tools/list names them)",
			 name->u.string);
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, msg);
	}
	t = &tools[i];
	if (t->cmd && !(c = command(t->cmd))) {
		snprintf(msg, sizeof(msg), "this build has no %s command", t->cmd);
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, msg);
	}
	if (build_argv(s, t, args, &format, &b, msg, sizeof(msg)) != 0) {
		argv_free(&b);
		return mcp_error(s->out, id, MCP_INVALID_PARAMS, msg);
	}
	if (mcp_run_captured(c ? c->fn : mcp_evidence, b.n, b.v, s->devnull, s->max_output,
			     &cap) != 0) {
		snprintf(msg, sizeof(msg), "cannot capture the output: %s", strerror(errno));
		argv_free(&b);
		return mcp_error(s->out, id, MCP_INTERNAL_ERROR, msg);
	}
	argv_free(&b);
	rc = mcp_result(s, id, t->name, format, &cap);
	mcp_capture_free(&cap);
	return rc;
}
