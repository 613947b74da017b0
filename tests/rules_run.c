/* SPDX-License-Identifier: MIT */
/* What the rules' suites share (tests/rules_run.h): a trace read, analysed and diagnosed, the
 * look-ups of its findings, and the invariants every diagnosis keeps. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "parser/load.h"
#include "rules/rule.h"
#include "tests/helpers.h"
#include "tests/rules_run.h"

void diagnose_path(const char *path, struct run *x)
{
	struct td_error err;

	td_trace_init(&x->t);
	if (td_trace_load(path, NULL, &x->t, &err) != 0)
		fail_msg("%s: %s", path, err.msg);
	td_analysis_run(&x->a, &x->t, NULL);
	td_diagnose(&x->a, &x->r);
}

void done(struct run *x)
{
	td_report_free(&x->r);
	td_analysis_free(&x->a);
	td_trace_free(&x->t);
}

/* s as the user reads it: without the name marks (kept for the next few calls) */
const char *plain(const char *s)
{
	static char *ring[8];
	static unsigned k;
	char *r = td_unmark(s);

	free(ring[k % 8]);
	ring[k++ % 8] = r;
	return r;
}

const struct td_finding *finding(const struct run *x, const char *rule, const char *in_title)
{
	size_t i;
	for (i = 0; i < x->r.findings.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&x->r.findings, struct td_finding, i);
		if (!strcmp(f->rule, rule) && (!in_title || strstr(plain(f->title), in_title)))
			return f;
	}
	return NULL;
}

const struct td_finding *nth(const struct run *x, size_t i)
{
	return i < x->r.findings.len ? &TD_VEC_AT(&x->r.findings, struct td_finding, i) : NULL;
}

int where_has(const struct td_finding *f, const char *s)
{
	size_t i;
	for (i = 0; i < f->where.len; i++)
		if (strstr(plain(TD_VEC_AT(&f->where, char *, i)), s))
			return 1;
	return 0;
}

uint32_t label(const struct run *x, const char *s)
{
	return td_strtab_find(&x->a.labels, s, strlen(s));
}

int64_t idle_of(const struct run *x, enum td_cause c)
{
	return x->a.ndev ? x->a.dev[0].idle_by_cause[c] : 0;
}

/* Causes sum exactly to the idle total, busy + idle is the window, findings are ordered. */
void check_invariants(const struct run *x, const char *what)
{
	size_t d, i;

	for (d = 0; d < x->a.ndev; d++) {
		const struct td_dev_analysis *dv = &x->a.dev[d];
		int64_t sum = 0, items = 0, gaps = 0;
		int c;
		for (c = 0; c < CAUSE_COUNT; c++)
			sum += dv->idle_by_cause[c];
		for (i = 0; i < dv->idle.len; i++)
			items += TD_VEC_AT(&dv->idle, struct td_idle_item, i).ns;
		for (i = 0; i < dv->ngaps; i++)
			gaps += dv->gaps[i].end - dv->gaps[i].start;
		if (sum != dv->idle_ns || items != dv->idle_ns || gaps != dv->idle_ns ||
		    dv->busy_ns + dv->idle_ns != dv->win_end - dv->win_start)
			fail_msg("%s GPU %d: idle %lld, by cause %lld, items %lld, gaps %lld, busy %lld, "
				 "window %lld", what, dv->device, (long long)dv->idle_ns, (long long)sum,
				 (long long)items, (long long)gaps, (long long)dv->busy_ns,
				 (long long)(dv->win_end - dv->win_start));
	}
	for (d = 0; d < x->a.ndev; d++) {
		const struct td_dev_analysis *dv = &x->a.dev[d];
		uint32_t queued = td_strtab_find(&x->a.labels, TD_LABEL_QUEUED_GAP,
						 sizeof(TD_LABEL_QUEUED_GAP) - 1);
		int64_t claimed = 0, segs = 0;
		/* segments partition the idle; a queued gap charged to launch is a short one */
		for (i = 0; i < dv->nsegs; i++) {
			const struct td_seg *g = &dv->segs[i];
			segs += g->end - g->start;
			if (i)
				assert_true(g->start >= dv->segs[i - 1].end);
			if (queued && g->cause == CAUSE_LAUNCH && g->what == queued &&
			    g->end - g->start > x->a.params.queued_gap_ns)
				fail_msg("%s: a %lld ns queued gap at %lld is called launch overhead", what,
					 (long long)(g->end - g->start), (long long)g->start);
		}
		assert_int_equal(segs, dv->idle_ns);
		/* each idle nanosecond is claimed once: the findings' GPU idle never exceeds it */
		for (i = 0; i < dv->claims.len; i++)
			claimed += TD_VEC_AT(&dv->claims, struct td_claim, i).end -
				   TD_VEC_AT(&dv->claims, struct td_claim, i).start;
		assert_true(claimed <= dv->idle_ns);
	}
	{
		int64_t idle = 0, sum = 0;
		for (d = 0; d < x->a.ndev; d++)
			idle += x->a.dev[d].idle_ns;
		for (i = 0; i < x->r.findings.len; i++)
			sum += nth(x, i)->idle_ns;
		for (i = 0; i < x->r.suppressed.len; i++)
			sum += TD_VEC_AT(&x->r.suppressed, struct td_finding, i).idle_ns;
		if (sum > idle)
			fail_msg("%s: the findings win back %lld ns of GPU idle, more than the %lld there is",
				 what, (long long)sum, (long long)idle);
	}
	for (i = 1; i < x->r.findings.len; i++) { /* by rank, then savings */
		int r0 = td_finding_rank(nth(x, i - 1)), r1 = td_finding_rank(nth(x, i));
		assert_true(r0 <= r1);
		assert_true(r0 < r1 || nth(x, i - 1)->savings_ns >= nth(x, i)->savings_ns);
	}
	for (i = 0; i < x->r.findings.len; i++) {
		const struct td_finding *f = nth(x, i);
		if (f->risk) { /* a risk: no time, after every finding that has some */
			assert_int_equal(f->savings_ns, 0);
			if (f->risk == 3) /* a one-off keeps the idle it holds */
				;
			else if (f->risk == 2 && where_has(f, "not sized: ")) /* as does idle whose
									   * waits were dropped */
				;
			else if (!f->offpath) /* a note off the critical path keeps what it claims */
				assert_int_equal(f->idle_ns, 0);
			else /* replayed, it won less than a line is worth: 1 us, 0.01% of the window */
				assert_true(f->risk == 2 && (f->bounded ? f->bound_ns : f->replay_ns) <
					    (td_an_window_ns(&x->a, f->device) / 10000 > 1000
					     ? td_an_window_ns(&x->a, f->device) / 10000 + 1 : 1000));
			/* ... but the one-off that leads, and time below 1% of the window */
			if (i + 1 < x->r.findings.len && td_finding_rank(f) == 2)
				assert_true(nth(x, i + 1)->risk || nth(x, i + 1)->severity == SEV_INFO);
		} else {
			assert_true(f->savings_ns >= 1000); /* nothing worth a nanosecond is shown */
			enum td_severity want = f->savings_fraction >= 0.10 ? SEV_HIGH
				: f->savings_fraction >= 0.03 ? SEV_MEDIUM
				: f->savings_fraction >= 0.01 ? SEV_LOW : SEV_INFO;
			if (f->max_severity && want > f->max_severity) /* a capped grade */
				want = f->max_severity;
			assert_int_equal(f->severity, want);
		}
		if (!f->risk)
			assert_int_equal(f->savings_ns, f->after ? f->after_ns : f->replayed
					 ? f->replay_ns : f->bounded ? f->bound_ns
					 : f->idle_ns + f->busy_ns);
		if (f->bounded) /* a bound sizes it only where it claims more */
			assert_true(!f->replayed && f->bound_ns < f->idle_ns + f->busy_ns &&
				    (!f->after || f->after_ns <= f->idle_ns + f->busy_ns));
		if (f->after) /* sized after another fix only where it then wins more */
			assert_true(f->after_ns > (f->replayed ? f->replay_ns : f->bound_ns));
		assert_non_null(f->title);
		assert_non_null(f->fix);
		if (!*f->fix) /* every finding says what to do */
			fail_msg("%s: %s has no fix", what, f->rule);
	}
}

int real(const char *name, struct run *x)
{
	diagnose_path(th_shared(name), x);
	check_invariants(x, name);
	return 1;
}
