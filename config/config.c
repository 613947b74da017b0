/* SPDX-License-Identifier: MIT */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "config/config.h"

#include "parser/jsoncheck.h"

#include <errno.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "common/fmt.h"

#define MATCH_LIMIT 100000
#define DEPTH_LIMIT 1000

/* Each pattern compiled once; up to CHUNK of them also as one alternation, so a name is matched
 * once per chunk rather than once per pattern (a config of 100k patterns); a chunk too large
 * to compile is halved until it compiles. A pattern that
 * stops at the match limit DISABLE_AFTER times is a catastrophic one: it is left out for the
 * rest of the run (treated as no match, counted), and its chunk is matched one by one. */
#define CHUNK 512
#define DISABLE_AFTER 16

struct pat {
	pcre2_code *code;
	char *src;
	_Atomic unsigned hits; /* stopped at the limit */
	_Atomic int off;
};

struct chunk {
	pcre2_code *code; /* the chunk's patterns as one alternation; NULL: one by one */
	size_t first, n;
	_Atomic int split; /* one of its patterns was left out: one by one from now on */
};

struct td_pattern_set {
	size_t n, cap;
	struct pat *p;
	size_t nchunks;
	struct chunk *ch;
	pcre2_match_context *mctx;
};

static const char *const pattern_keys[PAT_COUNT] = {
	"sync_ops", "step_markers", "dataloader", "communication", "warmup", "ignore",
};
/* NCCL / RCCL, and the custom all-reduce kernels of serving engines (vLLM's and SGLang's
 * cross_device_reduce, ROCm's QuickReduce, TensorRT-LLM's one/two-shot and fused ones) and
 * symmetric memory */
static const char *const default_comm = "(?i)nccl|rccl|cross_device_reduce|multimem_all_reduce"
	"|one_shot_all_reduce|two_shot_all_reduce|deep_ep.*(dispatch|combine)"
	"|quickreduce|allreduce_prototype|oneshotallreduce|twoshotallreduce|allreduce_fusion";

/* --- patterns ---------------------------------------------------------------------------- */

static void *compile(const char *src, const char *path, struct td_error *err)
{
	int ec;
	PCRE2_SIZE off;
	pcre2_code *code = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED,
					 PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &ec, &off, NULL);

	if (!code) {
		PCRE2_UCHAR msg[256];
		pcre2_get_error_message(ec, msg, sizeof(msg));
		td_error_set(err, TD_EINVAL, "%s: bad pattern \"%s\": %s at offset %zu", path, src,
			     (const char *)msg, (size_t)off);
		return NULL;
	}
	return code; /* JIT-compiled as its chunk is built (set_build), when it is matched alone */
}

static int set_add(struct td_pattern_set **ps, const char *src, const char *path,
		   struct td_error *err)
{
	struct td_pattern_set *s = *ps;
	void *code = compile(src, path, err);

	if (!code)
		return TD_EINVAL;
	if (!s) {
		s = *ps = td_calloc(1, sizeof(*s));
		s->mctx = pcre2_match_context_create(NULL);
		pcre2_set_match_limit(s->mctx, MATCH_LIMIT);
		pcre2_set_depth_limit(s->mctx, DEPTH_LIMIT);
	}
	if (s->n == s->cap) { /* doubled: a config may hold 100k patterns */
		s->cap = s->cap ? s->cap * 2 : 8;
		s->p = td_realloc(s->p, s->cap * sizeof(*s->p));
	}
	memset(&s->p[s->n], 0, sizeof(s->p[s->n]));
	s->p[s->n].code = code;
	s->p[s->n].src = td_strndup(src, strlen(src));
	s->n++;
	return 0;
}

/* 0 when src cannot stand beside others in one alternation with the same meaning: it refers
 * to groups by number or name, quotes to its end (\Q), sets extended mode (a # comment would
 * eat the closing parenthesis) or starts with a verb like (*UTF) */
static int combinable(const char *src)
{
	const char *q;

	for (q = src; *q; q++) {
		if (q[0] == '\\' && q[1]) {
			if ((q[1] >= '1' && q[1] <= '9') || q[1] == 'g' || q[1] == 'k' || q[1] == 'Q')
				return 0;
			q++;
		} else if (q[0] == '(' && q[1] == '*') {
			return 0;
		} else if (q[0] == '(' && q[1] == '?') {
			const char *f = q + 2;
			if (*f == 'P' || *f == '&' || *f == 'R' || (*f >= '0' && *f <= '9') ||
			    *f == '+' || *f == '-' || *f == '(')
				return 0;
			for (; *f && *f != ')' && *f != ':'; f++)
				if (*f == 'x')
					return 0;
		}
	}
	return 1;
}

static pcre2_code *alternation(const struct td_pattern_set *s, size_t first, size_t n)
{
	struct td_buf b = {0};
	pcre2_code *code;
	size_t i;
	int ec;
	PCRE2_SIZE off;

	for (i = first; i < first + n; i++) {
		td_buf_add(&b, i > first ? "|(?:" : "(?:", i > first ? 4 : 3);
		td_buf_add(&b, s->p[i].src, strlen(s->p[i].src));
		td_buf_add(&b, ")", 1);
	}
	code = pcre2_compile((PCRE2_SPTR)b.s, b.n, PCRE2_UTF | PCRE2_MATCH_INVALID_UTF |
			     PCRE2_DUPNAMES, &ec, &off, NULL);
	free(b.s);
	if (code)
		(void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
	return code;
}

/* patterns [first, first + n) as chunks: one alternation, or halves of it when it does not
 * compile (PCRE2's compiled size is limited) */
static void add_chunks(struct td_pattern_set *s, size_t first, size_t n)
{
	pcre2_code *code = n > 1 ? alternation(s, first, n) : NULL;
	struct chunk *c;

	if (n > 1 && !code) {
		add_chunks(s, first, n / 2);
		add_chunks(s, first + n / 2, n - n / 2);
		return;
	}
	c = &s->ch[s->nchunks++];
	c->first = first;
	c->n = n;
	c->code = code;
	/* what is matched first goes through the JIT (interpreted where it is missing); the
	 * patterns of an alternation only after a split, interpreted: a JIT compile each would
	 * map executable pages 100k times for a config of 100k patterns */
	if (n == 1)
		(void)pcre2_jit_compile(s->p[first].code, PCRE2_JIT_COMPLETE);
}

/* the chunks, once every pattern is in: runs of combinable patterns, CHUNK at most */
static void set_build(struct td_pattern_set *s)
{
	size_t i = 0;

	if (!s || s->ch)
		return;
	s->ch = td_calloc(s->n ? s->n : 1, sizeof(*s->ch));
	while (i < s->n) {
		size_t first = i;
		if (!combinable(s->p[i].src)) {
			add_chunks(s, i++, 1);
			continue;
		}
		while (i < s->n && i - first < CHUNK && combinable(s->p[i].src))
			i++;
		add_chunks(s, first, i - first);
	}
}

static void set_free(struct td_pattern_set *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		pcre2_code_free(s->p[i].code);
		free(s->p[i].src);
	}
	for (i = 0; i < s->nchunks; i++)
		pcre2_code_free(s->ch[i].code);
	free(s->p);
	free(s->ch);
	pcre2_match_context_free(s->mctx);
	free(s);
}

/* 1 match, 0 no match, -1 limit hit */
static int match_one(void *code, pcre2_match_data *md, pcre2_match_context *mctx, const char *s,
		     size_t len)
{
	int rc = pcre2_match(code, (PCRE2_SPTR)s, len, 0, 0, md, mctx);

	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT ||
	    rc == PCRE2_ERROR_HEAPLIMIT)
		return -1;
	return 0;
}

/* one pattern on a name: a limit hit is counted, and the DISABLE_AFTER-th leaves it out */
static int match_pat(struct td_config *c, struct pat *p, pcre2_match_data *md,
		     pcre2_match_context *mctx, const char *name, size_t len, struct chunk *ch)
{
	int m;

	if (atomic_load(&p->off))
		return 0;
	m = match_one(p->code, md, mctx, name, len);
	if (m < 0) {
		atomic_fetch_add(&c->pattern_limit_hits, 1);
		if (atomic_fetch_add(&p->hits, 1) + 1 == DISABLE_AFTER) {
			atomic_store(&p->off, 1);
			atomic_store(&ch->split, 1);
			atomic_fetch_add(&c->patterns_disabled, 1);
		}
	}
	return m > 0;
}

int td_config_match(struct td_config *c, enum td_pattern_kind k, const char *name, size_t len)
{
	struct td_pattern_set *s = c->patterns[k];
	pcre2_match_data *md;
	size_t i, j;
	int hit = 0;

	if (!s)
		return 0;
	/* match data of our own: several ranks are analysed at once with one config */
	md = pcre2_match_data_create(4, NULL);
	for (i = 0; i < s->nchunks && !hit; i++) {
		struct chunk *ch = &s->ch[i];
		if (ch->code && !atomic_load(&ch->split)) {
			int m = match_one(ch->code, md, s->mctx, name, len);
			if (m >= 0) { /* matched or not: the chunk has answered */
				hit = m > 0;
				continue;
			}
		}
		for (j = ch->first; j < ch->first + ch->n && !hit; j++) /* the exact answer */
			hit = match_pat(c, &s->p[j], md, s->mctx, name, len, ch);
	}
	pcre2_match_data_free(md);
	return hit;
}

const struct td_suppression *td_config_suppressed(struct td_config *c, const char *rule,
						  const char *const *texts, size_t ntexts)
{
	size_t i, j;
	pcre2_match_data *md = NULL;
	pcre2_match_context *mctx = NULL;
	const struct td_suppression *hit = NULL;

	for (i = 0; i < c->suppress.len && !hit; i++) {
		const struct td_suppression *s = &TD_VEC_AT(&c->suppress, struct td_suppression, i);
		if (strcmp(s->rule, rule) != 0)
			continue;
		if (!s->code) {
			hit = s;
			break;
		}
		if (!md) {
			md = pcre2_match_data_create(4, NULL);
			mctx = pcre2_match_context_create(NULL);
			pcre2_set_match_limit(mctx, MATCH_LIMIT);
			pcre2_set_depth_limit(mctx, DEPTH_LIMIT);
		}
		for (j = 0; j < ntexts; j++) {
			int m = match_one(s->code, md, mctx, texts[j], strlen(texts[j]));
			if (m < 0)
				atomic_fetch_add(&c->pattern_limit_hits, 1);
			if (m > 0) {
				hit = s;
				break;
			}
		}
	}
	pcre2_match_data_free(md);
	pcre2_match_context_free(mctx);
	return hit;
}

/* --- defaults ---------------------------------------------------------------------------- */

void td_config_default(struct td_config *c)
{
	struct td_error err;

	memset(c, 0, sizeof(*c));
	td_params_default(&c->params);
	c->gate.time_threshold = 0.10;
	c->gate.time_floor_ns = 500000;
	c->gate.busy_floor = 0.01;
	c->gate.count_tolerance = 0.10;
	c->gate.sync_tolerance = 0;
	c->gate.pageable_tolerance = 0;
	c->gate.min_gpu_busy = -1;
	c->gate.max_syncs_per_step = -1;
	c->gate.max_pageable_copies_per_step = -1;
	c->gate.max_step_time_ns = -1;
	c->gate.max_decode_step_time_ns = -1;
	c->gate.max_idle_fraction = -1;
	c->gate.min_mfu = -1;
	c->gate.max_snapshot_peak_bytes = -1;
	c->gate.fail_on_new_high = 1;
	td_vec_init(&c->suppress, sizeof(struct td_suppression));
	set_add(&c->patterns[PAT_COMMUNICATION], default_comm, "patterns.communication", &err);
	set_build(c->patterns[PAT_COMMUNICATION]);
}

void td_config_free(struct td_config *c)
{
	size_t i;

	for (i = 0; i < PAT_COUNT; i++)
		set_free(c->patterns[i]);
	for (i = 0; i < c->suppress.len; i++) {
		struct td_suppression *s = &TD_VEC_AT(&c->suppress, struct td_suppression, i);
		free(s->rule);
		free(s->match);
		free(s->reason);
		if (s->code)
			pcre2_code_free(s->code);
	}
	td_vec_free(&c->suppress);
	free(c->peaks_json);
	memset(c, 0, sizeof(*c));
}

/* --- reading ----------------------------------------------------------------------------- */

static int type_error(struct td_error *err, const char *path, const char *want)
{
	return td_error_set(err, TD_EINVAL, "%s: expected %s", path, want);
}

static int get_num(yajl_val v, const char *path, double min, double max, double *out,
		   struct td_error *err)
{
	if (!YAJL_IS_NUMBER(v))
		return type_error(err, path, "a number");
	*out = YAJL_GET_DOUBLE(v);
	if (*out < min || *out > max)
		return td_error_set(err, TD_EINVAL, "%s: %g is out of range [%g, %g]", path, *out, min,
				    max);
	return 0;
}

struct num_key {
	const char *key;
	double min, max, scale; /* value stored = value * scale */
	int is_int64, is_int;
	size_t off;
};

#define P(f) offsetof(struct td_params, f)
static const struct num_key rule_keys[] = {
	{"small_kernel_us", 0, 1e9, 1000, 1, 0, P(small_kernel_ns)},
	{"small_run_min", 2, 1e6, 1, 0, 1, P(small_run_min)},
	{"small_run_gap_us", 0, 1e9, 1000, 1, 0, P(small_run_gap_ns)},
	{"element_loop_min", 2, 1e9, 1, 0, 1, P(element_loop_min)},
	{"dataloader_share", 0, 1, 1, 0, 0, P(dataloader_share)},
	{"dataloader_residual_us", 0, 1e9, 1000, 1, 0, P(dataloader_residual_ns)},
	{"launch_delay_us", 0, 1e9, 1000, 1, 0, P(launch_delay_ns)},
	{"queued_gap_us", 0, 1e9, 1000, 1, 0, P(queued_gap_ns)},
	{"warmup_step_ratio", 1, 1e6, 1, 0, 0, P(warmup_step_ratio)},
	{"memory_high_fraction", 0, 1, 1, 0, 0, P(memory_high_fraction)},
	{"gpu_bound_busy", 0, 1, 1, 0, 0, P(gpu_bound_busy)},
	{"precision_share", 0, 1, 1, 0, 0, P(precision_share)},
	{"gap_report_us", 0, 1e12, 1000, 1, 0, P(gap_report_ns)},
	{"evidence_max", 0, 1000, 1, 0, 1, P(evidence_max)},
	{"low_util", 0, 1, 1, 0, 0, P(low_util)},
	{"util_chunks", 2, 100000, 1, 0, 1, P(util_chunks)},
};
#undef P
#define G(f) offsetof(struct td_gate_config, f)
static const struct num_key gate_keys[] = {
	{"time_threshold", 0, 100, 1, 0, 0, G(time_threshold)},
	{"time_floor_us", 0, 1e12, 1000, 1, 0, G(time_floor_ns)},
	{"busy_floor", 0, 1, 1, 0, 0, G(busy_floor)},
	{"count_tolerance", 0, 1e6, 1, 0, 0, G(count_tolerance)},
	{"sync_tolerance", 0, 1e6, 1, 0, 0, G(sync_tolerance)},
	{"pageable_tolerance", 0, 1e6, 1, 0, 0, G(pageable_tolerance)},
};
static const struct num_key budget_keys[] = {
	{"min_gpu_busy", 0, 1, 1, 0, 0, G(min_gpu_busy)},
	{"max_syncs_per_step", 0, 1e12, 1, 0, 0, G(max_syncs_per_step)},
	{"max_pageable_copies_per_step", 0, 1e12, 1, 0, 0, G(max_pageable_copies_per_step)},
	{"max_step_time_us", 0, 1e15, 1000, 1, 0, G(max_step_time_ns)},
	{"max_decode_step_time_us", 0, 1e15, 1000, 1, 0, G(max_decode_step_time_ns)},
	{"max_idle_fraction", 0, 1, 1, 0, 0, G(max_idle_fraction)},
	{"min_mfu", 0, 1, 1, 0, 0, G(min_mfu)},
	{"max_snapshot_peak_bytes", 0, 9e18, 1, 1, 0, G(max_snapshot_peak_bytes)},
};
#undef G

static int read_nums(yajl_val obj, const char *path, const struct num_key *keys, size_t nkeys,
		     void *base, int allow_null, struct td_error *err)
{
	size_t i, k;
	char p[256];

	if (!YAJL_IS_OBJECT(obj))
		return type_error(err, path, "an object");
	for (i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		yajl_val v = obj->u.object.values[i];
		double d = 0;
		int rc;

		snprintf(p, sizeof(p), "%s.%s", path, key);
		for (k = 0; k < nkeys; k++)
			if (strcmp(keys[k].key, key) == 0)
				break;
		if (k == nkeys) {
			if (!strcmp(path, "rules") && !strcmp(key, "severity"))
				continue; /* read by the caller */
			if (!strcmp(path, "gate") && (!strcmp(key, "budgets") ||
						       !strcmp(key, "fail_on_new_high") ||
						       !strcmp(key, "fail_on_red_health")))
				continue;
			return td_error_set(err, TD_EINVAL, "%s: unknown key", p);
		}
		if (allow_null && YAJL_IS_NULL(v)) {
			d = -1;
		} else {
			if ((rc = get_num(v, p, keys[k].min, keys[k].max, &d, err)) != 0)
				return rc;
			if (keys[k].is_int && d != (double)(long long)d)
				return type_error(err, p, "a whole number");
			d *= keys[k].scale;
		}
		if (keys[k].is_int64)
			*(int64_t *)((char *)base + keys[k].off) = (int64_t)d;
		else if (keys[k].is_int)
			*(int *)((char *)base + keys[k].off) = (int)d;
		else
			*(double *)((char *)base + keys[k].off) = d;
	}
	return 0;
}

static int read_patterns(struct td_config *c, yajl_val obj, struct td_error *err)
{
	size_t i, j, k;
	char p[256];
	int rc;

	if (!YAJL_IS_OBJECT(obj))
		return type_error(err, "patterns", "an object");
	for (i = 0; i < obj->u.object.len; i++) {
		const char *key = obj->u.object.keys[i];
		yajl_val v = obj->u.object.values[i];

		for (k = 0; k < PAT_COUNT; k++)
			if (strcmp(pattern_keys[k], key) == 0)
				break;
		snprintf(p, sizeof(p), "patterns.%s", key);
		if (k == PAT_COUNT)
			return td_error_set(err, TD_EINVAL, "%s: unknown key", p);
		if (!YAJL_IS_ARRAY(v))
			return type_error(err, p, "an array of patterns");
		set_free(c->patterns[k]); /* the file's list replaces the default */
		c->patterns[k] = NULL;
		for (j = 0; j < v->u.array.len; j++) {
			yajl_val s = v->u.array.values[j];
			snprintf(p, sizeof(p), "patterns.%s[%zu]", key, j);
			if (!YAJL_IS_STRING(s))
				return type_error(err, p, "a string");
			if ((rc = set_add(&c->patterns[k], s->u.string, p, err)) != 0)
				return rc;
		}
	}
	return 0;
}

static int read_suppress(struct td_config *c, yajl_val arr, struct td_error *err)
{
	size_t i, j;
	char p[256];

	if (!YAJL_IS_ARRAY(arr))
		return type_error(err, "suppress", "an array");
	for (i = 0; i < arr->u.array.len; i++) {
		yajl_val o = arr->u.array.values[i];
		struct td_suppression s = {NULL, NULL, NULL, NULL};
		int rc = 0;

		snprintf(p, sizeof(p), "suppress[%zu]", i);
		if (!YAJL_IS_OBJECT(o))
			return type_error(err, p, "an object {rule, match, reason}");
		for (j = 0; j < o->u.object.len && !rc; j++) {
			const char *key = o->u.object.keys[j];
			yajl_val v = o->u.object.values[j];
			char **dst = !strcmp(key, "rule") ? &s.rule : !strcmp(key, "match") ? &s.match
				: !strcmp(key, "reason") ? &s.reason : NULL;
			snprintf(p, sizeof(p), "suppress[%zu].%s", i, key);
			if (!dst)
				rc = td_error_set(err, TD_EINVAL, "%s: unknown key", p);
			else if (!YAJL_IS_STRING(v))
				rc = type_error(err, p, "a string");
			else {
				free(*dst);
				*dst = td_strndup(v->u.string, strlen(v->u.string));
			}
		}
		if (!rc && (!s.rule || !s.reason))
			rc = td_error_set(err, TD_EINVAL, "suppress[%zu]: needs \"rule\" and \"reason\"", i);
		if (!rc && !td_rule_known(s.rule)) {
			const char *near = td_rule_nearest(s.rule);
			rc = td_error_set(err, TD_EINVAL, "suppress[%zu].rule: %s: no such rule%s%s%s", i,
					  s.rule, near ? "; did you mean " : "", near ? near : "",
					  near ? "?" : "");
		}
		if (!rc && s.match && *s.match) {
			snprintf(p, sizeof(p), "suppress[%zu].match", i);
			if (!(s.code = compile(s.match, p, err)))
				rc = TD_EINVAL;
		}
		if (rc) {
			free(s.rule);
			free(s.match);
			free(s.reason);
			return rc;
		}
		if (!s.match)
			s.match = td_strndup("", 0);
		*(struct td_suppression *)td_vec_push(&c->suppress) = s;
	}
	return 0;
}

/* json with each \u0000 escape in a string written as \\x{0}: yajl's tree keeps strings as C
 * strings, so a pattern holding a NUL would match by its prefix; as PCRE2's own escape for
 * that character it keeps its meaning (and a reason or rule name shows it). NULL when json
 * has none. */
static char *nul_escapes(const char *json)
{
	struct td_buf b = {0};
	const char *p = json, *from = json;
	int in_str = 0;

	if (!strstr(json, "\\u0000"))
		return NULL;
	for (; *p; p++) {
		if (*p == '"') {
			in_str = !in_str;
		} else if (in_str && *p == '\\' && p[1]) {
			if (!strncmp(p + 1, "u0000", 5)) {
				td_buf_add(&b, from, (size_t)(p - from));
				td_buf_add(&b, "\\\\x{0}", 6);
				from = p + 6;
				p += 5;
			} else {
				p++;
			}
		}
	}
	td_buf_add(&b, from, strlen(from));
	td_buf_add(&b, "", 1);
	return b.s;
}

int td_config_parse(struct td_config *c, const char *json, struct td_error *err)
{
	yajl_val root;
	size_t i;
	int rc = 0;
	char *nul;

	/* a config is small and shallow: a deep one is refused before the recursive tree parse */
	root = td_json_tree(json, "config", "", TD_EINVAL, err);
	if (!root)
		return TD_EINVAL;
	if ((nul = nul_escapes(json)) != NULL) { /* the same document, read again (it parsed) */
		yajl_tree_free(root);
		root = td_json_tree(nul, "config", "", TD_EINVAL, err);
		free(nul);
		if (!root)
			return TD_EINVAL;
	}
	if (!YAJL_IS_OBJECT(root)) {
		yajl_tree_free(root);
		return type_error(err, "(top level)", "an object");
	}
	for (i = 0; i < root->u.object.len && !rc; i++) {
		const char *key = root->u.object.keys[i];
		yajl_val v = root->u.object.values[i];

		if (!strcmp(key, "rules")) {
			rc = read_nums(v, "rules", rule_keys, sizeof(rule_keys) / sizeof(rule_keys[0]),
				       &c->params, 0, err);
			if (!rc) {
				const char *path[] = {"severity", NULL};
				yajl_val sev = yajl_tree_get(v, path, yajl_t_any);
				if (sev) {
					static const struct num_key sk[] = {
						{"high", 0, 1, 1, 0, 0, offsetof(struct td_params, sev_high)},
						{"medium", 0, 1, 1, 0, 0, offsetof(struct td_params, sev_medium)},
						{"low", 0, 1, 1, 0, 0, offsetof(struct td_params, sev_low)},
					};
					rc = read_nums(sev, "rules.severity", sk, 3, &c->params, 0, err);
				}
			}
		} else if (!strcmp(key, "patterns")) {
			rc = read_patterns(c, v, err);
		} else if (!strcmp(key, "suppress")) {
			rc = read_suppress(c, v, err);
		} else if (!strcmp(key, "gate")) {
			rc = read_nums(v, "gate", gate_keys, sizeof(gate_keys) / sizeof(gate_keys[0]),
				       &c->gate, 0, err);
			if (!rc) {
				const char *bp[] = {"budgets", NULL}, *fp[] = {"fail_on_new_high", NULL};
				yajl_val b = yajl_tree_get(v, bp, yajl_t_any);
				yajl_val f = yajl_tree_get(v, fp, yajl_t_any);
				if (b)
					rc = read_nums(b, "gate.budgets", budget_keys,
						       sizeof(budget_keys) / sizeof(budget_keys[0]), &c->gate,
						       1, err);
				if (!rc && f) {
					if (!YAJL_IS_TRUE(f) && !YAJL_IS_FALSE(f))
						rc = type_error(err, "gate.fail_on_new_high", "true or false");
					else
						c->gate.fail_on_new_high = YAJL_IS_TRUE(f);
				}
				if (!rc) {
					const char *hp[] = {"fail_on_red_health", NULL};
					yajl_val h = yajl_tree_get(v, hp, yajl_t_any);
					if (h && !YAJL_IS_TRUE(h) && !YAJL_IS_FALSE(h))
						rc = type_error(err, "gate.fail_on_red_health",
								"true or false");
					else if (h)
						c->gate.fail_on_red_health = YAJL_IS_TRUE(h);
				}
			}
		} else if (!strcmp(key, "$schema") || !strcmp(key, "comment")) {
			continue;
		} else {
			rc = td_error_set(err, TD_EINVAL, "%s: unknown key", key);
		}
	}
	if (!rc && !(c->params.sev_high >= c->params.sev_medium &&
		     c->params.sev_medium >= c->params.sev_low))
		rc = td_error_set(err, TD_EINVAL, "%s",
				  "rules.severity: needs high >= medium >= low");
	yajl_tree_free(root);
	for (i = 0; !rc && i < PAT_COUNT; i++)
		set_build(c->patterns[i]);
	return rc;
}

/* --- the defaults as a config file ------------------------------------------------------- */


static void put_num(yajl_gen g, const char *key, double v)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%.10g", v);
	yajl_gen_string(g, (const unsigned char *)key, strlen(key));
	yajl_gen_number(g, buf, (size_t)n);
}

static void put_nums(yajl_gen g, const struct num_key *keys, size_t n, const void *base)
{
	size_t i;

	for (i = 0; i < n; i++) {
		double v = keys[i].is_int64 ? (double)*(const int64_t *)((const char *)base + keys[i].off)
			: keys[i].is_int ? (double)*(const int *)((const char *)base + keys[i].off)
					 : *(const double *)((const char *)base + keys[i].off);
		if (v < 0) {
			yajl_gen_string(g, (const unsigned char *)keys[i].key, strlen(keys[i].key));
			yajl_gen_null(g);
			continue;
		}
		put_num(g, keys[i].key, v / keys[i].scale);
	}
}

char *td_config_defaults_json(void)
{
	struct td_config c;
	struct td_buf b = {NULL, 0, 0};
	yajl_gen g = yajl_gen_alloc(NULL);
	size_t k;

	td_config_default(&c);
	yajl_gen_config(g, yajl_gen_beautify, 1);
	yajl_gen_config(g, yajl_gen_indent_string, "  ");
	yajl_gen_config(g, yajl_gen_print_callback, td_buf_gen_cb, &b);
	yajl_gen_map_open(g);
	yajl_gen_string(g, (const unsigned char *)"rules", 5);
	yajl_gen_map_open(g);
	put_nums(g, rule_keys, sizeof(rule_keys) / sizeof(rule_keys[0]), &c.params);
	yajl_gen_string(g, (const unsigned char *)"severity", 8);
	yajl_gen_map_open(g);
	put_num(g, "high", c.params.sev_high);
	put_num(g, "medium", c.params.sev_medium);
	put_num(g, "low", c.params.sev_low);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_string(g, (const unsigned char *)"patterns", 8);
	yajl_gen_map_open(g);
	for (k = 0; k < PAT_COUNT; k++) {
		size_t i;
		yajl_gen_string(g, (const unsigned char *)pattern_keys[k], strlen(pattern_keys[k]));
		yajl_gen_array_open(g);
		for (i = 0; c.patterns[k] && i < c.patterns[k]->n; i++)
			yajl_gen_string(g, (const unsigned char *)c.patterns[k]->p[i].src,
					strlen(c.patterns[k]->p[i].src));
		yajl_gen_array_close(g);
	}
	yajl_gen_map_close(g);
	yajl_gen_string(g, (const unsigned char *)"suppress", 8);
	yajl_gen_array_open(g);
	yajl_gen_array_close(g);
	yajl_gen_string(g, (const unsigned char *)"gate", 4);
	yajl_gen_map_open(g);
	put_nums(g, gate_keys, sizeof(gate_keys) / sizeof(gate_keys[0]), &c.gate);
	yajl_gen_string(g, (const unsigned char *)"fail_on_new_high", 16);
	yajl_gen_bool(g, c.gate.fail_on_new_high);
	yajl_gen_string(g, (const unsigned char *)"fail_on_red_health", 18);
	yajl_gen_bool(g, c.gate.fail_on_red_health);
	yajl_gen_string(g, (const unsigned char *)"budgets", 7);
	yajl_gen_map_open(g);
	put_nums(g, budget_keys, sizeof(budget_keys) / sizeof(budget_keys[0]), &c.gate);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_map_close(g);
	yajl_gen_free(g);
	td_config_free(&c);
	td_buf_gen_cb(&b, "\n", 1);
	return b.s;
}
