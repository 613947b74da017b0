/* SPDX-License-Identifier: MIT */
/* A rank's summary: what the job view needs of one trace, kilobytes instead of its events -
 * steps, GPU time by cause, the collectives it ran (to match them across ranks), its top
 * kernels, its findings and the gate's metrics. Made from an analysed trace, or read back from
 * the JSON `tracedoc summarize` writes (tracedoc.summary/1); the job report is the same from
 * either. Library code: never prints. Ownership: td_summary_free() frees everything. */
#ifndef TD_JOB_SUMMARY_H
#define TD_JOB_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/strtab.h"
#include "common/vec.h"
#include "analysis/analysis.h"
#include "analysis/metrics.h"

#define TD_SUMMARY_SCHEMA "tracedoc.summary/1"
#define TD_SUMMARY_KERNELS 32 /* the compute kernels kept, by time */

enum td_rank_source { TD_RANK_TRACE, TD_RANK_NAME, TD_RANK_ORDER };

struct td_sum_finding {
	char rule[32];
	int severity;             /* enum td_severity */
	char *title, *fix;        /* names marked (common/fmt.h) */
	int64_t savings_ns, per_step_ns, idle_ns, busy_ns, host_ns;
	double fraction;
	uint64_t count;
	int risk;                 /* a risk finding (memory): no savings, its own severity */
	int offpath;              /* advice: a note off the critical path (rules/rule.h) */
	int max_severity;         /* its grade's cap (0: none) */
	int sizing;               /* how savings_ns was had: TD_SIZING_* */
	int64_t *shifts;          /* replayed: per collective (td_summary.colls' order), how much
				   * later it starts with the fix than without, into the window (as
				   * td_whatif_shifts() gives it; TD_SHIFT_NONE: not known); NULL:
				   * none */
};
/* A finding's "sizing", as the report's JSON says it (absent from a summary: idle). */
enum { TD_SIZING_IDLE, TD_SIZING_REPLAY, TD_SIZING_BOUND };

struct td_sum_kernel {
	char *name;
	int64_t ns;
	uint64_t calls;
};

/* One collective kernel: its key (process group, collective, size) and how many of that key
 * came before it on this rank, which together match it across ranks. */
struct td_sum_coll {
	uint32_t key;             /* id in td_summary.keys */
	uint32_t seq;
	int64_t start, dur;
	int64_t in_step;          /* its launch's time into the step that made it; -1 unknown */
	int64_t gpu_in_step;      /* its start's time into that step; -1 unknown */
};

struct td_summary {
	char *path;                /* the trace it summarizes */
	char *input;               /* the file it was read from (not written): a trace or summary */
	int64_t rank, world_size;  /* from the trace's distributedInfo; -1 when absent */
	int partial;
	int32_t device;            /* the device it summarizes (the busiest), -1 with none */
	char *device_name;
	int vendor, run;           /* enum td_vendor, enum td_run: the rank's context */
	uint64_t steps;
	int64_t step_median_ns, window_ns, busy_ns, idle_ns, compute_ns, comm_ns, exposed_ns;
	int64_t dataloader_ns;
	double syncs_per_step;
	int64_t idle_by_cause[CAUSE_COUNT];
	int top_cause;             /* the cause holding most idle, -1 with none */
	char *top_what;
	struct td_vec step_compute; /* int64_t: compute-kernel busy time of each step */
	struct td_vec kernels;      /* struct td_sum_kernel, most time first */
	struct td_strtab keys;      /* collective keys */
	struct td_vec colls;        /* struct td_sum_coll, by start */
	struct td_vec findings;     /* struct td_sum_finding, as the report orders them */
	struct td_metrics metrics;
};

void td_summary_init(struct td_summary *s);
void td_summary_free(struct td_summary *s);
/* Summarizes an analysed and diagnosed trace (its findings in r). */
void td_summary_make(struct td_analysis *a, const struct td_report *r, const char *path,
		     struct td_summary *s);
/* The summary as JSON (tracedoc.summary/1), malloc'd, NUL-terminated. */
char *td_summary_json(const struct td_summary *s, size_t *len);
/* Reads a summary back. Returns 0, or TD_EFORMAT with err naming what is wrong (s then holds
 * nothing: freed). */
int td_summary_parse(const char *json, struct td_summary *s, struct td_error *err);

#endif
