/* SPDX-License-Identifier: MIT */
/* Per-step metrics of a diagnosed trace, and the gate's verdicts comparing two of them. Wall
 * time in CI is noisy, so besides step time and idle the gate leans on deterministic counts:
 * launches, syncs, copies, small kernels. */
#ifndef TD_RULES_METRICS_H
#define TD_RULES_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct td_analysis;
struct td_report;
struct td_config;

enum td_metric_kind {
	MK_TIME,     /* ns; more is worse; relative threshold with an absolute floor */
	MK_COUNT,    /* per step; more is worse; allowed relative increase */
	MK_FRACTION, /* GPU busy; less is worse */
};

#define TD_METRIC_MAX 32
#define TD_HIGH_MAX 16

struct td_metric {
	const char *id;
	enum td_metric_kind kind;
	double value;
	int present;
};

struct td_metrics {
	struct td_metric m[TD_METRIC_MAX];
	size_t n;
	size_t steps;               /* 0: no steps, the "per step" values are window totals */
	int partial;
	char high[TD_HIGH_MAX][32]; /* rule ids of findings at high */
	size_t nhigh;
	char suppressed[TD_HIGH_MAX][32]; /* rule ids with a finding the config suppressed */
	char why[TD_HIGH_MAX][128];       /* ... and the suppression's reason */
	size_t nsuppressed;
};

/* Computes the metrics of an analysed and diagnosed trace. */
void td_metrics_compute(struct td_analysis *a, const struct td_report *r,
			struct td_metrics *out);
/* Reads the metrics a `tracedoc diagnose --format json` report (tracedoc.report/1 or
 * tracedoc.job/1) carries. Returns 0 or TD_EFORMAT (not such a report) with err filled. */
int td_metrics_from_report(const char *json, struct td_metrics *out, struct td_error *err);
const struct td_metric *td_metrics_get(const struct td_metrics *m, const char *id);
/* Reads metrics, the high findings' rules ("high", else the findings at high) and the
 * suppressed rules from a parsed report, job report or summary (a yajl_val). Returns 0, or
 * TD_EFORMAT with err naming the key of an impossible value (negative, not finite, beyond
 * 1e18, a fraction above 1). */
struct yajl_val_s;
int td_metrics_read(struct yajl_val_s *root, struct td_metrics *out, size_t steps,
		    struct td_error *err);

enum td_verdict { V_PASS, V_FAIL, V_NEW, V_SKIP };

struct td_check {
	char name[64];       /* metric id, budget name or "new high finding" */
	double base, cur;    /* NAN when missing */
	int has_base;
	double threshold;    /* the allowed relative change or the budget */
	char rule[128];      /* how it is judged, in words */
	char message[320];   /* the verdict as a sentence ("gpu_busy_fraction 13.7% is below ...") */
	enum td_verdict verdict;
};

/* A metric's value for people: durations, percentages, bytes or counts. Returns buf. */
const char *td_metric_str(char *buf, size_t cap, const char *id, double v);
/* The rule whose findings a metric measures ("sync-stall" for sync_calls_per_step), or NULL. */
const char *td_metric_rule(const char *id);

/* Compares current with an optional baseline under cfg's gate settings. Returns the number of
 * failed checks; fills up to max checks. */
size_t td_gate_compare(const struct td_metrics *base, const struct td_metrics *cur,
		       const struct td_config *cfg, struct td_check *checks, size_t max,
		       size_t *nchecks);

/* Why the gate has nothing to judge - the current trace holds neither steps nor GPU work, one
 * side lost its steps, or every check (of n) was skipped or there is none - in buf; NULL when
 * there is something. A pull request that breaks profiling must not pass the gate. */
const char *td_gate_nothing(const struct td_metrics *base, const struct td_metrics *cur,
			    const struct td_check *checks, size_t n, char *buf, size_t cap);

#endif
