/* SPDX-License-Identifier: MIT */
/* A finding: what a rule states about the run - its title, where and evidence lines, fix,
 * figures, the idle it claims in the accounting (analysis/claims.c) and its fix as edits of
 * the replay's graph (replay/replay.h) for the sizing (sizing/whatif.h) - and the report that
 * holds them, graded and ordered. Knows no rule. Library code: never prints. */
#ifndef TD_ANALYSIS_FINDING_H
#define TD_ANALYSIS_FINDING_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/vec.h"
#include "analysis/analysis.h"
#include "config/params.h"

enum td_severity { SEV_INFO, SEV_LOW, SEV_MEDIUM, SEV_HIGH };
const char *td_severity_name(enum td_severity s);

struct td_evidence {
	int64_t ts, dur;   /* trace clock, ns: ts / 1000 is the "ts" to search for in Perfetto */
	char *text;
};

struct td_value {
	const char *key;           /* static string */
	int64_t v;
};

/* Another fix of a finding's mechanism, sized by replaying its own edits (element-loop: the
 * loop removed, or the tensor copied to the host once, or the math kept on the GPU). */
struct td_alt {
	const char *name;          /* static string: the fix, as JSON names it */
	int64_t saving_ns;         /* the replayed window before minus after its edits */
};

struct td_finding {
	const char *rule;          /* stable id */
	uint32_t serial;           /* stable within the report: owner of its claims */
	int32_t device;            /* -1: not tied to one device */
	enum td_severity severity; /* from savings_fraction */
	char *title;
	int64_t idle_ns;           /* GPU idle the fix wins back, claimed: no other finding has it */
	int64_t busy_ns;           /* GPU busy time it removes or hides (exposed communication) */
	int64_t host_ns;           /* host time it frees besides (not GPU time, not in savings) */
	int frees_host;            /* 1: its fix only takes waits off the host (no GPU time): a
				    * replayed saving far beyond its claim is said to be the host's
				    * work after the waits now beside the GPU's */
	int64_t savings_ns;        /* what ranks and grades the finding: replay_ns when replayed,
				    * else idle_ns + busy_ns */
	int replayed;              /* 1: sized by replaying the trace with the fix (rules/whatif.h) */
	int64_t replay_ns;         /* the replayed window before minus after the fix */
	int64_t win_before_ns, win_after_ns;   /* replayed: the window before and after the fix, */
	int64_t busy_before_ns, busy_after_ns; /* and how long the device is busy in each (-1:
				    * not known): replay_ns is the GPU time the fix removes plus the
				    * GPU idle it closes */
	int lifts_gates;           /* 1: its fix is what the loop waits for (a DataLoader's
				    * workers: the replay's gates, replay/replay.h): each other fix
				    * on its device is also replayed after it, and `after` names
				    * this one's rule where that wins more */
	const char *after;         /* the rule whose fix must come first for this one to win:
				    * savings_ns is then after_ns (NULL: sized alone) */
	int64_t after_ns;          /* what the fix wins once `after`'s fix is in, replayed: both
				    * together less `after`'s alone */
	struct td_vec edits;       /* struct td_rp_edit: the fix as edits of the replay's graph,
				    * replayed by td_diagnose() (none: sized by the idle it claims) */
	struct td_vec bound;       /* struct td_rp_edit: where the fix cannot be replayed, its
				    * mechanism removed outright (collectives made free): replayed,
				    * what no fix of it can beat */
	const char *bound_what;    /* how the bound was replayed, for its text ("with the host's
				    * work in its gaps removed"; NULL: "with it removed", what it
				    * claims) */
	int bounded;               /* 1: the bound replayed wins less than the idle it claims:
				    * savings_ns is bound_ns */
	int64_t bound_ns;          /* the replayed window before minus after the bound's edits */
	int capped;                /* 1: its GPU runs behind the host, and the steady-state step
				    * caps what the replay wins (sizing/lag.c; a where line says so) */
	int estimated;             /* 1: sized by its mechanism, not replayed (the trace lacks
				    * what a replay needs; a where line says so): idle_ns + busy_ns */
	int upper;                 /* 1: sized by the idle it claims, whose cause the trace does not
				    * hold (a queued op waited on something unrecorded): no fix is
				    * known to win it all, so the figure is an upper bound */
	int once;                  /* 1: what it saves is paid once (start-up inside the window
				    * that holds most of it): no per-step figure */
	int offpath;               /* 1: what it claims is off the critical path - replayed, its fix
				    * (or its bound) wins nothing: a note (risk 2), its claims kept */
	double savings_fraction;   /* savings over the window's duration */
	int64_t per_step_ns;       /* savings per step (0 without steps) */
	uint64_t count;
	int risk;                  /* 1: a risk, not a time cost (memory); 2: advice without a time
				    * figure (gpu-bound with no named change); 3: a one-off cost
				    * before the steady state (start-up). Kept without savings, the
				    * severity set by the rule, after the time findings - but a
				    * one-off cost graded high (most of the trace) leads them */
	int outside;               /* 1: the GPU idle it claims is not the run's steady state (a
				    * wait on work from before the trace, start-up): a busy share
				    * of the window leaves it out (gpu-bound) */
	const char *oneoff_row;    /* a one-off (risk 3 or outside): the breakdown row the idle it
				    * claims goes under (NULL: start-up work), static */
	enum td_severity max_severity; /* its grade at most this (0: no cap, as SEV_INFO is) */
	struct td_vec where;       /* char *: call sites, ops, kernels */
	struct td_vec evidence;    /* struct td_evidence */
	struct td_vec values;      /* struct td_value: its figures, named, for JSON and tests */
	struct td_vec ranks;       /* int64_t: the ranks a job finding is about (job view) */
	struct td_vec alts;        /* struct td_alt: the fixes besides its own, each replayed */
	char *fix;
	const char *suppressed;    /* the config's reason, for findings in td_report.suppressed */
};

struct td_report {
	struct td_vec findings;    /* struct td_finding, ordered after td_diagnose() */
	struct td_vec suppressed;  /* findings a config suppression covers, with its reason */
	uint32_t next_serial;
};

struct td_finding *td_report_add(struct td_report *r, const char *rule, int32_t device);
/* Where a finding ranks, lowest first: 0 a one-off that holds most of the trace, 1 time worth 1%
 * of the window or more (by savings), 2 risks, advice and notes (most severe first), 3 time
 * below 1% of the window. */
int td_finding_rank(const struct td_finding *f);
void td_finding_title(struct td_finding *f, const char *fmt, ...) TD_PRINTF(2, 3);
void td_finding_where(struct td_finding *f, const char *fmt, ...) TD_PRINTF(2, 3);
void td_finding_evidence(struct td_finding *f, int64_t ts, int64_t dur, const char *fmt, ...)
	TD_PRINTF(4, 5);
void td_finding_fix(struct td_finding *f, const char *fmt, ...) TD_PRINTF(2, 3);
void td_finding_value(struct td_finding *f, const char *key, int64_t v);
/* Adds an alternative fix and its replayed saving (name: a static string). */
void td_finding_alt(struct td_finding *f, const char *name, int64_t saving_ns);
/* Adds an edit of the replay's graph to f's fix (replay/replay.h). */
struct td_rp_edit;
void td_finding_edit(struct td_finding *f, const struct td_rp_edit *e);
/* Adds an edit to f's bound: its mechanism removed outright, where its fix cannot be
 * replayed (td_finding.bound). */
void td_finding_bound_edit(struct td_finding *f, const struct td_rp_edit *e);
/* Claims for f every idle segment of `cause` on device index d; adds it to f->idle_ns. */
int64_t td_finding_claim_cause(struct td_analysis *a, struct td_finding *f, size_t d,
			       enum td_cause cause);
/* Commits candidate claims for f on device index d; adds what it got to f->idle_ns. */
int64_t td_finding_claim(struct td_analysis *a, struct td_finding *f, size_t d,
			 struct td_claims *c, int64_t *per_tag, size_t ntags);

/* The severity of a finding worth `fraction` of its window. */
enum td_severity td_grade(const struct td_params *p, double fraction);
/* How f's saving was obtained, for the line that gives it: " (replayed)", " (replayed, after
 * the dataloader fix)", " (at most: replayed with it removed)", "" (sized by the idle it
 * claims); buf of TD_SIZING_MAX holds the longest. */
#define TD_SIZING_MAX 160
const char *td_finding_sizing(const struct td_finding *f, char *buf, size_t cap);
/* Orders findings by savings (ties by rule, device, title: a total order). */
void td_report_sort(struct td_report *r);
void td_report_init(struct td_report *r);
/* Frees what a finding holds (its title, lines, evidence, fix). */
void td_finding_free(struct td_finding *f);
void td_report_free(struct td_report *r);

/* The finding that claimed the idle at time t on device index d, or NULL. */
const struct td_finding *td_report_owner(const struct td_analysis *a, const struct td_report *r,
					 size_t d, int64_t t);
/* A finding's figures look-up (0 when absent). */
int64_t td_finding_get(const struct td_finding *f, const char *key);

#endif
