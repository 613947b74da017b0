/* SPDX-License-Identifier: MIT */
#include "analysis/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_tree.h>

#include "common/alloc.h"
#include "parser/jsoncheck.h"
#include "common/sort.h"
#include "analysis/blocking.h"
#include "config/config.h"
#include "common/fmt.h"
#include "analysis/analysis.h"
#include "analysis/finding.h"
#include "analysis/roofline.h"

static const struct {
	const char *id;
	enum td_metric_kind kind;
} metric_ids[] = {
	{"step_time_median_ns", MK_TIME},
	{"step_time_p90_ns", MK_TIME},
	{"decode_step_time_median_ns", MK_TIME}, /* a serving run's decode iterations */
	{"gpu_busy_fraction", MK_FRACTION},
	{"mfu_fraction", MK_FRACTION}, /* analysis/roofline.h: with FLOPs and the device's peaks */
	{"idle_ns_per_step", MK_TIME},
	{"idle_dataloader_ns_per_step", MK_TIME},
	{"idle_warmup_ns_per_step", MK_TIME},
	{"idle_sync_ns_per_step", MK_TIME},
	{"idle_transfer_ns_per_step", MK_TIME},
	{"idle_allocator_ns_per_step", MK_TIME},
	{"idle_communication_ns_per_step", MK_TIME},
	{"idle_launch_ns_per_step", MK_TIME},
	{"idle_dependency_ns_per_step", MK_TIME},
	{"idle_host_ns_per_step", MK_TIME},
	{"idle_nothing_ns_per_step", MK_TIME},
	{"dataloader_ns_per_step", MK_TIME},
	{"communication_ns_per_step", MK_TIME},
	{"kernel_launches_per_step", MK_COUNT},
	{"sync_calls_per_step", MK_COUNT},
	{"stream_syncs_per_step", MK_COUNT},
	{"device_syncs_per_step", MK_COUNT},
	{"event_syncs_per_step", MK_COUNT},
	{"sync_copies_per_step", MK_COUNT},
	{"htod_copies_per_step", MK_COUNT},
	{"htod_bytes_per_step", MK_COUNT},
	{"dtoh_copies_per_step", MK_COUNT},
	{"dtoh_bytes_per_step", MK_COUNT},
	{"pageable_copies_per_step", MK_COUNT},
	{"small_kernels_per_step", MK_COUNT},
	/* jobs only: the straggler's cost, and the most any rank waits in its collectives */
	{"straggler_wait_ns_per_step", MK_TIME},
	{"collective_wait_ns_per_step", MK_TIME},
};
#define NMETRICS (sizeof(metric_ids) / sizeof(metric_ids[0]))

static struct td_metric *slot(struct td_metrics *m, const char *id)
{
	size_t i;
	for (i = 0; i < m->n; i++)
		if (!strcmp(m->m[i].id, id))
			return &m->m[i];
	return NULL;
}

static void init(struct td_metrics *m)
{
	size_t i;
	memset(m, 0, sizeof(*m));
	for (i = 0; i < NMETRICS; i++) {
		m->m[i].id = metric_ids[i].id;
		m->m[i].kind = metric_ids[i].kind;
	}
	m->n = NMETRICS;
}

static void set(struct td_metrics *m, const char *id, double v)
{
	struct td_metric *s = slot(m, id);
	if (s) {
		s->value = v;
		s->present = 1;
	}
}

const struct td_metric *td_metrics_get(const struct td_metrics *m, const char *id)
{
	return slot((struct td_metrics *)m, id);
}

static void add_suppressed(struct td_metrics *m, const char *rule, const char *why)
{
	size_t k;

	for (k = 0; k < m->nsuppressed; k++)
		if (!strcmp(m->suppressed[k], rule))
			return;
	if (m->nsuppressed == TD_HIGH_MAX)
		return;
	snprintf(m->suppressed[m->nsuppressed], sizeof(m->suppressed[0]), "%s", rule);
	snprintf(m->why[m->nsuppressed++], sizeof(m->why[0]), "%s", why ? why : "");
}

/* which rule's findings each metric measures: a suppression of that rule covers the metric */
static const struct {
	const char *metric, *rule;
} metric_rules[] = {
	{"idle_dataloader_ns_per_step", "dataloader"}, {"dataloader_ns_per_step", "dataloader"},
	{"idle_warmup_ns_per_step", "warmup"}, {"idle_sync_ns_per_step", "sync-stall"},
	{"sync_calls_per_step", "sync-stall"}, {"stream_syncs_per_step", "sync-stall"},
	{"device_syncs_per_step", "sync-stall"}, {"event_syncs_per_step", "sync-stall"},
	{"sync_copies_per_step", "sync-stall"}, {"idle_transfer_ns_per_step", "transfer"},
	{"pageable_copies_per_step", "transfer"}, {"htod_copies_per_step", "transfer"},
	{"htod_bytes_per_step", "transfer"}, {"dtoh_copies_per_step", "transfer"},
	{"dtoh_bytes_per_step", "transfer"}, {"idle_allocator_ns_per_step", "allocator"},
	{"idle_communication_ns_per_step", "communication"},
	{"communication_ns_per_step", "communication"}, {"small_kernels_per_step", "small-kernels"},
	{"idle_launch_ns_per_step", "gpu-idle"}, {"idle_dependency_ns_per_step", "gpu-idle"},
	{"idle_host_ns_per_step", "gpu-idle"}, {"idle_nothing_ns_per_step", "gpu-idle"},
};

const char *td_metric_rule(const char *id)
{
	size_t i;

	for (i = 0; i < sizeof(metric_rules) / sizeof(metric_rules[0]); i++)
		if (!strcmp(metric_rules[i].metric, id))
			return metric_rules[i].rule;
	return NULL;
}

const char *td_metric_str(char *buf, size_t cap, const char *id, double v)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else if (strstr(id, "_ns"))
		td_fmt_dur(buf, cap, (int64_t)llround(v));
	else if (strstr(id, "fraction") || strstr(id, "gpu_busy"))
		snprintf(buf, cap, "%.1f%%", 100 * v);
	else if (strstr(id, "bytes"))
		td_fmt_bytes(buf, cap, v);
	else
		snprintf(buf, cap, "%.2f", v);
	return buf;
}

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

/* What the per-step metrics count of one event (td_metrics_compute). */
struct counts {
	int64_t dl, comm;
	double launches, htod, htodb, dtoh, dtohb, pageable;
};

static void count_event(const struct td_analysis *a, uint32_t i, int64_t ws, int64_t we,
			struct td_track_cursor *cur, struct counts *ct)
{
	const struct td_trace *t = a->t;
	const struct td_event *e = td_trace_ev(t, i);
	uint32_t cl = td_an_class(a, e->name);

	if (cl & NC_IGNORE)
		return;
	if (td_kind_on_gpu_track(e->kind)) {
		int di = td_an_dev_index(a, td_trace_track(t, td_trace_track_at(t, cur, i))->device);
		if (di < 0 || e->ts < a->dev[di].win_start || e->ts >= a->dev[di].win_end)
			return;
	} else if (e->ts < ws || e->ts >= we) {
		return;
	}
	if (e->kind == TD_K_RUNTIME) {
		if (cl & NC_LAUNCH)
			ct->launches++;
	} else if ((cl & NC_DATALOADER) && !td_kind_on_gpu_track(e->kind)) {
		if (td_an_outer_dataloader(a, i))
			ct->dl += td_ev_dur(e);
	} else if (e->kind == TD_K_KERNEL && (cl & NC_COMM)) {
		ct->comm += td_ev_dur(e);
	} else if (e->kind == TD_K_MEMCPY) {
		enum td_copy_dir dir;
		enum td_mem_kind src, dst;
		uint64_t b = TD_VEC_AT(&t->xfer_bytes, uint64_t, e->aux);
		td_memcpy_kind(td_trace_name(t, e->name), &dir, &src, &dst);
		if (dir == CD_HTOD) {
			ct->htod++;
			ct->htodb += (double)b;
		} else if (dir == CD_DTOH) {
			ct->dtoh++;
			ct->dtohb += (double)b;
		}
		if (src == MK_PAGEABLE || dst == MK_PAGEABLE)
			ct->pageable++;
	}
}

void td_metrics_compute(struct td_analysis *a, const struct td_report *r,
			struct td_metrics *out)
{
	const struct td_trace *t = a->t;
	double per = a->nsteps ? (double)a->nsteps : 1.0;
	int64_t busy = 0, win = 0, idle = 0, cause[CAUSE_COUNT] = {0};
	double syncs = 0, ssync = 0, dsync = 0, esync = 0, csync = 0, small = 0;
	struct counts ct;
	int64_t ws = 0, we = 0; /* the host side of every device's steady state */
	const struct td_block_unit *u;
	struct td_track_cursor cur = {0, 0, 0};
	size_t d, i, nu;
	int c;

	init(out);
	memset(&ct, 0, sizeof(ct));
	out->steps = a->nsteps;
	out->partial = t->partial;
	for (d = 0; d < a->ndev; d++) {
		if (!d || a->dev[d].host_start < ws)
			ws = a->dev[d].host_start;
		if (!d || a->dev[d].host_end > we)
			we = a->dev[d].host_end;
	}
	if (!a->ndev && a->has_steps) {
		ws = a->steps_start;
		we = a->steps_end;
	}
	if (a->nsteps) {
		int64_t *dur = td_malloc(a->nsteps * sizeof(*dur));
		for (i = 0; i < a->nsteps; i++)
			dur[i] = a->steps[i].end - a->steps[i].start;
		sort_i64(dur, a->nsteps);
		set(out, "step_time_p90_ns", (double)dur[(a->nsteps * 9 + 9) / 10 - 1]);
		set(out, "step_time_median_ns", (double)td_median_i64(dur, a->nsteps));
		for (i = 0, nu = 0; a->step_phase && i < a->nsteps; i++)
			if (a->step_phase[i] == TD_PHASE_DECODE)
				dur[nu++] = a->steps[i].end - a->steps[i].start;
		if (nu)
			set(out, "decode_step_time_median_ns", (double)td_median_i64(dur, nu));
		free(dur);
	}
	/* host syncs are the user's calls that block, counted as sync-stall counts them */
	nu = td_an_block_units(a, &u);
	for (i = 0; i < nu; i++) {
		syncs++;
		if (u[i].kinds & BK_DEVICE)
			dsync++;
		else if (u[i].kinds & BK_STREAM)
			ssync++;
		else if (u[i].kinds & BK_EVENT)
			esync++;
		else
			csync++;
	}
	for (d = 0; d < a->ndev; d++) {
		busy += a->dev[d].busy_ns;
		idle += a->dev[d].idle_ns;
		win += a->dev[d].win_end - a->dev[d].win_start;
		for (c = 0; c < CAUSE_COUNT; c++)
			cause[c] += a->dev[d].idle_by_cause[c];
		small += (double)a->dev[d].small_kernels;
	}
	if (a->ndev) {
		char id[64];
		struct td_mfu mfu;
		set(out, "gpu_busy_fraction", win ? (double)busy / (double)win : 0.0);
		td_an_mfu(a, &mfu);
		if (!isnan(mfu.mfu))
			set(out, "mfu_fraction", mfu.mfu > 1 ? 1 : mfu.mfu);
		set(out, "idle_ns_per_step", (double)idle / per);
		for (c = 0; c < CAUSE_COUNT; c++) {
			snprintf(id, sizeof(id), "idle_%s_ns_per_step", td_cause_id((enum td_cause)c));
			set(out, id, (double)cause[c] / per);
		}
	}
	/* the kinds counted, each over its own events (TD_FOR_KIND), or every event once where
	 * the trace keeps no kinds apart or a configured data-loading pattern may name a frame */
	if (!t->scan || a->cfg->patterns[PAT_DATALOADER]) {
		for (i = 0; i < t->events.len; i++)
			count_event(a, (uint32_t)i, ws, we, &cur, &ct);
	} else {
		static const int kinds[] = {TD_K_RUNTIME, TD_K_CPU_OP, TD_K_USER_ANNOTATION,
					    TD_K_OTHER_SPAN, TD_K_KERNEL, TD_K_MEMCPY};
		size_t k, j;
		uint32_t e;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			TD_FOR_KIND(t, kinds[k], j, e)
				count_event(a, e, ws, we, &cur, &ct);
	}
	{
		const struct {
			const char *id;
			double total;
		} per_step[] = {
			{"dataloader_ns_per_step", (double)ct.dl},
			{"communication_ns_per_step", (double)ct.comm},
			{"kernel_launches_per_step", ct.launches}, {"sync_calls_per_step", syncs},
			{"stream_syncs_per_step", ssync}, {"device_syncs_per_step", dsync},
			{"event_syncs_per_step", esync}, {"sync_copies_per_step", csync},
			{"htod_copies_per_step", ct.htod}, {"htod_bytes_per_step", ct.htodb},
			{"dtoh_copies_per_step", ct.dtoh}, {"dtoh_bytes_per_step", ct.dtohb},
			{"pageable_copies_per_step", ct.pageable}, {"small_kernels_per_step", small},
		};
		for (i = 0; i < sizeof(per_step) / sizeof(per_step[0]); i++)
			set(out, per_step[i].id, per_step[i].total / per);
	}
	for (i = 0; i < r->findings.len && out->nhigh < TD_HIGH_MAX; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->findings, struct td_finding, i);
		size_t k;
		int dup = 0;
		if (f->severity != SEV_HIGH)
			continue;
		for (k = 0; k < out->nhigh; k++)
			dup |= !strcmp(out->high[k], f->rule);
		if (!dup)
			snprintf(out->high[out->nhigh++], sizeof(out->high[0]), "%s", f->rule);
	}
	for (i = 0; i < r->suppressed.len; i++) {
		const struct td_finding *f = &TD_VEC_AT(&r->suppressed, struct td_finding, i);
		add_suppressed(out, f->rule, f->suppressed);
	}
}

int td_metrics_read(struct yajl_val_s *root, struct td_metrics *out, size_t steps,
		    struct td_error *err)
{
	const char *mp[] = {"metrics", NULL}, *fp[] = {"findings", NULL}, *hp[] = {"high", NULL};
	const char *supp[] = {"suppressed", NULL};
	yajl_val metrics = yajl_tree_get(root, mp, yajl_t_object), findings, high, sv, v;
	size_t i;

	init(out);
	out->steps = steps;
	for (i = 0; metrics && i < metrics->u.object.len; i++) {
		const struct td_metric *m = slot(out, metrics->u.object.keys[i]);
		double x;
		v = metrics->u.object.values[i];
		if (!m) /* a metric of a later version: not compared */
			continue;
		if (!YAJL_IS_NUMBER(v))
			return td_error_set(err, TD_EFORMAT, "metrics.%s: a number, or absent",
					    metrics->u.object.keys[i]);
		x = YAJL_GET_DOUBLE(v);
		/* a baseline the repository holds is input too: no impossible values */
		if (!isfinite(x) || x < 0 || x > 1e18 || (m->kind == MK_FRACTION && x > 1))
			return td_error_set(err, TD_EFORMAT, "metrics.%s: %s is not a possible value (%s)",
					    metrics->u.object.keys[i], v->u.number.r ? v->u.number.r : "?",
					    m->kind == MK_FRACTION ? "a fraction, 0 to 1"
					    : "a time, count or size: 0 to 1e18");
		set(out, metrics->u.object.keys[i], x);
	}
	high = yajl_tree_get(root, hp, yajl_t_array);
	for (i = 0; high && i < high->u.array.len && out->nhigh < TD_HIGH_MAX; i++)
		if (YAJL_IS_STRING(high->u.array.values[i]))
			snprintf(out->high[out->nhigh++], sizeof(out->high[0]), "%s",
				 high->u.array.values[i]->u.string);
	findings = high ? NULL : yajl_tree_get(root, fp, yajl_t_array);
	for (i = 0; findings && i < findings->u.array.len && out->nhigh < TD_HIGH_MAX; i++) {
		const char *rp[] = {"rule", NULL}, *svp[] = {"severity", NULL};
		yajl_val rule = yajl_tree_get(findings->u.array.values[i], rp, yajl_t_string);
		yajl_val sev = yajl_tree_get(findings->u.array.values[i], svp, yajl_t_string);
		size_t k;
		int dup = 0;
		if (!rule || !sev || strcmp(sev->u.string, "high") != 0)
			continue;
		for (k = 0; k < out->nhigh; k++)
			dup |= !strcmp(out->high[k], rule->u.string);
		if (!dup)
			snprintf(out->high[out->nhigh++], sizeof(out->high[0]), "%s", rule->u.string);
	}
	sv = yajl_tree_get(root, supp, yajl_t_array);
	for (i = 0; sv && i < sv->u.array.len; i++) {
		const char *rp[] = {"rule", NULL}, *wp[] = {"reason", NULL};
		yajl_val rule = yajl_tree_get(sv->u.array.values[i], rp, yajl_t_string);
		yajl_val why = yajl_tree_get(sv->u.array.values[i], wp, yajl_t_string);
		if (rule)
			add_suppressed(out, rule->u.string, why ? why->u.string : "");
	}
	return 0;
}

int td_metrics_from_report(const char *json, struct td_metrics *out, struct td_error *err)
{
	yajl_val root;
	const char *sp[] = {"schema", NULL}, *mp[] = {"metrics", NULL};
	const char *tp[] = {"trace", "partial", NULL}, *stp[] = {"window", "steps", NULL};
	const char *jsp[] = {"steps", NULL};
	yajl_val schema, v;
	size_t steps = 0;
	int job;

	init(out);
	/* a report is small and shallow: a deep one is refused before the recursive tree parse */
	root = td_json_tree(json, "report", "not a tracedoc report: ", TD_EFORMAT, err);
	if (!root)
		return TD_EFORMAT;
	schema = yajl_tree_get(root, sp, yajl_t_string);
	job = schema && !strcmp(schema->u.string, "tracedoc.job/1");
	if (!schema || (strcmp(schema->u.string, "tracedoc.report/1") != 0 && !job) ||
	    !yajl_tree_get(root, mp, yajl_t_object)) {
		yajl_tree_free(root);
		return td_error_set(err, TD_EFORMAT, "%s",
				    "not a tracedoc.report/1 or tracedoc.job/1 report with \"metrics\"");
	}
	if ((v = yajl_tree_get(root, job ? jsp : stp, yajl_t_number)) != NULL) {
		if (!YAJL_IS_INTEGER(v) || YAJL_GET_INTEGER(v) < 0 || YAJL_GET_INTEGER(v) > 1000000000) {
			yajl_tree_free(root);
			return td_error_set(err, TD_EFORMAT, "%s: a whole number of steps, 0 to 1e9",
					    job ? "steps" : "window.steps");
		}
		steps = (size_t)YAJL_GET_INTEGER(v);
	}
	if (td_metrics_read(root, out, steps, err) != 0) {
		yajl_tree_free(root);
		return TD_EFORMAT;
	}
	if ((v = yajl_tree_get(root, tp, yajl_t_any)) != NULL)
		out->partial = YAJL_IS_TRUE(v);
	yajl_tree_free(root);
	return 0;
}

static struct td_check *add(struct td_check *checks, size_t max, size_t *n, const char *name)
{
	struct td_check *c;
	if (*n >= max)
		return NULL;
	c = &checks[(*n)++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->base = c->cur = NAN;
	return c;
}

static double tolerance_for(const struct td_config *cfg, const char *id)
{
	if (!strcmp(id, "sync_calls_per_step") || strstr(id, "syncs_per_step") ||
	    !strcmp(id, "sync_copies_per_step"))
		return cfg->gate.sync_tolerance;
	if (!strcmp(id, "pageable_copies_per_step"))
		return cfg->gate.pageable_tolerance;
	return cfg->gate.count_tolerance;
}

/* "per step", or "in the window" when the trace has no steps to divide by */
static const char *unit(const struct td_metrics *m)
{
	return m->steps ? "per step" : "in the window (no steps)";
}

static void describe(struct td_check *c, const struct td_metrics *cur)
{
	char b[32], bb[32];
	const char *id = c->name;

	td_metric_str(b, sizeof(b), id, c->cur);
	td_metric_str(bb, sizeof(bb), id, c->base);
	if (c->base == 0 && c->cur > 0)
		snprintf(c->message, sizeof(c->message), "%s is %s %s, where the baseline had none "
			 "(allowed %s)", id, b, unit(cur), c->rule);
	else
	{
		const char *u = strcmp(id, "gpu_busy_fraction") && strcmp(id, "mfu_fraction") &&
			strncmp(id, "step_", 5) ? unit(cur) : "";
		snprintf(c->message, sizeof(c->message), "%s %s from %s to %s%s%s (%+.1f%%; allowed %s)",
			 id, c->cur > c->base ? "rose" : c->cur < c->base ? "fell" : "stayed", bb, b,
			 *u ? " " : "", u, c->base ? 100 * (c->cur - c->base) / c->base : 0.0, c->rule);
	}
}

size_t td_gate_compare(const struct td_metrics *base, const struct td_metrics *cur,
		       const struct td_config *cfg, struct td_check *checks, size_t max,
		       size_t *nchecks)
{
	const struct td_gate_config *g = &cfg->gate;
	size_t i, fails = 0;
	struct td_check *c;

	*nchecks = 0;
	if (base) {
		/* Idle moves between causes when the main bottleneck goes (data loading fixed, the
		 * host's own work shows): a cause fails only when the total idle rose as well. A new
		 * high finding likewise, unless the step clearly got faster; new syncs and copies
		 * are still caught by their counts. */
		const struct td_metric *ti = td_metrics_get(cur, "idle_ns_per_step");
		const struct td_metric *bi = td_metrics_get(base, "idle_ns_per_step");
		const struct td_metric *ts = td_metrics_get(cur, "step_time_median_ns");
		const struct td_metric *bs = td_metrics_get(base, "step_time_median_ns");
		int idle_rose = ti && bi && ti->present && bi->present &&
				ti->value > bi->value * (1 + g->time_threshold) &&
				ti->value - bi->value > (double)g->time_floor_ns;
		int step_fell = ts && bs && ts->present && bs->present &&
				ts->value < bs->value * (1 - g->time_threshold) &&
				bs->value - ts->value > (double)g->time_floor_ns;
		/* per-step figures of a trace with steps and window totals of one without them
		 * measure different things */
		int comparable = !base->steps == !cur->steps;

		for (i = 0; i < cur->n; i++) {
			const struct td_metric *m = &cur->m[i];
			const struct td_metric *b = td_metrics_get(base, m->id);
			const char *rule = td_metric_rule(m->id);
			size_t k;
			if (!m->present || !b || !b->present)
				continue;
			if (!(c = add(checks, max, nchecks, m->id)))
				break;
			c->base = b->value;
			c->cur = m->value;
			c->has_base = 1;
			for (k = 0; rule && k < cur->nsuppressed; k++)
				if (!strcmp(cur->suppressed[k], rule)) {
					c->verdict = V_SKIP;
					snprintf(c->rule, sizeof(c->rule), "suppressed (%s)", rule);
					snprintf(c->message, sizeof(c->message), "%s is not judged: the config "
						 "suppresses %s: %s", m->id, rule, cur->why[k]);
				}
			if (c->verdict == V_SKIP)
				continue;
			if (!comparable && strcmp(m->id, "gpu_busy_fraction") &&
			    strcmp(m->id, "mfu_fraction") && strncmp(m->id, "step_", 5)) {
				c->verdict = V_SKIP;
				snprintf(c->rule, sizeof(c->rule), "steps in one trace only");
				snprintf(c->message, sizeof(c->message), "%s is not judged: %s has steps and "
					 "the other has none, so its per-step value is not comparable", m->id,
					 cur->steps ? "the current trace" : "the baseline");
				continue;
			}
			switch (m->kind) {
			case MK_TIME:
				c->threshold = g->time_threshold;
				snprintf(c->rule, sizeof(c->rule), "+%.0f%% and +%.3g ms", 100 * g->time_threshold,
					 (double)g->time_floor_ns / 1e6);
				c->verdict = m->value > b->value * (1 + g->time_threshold) &&
						     m->value - b->value > (double)g->time_floor_ns
					? V_FAIL : V_PASS;
				if (c->verdict == V_FAIL && !strncmp(m->id, "idle_", 5) &&
				    strcmp(m->id, "idle_ns_per_step") != 0 && !idle_rose) {
					c->verdict = V_PASS;
					snprintf(c->rule, sizeof(c->rule), "+%.0f%% with total idle",
						 100 * g->time_threshold);
				}
				break;
			case MK_FRACTION:
				c->threshold = g->time_threshold;
				snprintf(c->rule, sizeof(c->rule), "-%.0f%% and -%.2g", 100 * g->time_threshold,
					 g->busy_floor);
				c->verdict = m->value < b->value * (1 - g->time_threshold) &&
						     b->value - m->value > g->busy_floor
					? V_FAIL : V_PASS;
				break;
			case MK_COUNT:
				c->threshold = tolerance_for(cfg, m->id);
				snprintf(c->rule, sizeof(c->rule), "+%.0f%%", 100 * c->threshold);
				c->verdict = m->value > b->value * (1 + c->threshold) + 1e-9 ? V_FAIL : V_PASS;
				break;
			}
			describe(c, cur);
			fails += c->verdict == V_FAIL;
		}
		if (g->fail_on_new_high) {
			for (i = 0; i < cur->nhigh; i++) {
				size_t k;
				int had = 0;
				for (k = 0; k < base->nhigh; k++)
					had |= !strcmp(base->high[k], cur->high[i]);
				if (had)
					continue;
				if (!(c = add(checks, max, nchecks, "new high finding")))
					break;
				snprintf(c->rule, sizeof(c->rule), "%s", cur->high[i]);
				if (step_fell) {
					c->verdict = V_PASS; /* re-ranked, not new: the step got faster */
					snprintf(c->message, sizeof(c->message), "%s is high now but the median "
						 "step got faster: re-ranked, not new", cur->high[i]);
					continue;
				}
				c->verdict = V_NEW;
				snprintf(c->message, sizeof(c->message), "a new high finding: %s (the baseline "
					 "had none of it at high)", cur->high[i]);
				fails++;
			}
		}
	}
	/* absolute budgets */
	{
		const struct {
			const char *name, *metric, *what;
			double limit;
			int at_least;
		} budgets[] = {
			{"min_gpu_busy", "gpu_busy_fraction", "GPU busy", g->min_gpu_busy, 1},
			{"max_syncs_per_step", "sync_calls_per_step", "host syncs", g->max_syncs_per_step, 0},
			{"max_pageable_copies_per_step", "pageable_copies_per_step", "pageable copies",
			 g->max_pageable_copies_per_step, 0},
			{"max_step_time_us", "step_time_median_ns", "the median step",
			 g->max_step_time_ns < 0 ? -1 : (double)g->max_step_time_ns, 0},
			{"max_decode_step_time_us", "decode_step_time_median_ns",
			 "the median decode iteration",
			 g->max_decode_step_time_ns < 0 ? -1 : (double)g->max_decode_step_time_ns, 0},
			{"max_idle_fraction", "gpu_busy_fraction", "GPU idle",
			 g->max_idle_fraction < 0 ? -1 : 1 - g->max_idle_fraction, 1},
			{"min_mfu", "mfu_fraction", "MFU", g->min_mfu, 1},
		};
		for (i = 0; i < sizeof(budgets) / sizeof(budgets[0]); i++) {
			const struct td_metric *m = td_metrics_get(cur, budgets[i].metric);
			char v[32], l[32];
			int idle = !strcmp(budgets[i].name, "max_idle_fraction");
			int per_step = strstr(budgets[i].name, "per_step") != NULL;
			if (budgets[i].limit < 0)
				continue;
			if (!(c = add(checks, max, nchecks, budgets[i].name)))
				break;
			c->threshold = budgets[i].limit;
			c->cur = m && m->present ? m->value : NAN;
			td_metric_str(v, sizeof(v), budgets[i].metric, idle ? 1 - c->cur : c->cur);
			td_metric_str(l, sizeof(l), budgets[i].metric, idle ? 1 - budgets[i].limit
				      : budgets[i].limit);
			snprintf(c->rule, sizeof(c->rule), "%s %s %s%s", budgets[i].what,
				 (budgets[i].at_least && !idle) ? ">=" : "<=", l, per_step ? " per step" : "");
			if (!m || !m->present) {
				c->verdict = V_SKIP;
				snprintf(c->message, sizeof(c->message), "%s is not judged: the trace has no "
					 "%s", budgets[i].name,
					 budgets[i].metric[0] == 'd' ? "decode iterations"
					 : budgets[i].metric[0] == 's' && budgets[i].metric[1] == 't'
					 ? "steps" : budgets[i].metric[0] == 'm' ? "FLOPs against a known peak "
					 "(record_shapes=True and a device of docs/roofline.md, or --peaks)"
					 : "GPU activity");
			} else if (per_step && !cur->steps) {
				c->verdict = V_SKIP;
				snprintf(c->message, sizeof(c->message), "%s is not judged: the trace has no "
					 "steps, so there is no per-step count (%s %s in the window)",
					 budgets[i].name, v, budgets[i].what);
			} else if (budgets[i].at_least ? m->value < budgets[i].limit
				   : m->value > budgets[i].limit) {
				c->verdict = V_FAIL;
			} else {
				c->verdict = V_PASS;
			}
			if (c->verdict == V_FAIL || c->verdict == V_PASS)
				snprintf(c->message, sizeof(c->message), "%s %s%s is %s the budget %s (%s)",
					 budgets[i].what, v, per_step ? " per step" : "",
					 c->verdict == V_FAIL ? ((budgets[i].at_least && !idle) ? "below"
								  : "above")
					 : "within", l, budgets[i].name);
			fails += c->verdict == V_FAIL;
		}
	}
	return fails;
}

const char *td_gate_nothing(const struct td_metrics *base, const struct td_metrics *cur,
			    const struct td_check *checks, size_t n, char *buf, size_t cap)
{
	const struct td_metric *busy = td_metrics_get(cur, "gpu_busy_fraction");
	size_t i, judged = 0;

	if (!cur->steps && !(busy && busy->present)) {
		snprintf(buf, cap, "the current trace has no ProfilerStep# steps and no GPU activity: "
			 "nothing in it can be compared (was the profiler on, did its schedule record "
			 "any step, and did the run reach the GPU?)");
		return buf;
	}
	if (base && !base->steps != !cur->steps) {
		snprintf(buf, cap, "the %s has %zu ProfilerStep# steps and the %s has none: the "
			 "steps' markers were lost (the profiler, its schedule or the training loop "
			 "changed), so no per-step metric can be compared; record steps in both, or "
			 "save the baseline again", base->steps ? "baseline" : "current trace",
			 base->steps ? base->steps : cur->steps,
			 base->steps ? "current trace" : "baseline");
		return buf;
	}
	for (i = 0; i < n; i++)
		judged += checks[i].verdict != V_SKIP;
	if (!judged) {
		if (n)
			snprintf(buf, cap, "every one of the %zu checks was skipped (the reasons are "
				 "below), so nothing was judged", n);
		else
			snprintf(buf, cap, "there is no check to run: give a baseline (--baseline) or "
				 "budgets in the config (gate.budgets)");
		return buf;
	}
	return NULL;
}
