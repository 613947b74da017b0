/* SPDX-License-Identifier: MIT */
/* A rank's summary as JSON (tracedoc.summary/1, job/summary.h): written (td_summary_json) and
 * read back (td_summary_parse), every wrong key named with what was expected and what is
 * there. */
#include "job/summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

#include "common/alloc.h"
#include "common/buf.h"
#include "parser/jsoncheck.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

/* --- writing ----------------------------------------------------------------------------- */

static void key(yajl_gen g, const char *k)
{
	yajl_gen_string(g, (const unsigned char *)k, strlen(k));
}

static void str(yajl_gen g, const char *s)
{
	yajl_gen_string(g, (const unsigned char *)(s ? s : ""), s ? strlen(s) : 0);
}

/* a number, or null where it is not finite (JSON has no inf) */
static void gen_num(yajl_gen g, double v)
{
	if (isfinite(v))
		yajl_gen_double(g, v);
	else
		yajl_gen_null(g);
}

static const char *const sizing_names[] = {"idle", "replay", "bound"};

static void kint(yajl_gen g, const char *k, int64_t v)
{
	key(g, k);
	yajl_gen_integer(g, (long long)v);
}

char *td_summary_json(const struct td_summary *s, size_t *len)
{
	struct td_buf b = {NULL, 0, 0};
	yajl_gen g = yajl_gen_alloc(NULL);
	size_t i;
	int c;

	yajl_gen_config(g, yajl_gen_print_callback, td_buf_gen_cb, &b);
	yajl_gen_map_open(g);
	key(g, "schema");
	str(g, TD_SUMMARY_SCHEMA);
	key(g, "trace");
	yajl_gen_map_open(g);
	key(g, "path");
	str(g, s->path);
	kint(g, "rank", s->rank);
	kint(g, "world_size", s->world_size);
	key(g, "partial");
	yajl_gen_bool(g, s->partial);
	yajl_gen_map_close(g);
	key(g, "device");
	yajl_gen_map_open(g);
	kint(g, "id", s->device);
	key(g, "name");
	str(g, s->device_name);
	yajl_gen_map_close(g);
	key(g, "context");
	yajl_gen_map_open(g);
	key(g, "vendor");
	str(g, td_vendor_name((enum td_vendor)s->vendor));
	key(g, "run");
	str(g, td_run_name((enum td_run)s->run));
	yajl_gen_map_close(g);
	kint(g, "steps", (int64_t)s->steps);
	kint(g, "step_median_ns", s->step_median_ns);
	kint(g, "window_ns", s->window_ns);
	kint(g, "busy_ns", s->busy_ns);
	kint(g, "idle_ns", s->idle_ns);
	kint(g, "compute_ns", s->compute_ns);
	kint(g, "comm_ns", s->comm_ns);
	kint(g, "exposed_comm_ns", s->exposed_ns);
	kint(g, "dataloader_ns", s->dataloader_ns);
	key(g, "syncs_per_step");
	gen_num(g, s->syncs_per_step);
	key(g, "idle_by_cause");
	yajl_gen_map_open(g);
	for (c = 0; c < CAUSE_COUNT; c++)
		kint(g, td_cause_id((enum td_cause)c), s->idle_by_cause[c]);
	yajl_gen_map_close(g);
	key(g, "top_cause");
	if (s->top_cause >= 0)
		str(g, td_cause_id((enum td_cause)s->top_cause));
	else
		yajl_gen_null(g);
	key(g, "top_what");
	str(g, s->top_what);
	key(g, "step_compute_ns");
	yajl_gen_array_open(g);
	for (i = 0; i < s->step_compute.len; i++)
		yajl_gen_integer(g, (long long)TD_VEC_AT(&s->step_compute, int64_t, i));
	yajl_gen_array_close(g);
	key(g, "kernels");
	yajl_gen_array_open(g);
	for (i = 0; i < s->kernels.len; i++) {
		const struct td_sum_kernel *k = &TD_VEC_AT(&s->kernels, struct td_sum_kernel, i);
		yajl_gen_array_open(g);
		str(g, k->name);
		yajl_gen_integer(g, (long long)k->ns);
		yajl_gen_integer(g, (long long)k->calls);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "collective_keys");
	yajl_gen_array_open(g);
	for (i = 1; i <= s->keys.count; i++)
		str(g, td_strtab_str(&s->keys, (uint32_t)i));
	yajl_gen_array_close(g);
	/* [key (1-based into collective_keys), seq, start_ns, dur_ns, launch_in_step_ns,
	 *  start_in_step_ns] (the last two -1 when unknown) */
	key(g, "collectives");
	yajl_gen_array_open(g);
	for (i = 0; i < s->colls.len; i++) {
		const struct td_sum_coll *x = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
		yajl_gen_array_open(g);
		yajl_gen_integer(g, x->key);
		yajl_gen_integer(g, x->seq);
		yajl_gen_integer(g, (long long)x->start);
		yajl_gen_integer(g, (long long)x->dur);
		yajl_gen_integer(g, (long long)x->in_step);
		yajl_gen_integer(g, (long long)x->gpu_in_step);
		yajl_gen_array_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "findings");
	yajl_gen_array_open(g);
	for (i = 0; i < s->findings.len; i++) {
		const struct td_sum_finding *f = &TD_VEC_AT(&s->findings, struct td_sum_finding, i);
		yajl_gen_map_open(g);
		key(g, "rule");
		str(g, f->rule);
		key(g, "severity");
		str(g, td_severity_name((enum td_severity)f->severity));
		key(g, "title");
		str(g, f->title);
		key(g, "fix");
		str(g, f->fix);
		kint(g, "est_savings_ns", f->savings_ns);
		kint(g, "est_savings_per_step_ns", f->per_step_ns);
		kint(g, "gpu_idle_ns", f->idle_ns);
		kint(g, "gpu_busy_ns", f->busy_ns);
		kint(g, "host_freed_ns", f->host_ns);
		key(g, "est_savings_fraction");
		gen_num(g, f->fraction);
		kint(g, "count", (int64_t)f->count);
		kint(g, "risk", f->risk);
		if (f->offpath)
			kint(g, "off_critical_path", 1);
		kint(g, "max_severity", f->max_severity);
		key(g, "sizing");
		str(g, sizing_names[f->sizing]);
		if (f->shifts) { /* per collective, null: not known */
			size_t k;
			key(g, "collective_shifts_ns");
			yajl_gen_array_open(g);
			for (k = 0; k < s->colls.len; k++)
				if (f->shifts[k] == TD_SHIFT_NONE)
					yajl_gen_null(g);
				else
					yajl_gen_integer(g, (long long)f->shifts[k]);
			yajl_gen_array_close(g);
		}
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	key(g, "metrics");
	yajl_gen_map_open(g);
	for (i = 0; i < s->metrics.n; i++) {
		if (!s->metrics.m[i].present)
			continue;
		key(g, s->metrics.m[i].id);
		gen_num(g, s->metrics.m[i].value);
	}
	yajl_gen_map_close(g);
	key(g, "high");
	yajl_gen_array_open(g);
	for (i = 0; i < s->metrics.nhigh; i++)
		str(g, s->metrics.high[i]);
	yajl_gen_array_close(g);
	key(g, "suppressed");
	yajl_gen_array_open(g);
	for (i = 0; i < s->metrics.nsuppressed; i++) {
		yajl_gen_map_open(g);
		key(g, "rule");
		str(g, s->metrics.suppressed[i]);
		key(g, "reason");
		str(g, s->metrics.why[i]);
		yajl_gen_map_close(g);
	}
	yajl_gen_array_close(g);
	yajl_gen_map_close(g);
	yajl_gen_free(g);
	td_buf_add(&b, "\n", 1);
	*len = b.n;
	return b.s;
}

/* --- reading: every wrong key named, with what was expected and what is there ------------- */

struct srd {
	int bad;
	char why[256];
};

static const char *type_name(yajl_val v)
{
	if (!v)
		return "no such key";
	if (YAJL_IS_STRING(v))
		return "a string";
	if (YAJL_IS_INTEGER(v))
		return "an integer";
	if (YAJL_IS_NUMBER(v))
		return isfinite(YAJL_GET_DOUBLE(v)) ? "a fraction" : "a number beyond a double";
	if (YAJL_IS_OBJECT(v))
		return "an object";
	if (YAJL_IS_ARRAY(v))
		return "an array";
	if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v))
		return "a boolean";
	return "null";
}

/* the first wrong key, kept: "kernels[3][1]: expected an integer >= 0, found a string" */
static void wrong(struct srd *r, const char *key, const char *want, yajl_val got)
{
	if (r->bad)
		return;
	r->bad = 1;
	snprintf(r->why, sizeof(r->why), "%s: expected %s, found %s", key, want, type_name(got));
}

static yajl_val get(yajl_val v, const char *k, yajl_type type)
{
	const char *path[] = {k, NULL};
	return yajl_tree_get(v, path, type);
}

/* an integer >= min at v[k]; path names it in messages */
static int64_t need_int(yajl_val v, const char *path, const char *k, int64_t min, struct srd *r)
{
	yajl_val x = get(v, k, yajl_t_any);
	char key[96];

	if (x && YAJL_IS_INTEGER(x) && YAJL_GET_INTEGER(x) >= min)
		return YAJL_GET_INTEGER(x);
	snprintf(key, sizeof(key), "%s%s%s", path, *path ? "." : "", k);
	wrong(r, key, min == 0 ? "an integer >= 0" : min == -1 ? "an integer >= -1" : "an integer",
	      x);
	return 0;
}

static char *need_str(yajl_val v, const char *path, const char *k, struct srd *r)
{
	yajl_val x = get(v, k, yajl_t_any);
	char key[96];

	if (x && YAJL_IS_STRING(x))
		return td_strndup(x->u.string, strlen(x->u.string));
	snprintf(key, sizeof(key), "%s%s%s", path, *path ? "." : "", k);
	wrong(r, key, "a string", x);
	return td_strndup("", 0);
}

/* a finite number in [lo, hi] at v[k], or dflt when the key is absent */
static double opt_num(yajl_val v, const char *k, double lo, double hi, double dflt, struct srd *r)
{
	yajl_val x = get(v, k, yajl_t_any);
	double d;

	if (!x)
		return dflt;
	d = YAJL_IS_NUMBER(x) ? YAJL_GET_DOUBLE(x) : NAN;
	if (isfinite(d) && d >= lo && d <= hi)
		return d;
	{
		char want[64];
		snprintf(want, sizeof(want), "a finite number from %g to %g", lo, hi);
		wrong(r, k, want, x);
	}
	return dflt;
}

/* v[k] when it is of type t (or absent: NULL); another type is wrong */
static yajl_val opt(yajl_val v, const char *k, yajl_type t, const char *path, struct srd *r)
{
	yajl_val x = get(v, k, yajl_t_any);
	char key[96];

	if (!x || (t == yajl_t_array ? YAJL_IS_ARRAY(x) : t == yajl_t_object ? YAJL_IS_OBJECT(x)
		   : YAJL_IS_STRING(x)))
		return x;
	snprintf(key, sizeof(key), "%s%s%s", path, *path ? "." : "", k);
	wrong(r, key, t == yajl_t_array ? "an array" : t == yajl_t_object ? "an object" : "a string",
	      x);
	return NULL;
}

static int severity_of(const char *s)
{
	int i;
	for (i = SEV_INFO; i <= SEV_HIGH; i++)
		if (!strcmp(td_severity_name((enum td_severity)i), s))
			return i;
	return -1;
}

int td_summary_parse(const char *json, struct td_summary *s, struct td_error *err)
{
	yajl_val root, v, arr;
	struct srd r = {0, ""};
	int c;
	size_t i;
	char key[96];

	td_summary_init(s);
	/* a summary nests < 10 levels: a deep one is refused before the recursive tree parse */
	root = td_json_tree(json, "summary", "not a tracedoc summary: ", TD_EFORMAT, err);
	if (!root) {
		td_summary_free(s);
		return TD_EFORMAT;
	}
	if (!YAJL_IS_OBJECT(root)) {
		wrong(&r, "the document", "an object", root);
		goto out;
	}
	v = get(root, "schema", yajl_t_any);
	if (!v || !YAJL_IS_STRING(v) || strcmp(v->u.string, TD_SUMMARY_SCHEMA)) {
		wrong(&r, "schema", "\"" TD_SUMMARY_SCHEMA "\"", v);
		goto out;
	}
	if ((v = opt(root, "trace", yajl_t_object, "", &r)) != NULL) {
		yajl_val p = get(v, "partial", yajl_t_any);
		s->path = need_str(v, "trace", "path", &r);
		s->rank = need_int(v, "trace", "rank", -1, &r);
		s->world_size = need_int(v, "trace", "world_size", -1, &r);
		s->partial = p && YAJL_IS_TRUE(p);
	} else {
		wrong(&r, "trace", "an object", NULL);
	}
	if ((v = opt(root, "device", yajl_t_object, "", &r)) != NULL) {
		s->device = (int32_t)need_int(v, "device", "id", INT32_MIN, &r);
		s->device_name = need_str(v, "device", "name", &r);
	}
	if ((v = opt(root, "context", yajl_t_object, "", &r)) != NULL) { /* absent before: unknown */
		yajl_val x = get(v, "vendor", yajl_t_string);
		const char *str_v = x ? YAJL_GET_STRING(x) : NULL;
		int k;
		for (k = TD_VENDOR_UNKNOWN; str_v && k <= TD_VENDOR_AMD; k++)
			if (!strcmp(str_v, td_vendor_name((enum td_vendor)k)))
				s->vendor = k;
		x = get(v, "run", yajl_t_string);
		str_v = x ? YAJL_GET_STRING(x) : NULL;
		for (k = TD_RUN_UNKNOWN; str_v && k <= TD_RUN_INFERENCE; k++)
			if (!strcmp(str_v, td_run_name((enum td_run)k)))
				s->run = k;
	}
	s->steps = (uint64_t)need_int(root, "", "steps", 0, &r);
	s->step_median_ns = need_int(root, "", "step_median_ns", 0, &r);
	s->window_ns = need_int(root, "", "window_ns", 0, &r);
	s->busy_ns = need_int(root, "", "busy_ns", 0, &r);
	s->idle_ns = need_int(root, "", "idle_ns", 0, &r);
	s->compute_ns = need_int(root, "", "compute_ns", 0, &r);
	s->comm_ns = need_int(root, "", "comm_ns", 0, &r);
	s->exposed_ns = need_int(root, "", "exposed_comm_ns", 0, &r);
	s->dataloader_ns = need_int(root, "", "dataloader_ns", 0, &r);
	s->syncs_per_step = opt_num(root, "syncs_per_step", 0, 1e18, 0, &r);
	if ((v = opt(root, "idle_by_cause", yajl_t_object, "", &r)) != NULL)
		for (c = 0; c < CAUSE_COUNT; c++)
			s->idle_by_cause[c] = need_int(v, "idle_by_cause",
						       td_cause_id((enum td_cause)c), 0, &r);
	if ((v = opt(root, "top_cause", yajl_t_string, "", &r)) != NULL)
		for (c = 0; c < CAUSE_COUNT; c++)
			if (!strcmp(v->u.string, td_cause_id((enum td_cause)c)))
				s->top_cause = c;
	s->top_what = need_str(root, "", "top_what", &r);
	if ((arr = opt(root, "step_compute_ns", yajl_t_array, "", &r)) != NULL)
		for (i = 0; i < arr->u.array.len; i++) {
			yajl_val x = arr->u.array.values[i];
			if (!YAJL_IS_INTEGER(x)) {
				snprintf(key, sizeof(key), "step_compute_ns[%zu]", i);
				wrong(&r, key, "an integer", x);
				continue;
			}
			*(int64_t *)td_vec_push(&s->step_compute) = YAJL_GET_INTEGER(x);
		}
	if ((arr = opt(root, "kernels", yajl_t_array, "", &r)) != NULL)
		for (i = 0; i < arr->u.array.len; i++) {
			yajl_val k = arr->u.array.values[i];
			struct td_sum_kernel *sk;
			if (!YAJL_IS_ARRAY(k) || k->u.array.len != 3 || !YAJL_IS_STRING(k->u.array.values[0]) ||
			    !YAJL_IS_INTEGER(k->u.array.values[1]) || !YAJL_IS_INTEGER(k->u.array.values[2]) ||
			    YAJL_GET_INTEGER(k->u.array.values[1]) < 0 ||
			    YAJL_GET_INTEGER(k->u.array.values[2]) < 0) {
				snprintf(key, sizeof(key), "kernels[%zu]", i);
				wrong(&r, key, "[name, ns >= 0, calls >= 0]", k);
				continue;
			}
			sk = td_vec_push(&s->kernels);
			sk->name = td_strndup(k->u.array.values[0]->u.string,
					      strlen(k->u.array.values[0]->u.string));
			sk->ns = YAJL_GET_INTEGER(k->u.array.values[1]);
			sk->calls = (uint64_t)YAJL_GET_INTEGER(k->u.array.values[2]);
		}
	if ((arr = opt(root, "collective_keys", yajl_t_array, "", &r)) != NULL)
		for (i = 0; i < arr->u.array.len; i++) {
			yajl_val x = arr->u.array.values[i];
			const char *ks = YAJL_IS_STRING(x) ? x->u.string : "";
			/* keys are unique as written: the ids come back in order */
			if (!YAJL_IS_STRING(x) || td_strtab_intern(&s->keys, ks, strlen(ks)) != i + 1) {
				snprintf(key, sizeof(key), "collective_keys[%zu]", i);
				wrong(&r, key, "a string unlike the keys before it", x);
			}
		}
	if ((arr = opt(root, "collectives", yajl_t_array, "", &r)) != NULL)
		for (i = 0; i < arr->u.array.len; i++) {
			yajl_val x = arr->u.array.values[i];
			struct td_sum_coll *sc;
			size_t k;
			int ok = YAJL_IS_ARRAY(x) && x->u.array.len == 6;
			for (k = 0; ok && k < 6; k++)
				ok = YAJL_IS_INTEGER(x->u.array.values[k]);
			if (!ok || YAJL_GET_INTEGER(x->u.array.values[0]) < 1 ||
			    YAJL_GET_INTEGER(x->u.array.values[0]) > (long long)s->keys.count ||
			    YAJL_GET_INTEGER(x->u.array.values[1]) < 0 ||
			    YAJL_GET_INTEGER(x->u.array.values[1]) > UINT32_MAX ||
			    YAJL_GET_INTEGER(x->u.array.values[3]) < 0 ||
			    YAJL_GET_INTEGER(x->u.array.values[4]) < -1 ||
			    YAJL_GET_INTEGER(x->u.array.values[5]) < -1) {
				snprintf(key, sizeof(key), "collectives[%zu]", i);
				wrong(&r, key, "[key 1..collective_keys, seq >= 0, start, dur >= 0, step "
				      ">= -1, gpu step >= -1]", x);
				continue;
			}
			sc = td_vec_push(&s->colls);
			sc->key = (uint32_t)YAJL_GET_INTEGER(x->u.array.values[0]);
			sc->seq = (uint32_t)YAJL_GET_INTEGER(x->u.array.values[1]);
			sc->start = YAJL_GET_INTEGER(x->u.array.values[2]);
			sc->dur = YAJL_GET_INTEGER(x->u.array.values[3]);
			sc->in_step = YAJL_GET_INTEGER(x->u.array.values[4]);
			sc->gpu_in_step = YAJL_GET_INTEGER(x->u.array.values[5]);
		}
	if ((arr = opt(root, "findings", yajl_t_array, "", &r)) != NULL)
		for (i = 0; i < arr->u.array.len; i++) {
			yajl_val x = arr->u.array.values[i], sz;
			struct td_sum_finding *f;
			char *rule, *sev;
			snprintf(key, sizeof(key), "findings[%zu]", i);
			if (!YAJL_IS_OBJECT(x)) {
				wrong(&r, key, "an object", x);
				continue;
			}
			f = td_vec_push(&s->findings);
			rule = need_str(x, key, "rule", &r);
			sev = need_str(x, key, "severity", &r);
			snprintf(f->rule, sizeof(f->rule), "%s", rule);
			f->severity = severity_of(sev);
			if (!td_rule_known(rule))
				wrong(&r, key, "a rule tracedoc has in \"rule\"", get(x, "rule",
											 yajl_t_any));
			if (f->severity < 0)
				wrong(&r, key, "a severity (info, low, medium, high) in \"severity\"",
				      get(x, "severity", yajl_t_any));
			free(rule);
			free(sev);
			f->title = need_str(x, key, "title", &r);
			f->fix = need_str(x, key, "fix", &r);
			f->savings_ns = need_int(x, key, "est_savings_ns", 0, &r);
			f->per_step_ns = need_int(x, key, "est_savings_per_step_ns", 0, &r);
			f->idle_ns = need_int(x, key, "gpu_idle_ns", 0, &r);
			f->busy_ns = need_int(x, key, "gpu_busy_ns", 0, &r);
			f->host_ns = need_int(x, key, "host_freed_ns", 0, &r);
			f->count = (uint64_t)need_int(x, key, "count", 0, &r);
			f->risk = (int)need_int(x, key, "risk", 0, &r);
			f->max_severity = (int)need_int(x, key, "max_severity", 0, &r);
			if (f->risk > 3 || f->max_severity > SEV_HIGH)
				wrong(&r, key, "risk 0..2 and max_severity 0..3", x);
			f->fraction = opt_num(x, "est_savings_fraction", 0, 1e6, 0, &r);
			f->offpath = (int)opt_num(x, "off_critical_path", 0, 1, 0, &r);
			if ((sz = opt(x, "sizing", yajl_t_string, key, &r)) != NULL) {
				int k;
				for (k = 0; k <= TD_SIZING_BOUND && strcmp(sz->u.string, sizing_names[k]);
				     k++)
					;
				if (k > TD_SIZING_BOUND) {
					wrong(&r, key, "\"idle\", \"replay\" or \"bound\" in \"sizing\"", sz);
					k = TD_SIZING_IDLE;
				}
				f->sizing = k;
			}
			if ((sz = opt(x, "collective_shifts_ns", yajl_t_array, key, &r)) != NULL) {
				size_t k;
				int ok = sz->u.array.len == s->colls.len;
				for (k = 0; ok && k < sz->u.array.len; k++)
					ok = YAJL_IS_NULL(sz->u.array.values[k]) ||
					     (YAJL_IS_INTEGER(sz->u.array.values[k]) &&
					      YAJL_GET_INTEGER(sz->u.array.values[k]) != TD_SHIFT_NONE);
				if (!ok) {
					snprintf(key + strlen(key), sizeof(key) - strlen(key),
						 ".collective_shifts_ns");
					wrong(&r, key, "an integer or null per collective", sz);
					continue;
				}
				f->shifts = td_malloc((s->colls.len ? s->colls.len : 1) *
						      sizeof(*f->shifts));
				for (k = 0; k < s->colls.len; k++)
					f->shifts[k] = YAJL_IS_NULL(sz->u.array.values[k])
						? TD_SHIFT_NONE : YAJL_GET_INTEGER(sz->u.array.values[k]);
			}
		}
	if (!r.bad && td_metrics_read(root, &s->metrics, s->steps, err) != 0) {
		yajl_tree_free(root);
		td_summary_free(s);
		return TD_EFORMAT;
	}
out:
	yajl_tree_free(root);
	if (r.bad) {
		td_summary_free(s);
		return td_error_set(err, TD_EFORMAT, "not a %s summary: %s", TD_SUMMARY_SCHEMA,
				    r.why);
	}
	return 0;
}
