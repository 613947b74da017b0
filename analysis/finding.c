/* SPDX-License-Identifier: MIT */
/* Findings (analysis/finding.h): construction, claims, grading, ordering. */
#include "analysis/finding.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "replay/replay.h"

const char *td_severity_name(enum td_severity s)
{
	static const char *const n[] = {"info", "low", "medium", "high"};
	return n[s];
}

static char *vfmt(const char *fmt, va_list ap) TD_PRINTF(1, 0);
static char *vfmt(const char *fmt, va_list ap)
{
	va_list ap2;
	int n;
	char *s;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	s = td_malloc((size_t)(n < 0 ? 0 : n) + 1);
	vsnprintf(s, (size_t)(n < 0 ? 0 : n) + 1, fmt, ap);
	return s;
}

struct td_finding *td_report_add(struct td_report *r, const char *rule, int32_t device)
{
	struct td_finding *f = td_vec_push(&r->findings);

	f->rule = rule;
	f->serial = r->next_serial++;
	f->device = device;
	td_vec_init(&f->where, sizeof(char *));
	td_vec_init(&f->evidence, sizeof(struct td_evidence));
	td_vec_init(&f->values, sizeof(struct td_value));
	td_vec_init(&f->ranks, sizeof(int64_t));
	td_vec_init(&f->alts, sizeof(struct td_alt));
	td_vec_init(&f->edits, sizeof(struct td_rp_edit));
	td_vec_init(&f->bound, sizeof(struct td_rp_edit));
	return f;
}

void td_finding_edit(struct td_finding *f, const struct td_rp_edit *e)
{
	*(struct td_rp_edit *)td_vec_push(&f->edits) = *e;
}

void td_finding_bound_edit(struct td_finding *f, const struct td_rp_edit *e)
{
	*(struct td_rp_edit *)td_vec_push(&f->bound) = *e;
}

void td_finding_value(struct td_finding *f, const char *key, int64_t v)
{
	struct td_value *x = td_vec_push(&f->values);
	x->key = key;
	x->v = v;
}

void td_finding_alt(struct td_finding *f, const char *name, int64_t saving_ns)
{
	struct td_alt *x = td_vec_push(&f->alts);
	x->name = name;
	x->saving_ns = saving_ns;
}

int64_t td_finding_get(const struct td_finding *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->values.len; i++)
		if (!strcmp(TD_VEC_AT(&f->values, struct td_value, i).key, key))
			return TD_VEC_AT(&f->values, struct td_value, i).v;
	return 0;
}

int64_t td_finding_claim_cause(struct td_analysis *a, struct td_finding *f, size_t d,
			       enum td_cause cause)
{
	int64_t got = td_claim_cause(a, d, cause, f->serial);
	f->idle_ns += got;
	return got;
}

int64_t td_finding_claim(struct td_analysis *a, struct td_finding *f, size_t d,
			 struct td_claims *c, int64_t *per_tag, size_t ntags)
{
	int64_t got = td_claims_commit(a, d, c, f->serial, per_tag, ntags);
	f->idle_ns += got;
	return got;
}

/* *text replaced by the formatted string */
static void set_text(char **text, const char *fmt, va_list ap) TD_PRINTF(2, 0);
static void set_text(char **text, const char *fmt, va_list ap)
{
	free(*text);
	*text = vfmt(fmt, ap);
}

void td_finding_title(struct td_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_text(&f->title, fmt, ap);
	va_end(ap);
}

void td_finding_where(struct td_finding *f, const char *fmt, ...)
{
	va_list ap;
	char **w = td_vec_push(&f->where);
	va_start(ap, fmt);
	*w = vfmt(fmt, ap);
	va_end(ap);
}

void td_finding_evidence(struct td_finding *f, int64_t ts, int64_t dur, const char *fmt, ...)
{
	va_list ap;
	struct td_evidence *e = td_vec_push(&f->evidence);
	e->ts = ts;
	e->dur = dur;
	va_start(ap, fmt);
	e->text = vfmt(fmt, ap);
	va_end(ap);
}

void td_finding_fix(struct td_finding *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_text(&f->fix, fmt, ap);
	va_end(ap);
}

int td_finding_rank(const struct td_finding *f)
{
	if (f->risk == 3 && f->severity == SEV_HIGH)
		return 0; /* most of the trace is start-up or a wait on work before it: that first */
	if (!f->risk && f->severity != SEV_INFO)
		return 1; /* time, 1% of the window or more */
	return f->risk ? 2 : 3; /* risks and advice, then time below 1% of the window */
}

static int finding_less(const struct td_finding *x, const struct td_finding *y)
{
	int c, rx = td_finding_rank(x), ry = td_finding_rank(y);

	if (rx != ry)
		return rx < ry;
	if (x->savings_ns != y->savings_ns)
		return x->savings_ns > y->savings_ns;
	if (x->risk != y->risk) /* time first, then risks, the most severe first */
		return !x->risk;
	if (x->severity != y->severity)
		return x->severity > y->severity;
	if ((c = strcmp(x->rule, y->rule)) != 0)
		return c < 0;
	if (x->device != y->device)
		return x->device < y->device;
	return strcmp(x->title ? x->title : "", y->title ? y->title : "") < 0;
}
#define FINDING_LESS(x, y) finding_less((x), (y))
TD_DEFINE_SORT(sort_findings, struct td_finding, FINDING_LESS)

void td_finding_free(struct td_finding *f)
{
	size_t j;

	for (j = 0; j < f->where.len; j++)
		free(TD_VEC_AT(&f->where, char *, j));
	for (j = 0; j < f->evidence.len; j++)
		free(TD_VEC_AT(&f->evidence, struct td_evidence, j).text);
	td_vec_free(&f->where);
	td_vec_free(&f->evidence);
	td_vec_free(&f->values);
	td_vec_free(&f->ranks);
	td_vec_free(&f->alts);
	td_vec_free(&f->edits);
	td_vec_free(&f->bound);
	free(f->title);
	free(f->fix);
}

enum td_severity td_grade(const struct td_params *p, double fraction)
{
	return fraction >= p->sev_high ? SEV_HIGH : fraction >= p->sev_medium ? SEV_MEDIUM
		: fraction >= p->sev_low ? SEV_LOW : SEV_INFO;
}

const struct td_finding *td_report_owner(const struct td_analysis *a, const struct td_report *r,
					 size_t d, int64_t t)
{
	const struct td_claim *c = td_an_claim_at(a, d, t);
	size_t i;

	for (i = 0; c && i < r->findings.len; i++)
		if (TD_VEC_AT(&r->findings, struct td_finding, i).serial == c->owner)
			return &TD_VEC_AT(&r->findings, struct td_finding, i);
	return NULL;
}

/* How a bound was replayed: "with it removed", or its rule's words. */
static const char *bound_what(const struct td_finding *f)
{
	return f->bound_what ? f->bound_what : "with it removed";
}

const char *td_finding_sizing(const struct td_finding *f, char *buf, size_t cap)
{
	if (f->estimated && !f->replayed && !f->bounded)
		return " (estimated from its mechanism, not replayed)";
	if (f->upper && !f->replayed && !f->bounded)
		return " (at most: the idle it holds; what that idle waited for is not in the trace)";
	if (!f->replayed && !f->bounded)
		return "";
	if (!f->replayed)
		snprintf(buf, cap, " (at most: replayed %s%s%s%s)", bound_what(f),
			 f->after ? ", after the " : "", f->after ? f->after : "",
			 f->after ? " fix" : "");
	else if (!f->after)
		return " (replayed)";
	else
		snprintf(buf, cap, " (replayed, after the %s fix)", f->after);
	return buf;
}

void td_report_sort(struct td_report *r)
{
	sort_findings(r->findings.data, r->findings.len);
	sort_findings(r->suppressed.data, r->suppressed.len);
}

void td_report_init(struct td_report *r)
{
	td_vec_init(&r->findings, sizeof(struct td_finding));
	td_vec_init(&r->suppressed, sizeof(struct td_finding));
	r->next_serial = 0;
}

void td_report_free(struct td_report *r)
{
	size_t i;

	for (i = 0; i < r->findings.len; i++)
		td_finding_free(&TD_VEC_AT(&r->findings, struct td_finding, i));
	for (i = 0; i < r->suppressed.len; i++)
		td_finding_free(&TD_VEC_AT(&r->suppressed, struct td_finding, i));
	td_vec_free(&r->findings);
	td_vec_free(&r->suppressed);
}
