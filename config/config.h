/* SPDX-License-Identifier: MIT */
/* The configuration shared by diagnose and gate: rule thresholds, PCRE2 name patterns,
 * suppressions of known findings, and the gate's thresholds and budgets. Read from JSON with
 * yajl; unknown keys, wrong types and bad patterns are errors naming the key path. Patterns are
 * compiled once (JIT when available) and matched under PCRE2 match and depth limits, so a
 * pathological pattern cannot hang a run. Ownership: td_config_free() frees everything. */
#ifndef TD_RULES_CONFIG_H
#define TD_RULES_CONFIG_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "config/params.h"
#include "config/peaks.h"

struct td_pattern_set; /* compiled patterns of one kind */

enum td_pattern_kind {
	PAT_SYNC_OPS,      /* extra ops that synchronize (e.g. a custom op calling .item()) */
	PAT_STEP_MARKERS,  /* spans that delimit steps, besides ProfilerStep#N */
	PAT_DATALOADER,    /* spans that load data, besides enumerate(DataLoader)#... */
	PAT_COMMUNICATION, /* communication kernels (NCCL / RCCL) */
	PAT_WARMUP,        /* spans that are one-off start-up work, besides the built-in list */
	PAT_IGNORE,        /* ops or kernels to leave out of the analysis */
	PAT_COUNT
};

struct td_suppression {
	char *rule;        /* rule id */
	char *match;       /* PCRE2 pattern on the finding's title and where lines ("" = any) */
	char *reason;      /* shown in the report */
	void *code;        /* compiled match */
};

/* Metric ids for the gate's per-count tolerances (see rules/metrics.h). */
struct td_gate_config {
	double time_threshold;       /* relative increase that fails a time metric (0.10) */
	int64_t time_floor_ns;       /* ...and only when the change exceeds this (500 us) */
	double busy_floor;           /* GPU busy fraction drop below which it is noise (0.01) */
	double count_tolerance;      /* allowed relative increase of counts (0.10) */
	double sync_tolerance;       /* ... of sync calls per step (0) */
	double pageable_tolerance;   /* ... of pageable copies per step (0) */
	/* absolute budgets; negative = not set */
	double min_gpu_busy;
	double max_syncs_per_step;
	double max_pageable_copies_per_step;
	int64_t max_step_time_ns;
	int64_t max_decode_step_time_ns; /* a serving run's median decode iteration */
	double max_idle_fraction;
	double min_mfu;              /* model FLOPs utilization (analysis/roofline.h) */
	int64_t max_snapshot_peak_bytes; /* a memory snapshot's peak allocated, per device */
	int fail_on_new_high;        /* a finding at high that the baseline did not have (1) */
	int fail_on_red_health;      /* the current trace's health (tracedoc check) is red (0) */
};

struct td_config {
	struct td_params params;
	struct td_gate_config gate;
	struct td_pattern_set *patterns[PAT_COUNT];
	struct td_vec suppress;      /* struct td_suppression */
	_Atomic uint64_t pattern_limit_hits; /* matches abandoned at the match or depth limit */
	_Atomic uint64_t patterns_disabled;  /* patterns left out after 16 of those */
	char *peaks_json;            /* --peaks FILE's text (checked), overlaid on the table's
				      * peaks for the trace's device; NULL none */
};

void td_config_default(struct td_config *c);
/* Parses a config from memory over the defaults. Returns 0, or TD_EINVAL with err naming the
 * key path (and, for a pattern, PCRE2's message and offset). */
int td_config_parse(struct td_config *c, const char *json, struct td_error *err);
void td_config_free(struct td_config *c);
/* The defaults as a valid config file (JSON text, caller frees). */
char *td_config_defaults_json(void);

/* 1 when `name` matches a pattern of this kind (0 when none are set or the limit was hit). */
int td_config_match(struct td_config *c, enum td_pattern_kind k, const char *name, size_t len);
/* The suppression that covers a finding (rule id, title and where lines), or NULL. */
const struct td_suppression *td_config_suppressed(struct td_config *c, const char *rule,
						  const char *const *texts, size_t ntexts);

/* The rules' ids (config/ids.c), NULL-terminated, in the registry's order (rules/rule.h). */
extern const char *const td_rule_ids[];
/* 1 when id is a rule's id; the id nearest to a misspelt one ("sync_stall": "sync-stall"),
 * or NULL when none is close. */
int td_rule_known(const char *id);
const char *td_rule_nearest(const char *id);

#endif
