/* SPDX-License-Identifier: MIT */
/* The contract between the engine and each rule. A rule is a const descriptor whose run()
 * reads the shared analysis and adds findings (analysis/finding.h) to the report; rules hold
 * no state of their own, so they can run on any number of traces in one process. Library
 * code: never prints. */
#ifndef TD_RULES_RULE_H
#define TD_RULES_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/fmt.h"
#include "common/vec.h"
#include "analysis/analysis.h"
#include "analysis/finding.h"
#include "config/config.h"

struct td_rule {
	const char *id;            /* kebab-case, stable: CLI, JSON, baselines */
	const char *title;
	/* Called once per trace, after the analysis; adds findings with td_report_add(). */
	void (*run)(struct td_analysis *a, struct td_report *r);
	/* How its findings' bound is replayed, for their text (td_finding.bound_what; NULL:
	 * "with it removed") - the job view gives it to the findings it makes of the ranks'. */
	const char *bound_what;
};

extern const struct td_rule rule_warmup, rule_startup, rule_untraced_wait, rule_dataloader, rule_communication, rule_element_loop,
	rule_sync_stall,
	rule_transfer, rule_allocator, rule_small_kernels, rule_gpu_idle, rule_memory, rule_gpu_bound,
	rule_precision;
/* All rules, NULL-terminated, in the order they claim idle time: the specific mechanisms
 * first, gpu-idle (the residual) last. */
extern const struct td_rule *const td_rules[];

/* The rule of that id, or NULL (config/config.h: td_rule_known(), td_rule_nearest()). */
const struct td_rule *td_rule_find(const char *id);

/* Runs every rule, drops findings that would win back next to nothing (under 1 us or 0.01% of
 * the window), moves those the config suppresses aside, then sizes, grades and orders the
 * rest (savings descending; ties by rule id, device and title, so the order is total). */
void td_diagnose(struct td_analysis *a, struct td_report *r);

#endif
