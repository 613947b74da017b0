/* SPDX-License-Identifier: MIT */
/* Can this trace be trusted: PyTorch's trace validator rules (torch/profiler/_trace_validator.py,
 * under its names and with its semantics) and tracedoc's own checks, each with what it checked,
 * what it found, a few examples and which findings a violation weakens. One pass over the model
 * already built (parser/trace.h; its td_fact records hold what only these rules read); no
 * printing. */
#ifndef TD_ANALYSIS_CHECK_H
#define TD_ANALYSIS_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct td_trace;

/* How bad a violated rule is; a trace's health is its worst violated rule's. */
enum td_health_level {
	TD_HEALTH_GREEN,  /* nothing violated, or only what a report reads around (INFO rules) */
	TD_HEALTH_YELLOW, /* some findings are weaker: the flag says which */
	TD_HEALTH_RED,    /* the trace lost data or its clocks disagree: weigh every finding */
};
#define TD_HEALTH_EXAMPLES 3
#define TD_HEALTH_MAX_RULES 20

struct td_health_example {
	int64_t ts;     /* on the trace's clock, ns */
	char text[200]; /* what was seen */
};

struct td_health_rule {
	const char *rule;     /* the name: PyTorch's own for its six rules */
	const char *source;   /* "pytorch" or "tracedoc" */
	const char *what;     /* what it checks, one line */
	const char *weakens;  /* which findings a violation weakens ("sync sizing unreliable: ...") */
	uint64_t checked;     /* the items it looked at */
	uint64_t violations;  /* those that broke it */
	enum td_health_level level; /* when violated */
	double share;         /* graph_launch_share: the device time behind graph launches, 0-1 */
	size_t nex;
	struct td_health_example ex[TD_HEALTH_EXAMPLES];
};

struct td_health {
	size_t n;
	struct td_health_rule rules[TD_HEALTH_MAX_RULES];
	enum td_health_level health;
	size_t n_violated;    /* rules with violations */
};

/* Whether the trace keeps only launch, copy and memset calls, numbered far apart: a filter left
 * out its event records, stream waits and synchronizations (dropped 1); ncalls the calls, step
 * the median step between their correlation ids. */
struct td_waits_dropped {
	int dropped;
	uint64_t ncalls;
	uint32_t step;
};
void td_health_waits_dropped(const struct td_trace *t, struct td_waits_dropped *w);
/* Runs every rule over t (finalized). Returns 0; allocation failures go to the OOM handler. */
int td_health_run(const struct td_trace *t, struct td_health *c);
/* The same, with td_health_waits_dropped() already read (the analysis reads it: diagnose runs
 * both, and it is one pass over every host call); NULL: read here. */
int td_health_run_known(const struct td_trace *t, const struct td_waits_dropped *known,
			struct td_health *c);
/* "green", "yellow", "red" */
const char *td_health_level_name(enum td_health_level l);
/* The health in one line, into buf: "yellow: check_nccl_metadata (8), missing_external_id (12)
 * and 1 more; 3 notes (tracedoc check)", "green: no rule broken". */
void td_health_line(const struct td_health *c, char *buf, size_t cap);

#endif
