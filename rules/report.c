/* SPDX-License-Identifier: MIT */
/* The rule registry, and td_diagnose(): every rule run, the findings sized, graded and
 * ordered. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/analysis.h"
#include "config/config.h"
#include "rules/rule.h"
#include "analysis/profcost.h"
#include "sizing/whatif.h"

const struct td_rule *const td_rules[] = {
	&rule_warmup, &rule_startup, &rule_untraced_wait, &rule_dataloader, &rule_communication, &rule_element_loop,
	&rule_sync_stall, &rule_transfer,
	&rule_allocator, &rule_small_kernels, &rule_gpu_idle, &rule_memory, &rule_gpu_bound, &rule_precision,
	NULL,
};

const struct td_rule *td_rule_find(const char *id)
{
	size_t i;

	for (i = 0; td_rules[i]; i++)
		if (!strcmp(td_rules[i]->id, id))
			return td_rules[i];
	return NULL;
}

/* What a replay said of the GPU time f claims (exposed communication, compute), once sized: a
 * bound that wins part of it says how much (gated: the loop waits for a DataLoader's workers,
 * which may then hold it); a replay that wins none of it makes f a note off
 * the critical path - no time to win now, but worth a line (other analyzers call it the
 * problem), after the time findings, its claims kept (the job view compares ranks by them). */
static void critical_path(struct td_finding *f, int gated)
{
	char b1[32], b2[32], b3[32], *fix;

	/* a wait removed frees the host, whose work after it then runs beside the GPU's: the
	 * replay wins idle other findings claim, which the claim alone cannot say */
	if (!f->risk && f->replayed && f->frees_host &&
	    f->savings_ns > 2 * (f->idle_ns + f->busy_ns) && 2 * f->host_ns >= f->savings_ns)
		td_finding_where(f, "replayed, the window shrinks by %s, more than the %s of GPU idle "
				 "it claims: the host no longer waits, so its work after each wait "
				 "(data loading, Python, the next launches) runs while the GPU "
				 "computes, and the idle filed under those causes shrinks with it",
				 td_fmt_dur(b1, sizeof(b1), f->savings_ns),
				 td_fmt_dur(b2, sizeof(b2), f->idle_ns + f->busy_ns));
	/* a fix that takes host work away (launch calls, allocations: host_ns it frees) wins
	 * more than the idle between its ops where the host holds the step: the freed time
	 * comes off the step itself, as idle the replay closes (not GPU work it removes) */
	else if (!f->risk && f->replayed && !f->frees_host && f->host_ns > 0 &&
		 f->savings_ns > 2 * (f->idle_ns + f->busy_ns) && f->savings_ns <= f->host_ns &&
		 f->busy_before_ns >= 0 && f->busy_after_ns >= 0 &&
		 2 * (f->replay_ns - (f->busy_before_ns - f->busy_after_ns)) >= f->savings_ns)
		td_finding_where(f, "replayed, the window shrinks by %s, more than the %s of GPU idle "
				 "it claims: the fix frees %s of host time, and the host holds this "
				 "step (the GPU waits for its work: data loading, Python, launches), "
				 "so the time freed comes off the step",
				 td_fmt_dur(b1, sizeof(b1), f->savings_ns),
				 td_fmt_dur(b2, sizeof(b2), f->idle_ns + f->busy_ns),
				 td_fmt_dur(b3, sizeof(b3), f->host_ns));
	else if (!f->risk && f->replayed && !f->frees_host && f->savings_ns > 0 &&
		 f->host_ns >= 4 * f->savings_ns && f->host_ns > f->idle_ns + f->busy_ns)
		td_finding_where(f, "replayed, the window shrinks by %s though the fix frees %s of "
				 "host time: the host does not hold this step (the GPU's own work or a "
				 "wait does), so the time it frees does not shorten it",
				 td_fmt_dur(b1, sizeof(b1), f->savings_ns),
				 td_fmt_dur(b3, sizeof(b3), f->host_ns));
	if (f->risk || f->capped || !(f->bounded || (f->replayed && f->busy_ns)))
		return;
	td_fmt_dur(b2, sizeof(b2), f->idle_ns + f->busy_ns);
	if (f->savings_ns) {
		if (f->bounded && !f->bound_what && f->savings_ns < f->idle_ns + f->busy_ns)
			td_finding_where(f, "replayed with it removed outright, the window shrinks "
					 "by %s of the %s it claims: the rest is off the critical "
					 "path, where something else holds the step",
					 td_fmt_dur(b1, sizeof(b1), f->savings_ns), b2);
		else if (f->bounded && f->savings_ns < f->idle_ns + f->busy_ns)
			td_finding_where(f, "replayed %s, the window shrinks by %s of the %s it "
					 "claims: the rest is idle of other causes, or held then by "
					 "something else (the GPU's own work, a wait, another thread%s)",
					 f->bound_what,
					 td_fmt_dur(b1, sizeof(b1), f->savings_ns), b2,
					 gated && !f->after ? ", the DataLoader's workers the loop then "
					 "waits for in __next__" : "");
		return;
	}
	f->risk = 2;
	f->offpath = 1;
	f->severity = SEV_INFO;
	td_finding_where(f, "replayed %s, the window does not shrink: the %s it claims is off the "
			 "critical path, where something else holds the step",
			 !f->bounded ? "with its fix" : f->bound_what ? f->bound_what
			 : "with it removed outright", b2);
	fix = f->fix;
	f->fix = NULL;
	td_finding_fix(f, "Nothing to win here now: replayed %s, the step is no shorter, because "
		       "something else holds it (the findings above). Fix those first and profile "
		       "again; if it then holds the step: %s", !f->bounded ? "with its fix"
		       : f->bound_what ? f->bound_what : "without it", fix ? fix : "");
	free(fix);
}

void td_diagnose(struct td_analysis *a, struct td_report *r)
{
	size_t i, j;

	td_report_init(r);
	for (i = 0; td_rules[i]; i++) {
		size_t before = r->findings.len;
		td_rules[i]->run(a, r);
		for (j = before; j < r->findings.len; j++) { /* their replays begin */
			const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, j);
			if (f->edits.len || f->bound.len)
				td_whatif_early(a, f);
		}
	}
	/* the fixes stated as edits: sized by replaying the trace with each applied */
	{
		struct td_finding **fs = td_calloc(r->findings.len + 1, sizeof(*fs));
		size_t n = 0;
		for (i = 0; i < r->findings.len; i++) {
			struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
			if (f->edits.len || f->bound.len)
				fs[n++] = f;
		}
		td_whatif_size(a, fs, n, a->jobs > 0 ? a->jobs : 1);
		free(fs);
	}
	/* a finding that wins next to nothing back is not worth a reader's time */
	for (i = 0, j = 0; i < r->findings.len; i++) {
		struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		const struct td_suppression *s = NULL;
		int64_t w = td_an_window_ns(a, f->device);
		f->savings_ns = f->after ? f->after_ns : f->replayed ? f->replay_ns
				: f->bounded ? f->bound_ns : f->idle_ns + f->busy_ns;
		if (f->savings_ns < 1000 || (double)f->savings_ns < 0.0001 * (double)w ||
		    f->risk >= 2) /* advice and one-offs hold time but save none per step */
			f->savings_ns = 0;
		critical_path(f, a->whatif && a->whatif->g.gates.len);
		if ((f->savings_ns > 0 || f->risk) && a->cfg && a->cfg->suppress.len) {
			/* matched as the user reads them: without the name marks */
			char *texts[17];
			size_t n = 0, k;
			texts[n++] = td_unmark(f->title ? f->title : "");
			for (k = 0; k < f->where.len && n < 17; k++)
				texts[n++] = td_unmark(TD_VEC_AT(&f->where, char *, k));
			s = td_config_suppressed(a->cfg, f->rule, (const char *const *)texts, n);
			for (k = 0; k < n; k++)
				free(texts[k]);
		}
		if (f->savings_ns <= 0 && !f->risk) {
			td_finding_free(f);
		} else if (s) {
			struct td_finding *sf = td_vec_push(&r->suppressed);
			*sf = *f;
			sf->suppressed = s->reason;
		} else {
			TD_VEC_AT(&r->findings, struct td_finding, j++) = *f;
		}
	}
	r->findings.len = j;
	td_an_profiler_caveats(a, r); /* the profiler's own share of a host-bound saving */
	for (i = 0; i < r->findings.len + r->suppressed.len; i++) {
		struct td_finding *f = i < r->findings.len ? &TD_VEC_AT(&r->findings, struct td_finding, i)
			: &TD_VEC_AT(&r->suppressed, struct td_finding, i - r->findings.len);
		int64_t w = td_an_window_ns(a, f->device);
		f->savings_fraction = w > 0 ? (double)f->savings_ns / (double)w : 0.0;
		f->per_step_ns = td_an_steps(a) && !f->once ? f->savings_ns / (int64_t)td_an_steps(a)
							    : 0;
		if (!f->risk)
			f->severity = td_grade(&a->params, f->savings_fraction);
		if (f->max_severity && f->severity > f->max_severity)
			f->severity = f->max_severity;
		if (!f->title)
			td_finding_title(f, "%s", f->rule);
		if (!f->fix)
			td_finding_fix(f, "%s", "");
	}
	td_report_sort(r);
	/* the one-offs, for the views that tell idle by cause (the phases) */
	free(a->oneoffs);
	a->oneoffs = td_calloc(r->findings.len + 1, sizeof(*a->oneoffs));
	a->noneoffs = 0;
	for (i = 0; i < r->findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		if (f->risk == 3 || f->outside)
			a->oneoffs[a->noneoffs++] = (struct td_oneoff){f->serial, f->device,
								      f->oneoff_row};
	}
}

