/* SPDX-License-Identifier: MIT */
/* The config reader (errors name the key path; patterns report PCRE2's message and offset;
 * the printed defaults read back) and each kind of gate verdict on hand-made metrics. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <stdio.h>

#include "common/buf.h"

#include "config/config.h"
#include "analysis/metrics.h"

static void expect_error(const char *json, const char *msg)
{
	struct td_config c;
	struct td_error err;

	td_config_default(&c);
	memset(&err, 0, sizeof(err));
	if (td_config_parse(&c, json, &err) != TD_EINVAL)
		fail_msg("accepted: %s", json);
	if (!strstr(err.msg, msg))
		fail_msg("'%s' lacks '%s'", err.msg, msg);
	td_config_free(&c);
}

static void test_config_errors(void **state)
{
	(void)state;
	expect_error("{\"rulez\": {}}", "rulez: unknown key");
	expect_error("{\"rules\": {\"small_kernel_us\": \"ten\"}}", "rules.small_kernel_us: expected a number");
	expect_error("{\"rules\": {\"small_kernel_uss\": 10}}", "rules.small_kernel_uss: unknown key");
	expect_error("{\"rules\": {\"severity\": {\"high\": 0.01, \"low\": 0.5}}}", "high >= medium >= low");
	expect_error("{\"rules\": {\"util_chunks\": 2.5}}", "rules.util_chunks: expected a whole number");
	expect_error("{\"rules\": {\"dataloader_share\": 2}}", "out of range");
	expect_error("{\"patterns\": {\"ignore\": [\"ok\", \"a(b\"]}}",
		     "patterns.ignore[1]: bad pattern \"a(b\": missing closing parenthesis at offset 3");
	expect_error("{\"patterns\": {\"ignore\": \"x\"}}", "patterns.ignore: expected an array");
	expect_error("{\"gate\": {\"budgets\": {\"min_gpu_busy\": \"high\"}}}",
		     "gate.budgets.min_gpu_busy: expected a number");
	expect_error("{\"gate\": {\"fail_on_new_high\": 1}}", "gate.fail_on_new_high: expected true or false");
	expect_error("{\"suppress\": [{\"rule\": \"transfer\"}]}", "needs \"rule\" and \"reason\"");
	expect_error("{\"suppress\": [{\"rule\": \"sync_stall\", \"reason\": \"y\"}]}",
		     "suppress[0].rule: sync_stall: no such rule; did you mean sync-stall?");
	expect_error("{\"suppress\": [{\"rule\": \"zzzzzzzzzz\", \"reason\": \"y\"}]}",
		     "suppress[0].rule: zzzzzzzzzz: no such rule");
	expect_error("{\"suppress\": [{\"rule\": \"transfer\", \"reason\": \"y\", \"match\": \"[\"}]}",
		     "suppress[0].match: bad pattern");
	expect_error("[1, 2]", "expected an object");
	expect_error("{\"rules\": ", "not valid JSON");
}

static void test_config_values_and_defaults(void **state)
{
	struct td_config c;
	struct td_error err;
	char *defaults;
	(void)state;

	td_config_default(&c);
	assert_int_equal(td_config_parse(&c, "{\"rules\": {\"small_kernel_us\": 5, \"severity\": "
				       "{\"high\": 0.2}}, \"gate\": {\"time_floor_us\": 100, \"budgets\": "
				       "{\"max_step_time_us\": 2500, \"min_gpu_busy\": null}}}", &err), 0);
	assert_int_equal(c.params.small_kernel_ns, 5000);
	assert_true(c.params.sev_high == 0.2);
	assert_int_equal(c.gate.time_floor_ns, 100000);
	assert_int_equal(c.gate.max_step_time_ns, 2500000);
	assert_true(c.gate.min_gpu_busy < 0);
	td_config_free(&c);

	/* the printed defaults are a valid config that changes nothing */
	defaults = td_config_defaults_json();
	td_config_default(&c);
	assert_int_equal(td_config_parse(&c, defaults, &err), 0);
	assert_int_equal(c.params.small_kernel_ns, 10000);
	assert_true(c.gate.time_threshold == 0.10);
	assert_true(td_config_match(&c, PAT_COMMUNICATION, "ncclDevKernel_AllReduce", 23));
	free(defaults);
	td_config_free(&c);
}

static void test_patterns_and_limits(void **state)
{
	struct td_config c;
	struct td_error err;
	char subject[4096];
	(void)state;

	td_config_default(&c);
	assert_int_equal(td_config_parse(&c, "{\"patterns\": {\"ignore\": [\"^Profiler\", "
				       "\"(a+)+$\"], \"communication\": []}}", &err), 0);
	assert_true(td_config_match(&c, PAT_IGNORE, "ProfilerStep#3", 14));
	assert_false(td_config_match(&c, PAT_COMMUNICATION, "ncclKernel", 10)); /* replaced by [] */
	/* catastrophic backtracking stops at the match limit instead of hanging */
	memset(subject, 'a', sizeof(subject) - 2);
	subject[sizeof(subject) - 2] = 'b';
	subject[sizeof(subject) - 1] = '\0';
	assert_false(td_config_match(&c, PAT_IGNORE, subject, strlen(subject)));
	assert_true(c.pattern_limit_hits >= 1);
	/* invalid UTF-8 in a name is matched, not an error */
	assert_true(td_config_match(&c, PAT_IGNORE, "Profiler\xff\xfe", 10));
	td_config_free(&c);
	/* a NUL in a pattern is part of it, not its end: "^ab\u0000c" is not "^ab" */
	td_config_default(&c);
	assert_int_equal(td_config_parse(&c, "{\"patterns\": {\"ignore\": [\"^ab\\u0000c\"]}, "
				       "\"comment\": \"\\\\u0000 stays text\"}", &err), 0);
	assert_true(td_config_match(&c, PAT_IGNORE, "ab\0c", 4));
	assert_false(td_config_match(&c, PAT_IGNORE, "abd", 3));
	assert_false(td_config_match(&c, PAT_IGNORE, "ab", 2));
	td_config_free(&c);
	/* a catastrophic pattern among others: matched exactly, then left out after 16 hits, the
	 * others still answer; 200 patterns go as alternations of 64 */
	{
		struct td_buf b = {0};
		int i;
		const char *head = "{\"patterns\": {\"ignore\": [\"(a+)+$\"";
		const char *tail = ", \"(a)\\\\1x\"]}}";
		td_buf_add(&b, head, strlen(head));
		for (i = 0; i < 200; i++) {
			char p[32];
			td_buf_add(&b, p, (size_t)snprintf(p, sizeof(p), ", \"^k%d$\"", i));
		}
		td_buf_add(&b, tail, strlen(tail));
		td_buf_add(&b, "", 1);
		td_config_default(&c);
		assert_int_equal(td_config_parse(&c, b.s, &err), 0);
		free(b.s);
		for (i = 0; i < 40; i++)
			assert_false(td_config_match(&c, PAT_IGNORE, subject, strlen(subject)));
		assert_int_equal(c.pattern_limit_hits, 16);
		assert_int_equal(c.patterns_disabled, 1);
		assert_true(td_config_match(&c, PAT_IGNORE, "k199", 4));
		assert_true(td_config_match(&c, PAT_IGNORE, "k0", 2));
		assert_false(td_config_match(&c, PAT_IGNORE, "k200", 4));
		assert_true(td_config_match(&c, PAT_IGNORE, "aax", 3)); /* a backreference, alone */
		assert_false(td_config_match(&c, PAT_IGNORE, "aaaa", 4)); /* (a+)+$ is left out */
		td_config_free(&c);
	}
}

static const struct td_check *check(const struct td_check *ch, size_t n, const char *name)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!strcmp(ch[i].name, name))
			return &ch[i];
	fail_msg("no check %s", name);
	return NULL;
}

static void metrics(struct td_metrics *m, double step, double busy, double idle, double idle_host,
		    double syncs, double launches)
{
	struct td_error err;

	memset(m, 0, sizeof(*m));
	assert_int_equal(td_metrics_from_report("{\"schema\": \"tracedoc.report/1\", \"metrics\": {}, "
						"\"window\": {\"steps\": 5}}", m, &err), 0);
	assert_int_equal(m->steps, 5);
	{
		const char *ids[] = {"step_time_median_ns", "gpu_busy_fraction", "idle_ns_per_step",
				     "idle_host_ns_per_step", "sync_calls_per_step",
				     "kernel_launches_per_step"};
		double v[] = {step, busy, idle, idle_host, syncs, launches};
		size_t i, k;
		for (i = 0; i < 6; i++)
			for (k = 0; k < m->n; k++)
				if (!strcmp(m->m[k].id, ids[i])) {
					m->m[k].value = v[i];
					m->m[k].present = 1;
				}
	}
}

static enum td_verdict verdict(const struct td_check *c, size_t n, const char *name)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!strcmp(c[i].name, name))
			return c[i].verdict;
	fail_msg("no check %s", name);
	return V_SKIP;
}

static void test_verdicts(void **state)
{
	struct td_config c;
	struct td_metrics b, m;
	struct td_check ch[64];
	size_t n, fails;
	(void)state;

	td_config_default(&c);
	/* the same metrics pass */
	metrics(&b, 10e6, 0.9, 1e6, 0.5e6, 2, 100);
	fails = td_gate_compare(&b, &b, &c, ch, 64, &n);
	assert_int_equal(fails, 0);
	/* time: +20% on 10 ms fails; +20% on 1 ms (0.2 ms, under the 0.5 ms floor) passes */
	metrics(&m, 12e6, 0.9, 1e6, 0.5e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "step_time_median_ns"), V_FAIL);
	metrics(&b, 1e6, 0.9, 1e6, 0.5e6, 2, 100);
	metrics(&m, 1.2e6, 0.9, 1e6, 0.5e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "step_time_median_ns"), V_PASS);
	/* counts: one more sync per step fails (tolerance 0); +5% launches passes (10%) */
	metrics(&m, 1e6, 0.9, 1e6, 0.5e6, 3, 105);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "sync_calls_per_step"), V_FAIL);
	assert_int_equal(verdict(ch, n, "kernel_launches_per_step"), V_PASS);
	metrics(&m, 1e6, 0.9, 1e6, 0.5e6, 2, 111);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "kernel_launches_per_step"), V_FAIL);
	/* busy: 0.9 -> 0.75 fails, 0.9 -> 0.895 passes */
	metrics(&m, 1e6, 0.75, 1e6, 0.5e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "gpu_busy_fraction"), V_FAIL);
	metrics(&m, 1e6, 0.895, 1e6, 0.5e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "gpu_busy_fraction"), V_PASS);
	/* idle by cause: host idle doubles while total idle falls: not a regression */
	metrics(&b, 10e6, 0.5, 5e6, 1e6, 2, 100);
	metrics(&m, 8e6, 0.6, 3e6, 2e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "idle_host_ns_per_step"), V_PASS);
	metrics(&m, 10e6, 0.5, 6e6, 2e6, 2, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "idle_host_ns_per_step"), V_FAIL);
	/* a new high finding fails, unless the step got clearly faster */
	metrics(&b, 10e6, 0.5, 5e6, 1e6, 2, 100);
	metrics(&m, 10e6, 0.5, 5e6, 1e6, 2, 100);
	strcpy(m.high[0], "sync-stall");
	m.nhigh = 1;
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "new high finding"), V_NEW);
	m.m[0].value = 5e6; /* step_time_median_ns halves */
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "new high finding"), V_PASS);
	/* budgets, with or without a baseline */
	c.gate.max_syncs_per_step = 2;
	c.gate.min_gpu_busy = 0.8;
	metrics(&m, 10e6, 0.5, 5e6, 1e6, 2, 100);
	fails = td_gate_compare(NULL, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "max_syncs_per_step"), V_PASS);
	assert_int_equal(verdict(ch, n, "min_gpu_busy"), V_FAIL);
	assert_int_equal(fails, 1);
	assert_string_equal(check(ch, n, "min_gpu_busy")->message,
			    "GPU busy 50.0% is below the budget 80.0% (min_gpu_busy)");
	assert_string_equal(check(ch, n, "max_syncs_per_step")->message,
			    "host syncs 2.00 per step is within the budget 2.00 (max_syncs_per_step)");
	/* a per-step budget is not judged on a trace without steps */
	m.steps = 0;
	fails = td_gate_compare(NULL, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "max_syncs_per_step"), V_SKIP);
	assert_non_null(strstr(check(ch, n, "max_syncs_per_step")->message, "no steps"));
	c.gate.max_syncs_per_step = -1;
	c.gate.min_gpu_busy = -1;
	/* an MFU floor: not judged without FLOPs against a peak, else judged */
	c.gate.min_mfu = 0.4;
	metrics(&m, 10e6, 0.5, 5e6, 1e6, 2, 100);
	fails = td_gate_compare(NULL, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "min_mfu"), V_SKIP);
	assert_int_equal(fails, 0);
	assert_non_null(strstr(check(ch, n, "min_mfu")->message, "FLOPs against a known peak"));
	{
		struct td_metric *mf = (struct td_metric *)td_metrics_get(&m, "mfu_fraction");
		assert_non_null(mf);
		mf->value = 0.25;
		mf->present = 1;
	}
	fails = td_gate_compare(NULL, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "min_mfu"), V_FAIL);
	assert_int_equal(fails, 1);
	assert_string_equal(check(ch, n, "min_mfu")->message,
			    "MFU 25.0% is below the budget 40.0% (min_mfu)");
	((struct td_metric *)td_metrics_get(&m, "mfu_fraction"))->value = 0.45;
	fails = td_gate_compare(NULL, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "min_mfu"), V_PASS);
	c.gate.min_mfu = -1;
	/* a regression reads as a sentence */
	metrics(&b, 10e6, 0.5, 5e6, 1e6, 2, 100);
	metrics(&m, 10e6, 0.5, 5e6, 1e6, 3, 100);
	td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_string_equal(check(ch, n, "sync_calls_per_step")->message,
			    "sync_calls_per_step rose from 2.00 to 3.00 per step (+50.0%; allowed +0%)");
	/* a suppressed rule's metrics are not judged */
	strcpy(m.suppressed[0], "sync-stall");
	strcpy(m.why[0], "known, ticket 7");
	m.nsuppressed = 1;
	fails = td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "sync_calls_per_step"), V_SKIP);
	assert_non_null(strstr(check(ch, n, "sync_calls_per_step")->message, "known, ticket 7"));
	assert_int_equal(fails, 0);
	/* per-step counts of a trace with steps and window totals of one without do not compare */
	m.nsuppressed = 0;
	b.steps = 0;
	fails = td_gate_compare(&b, &m, &c, ch, 64, &n);
	assert_int_equal(verdict(ch, n, "sync_calls_per_step"), V_SKIP);
	assert_int_equal(verdict(ch, n, "gpu_busy_fraction"), V_PASS);
	assert_int_equal(fails, 0);
	td_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_config_values_and_defaults),
		cmocka_unit_test(test_patterns_and_limits),
		cmocka_unit_test(test_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
