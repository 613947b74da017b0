/* SPDX-License-Identifier: MIT */
/* What the rules' suites (test_rules.c, test_rules_cases.c) share: a trace read, analysed and
 * diagnosed, the look-ups of its findings, and the invariants every diagnosis keeps. */
#ifndef TD_TESTS_RULES_RUN_H
#define TD_TESTS_RULES_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "parser/trace.h"
#include "rules/rule.h"

struct run {
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
};

/* path read, analysed with the defaults and diagnosed into x (fails the test if unreadable) */
void diagnose_path(const char *path, struct run *x);
void done(struct run *x);
/* s as the user reads it: without the name marks (kept for the next few calls) */
const char *plain(const char *s);
/* the first finding of rule whose title holds in_title (NULL: any), or NULL */
const struct td_finding *finding(const struct run *x, const char *rule, const char *in_title);
/* the report's i-th finding, or NULL */
const struct td_finding *nth(const struct run *x, size_t i);
/* 1 when one of f's where lines holds s */
int where_has(const struct td_finding *f, const char *s);
/* the analysis's label s, or 0 */
uint32_t label(const struct run *x, const char *s);
/* the idle of cause c on the first device */
int64_t idle_of(const struct run *x, enum td_cause c);
/* Causes sum exactly to the idle total, busy + idle is the window, findings are ordered. */
void check_invariants(const struct run *x, const char *what);
/* the shared trace `name` diagnosed into x, its invariants checked; 1 */
int real(const char *name, struct run *x);

#endif
