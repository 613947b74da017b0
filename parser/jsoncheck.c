/* SPDX-License-Identifier: MIT */
#include "parser/jsoncheck.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include "common/alloc.h"
#include "common/utf8.h"

static void position(const char *s, size_t at, struct td_error *err)
{
	size_t i, line = 1, start = 0;

	for (i = 0; i < at; i++)
		if (s[i] == '\n') {
			line++;
			start = i + 1;
		}
	err->has_pos = 1;
	err->offset = at;
	err->line = (uint32_t)(line > UINT32_MAX ? UINT32_MAX : line);
	err->col = (uint32_t)(at - start + 1 > UINT32_MAX ? UINT32_MAX : at - start + 1);
}

int td_json_depth_check(const char *json, size_t n, unsigned max, const char *what,
			struct td_error *err)
{
	size_t i;
	unsigned depth = 0;
	int in_str = 0;

	for (i = 0; i < n; i++) {
		char c = json[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"') {
			in_str = 1;
		} else if (c == '[' || c == '{') {
			if (++depth > max) {
				int rc;
				position(json, i, err);
				rc = td_error_set(err, TD_EFORMAT, "the %s nests deeper than %u levels at line "
						  "%u, column %u (byte %llu)", what, max, err->line, err->col,
						  (unsigned long long)err->offset);
				err->has_pos = 1;
				return rc;
			}
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		}
	}
	return 0;
}

/* where yajl stops reading json, and its words for why (without its own context, which quotes
 * raw bytes from the wrong place) */
static int json_error(const char *json, size_t n, struct td_error *err, char *why, size_t cap)
{
	yajl_handle h = yajl_alloc(NULL, NULL, NULL);
	yajl_status st = yajl_parse(h, (const unsigned char *)json, n);
	size_t at = n;
	int bad = st != yajl_status_ok;

	if (bad)
		at = yajl_get_bytes_consumed(h);
	else if (yajl_complete_parse(h) != yajl_status_ok)
		bad = 1;
	if (bad) {
		unsigned char *m = yajl_get_error(h, 0, NULL, 0);
		const char *t = (const char *)m;
		/* as the trace reader points (parser/kineto.c): yajl counts the token that failed as
		 * consumed, but after a map's value, in a comment, a bad string or number it stops
		 * at the byte it cannot take - which is never whitespace */
		int at_byte = strstr(t, "after key and value") || strstr(t, "comment") ||
			      strstr(t, "invalid string in json") || strstr(t, "malformed number");
		if (st != yajl_status_ok && !at_byte && at > 0)
			at--;
		while (at_byte && at < n && (json[at] == ' ' || json[at] == '\t' || json[at] == '\n' ||
					     json[at] == '\r'))
			at++;
		if (why) {
			size_t k;
			snprintf(why, cap, "%s", t);
			for (k = strlen(why); k && (why[k - 1] == '\n' || why[k - 1] == ' ' ||
						   why[k - 1] == '.'); k--)
				why[k - 1] = '\0';
		}
		yajl_free_error(h, m);
	}
	yajl_free(h);
	if (bad)
		position(json, at, err);
	return bad;
}

int td_json_error_pos(const char *json, size_t n, struct td_error *err)
{
	return json_error(json, n, err, NULL, 0);
}

/* --- the tree ------------------------------------------------------------------------------ */

/* yajl_tree_parse()'s tree, built with arrays and objects that grow by doubling: yajl's own
 * grows them one element at a time, which a realloc that copies (AddressSanitizer's, or a
 * malloc without in-place growth) makes quadratic - 150 s for a config of 100k patterns. The
 * nodes are yajl's (yajl_tree_free() frees them); comments are allowed, as yajl's are. */
struct tframe {
	yajl_val v;
	size_t cap;     /* of its values (and keys) */
	char *key;      /* an object's key waiting for its value */
};
struct tctx {
	struct tframe *st;
	size_t n, cap;
	yajl_val root;
};

static yajl_val tnew(yajl_type t)
{
	yajl_val v = td_calloc(1, sizeof(*v));
	v->type = t;
	return v;
}

/* v into the container on top (or as the root); 0 when it cannot go there */
static int tput(struct tctx *c, yajl_val v)
{
	struct tframe *f;

	if (!c->n) {
		if (c->root) {
			yajl_tree_free(v);
			return 0;
		}
		c->root = v;
		return 1;
	}
	f = &c->st[c->n - 1];
	if (YAJL_IS_ARRAY(f->v)) {
		if (f->v->u.array.len == f->cap) {
			f->cap = f->cap ? f->cap * 2 : 8;
			f->v->u.array.values = td_realloc(f->v->u.array.values,
							  f->cap * sizeof(yajl_val));
		}
		f->v->u.array.values[f->v->u.array.len++] = v;
		return 1;
	}
	if (!f->key) { /* a value with no key: yajl does not let it happen */
		yajl_tree_free(v);
		return 0;
	}
	if (f->v->u.object.len == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 8;
		f->v->u.object.keys = td_realloc((void *)f->v->u.object.keys,
						 f->cap * sizeof(const char *));
		f->v->u.object.values = td_realloc(f->v->u.object.values,
						   f->cap * sizeof(yajl_val));
	}
	f->v->u.object.keys[f->v->u.object.len] = f->key;
	f->v->u.object.values[f->v->u.object.len++] = v;
	f->key = NULL;
	return 1;
}

static int tpush(struct tctx *c, yajl_type t)
{
	yajl_val v = tnew(t);

	if (!tput(c, v))
		return 0;
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 16;
		c->st = td_realloc(c->st, c->cap * sizeof(*c->st));
	}
	c->st[c->n++] = (struct tframe){v, 0, NULL};
	return 1;
}

static int t_null(void *ctx)
{
	return tput(ctx, tnew(yajl_t_null));
}

static int t_bool(void *ctx, int b)
{
	return tput(ctx, tnew(b ? yajl_t_true : yajl_t_false));
}

/* as yajl's: the text kept, an integer where it is one that fits, a double where strtod
 * takes it whole */
static int t_number(void *ctx, const char *s, size_t len)
{
	yajl_val v = tnew(yajl_t_number);
	char *end = NULL;

	v->u.number.r = td_strndup(s, len);
	errno = 0;
	v->u.number.i = strtoll(v->u.number.r, &end, 10);
	if (errno == 0 && end && *end == '\0' && end != v->u.number.r)
		v->u.number.flags |= YAJL_NUMBER_INT_VALID;
	errno = 0;
	end = NULL;
	v->u.number.d = strtod(v->u.number.r, &end);
	if (errno == 0 && end && *end == '\0')
		v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
	return tput(ctx, v);
}

static int t_string(void *ctx, const unsigned char *s, size_t len)
{
	yajl_val v = tnew(yajl_t_string);

	v->u.string = td_strndup((const char *)s, len);
	return tput(ctx, v);
}

static int t_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct tctx *c = ctx;
	struct tframe *f = &c->st[c->n - 1];

	free(f->key);
	f->key = td_strndup((const char *)s, len);
	return 1;
}

static int t_start_map(void *ctx)
{
	return tpush(ctx, yajl_t_object);
}

static int t_start_array(void *ctx)
{
	return tpush(ctx, yajl_t_array);
}

static int t_end(void *ctx)
{
	struct tctx *c = ctx;

	if (!c->n)
		return 0;
	free(c->st[--c->n].key);
	return 1;
}

static yajl_val tree_parse(const char *json, size_t n)
{
	static const yajl_callbacks cb = {
		t_null, t_bool, NULL, NULL, t_number, t_string, t_start_map, t_map_key, t_end,
		t_start_array, t_end,
	};
	struct tctx c = {0};
	yajl_handle h = yajl_alloc(&cb, NULL, &c);
	int ok;

	yajl_config(h, yajl_allow_comments, 1);
	ok = yajl_parse(h, (const unsigned char *)json, n) == yajl_status_ok &&
	     yajl_complete_parse(h) == yajl_status_ok && !c.n;
	yajl_free(h);
	while (c.n) /* a document cut short: what was open */
		free(c.st[--c.n].key);
	free(c.st);
	if (!ok) {
		yajl_tree_free(c.root);
		return NULL;
	}
	return c.root;
}

yajl_val td_json_tree(const char *json, const char *what, const char *lead, int code,
		      struct td_error *err)
{
	char why[256], before[128], after[128];
	struct td_error pos;
	size_t n = strlen(json), b, e;
	yajl_val root;

	if (td_json_depth_check(json, n, TD_DOC_DEPTH_MAX, what, err) != 0) {
		err->code = code;
		return NULL;
	}
	if ((root = tree_parse(json, n)) != NULL)
		return root;
	memset(&pos, 0, sizeof(pos));
	snprintf(why, sizeof(why), "%s", "not valid");
	json_error(json, n, &pos, why, sizeof(why));
	/* the bytes around the error, escaped: nothing in the file reaches the terminal raw */
	b = pos.offset < 24 ? (size_t)pos.offset : 24;
	e = n - (size_t)pos.offset < 24 ? n - (size_t)pos.offset : 24;
	td_quote_bytes(before, sizeof(before), json + pos.offset - b, b);
	td_quote_bytes(after, sizeof(after), json + pos.offset, e);
	td_error_set(err, code, "%snot valid JSON at line %u, column %u (byte %llu): %s: near "
		     "\"%s >>> %s\"", lead, pos.line, pos.col, (unsigned long long)pos.offset, why,
		     before, after);
	err->has_pos = pos.has_pos;
	err->line = pos.line;
	err->col = pos.col;
	err->offset = pos.offset;
	return NULL;
}
