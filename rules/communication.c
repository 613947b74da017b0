/* SPDX-License-Identifier: MIT */
/* communication: collective kernels (the config's communication patterns: NCCL, RCCL) per
 * device and per step - their time, how much of it compute hides (HTA's overlap:
 * time(compute and communication) / time(communication)), the exposed rest, the GPU idle of
 * queued ops waiting on a collective, and for collectives whose arguments carry sizes the
 * achieved bandwidth (a collective far slower than its bytes need was waiting for a peer).
 * Sized by the exposed communication (GPU busy time that overlap would hide) plus that idle. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sort.h"
#include "analysis/intervals.h"
#include "fixes/catalogue.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

#define BUCKET_BYTES (25ll << 20) /* DDP's bucket_cap_mb default: the tail left exposed */

#define I64_LESS(x, y) (*(x) < *(y))
TD_DEFINE_SORT(sort_i64, int64_t, I64_LESS)

/* the exposed part of [s, e): its overlap with the sorted, disjoint intervals ex[0..n) */
static int64_t exposed_part(const struct td_interval *ex, size_t n, int64_t s, int64_t e)
{
	size_t lo = 0, hi = n;
	int64_t sum = 0;

	while (lo < hi) { /* the first interval ending after s */
		size_t mid = lo + (hi - lo) / 2;
		if (ex[mid].end <= s)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < n && ex[lo].start < e; lo++)
		sum += (ex[lo].end < e ? ex[lo].end : e) - (ex[lo].start > s ? ex[lo].start : s);
	return sum;
}

/* The bytes a collective moves (its args' element count and dtype), 0 when not recorded. */
static int64_t coll_bytes(const struct td_trace *t, uint32_t ev)
{
	const struct td_coll *co = td_trace_coll(t, ev);
	int sz;
	int64_t n;

	if (!co || !co->dtype)
		return 0;
	sz = td_dtype_bytes(td_trace_name(t, co->dtype));
	n = co->in_nelems > co->out_nelems ? co->in_nelems : co->out_nelems;
	return sz > 0 && n > 0 ? n * sz : 0;
}

/* The last step (index in dv->gsteps, by start) whose GPU span holds ts, or nsteps for none. */
static size_t gstep_of(const struct td_analysis *a, const struct td_dev_analysis *dv, int64_t ts)
{
	size_t lo, stop;

	if (!dv->gsteps)
		return a->nsteps;

	TD_LOWER_BOUND(lo, a->nsteps, dv->gsteps[mid].start <= ts);
	/* spans may overlap their neighbours: the latest one starting by ts that holds it */
	for (stop = lo > 4 ? lo - 4 : 0; lo-- > stop;)
		if (ts < dv->gsteps[lo].end)
			return lo;
	return a->nsteps;
}

/* Where gradients begin, per step of device index d (slot nsteps: the whole window): the first
 * GPU op launched under a backward op (an autograd node, "...Backward0"), INT64_MAX for none.
 * One pass over the device's events. */
static int64_t *backward_starts(struct td_analysis *a, size_t d)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	int64_t *bwd = td_malloc((a->nsteps + 1) * sizeof(*bwd));
	struct td_dev_events it;
	uint32_t k;
	size_t i;

	for (i = 0; i <= a->nsteps; i++)
		bwd[i] = INT64_MAX;
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &k);) {
		const struct td_event *e = td_trace_ev(t, k);
		uint32_t l, p;
		int depth;
		if (e->ts < dv->win_start || e->ts >= dv->win_end || !td_kind_is_gpu_op(e->kind) ||
		    (l = td_trace_launch(t, k)) == TD_NONE)
			continue;
		for (p = td_trace_parent(t, l), depth = 0; p != TD_NONE && depth < 64;
		     p = td_trace_parent(t, p), depth++) {
			const char *n = td_trace_name(t, td_trace_ev(t, p)->name);
			if (strstr(n, "Backward") || strstr(n, "autograd::engine")) {
				size_t st = gstep_of(a, dv, e->ts);
				if (e->ts < bwd[st])
					bwd[st] = e->ts;
				if (e->ts < bwd[a->nsteps])
					bwd[a->nsteps] = e->ts;
				break;
			}
		}
	}
	return bwd;
}

/* A collective kernel's kind: its name's; RCCL's ncclDevKernel_Generic, its record's. NCCL runs
 * all-to-all - and other collectives in recent versions - as SendRecv kernels: where the name
 * says no more than send/recv, the op that launched it says what it is (nccl:all_reduce,
 * nccl:_all_gather_base over a SendRecv kernel: comm-rank0). */
static int kernel_coll_kind(const struct td_trace *t, uint32_t coll)
{
	int k = td_coll_kind_of(td_trace_name(t, td_trace_ev(t, coll)->name)), depth = 0;
	uint32_t p;

	if (k < 0) {
		const struct td_coll *co = td_trace_coll(t, coll);
		char nb[96];
		if (co && co->name) {
			snprintf(nb, sizeof(nb), "c10d::%.80s", td_trace_name(t, co->name));
			k = td_coll_kind_of(nb);
		}
	}
	if (k >= 0 && k != TD_COLL_SEND_RECV)
		return k;
	for (p = td_trace_launch(t, coll); p != TD_NONE && depth < 32;
	     p = td_trace_parent(t, p), depth++) {
		const struct td_event *pe = td_trace_ev(t, p);
		int pk;
		if (pe->kind != TD_K_CPU_OP && pe->kind != TD_K_USER_ANNOTATION)
			continue;
		if ((pk = td_coll_kind_of(td_trace_name(t, pe->name))) >= 0)
			return pk;
	}
	return k;
}

/* The fix replayed, where the trace says when each exposed collective's inputs are ready:
 * - an all-reduce of a training step larger than one bucket is reduced in buckets as backward
 *   produces its gradients: it starts once the compute before it has run so far that only its
 *   last bucket's share runs after that compute, and not before the backward (from its first
 *   op in the step, else the step's first op) has run the first bucket's share;
 * - a parameter all-gather of FSDP or ZeRO-3 (the parameters are ready from the step's start)
 *   is prefetched: it may run beside the compute before it, whole, and not before the step's
 *   first op; the step's first all-gather has nothing before it to hide under and stays.
 * Replayed only when every exposed collective is one of these (a reduce-scatter, an
 * all-to-all, a bucket already, or one without sizes: their inputs' readiness is not in the
 * trace); else the exposed collectives made free (TD_RP_FREE) bound what any fix wins, and
 * size the finding where that is less than the idle-based figure. */
static void overlap_edits(struct td_analysis *a, struct td_finding *f, size_t d,
			  const struct td_interval *exposed, size_t ne)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_dev_events it;
	struct td_vec edits, frees;
	uint32_t coll;
	size_t i;
	int ok = 1;

	int sharded = !!(a->ctx.on & (TD_ON_FSDP | TD_ON_DEEPSPEED));
	size_t last_step = SIZE_MAX;

	if (!td_an_whatif(a))
		return;
	td_vec_init(&edits, sizeof(struct td_rp_edit));
	td_vec_init(&frees, sizeof(struct td_rp_edit));
	for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &coll);) {
		const struct td_event *e = td_trace_ev(t, coll);
		unsigned c = td_an_class(a, e->name);
		int kind, first;
		struct td_rp_edit *ed;
		int64_t bytes;
		size_t st;
		if (e->kind != TD_K_KERNEL || (c & NC_IGNORE) || !(c & NC_COMM) ||
		    e->ts < dv->win_start || e->ts >= dv->win_end)
			continue;
		kind = kernel_coll_kind(t, coll);
		st = gstep_of(a, dv, e->ts);
		/* the step's first gather: nothing before it to hide under */
		first = kind == TD_COLL_ALL_GATHER && sharded && st != last_step;
		if (first)
			last_step = st;
		if (!exposed_part(exposed, ne, e->ts, td_ev_end(e)))
			continue;
		*(struct td_rp_edit *)td_vec_push(&frees) =
			(struct td_rp_edit){TD_RP_FREE, td_dev_events_track(&it), e->ts, e->ts + 1,
					     0, 0};
		if (first)
			continue;
		bytes = coll_bytes(t, coll);
		if (!(kind == TD_COLL_ALL_REDUCE && a->training && bytes > BUCKET_BYTES) &&
		    !(kind == TD_COLL_ALL_GATHER && sharded))
			ok = 0;
		if (!ok)
			continue;
		ed = td_vec_push(&edits);
		ed->kind = TD_RP_OVERLAP;
		ed->track = td_dev_events_track(&it);
		ed->from = e->ts;
		ed->to = e->ts + 1;
		/* the since of a gather: the step's start (its parameters are ready from it) */
		ed->since = kind == TD_COLL_ALL_GATHER ? (st < a->nsteps ? dv->gsteps[st].start
								  : dv->win_start)
			    : INT64_MIN;
		ed->residual = kind == TD_COLL_ALL_GATHER ? 0
			       : (int64_t)((double)td_ev_dur(e) * (double)BUCKET_BYTES / (double)bytes);
	}
	if (ok && edits.len) {
		/* since: the backward's start in the step it ends (the step's start without one) */
		int64_t *bwd = backward_starts(a, d);
		for (i = 0; i < edits.len; i++) {
			struct td_rp_edit *ed = &TD_VEC_AT(&edits, struct td_rp_edit, i);
			size_t st = gstep_of(a, dv, ed->from);
			if (ed->since == INT64_MIN)
				ed->since = bwd[st] < ed->from ? bwd[st]
					    : st < a->nsteps ? dv->gsteps[st].start : dv->win_start;
			td_finding_edit(f, ed);
		}
		free(bwd);
	} else { /* the fix not replayed: the collectives made free bound what any fix wins */
		for (i = 0; i < frees.len; i++)
			td_finding_bound_edit(f, &TD_VEC_AT(&frees, struct td_rp_edit, i));
	}
	td_vec_free(&edits);
	td_vec_free(&frees);
}

/* Where the trace keeps no waits (a->waits_dropped), the replay cannot see what waits on a
 * collective, so no replay sizes it: the mechanism does. Overlap hides an exposed collective
 * under compute that does not need its result; the most there is of that is the compute that
 * runs with no collective beside it. Faster collectives win the time above what the best
 * achieved rate needs (the peers' waiting, a slow algorithm). Together at most the exposed
 * time. */
static void estimate(struct td_analysis *a, struct td_finding *f, const struct td_interval *comp,
		     size_t np, int64_t overlap_ns, int64_t exposed_ns, int64_t excess, double per)
{
	int64_t alone = td_intervals_total(comp, np) - overlap_ns, hide, est;
	char b1[32], b2[32];

	alone = alone > 0 ? alone : 0;
	hide = alone < exposed_ns ? alone : exposed_ns;
	excess = excess > 0 ? excess : 0;
	est = hide + excess < exposed_ns ? hide + excess : exposed_ns;
	f->estimated = 1;
	f->busy_ns = est > f->idle_ns ? est - f->idle_ns : 0;
	td_finding_value(f, "compute_alone_ns", alone);
	td_finding_value(f, "estimate_overlap_ns", hide);
	td_finding_value(f, "estimate_faster_ns", est - hide);
	td_finding_where(f, "not replayed: this trace keeps only launch and copy calls (a filter left "
			 "out its event records, stream waits and synchronizations), so what waits "
			 "on these collectives cannot be read; sized by the mechanism: overlap hides "
			 "them under at most the %s%s of compute that runs with no collective beside "
			 "it (%s)%s%s%s", td_fmt_dur(b1, sizeof(b1), (int64_t)((double)alone / per)),
			 a->nsteps ? " a step" : "",
			 hide < exposed_ns ? "less than they expose" : "all they expose",
			 excess ? ", and faster collectives win the " : "",
			 excess ? td_fmt_dur(b2, sizeof(b2), (int64_t)((double)(est - hide) / per)) : "",
			 excess ? " a step above what the best rate needs" : "");
}

/* Gradients all-reduced one tensor at a time in a training step (DDP's reducer with tiny
 * buckets, a hand-written loop, a compiled backward that reduces each gradient; not FSDP's
 * gathers, one per unit by design, nor a server's tensor-parallel all-reduce, one per layer):
 * each c10d::allreduce_ call costs the host its
 * own dispatch, a copy of its output, a launch - ~300 us a tensor on ddp-v100-rank1, 404 a step,
 * a 122 ms tail after the backward's compute. Fewer, larger collectives make one call per
 * bucket: the replay drops the host time from one call to the next (up to ISSUE_CYCLE_NS) for
 * all but one call per bucket (25 MB of what they carry where every size is known, else one in
 * ISSUE_PER_BUCKET); the calls and the GPU's work stay. Returns the calls a step (0: none so). */
#define ISSUE_MIN_PER_STEP 32
#define ISSUE_CYCLE_NS 1000000
#define ISSUE_PER_BUCKET 32
struct issue {
	uint32_t track;
	int64_t ts, end;
};
#define ISSUE_LESS(x, y) ((x)->track < (y)->track || ((x)->track == (y)->track && (x)->ts < (y)->ts))
TD_DEFINE_SORT(sort_issues, struct issue, ISSUE_LESS)

static double issue_edits(struct td_analysis *a, struct td_finding *f, size_t d,
			  int64_t bytes_total, int all_sized)
{
	const struct td_trace *t = a->t;
	const struct td_dev_analysis *dv = &a->dev[d];
	struct td_dev_events it;
	struct td_vec v;
	uint32_t e;
	size_t i, n, keep, nb;
	double per = a->nsteps ? (double)a->nsteps : 1.0;
	int64_t *cyc, dropped = 0, med;
	char b1[32], b2[32];
	uint32_t name = td_strtab_find(&t->names, "c10d::allreduce_", 16);

	if (!name)
		return 0;
	td_vec_init(&v, sizeof(struct issue));
	for (td_host_events_begin(&it, t); td_dev_events_next(&it, &e);) {
		const struct td_event *x = td_trace_ev(t, e);
		uint32_t p, tr;
		if (x->kind != TD_K_CPU_OP || x->name != name || x->ts < dv->host_start ||
		    x->ts >= dv->host_end)
			continue;
		p = td_trace_parent(t, e);
		if (p != TD_NONE && !strncmp(td_trace_name(t, td_trace_ev(t, p)->name), "c10d::", 6))
			continue;
		tr = td_trace_track_of(t, e);
		if (a->ndev > 1 && tr != dv->host_track)
			continue;
		*(struct issue *)td_vec_push(&v) = (struct issue){tr, x->ts, td_ev_end(x)};
	}
	n = v.len;
	if ((double)n / per < ISSUE_MIN_PER_STEP) {
		td_vec_free(&v);
		return 0;
	}
	sort_issues(v.data, n);
	nb = all_sized && bytes_total > 0 ? (size_t)((bytes_total + BUCKET_BYTES - 1) / BUCKET_BYTES)
	     : 0;
	keep = nb ? (n / nb > 1 ? n / nb : 1) : ISSUE_PER_BUCKET;
	cyc = td_malloc(n * sizeof(*cyc));
	for (i = 0; i < n; i++) {
		const struct issue *x = &TD_VEC_AT(&v, struct issue, i), *nx = i + 1 < n ? x + 1 : NULL;
		int64_t end = nx && nx->track == x->track ? nx->ts : x->end;
		if (end - x->ts > ISSUE_CYCLE_NS)
			end = x->end > x->ts + ISSUE_CYCLE_NS ? x->end : x->ts + ISSUE_CYCLE_NS;
		cyc[i] = end - x->ts;
		if (i % keep) {
			struct td_rp_edit ed = {TD_RP_DROP_HOST, x->track, x->ts, end, 0, 0};
			td_finding_edit(f, &ed);
			dropped += end - x->ts;
		}
	}
	med = td_median_i64(cyc, n);
	td_finding_value(f, "issued_per_step", (int64_t)((double)n / per));
	td_finding_value(f, "issue_cycle_ns", med);
	td_finding_where(f, "%.0f collectives a step issued one tensor at a time, a c10d:: call "
			 "every %s; in buckets%s, one call in %zu: the replay takes the host time "
			 "from each of the others to the next call off the host (%s a step), the "
			 "calls and the GPU's work kept", (double)n / per,
			 td_fmt_dur(b1, sizeof(b1), med),
			 nb ? " of 25 MB (what they carry)" : " (their sizes unknown)", keep,
			 td_fmt_dur(b2, sizeof(b2), (int64_t)((double)dropped / per)));
	free(cyc);
	td_vec_free(&v);
	return (double)n / per;
}

static const char *const kind_keys[TD_COLL_NKINDS] = {
	"exposed_all_reduce_ns", "exposed_all_gather_ns", "exposed_reduce_scatter_ns",
	"exposed_all_to_all_ns", "exposed_send_recv_ns", "exposed_broadcast_ns",
	"exposed_custom_all_reduce_ns",
};

/* Exposed time per process group ("Process Group Name" on the collective's args): the group
 * that waits most says which parallelism (data, tensor, pipeline, expert) to look at. */
#define PG_MAX 32
struct pg_acc {
	uint32_t pg;               /* name id; 0: collectives without a group, UINT32_MAX: the
				    * groups past PG_MAX together */
	int32_t size;              /* ranks, -1 unknown */
	int64_t ns;
	uint64_t n;
	enum td_par par;           /* by its description */
};
#define PG_MORE(x, y) ((x)->ns > (y)->ns)
TD_DEFINE_STABLE_SORT(sort_groups, struct pg_acc, PG_MORE)

static void group_add(const struct td_trace *t, struct pg_acc *g, size_t *ng,
		      const struct td_coll *co, int64_t exposed)
{
	uint32_t pg = co ? co->pg : 0;
	size_t i;

	for (i = 0; i < *ng && g[i].pg != pg; i++)
		;
	if (i == *ng) {
		if (*ng == PG_MAX) { /* the rest together, as "other groups" */
			i = *ng - 1, g[i].pg = UINT32_MAX, g[i].size = -1;
			g[i].par = TD_PAR_UNKNOWN;
		} else {
			g[(*ng)++] = (struct pg_acc){pg, co ? co->group_size : -1, 0, 0,
						     co && co->pg_desc
						     ? td_pg_parallelism(td_trace_name(t, co->pg_desc))
						     : TD_PAR_UNKNOWN};
		}
	}
	g[i].ns += exposed;
	g[i].n++;
}

static void where_by_group(struct td_analysis *a, struct td_finding *f, struct pg_acc *g,
			   size_t ng, double per)
{
	struct pg_acc tmp[PG_MAX];
	size_t i, named = 0, shown;
	char b1[32];

	sort_groups(g, ng, tmp); /* largest first; ties by first seen */
	/* the groups worth a line: the top four, down to a twentieth of the largest */
	for (shown = 0; shown < ng && shown < 4 && g[shown].ns > 0 &&
	     (!shown || g[shown].ns * 20 >= g[0].ns); shown++)
		named += g[shown].pg != 0;
	if (!named) /* no group named among them: the kinds say it all */
		return;
	td_finding_value(f, "process_groups", (int64_t)named);
	td_finding_value(f, "exposed_top_group_ns", g[0].ns);
	for (i = 0; i < shown; i++) {
		char size[64] = "", par[48] = "";
		/* the forward all-reduces' group of a training step: tensor parallel, inferred */
		if (g[i].par != TD_PAR_UNKNOWN)
			snprintf(par, sizeof(par), "%s", td_par_name(g[i].par));
		else if (g[i].pg && g[i].pg == a->ctx.tp_pg &&
			 (a->ctx.par_inferred & (1u << TD_PAR_TP)))
			snprintf(par, sizeof(par), "%s (inferred)", td_par_name(TD_PAR_TP));
		if (g[i].size > 0 || *par)
			snprintf(size, sizeof(size), " (%s%s%.0d%s)", par,
				 *par && g[i].size > 0 ? ", " : "",
				 g[i].size > 0 ? g[i].size : 0, g[i].size > 0 ? " ranks" : "");
		td_finding_where(f, "%s%s%s: %s exposed%s in %llu collective%s",
				 g[i].pg == UINT32_MAX ? "other process groups"
				 : g[i].pg ? "process group " : "collectives without a process group",
				 g[i].pg && g[i].pg != UINT32_MAX ? td_an_name(a, g[i].pg) : "", size,
				 td_fmt_dur(b1, sizeof(b1), (int64_t)((double)g[i].ns / per)),
				 a->nsteps ? " per step" : "", (unsigned long long)g[i].n,
				 g[i].n == 1 ? "" : "s");
	}
}

/* A kernel name's share of the collectives: the "where" names the largest, not the first. */
struct name_share {
	uint32_t name;
	uint64_t n;
	int64_t ns;
};

/* Adds ns of kernel name to its share (names past cap are counted in the total only). */
static void share_add(struct name_share *sh, size_t *n, size_t cap, uint32_t name, int64_t ns)
{
	size_t i;

	for (i = 0; i < *n && sh[i].name != name; i++)
		;
	if (i == *n) {
		if (*n == cap)
			return;
		sh[(*n)++] = (struct name_share){name, 0, 0};
	}
	sh[i].n++;
	sh[i].ns += ns;
}

static void run(struct td_analysis *a, struct td_report *r)
{
	struct td_dev_events it;
	uint32_t coll;
	const struct td_trace *t = a->t;
	size_t d, i;
	char b1[32], b2[32], b3[32], b4[32];

	if (!a->has_comm) /* no collective's name: none ran */
		return;
	for (d = 0; d < a->ndev; d++) {
		struct td_dev_analysis *dv = &a->dev[d];
		struct td_interval *comm, *comp, *exposed;
		size_t nc = 0, np = 0, ne, cap = 0, nsized = 0;
		int64_t comm_ns, overlap_ns, exposed_ns, comm_sum = 0, idle, w;
		int64_t *bw = NULL, bytes_total = 0, sized_time = 0, best_bw = 0, excess = 0, b;
		uint64_t ncoll = 0;
		struct name_share names[16];
		size_t nnames = 0, top = 0;
		struct td_finding *f;
		double per = a->nsteps ? (double)a->nsteps : 1.0, issued;

		if (!dv->comm_kernels) /* a collective's name, but none of its kernels ran here */
			continue;
		td_an_kernel_sets(a, dv->device, dv->win_start, dv->win_end, &comp, &np, &comm, &nc);
		if (!nc) {
			free(comm);
			free(comp);
			continue;
		}
		/* the collectives one by one: count, time, and bandwidth where they carry sizes */
		cap = td_dev_events_count(t, dv->device);
		bw = td_malloc((cap ? cap : 1) * sizeof(*bw));
		for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &coll);) {
			const struct td_event *e = td_trace_ev(t, coll);
			unsigned c = td_an_class(a, e->name);
			int64_t s = e->ts > dv->win_start ? e->ts : dv->win_start;
			int64_t en = td_ev_end(e) < dv->win_end ? td_ev_end(e) : dv->win_end;
			if (e->kind != TD_K_KERNEL || (c & NC_IGNORE) || !(c & NC_COMM) || en <= s)
				continue;
			comm_sum += en - s;
			ncoll++;
			share_add(names, &nnames, sizeof(names) / sizeof(names[0]), e->name, en - s);
			if (td_ev_dur(e) > 0 && (b = coll_bytes(t, coll)) > 0) {
				/* achieved algorithm bandwidth in bytes per microsecond */
				bw[nsized++] = b * 1000 / td_ev_dur(e);
				bytes_total += b;
				sized_time += td_ev_dur(e);
			}
		}
		exposed = td_malloc((nc + np + 1) * sizeof(*exposed));
		ne = td_iv_minus(comm, nc, comp, np, exposed);
		comm_ns = td_intervals_total(comm, nc);
		exposed_ns = td_intervals_total(exposed, ne);
		overlap_ns = comm_ns - exposed_ns;
		w = dv->win_end - dv->win_start;
		f = td_report_add(r, "communication", dv->device);
		idle = td_finding_claim_cause(a, f, d, CAUSE_COMM);
		f->busy_ns = exposed_ns;
		f->count = ncoll;
		td_finding_title(f, "Communication not hidden by compute: %s%s exposed of %s%s in %llu "
				 "collective%s (%.0f%% overlapped)%s%s",
				 td_fmt_dur(b1, sizeof(b1), (int64_t)((double)exposed_ns / per)),
				 a->nsteps ? " per step" : "",
				 td_fmt_dur(b2, sizeof(b2), (int64_t)((double)comm_ns / per)),
				 a->nsteps ? " per step" : "",
				 (unsigned long long)ncoll, ncoll == 1 ? "" : "s",
				 comm_ns ? 100.0 * (double)overlap_ns / (double)comm_ns : 0.0,
				 idle ? "; compute waits for them idle " : "",
				 idle ? td_fmt_dur(b3, sizeof(b3), idle) : "");
		for (i = 1; i < nnames; i++) /* the largest share, the first seen of equals */
			if (names[i].ns > names[top].ns)
				top = i;
		if (nnames == 1 && names[0].n == ncoll)
			td_finding_where(f, "%s: %llu kernels, %s in total, %.1f%% of the window",
					 td_an_name(a, names[0].name), (unsigned long long)ncoll,
					 td_fmt_dur(b1, sizeof(b1), comm_sum),
					 w ? 100.0 * (double)comm_ns / (double)w : 0.0);
		else
			td_finding_where(f, "%llu collective kernels, %s in total, %.1f%% of the window; "
					 "the largest share %s: %llu kernels, %s",
					 (unsigned long long)ncoll, td_fmt_dur(b1, sizeof(b1), comm_sum),
					 w ? 100.0 * (double)comm_ns / (double)w : 0.0,
					 td_an_name(a, names[top].name),
					 (unsigned long long)names[top].n,
					 td_fmt_dur(b2, sizeof(b2), names[top].ns));
		td_finding_where(f, "overlap with compute %s of %s (%.0f%%), exposed %s (%.1f%% of the "
				 "window)", td_fmt_dur(b1, sizeof(b1), overlap_ns),
				 td_fmt_dur(b2, sizeof(b2), comm_ns),
				 comm_ns ? 100.0 * (double)overlap_ns / (double)comm_ns : 0.0,
				 td_fmt_dur(b3, sizeof(b3), exposed_ns),
				 w ? 100.0 * (double)exposed_ns / (double)w : 0.0);
		if (dv->gsteps && a->nsteps > 1) {
			int64_t *ps = td_malloc(a->nsteps * sizeof(*ps));
			for (i = 0; i < a->nsteps; i++)
				ps[i] = td_iv_total_in(exposed, ne, dv->gsteps[i].start, dv->gsteps[i].end);
			sort_i64(ps, a->nsteps);
			td_finding_where(f, "exposed per step: min %s, median %s, max %s over %zu steps",
					 td_fmt_dur(b1, sizeof(b1), ps[0]),
					 td_fmt_dur(b2, sizeof(b2), td_median_i64(ps, a->nsteps)),
					 td_fmt_dur(b3, sizeof(b3), ps[a->nsteps - 1]), a->nsteps);
			free(ps);
		}
		if (nsized) {
			int64_t med;
			sort_i64(bw, nsized);
			best_bw = bw[nsized - 1];
			med = td_median_i64(bw, nsized);
			/* the time above what the best achieved bandwidth would need: waiting for peers */
			excess = best_bw > 0 ? sized_time - bytes_total * 1000 / best_bw : 0;
			char mb[32];
			td_finding_where(f, "%zu sized collective%s move %s: median %.2f GB/s, best "
					 "%.2f GB/s; %s of their time is above what the best rate needs "
					 "(waiting for peers)", nsized, nsized == 1 ? "" : "s",
					 td_fmt_bytes(mb, sizeof(mb), (double)bytes_total),
					 (double)med / 1e3, (double)best_bw / 1e3,
					 td_fmt_dur(b4, sizeof(b4), excess > 0 ? excess : 0));
			td_finding_value(f, "sized_collectives", (int64_t)nsized);
			td_finding_value(f, "collective_bytes", bytes_total);
			td_finding_value(f, "wait_above_best_bw_ns", excess > 0 ? excess : 0);
		}
		/* evidence: the longest exposed stretches */
		{
			struct td_interval *ev = td_malloc((ne ? ne : 1) * sizeof(*ev));
			size_t k, n;
			memcpy(ev, exposed, ne * sizeof(*ev));
			for (k = 0; k < ne && (int)k < a->params.evidence_max; k++) {
				size_t m = k;
				for (n = k + 1; n < ne; n++)
					if (ev[n].end - ev[n].start > ev[m].end - ev[m].start)
						m = n;
				if (m != k) {
					struct td_interval tmp = ev[k];
					ev[k] = ev[m];
					ev[m] = tmp;
				}
				if (ev[k].end - ev[k].start < a->params.gap_report_ns)
					break;
				td_finding_evidence(f, ev[k].start, ev[k].end - ev[k].start,
						    "%s of communication with no compute running",
						    td_fmt_dur(b1, sizeof(b1), ev[k].end - ev[k].start));
			}
			free(ev);
		}
		if (a->waits_dropped)
			estimate(a, f, comp, np, overlap_ns, exposed_ns, excess, per);
		else
			overlap_edits(a, f, d, exposed, ne);
		issued = a->waits_dropped || !a->training ? 0
			 : issue_edits(a, f, d, bytes_total, nsized == ncoll);
		td_finding_value(f, "collectives", (int64_t)ncoll);
		td_finding_value(f, "comm_ns", comm_ns);
		td_finding_value(f, "overlap_ns", overlap_ns);
		td_finding_value(f, "exposed_ns", exposed_ns);
		td_finding_value(f, "idle_waiting_ns", idle);
		td_finding_value(f, "steps", (int64_t)a->nsteps);
		{ /* exposed time by collective kind (the kind that waits most picks the fix)
		   * and by process group */
			int64_t by_kind[TD_COLL_NKINDS] = {0};
			struct pg_acc groups[PG_MAX];
			size_t ngroups = 0;
			int dom = -1, k;
			enum td_par top_par;
			int inferred;
			char fix[1400];
			for (td_dev_events_begin(&it, t, dv->device); td_dev_events_next(&it, &coll);) {
				const struct td_event *e = td_trace_ev(t, coll);
				unsigned c = td_an_class(a, e->name);
				int64_t x;
				if (e->kind != TD_K_KERNEL || (c & NC_IGNORE) || !(c & NC_COMM))
					continue;
				x = exposed_part(exposed, ne, e->ts, td_ev_end(e));
				k = kernel_coll_kind(t, coll);
				if (k >= 0)
					by_kind[k] += x;
				group_add(t, groups, &ngroups, td_trace_coll(t, coll), x);
			}
			for (k = 0; k < TD_COLL_NKINDS; k++) {
				if (!by_kind[k])
					continue;
				td_finding_value(f, kind_keys[k], by_kind[k]);
				if (dom < 0 || by_kind[k] > by_kind[dom])
					dom = k;
			}
			for (k = 0; k < TD_COLL_NKINDS && dom >= 0; k++) /* the kinds, largest first */
				if (by_kind[k] && (k == dom || by_kind[k] * 20 >= by_kind[dom]))
					td_finding_where(f, "%s: %s exposed%s", td_coll_kind_name(
								 (enum td_coll_kind)k),
							 td_fmt_dur(b1, sizeof(b1), (int64_t)((double)
								    by_kind[k] / per)),
							 a->nsteps ? " per step" : "");
			where_by_group(a, f, groups, ngroups, per);
			/* the group that waits most, sorted first: its parallelism picks the fix */
			top_par = ngroups && groups[0].ns > 0 ? groups[0].par : TD_PAR_UNKNOWN;
			if (((a->ctx.on & TD_ON_TORCHREC) || a->ctx.coll[TD_COLL_ALL_TO_ALL]) &&
			    dom == TD_COLL_SEND_RECV)
				dom = TD_COLL_ALL_TO_ALL; /* NCCL runs all-to-all as grouped send/recv */
			/* no group names its parallelism: what the collectives' pattern implies,
			 * said as inferred */
			top_par = td_par_of_group(&a->ctx, top_par, dom,
						  ngroups ? groups[0].pg : 0, &inferred);
			if (inferred)
				td_finding_where(f, "%s, inferred from %s (no process group's "
						 "description names it)", td_par_name(top_par),
						 td_par_evidence(&a->ctx, top_par));
			if (top_par > TD_PAR_DP)
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_COMM_GROUP,
								    (int)top_par, NULL, fix,
								    sizeof(fix)));
			else if (issued > 0 || (!(a->ctx.on & (TD_ON_DDP | TD_ON_FSDP | TD_ON_TORCHREC)) &&
				 a->training && dom == TD_COLL_ALL_REDUCE && (double)ncoll / per >= 32)) {
				char ev[96];
				snprintf(ev, sizeof(ev), "%.0f collectives per step, %s each on average",
					 (double)ncoll / per,
					 td_fmt_dur(b1, sizeof(b1), comm_sum / (int64_t)ncoll));
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_COMM_UNBUCKETED, -1,
								    ev, fix, sizeof(fix)));
			} else
				td_finding_fix(f, "%s", td_fix_text(&a->ctx, TD_FIX_COMM, dom, NULL,
								    fix, sizeof(fix)));
		}
		free(comm);
		free(comp);
		free(exposed);
		free(bw);
	}
}

const struct td_rule rule_communication = {
	.id = "communication",
	.title = "Collective time, its overlap with compute, exposed communication",
	.run = run,
};
