/* SPDX-License-Identifier: MIT */
/* The replay (replay/replay.h): hand-written traces, one per kind of edge, with the replayed
 * times asserted exactly, before and after an edit; then the replay of every real trace in
 * ../shared/traces against the trace itself (the model alone, no per-op lags). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"
#include "analysis/analysis.h"
#include "rules/rule.h"
#include "sizing/whatif.h"

struct run {
	struct td_trace t;
	struct td_analysis a;
	const struct td_whatif *w;
};

static void load(const char *name, struct run *x)
{
	size_t len;
	unsigned char *buf = th_slurp(name, &len);
	struct td_error err;

	assert_non_null(buf);
	assert_int_equal(th_parse_mem(buf, len, 1 << 16, &x->t, &err), 0);
	free(buf);
	td_analysis_run(&x->a, &x->t, NULL);
	x->w = td_an_whatif(&x->a);
	assert_non_null(x->w);
}

static void done(struct run *x)
{
	td_analysis_free(&x->a);
	td_trace_free(&x->t);
}

/* The node of the event named `name` starting at ts_us. */
static uint32_t node(const struct run *x, const char *name, int64_t ts_us)
{
	size_t k;

	for (k = 0; k < x->w->g.n; k++) {
		const struct td_event *e = td_rp_event(&x->w->g, (uint32_t)k);
		if (e->ts == ts_us * 1000 && !strcmp(td_trace_name(&x->t, e->name), name))
			return (uint32_t)k;
	}
	fail_msg("no node %s at %lld us", name, (long long)ts_us);
	return 0;
}

static uint32_t track(const struct run *x, int64_t tid)
{
	uint32_t i;

	for (i = 0; i < x->t.tracks.len; i++)
		if (!td_trace_track(&x->t, i)->is_gpu && td_trace_track(&x->t, i)->tid == tid)
			return i;
	fail_msg("no thread %lld", (long long)tid);
	return 0;
}

#define US 1000

/* launch -> op at the launch latency L (the median over ops launched onto an idle stream: 6
 * us), stream order after the queued gap Q (the mean of queued gaps: 2 us), an op on another
 * stream (k4 starts 1 us after k1 ends, 21 us after its launch allows), and a wait (the
 * synchronize ends 14 us, the tail, after k3, the last op launched before it). */
static void test_edges(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e[2];
	struct td_rp_times base;
	const struct td_rp_times *b;
	uint32_t k1, k2, k3, k4, l3, sync;
	(void)state;

	load(th_fixture("replay/edges.json"), &x);
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &base), 0);
	b = &base;
	k1 = node(&x, "k1", 6);
	k2 = node(&x, "k2", 58);
	k3 = node(&x, "k3", 106);
	k4 = node(&x, "k4", 57);
	l3 = node(&x, "cudaLaunchKernel", 100);
	sync = node(&x, "cudaDeviceSynchronize", 110);
	assert_int_equal(x.w->g.cross_edges, 1);
	assert_int_equal(td_rp_side_of(&x.w->g.xs, k4)->ref, k1);
	assert_int_equal(x.w->g.src[sync], k3);
	assert_int_equal(x.w->g.tail, 14 * US);
	assert_int_equal(x.w->g.unexplained_ns, 0);
	/* as recorded, it replays exactly */
	assert_int_equal(b->start[k1], 6 * US);
	assert_int_equal(b->start[k2], 58 * US); /* k1's end + Q */
	assert_int_equal(b->start[k4], 57 * US); /* k1's end + the other-stream lag */
	assert_int_equal(b->start[k3], 106 * US);
	assert_int_equal(td_rp_end(&x.w->g, b, sync), 150 * US);
	td_rp_times_free(&base);
	/* the sync stops waiting: it costs a sync that does not wait (5 us, the default) */
	e[0] = (struct td_rp_edit){TD_RP_UNWAIT, track(&x, 1), 110 * US, 150 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, e, 1, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, sync), 115 * US);
	td_rp_times_free(&r);
	/* 60 us of the host's work before the last launch goes: it launches at 40, k3 waits for
	 * k2 (78 + Q), and the sync for k3 */
	e[1] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 35 * US, 95 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e[1], 1, &r), 0);
	assert_int_equal(r.start[l3], 40 * US);
	assert_int_equal(r.start[k3], 80 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, sync), 124 * US);
	td_rp_times_free(&r);
	/* host time after the thread's last call (the sync, ending at 150) is no call's gap: an
	 * instant there maps past the sync's end by its distance, less what edits dropped of it
	 * ([160, 190) and [195, 300): 35 us of the 50 before 200; with a residual of 10 us, that
	 * much of the first range stays) */
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(td_replay_map(&x.w->g, &r, track(&x, 1), 200 * US), 200 * US);
	td_rp_times_free(&r);
	e[0] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 160 * US, 190 * US, 0, 0};
	e[1] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 195 * US, 300 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, e, 2, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, sync), 150 * US);
	assert_int_equal(td_replay_map(&x.w->g, &r, track(&x, 1), 200 * US), 165 * US);
	assert_int_equal(td_replay_map(&x.w->g, &r, track(&x, 1), 155 * US), 155 * US);
	td_rp_times_free(&r);
	e[0].residual = 10 * US;
	assert_int_equal(td_replay_run(&x.w->g, e, 1, &r), 0);
	assert_int_equal(td_replay_map(&x.w->g, &r, track(&x, 1), 200 * US), 180 * US);
	td_rp_times_free(&r);
	/* k1 and k2 fused: k2 follows k1 with no gap, and its launch call goes (the host's gap
	 * after it stays: the next launch comes 4 us sooner) */
	{
		uint32_t l2 = node(&x, "cudaLaunchKernel", 10), l4 = node(&x, "cudaLaunchKernel", 30);
		e[0] = (struct td_rp_edit){TD_RP_FUSE, td_rp_track(&x.w->g, k1), 6 * US, 78 * US, 0, 0};
		assert_int_equal(td_replay_run(&x.w->g, e, 1, &r), 0);
		assert_int_equal(r.start[k2], 56 * US);
		assert_int_equal(td_rp_end(&x.w->g, &r, l2), 10 * US);
		assert_int_equal(r.start[l4], 26 * US);
		td_rp_times_free(&r);
	}
	done(&x);
}

/* A fix replayed after another's (td_replay_after): the two lists as one. On edges.json the
 * 60 us of host work dropped before the last launch, split in two edits of the same gap, one
 * in each list, replays as the one edit did; then 3000 launches, each gap's 20 us dropped half
 * by each list, 6000 edits over 3000 nodes (the table of edited nodes grows through its sizes):
 * every call follows the one before it, as the joined list gives. */
static void test_after(void **state)
{
	struct run x;
	struct td_rp_times r, j;
	struct td_rp_edit e[2], *pre, *ed, *both;
	uint32_t l3, k3, sync;
	enum { N = 3000 };
	char *buf;
	size_t len = 0, cap = (size_t)N * 400, i;
	struct td_error err;
	(void)state;

	load(th_fixture("replay/edges.json"), &x);
	l3 = node(&x, "cudaLaunchKernel", 100);
	k3 = node(&x, "k3", 106);
	sync = node(&x, "cudaDeviceSynchronize", 110);
	e[0] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 35 * US, 65 * US, 0, 0};
	e[1] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 65 * US, 95 * US, 0, 0};
	memset(&r, 0, sizeof(r));
	assert_int_equal(td_replay_after(&x.w->g, &e[0], 1, &e[1], 1, &r), 0);
	assert_int_equal(r.start[l3], 40 * US);
	assert_int_equal(r.start[k3], 80 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, sync), 124 * US);
	/* the same buffers again, the second list empty */
	e[0].to = 95 * US;
	assert_int_equal(td_replay_after(&x.w->g, e, 1, NULL, 0, &r), 0);
	assert_int_equal(r.start[l3], 40 * US);
	td_rp_times_free(&r);
	done(&x);

	buf = malloc(cap);
	assert_non_null(buf);
	len += (size_t)snprintf(buf + len, cap - len, "{\"traceEvents\": [");
	for (i = 0; i < N; i++)
		len += (size_t)snprintf(buf + len, cap - len,
			"%s{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
			"\"pid\": 1, \"tid\": 1, \"ts\": %zu, \"dur\": 5, \"args\": {\"correlation\": %zu}},\n"
			"{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, "
			"\"ts\": %zu, \"dur\": 2, \"args\": {\"device\": 0, \"stream\": 7, "
			"\"correlation\": %zu}}", i ? "," : "", 25 * i, i + 1, 25 * i + 6, i + 1);
	len += (size_t)snprintf(buf + len, cap - len, "]}");
	assert_true(len < cap);
	memset(&x, 0, sizeof(x));
	assert_int_equal(th_parse_mem((unsigned char *)buf, len, 1 << 16, &x.t, &err), 0);
	free(buf);
	td_analysis_run(&x.a, &x.t, NULL);
	x.w = td_an_whatif(&x.a);
	assert_non_null(x.w);
	assert_int_equal(x.w->g.nhost, N);
	pre = calloc(N, sizeof(*pre));
	ed = calloc(N, sizeof(*ed));
	both = calloc(2 * N, sizeof(*both));
	assert_true(pre && ed && both);
	for (i = 0; i < N; i++) {
		pre[i] = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1),
					     (int64_t)(25 * i + 5) * US, (int64_t)(25 * i + 15) * US, 0, 0};
		ed[i] = pre[i];
		ed[i].from += 10 * US;
		ed[i].to += 10 * US;
		both[2 * i] = pre[i];
		both[2 * i + 1] = ed[i];
	}
	memset(&r, 0, sizeof(r));
	memset(&j, 0, sizeof(j));
	assert_int_equal(td_replay_after(&x.w->g, pre, N, ed, N, &r), 0);
	assert_int_equal(td_replay_run(&x.w->g, both, 2 * N, &j), 0);
	assert_true(r.over_slots >= 2 * 1024);
	for (i = 0; i < N; i++)
		assert_int_equal(r.start[i], (int64_t)(5 * i) * US);
	assert_memory_equal(r.start, j.start, x.w->g.n * sizeof(*r.start));
	td_rp_times_free(&r);
	td_rp_times_free(&j);
	free(pre);
	free(ed);
	free(both);
	done(&x);
}

/* Another thread's burst of calls inside the main thread's gap (the autograd thread) starts
 * after the main thread's call before it and holds up the main thread's next call. */
static void test_threads(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t m2, a1, a2, k3;
	(void)state;

	load(th_fixture("replay/threads.json"), &x);
	m2 = node(&x, "cudaLaunchKernel", 100);
	a1 = node(&x, "cudaLaunchKernel", 20);
	a2 = node(&x, "cudaLaunchKernel", 40);
	k3 = node(&x, "k3", 106);
	assert_int_equal(x.w->g.forks, 1);
	assert_int_equal(x.w->g.joins, 1);
	assert_int_equal(td_rp_side_of(&x.w->g.xs, a1)->ref, node(&x, "cudaLaunchKernel", 0));
	assert_int_equal(td_rp_side_of(&x.w->g.xs, m2)->ref, a2);
	assert_int_equal(td_rp_gap(&x.w->g, m2), 72 * US); /* its own work: 16 before, 56 after */
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[m2], 100 * US);
	td_rp_times_free(&r);
	/* the main thread's own work goes: the burst still holds it */
	e = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 4 * US, 100 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[m2], 100 * US);
	td_rp_times_free(&r);
	/* the burst's own gap goes: the main thread follows it 16 us sooner */
	e = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 2), 24 * US, 40 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[a2], 24 * US);
	assert_int_equal(r.start[m2], 84 * US);
	assert_int_equal(r.start[k3], 90 * US);
	td_rp_times_free(&r);
	/* the burst's thread holds the main thread no more (a DataLoader's pin_memory thread
	 * under the loader's fix): its own 72 us of work after its call at 0 (ends at 4) only,
	 * then none when that goes too */
	{
		struct td_rp_edit two[2] = {
			{TD_RP_UNJOIN, track(&x, 2), INT64_MIN / 2, INT64_MAX / 2, 0, 0},
			{TD_RP_DROP_HOST, track(&x, 1), 4 * US, 100 * US, 0, 0}};
		assert_int_equal(td_replay_run(&x.w->g, two, 1, &r), 0);
		assert_int_equal(r.start[m2], 76 * US);
		td_rp_times_free(&r);
		assert_int_equal(td_replay_run(&x.w->g, two, 2, &r), 0);
		assert_int_equal(r.start[m2], 4 * US);
		td_rp_times_free(&r);
		/* an unjoin of the main thread's own track cuts nothing */
		two[0].track = track(&x, 1);
		assert_int_equal(td_replay_run(&x.w->g, two, 2, &r), 0);
		assert_int_equal(r.start[m2], 100 * US);
		td_rp_times_free(&r);
	}
	done(&x);
}

/* A DataLoader's workers make batches at their own pace: __next__ waited 150 us for one at
 * [20, 170) (its other call, 10 us, got a ready one), so the launch after it (180) starts no
 * earlier than it did when the loop's work before the loader goes - the loop then waits
 * longer in __next__ - and only the loader's own fix (its span dropped to 10 us) moves it: to
 * 4 + (176 - 150 + 10) = 40, and the next launch by the same 140 us. */
static void test_loader_gate(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t l2, l3, k2;
	(void)state;

	load(th_fixture("replay/loader.json"), &x);
	l2 = node(&x, "cudaLaunchKernel", 180);
	l3 = node(&x, "cudaLaunchKernel", 220);
	k2 = node(&x, "k2", 186);
	assert_int_equal(x.w->g.gates.len, 1); /* the 10 us call waited for nothing */
	assert_int_equal(td_rp_side_of(&x.w->g.gates, l2)->v, 180 * US);
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[l2], 180 * US);
	assert_int_equal(r.start[l3], 220 * US);
	td_rp_times_free(&r);
	/* the loop's own host work before the loader goes: the batch is not ready sooner */
	e = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 4 * US, 20 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[l2], 180 * US);
	assert_int_equal(r.start[k2], 186 * US);
	td_rp_times_free(&r);
	/* the loader keeps up: its wait shrinks to a ready batch's 10 us */
	e = (struct td_rp_edit){TD_RP_DROP_HOST, track(&x, 1), 20 * US, 170 * US, 10 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[l2], 40 * US);
	assert_int_equal(r.start[k2], 46 * US);
	assert_int_equal(r.start[l3], 80 * US);
	td_rp_times_free(&r);
	done(&x);
}

/* What a fix wins, sized on one thread and with the second thread (td_analysis_run_jobs with
 * 2): the same; and a fix whose edits changed after its replay began there is replayed again
 * with the edits it ends with. */
static int64_t sized(struct run *x, int jobs, const struct td_rp_edit *first,
		     const struct td_rp_edit *last)
{
	struct td_report r;
	struct td_finding *f;
	int64_t won;

	td_report_init(&r);
	f = td_report_add(&r, "sync-stall", x->a.dev[0].device);
	f->idle_ns = 1000 * US; /* claims more than any replay wins: never a bound */
	td_finding_edit(f, first);
	if (jobs > 1)
		td_whatif_early(&x->a, f); /* its replay begins on the second thread */
	*(struct td_rp_edit *)f->edits.data = *last;
	td_whatif_size(&x->a, &f, 1, jobs);
	assert_true(f->replayed);
	won = f->replay_ns;
	td_report_free(&r);
	return won;
}

/* The fixture analysed with the second thread. */
static void load_two(struct run *x)
{
	size_t len;
	unsigned char *buf = th_slurp(th_fixture("replay/loader.json"), &len);
	struct td_error err;

	assert_non_null(buf);
	assert_int_equal(th_parse_mem(buf, len, 1 << 16, &x->t, &err), 0);
	free(buf);
	td_analysis_run_jobs(&x->a, &x->t, NULL, 2);
}

static void test_second_thread(void **state)
{
	struct run one, two;
	struct td_rp_edit loop, loader;
	int64_t a, b;
	(void)state;

	load(th_fixture("replay/loader.json"), &one);
	loop = (struct td_rp_edit){TD_RP_DROP_HOST, track(&one, 1), 4 * US, 20 * US, 0, 0};
	loader = (struct td_rp_edit){TD_RP_DROP_HOST, track(&one, 1), 20 * US, 170 * US, 10 * US, 0};
	a = sized(&one, 1, &loader, &loader);
	b = sized(&one, 1, &loop, &loop);
	assert_true(a > 0 && a != b); /* the two fixes win differently */
	done(&one);
	load_two(&two);
	assert_int_equal(sized(&two, 2, &loader, &loader), a);
	done(&two);
	load_two(&two);
	assert_int_equal(sized(&two, 2, &loop, &loader), a); /* began as the other fix */
	done(&two);
}

/* An upload queued on the compute stream behind kA (100 us) moved to a side stream (TD_RP_SIDE):
 * it starts at its launch plus the launch latency (6 us: a kernel's, no copy being launched
 * onto an idle stream) and runs beside kA; kB, the op after it on the compute stream, waits for
 * kA and for it (wait_stream), so it starts at kA's end, 40 us sooner, and kC after it; with
 * a kA of 30 us, at the copy's end. */
static void test_side_stream(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t cp, kb, kc;
	(void)state;

	load(th_fixture("replay/side.json"), &x);
	cp = node(&x, "Memcpy HtoD (Pinned -> Device)", 106);
	kb = node(&x, "kB", 146);
	kc = node(&x, "kC", 196);
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[cp], 106 * US);
	assert_int_equal(r.start[kb], 146 * US);
	td_rp_times_free(&r);
	e = (struct td_rp_edit){TD_RP_SIDE, track(&x, 1), 10 * US, 14 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[cp], 16 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, cp), 56 * US);
	assert_int_equal(r.start[kb], 106 * US);
	assert_int_equal(r.start[kc], 156 * US);
	td_rp_times_free(&r);
	done(&x);

	/* kA of 30 us: the copy, moved, ends after it (56 us), and kB waits for the copy */
	load(th_fixture("replay/side-wait.json"), &x);
	cp = node(&x, "Memcpy HtoD (Pinned -> Device)", 36);
	kb = node(&x, "kB", 76);
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[cp], 16 * US);
	assert_int_equal(r.start[kb], 56 * US);
	assert_int_equal(r.start[node(&x, "kC", 126)], 106 * US);
	td_rp_times_free(&r);
	done(&x);
}

/* A copy call that outlasts its op (pageable) waits for it, and the op keeps the host's staging
 * (40 us after the call, less the launch latency: a kernel's, 6 us, one copy being no model of
 * copies); k2 starts 34 us
 * later than its launch allows with nothing before it on any stream: unexplained, replayed as
 * measured only when sizing a fix. */
static void test_copies(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t c1, cp, l1, k1, k2;
	(void)state;

	load(th_fixture("replay/copies.json"), &x);
	c1 = node(&x, "cudaMemcpyAsync", 0);
	cp = node(&x, "Memcpy HtoD (Pageable -> Device)", 40);
	l1 = node(&x, "cudaLaunchKernel", 110);
	k1 = node(&x, "k1", 116);
	k2 = node(&x, "k2", 170);
	assert_int_equal(x.w->g.blocking_copies, 1);
	assert_int_equal(x.w->g.src[c1], cp);
	assert_int_equal(x.w->g.staging_ns, 34 * US);
	assert_int_equal(x.w->g.tail, 2 * US);
	assert_int_equal(x.w->g.unexplained_ns, 34 * US);
	assert_int_equal(x.w->g.ndelays, 1);
	assert_int_equal(x.w->g.delays[0].node, k2);
	/* sizing (the delay kept): as recorded */
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[cp], 40 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, c1), 100 * US);
	assert_int_equal(r.start[l1], 110 * US);
	assert_int_equal(r.start[k1], 116 * US);
	assert_int_equal(r.start[k2], 170 * US);
	td_rp_times_free(&r);
	/* the model alone: k2 at its launch plus the latency */
	x.a.whatif->g.keep_unexplained = 0;
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[k2], 136 * US);
	td_rp_times_free(&r);
	x.a.whatif->g.keep_unexplained = 1;
	/* k2's launch warmed up (its module loaded before): the delay goes with its cost */
	e = (struct td_rp_edit){TD_RP_WARM, td_rp_track(&x.w->g, c1), 130 * US, 131 * US,
				3 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[k2], 136 * US);
	assert_int_equal(r.start[k1], 116 * US);
	td_rp_times_free(&r);
	/* pinned and non-blocking: the call costs 5 us, the copy starts after the latency */
	e = (struct td_rp_edit){TD_RP_COST, td_rp_track(&x.w->g, c1), 0, 100 * US, 5 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, c1), 5 * US);
	assert_int_equal(r.start[cp], 6 * US);
	assert_int_equal(r.start[l1], 15 * US);
	assert_int_equal(r.start[k1], 64 * US); /* after the copy on its stream */
	td_rp_times_free(&r);
	done(&x);
}

/* Two pageable uploads on side streams 20 and 24, each blocking the host, then three pinned
 * ones on stream 7 (2 MB in 50 us: the link's pinned bandwidth, 40 000 bytes per us) and a
 * kernel. Each copy follows the one before it on the host-to-device engine when it started
 * after it ended. Made pinned and non-blocking, the pageable ones take 1 MB / 40 000 + 1.5 us
 * = 26.5 us, and the second waits for the engine, not for its launch. */
static void test_engine(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t c1, p1, p2, q1, k1;
	(void)state;

	load(th_fixture("replay/engine.json"), &x);
	c1 = node(&x, "cudaMemcpyAsync", 0);
	p1 = node(&x, "Memcpy HtoD (Pageable -> Device)", 6);
	p2 = node(&x, "Memcpy HtoD (Pageable -> Device)", 126);
	q1 = node(&x, "Memcpy HtoD (Pinned -> Device)", 246);
	k1 = node(&x, "k1", 406);
	assert_int_equal(x.w->g.dev[0].pinned[0], 40000);
	assert_int_equal(x.w->g.engine_edges, 2);
	assert_int_equal(td_rp_side_of(&x.w->g.engine, p2)->ref, p1);
	assert_int_equal(td_rp_side_of(&x.w->g.engine, q1)->ref, p2);
	assert_int_equal(x.w->g.blocking_copies, 2);
	assert_int_equal(td_rp_pinned_dur(&x.w->g, p1), 26500);
	assert_int_equal(td_rp_pinned_dur(&x.w->g, q1), 50 * US); /* pinned already */
	/* as recorded */
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[p2], 126 * US);
	assert_int_equal(r.start[q1], 246 * US);
	assert_int_equal(r.start[k1], 406 * US);
	td_rp_times_free(&r);
	/* pinned, non-blocking: the calls cost 5 us, the copies queue on the engine */
	e = (struct td_rp_edit){TD_RP_COST, td_rp_track(&x.w->g, c1), 0, 230 * US, 5 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, c1), 5 * US);
	assert_int_equal(r.start[p1], 6 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, p1), 32500);
	assert_int_equal(r.start[p2], 32500); /* its launch allows 23 us */
	assert_int_equal(td_rp_end(&x.w->g, &r, p2), 59 * US);
	assert_int_equal(r.start[q1], 59 * US);
	assert_int_equal(r.start[k1], 209 * US);
	td_rp_times_free(&r);
	done(&x);
}

/* A run's start (cudaStreamCreate, 2 ms), then four blocking pageable uploads on stream 7:
 * three of 1 MB and one of 3 MB, each call 108 us, 92 us apart. Made pinned and non-blocking
 * (calls of 5 us), the first two of the 1 MiB class allocate a pinned buffer before them (10 us
 * + 1 MiB at 4 bytes a ns = 272 144 ns), the third reuses one, the 3 MB one allocates its
 * 4 MiB class (1 058 576 ns). Taken later in the run (no start-up), nothing is allocated. */
static void test_pin_alloc(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t c[4], op1;
	const int64_t a1 = 272144, a4 = 1058576;
	(void)state;

	load(th_fixture("replay/pin-alloc.json"), &x);
	c[0] = node(&x, "cudaMemcpyAsync", 3000);
	c[1] = node(&x, "cudaMemcpyAsync", 3200);
	c[2] = node(&x, "cudaMemcpyAsync", 3400);
	c[3] = node(&x, "cudaMemcpyAsync", 3600);
	op1 = node(&x, "Memcpy HtoD (Pageable -> Device)", 3006);
	assert_int_equal(td_rp_pin_alloc_ns(1000000), a1);
	assert_int_equal(td_rp_pin_alloc_ns(1u << 20), a1);
	assert_int_equal(td_rp_pin_alloc_ns(3000000), a4);
	assert_int_equal(x.w->g.pin_alloc, 1);
	e = (struct td_rp_edit){TD_RP_COST, td_rp_track(&x.w->g, c[0]), 3000 * US, 4000 * US,
				5 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[c[0]], 3000 * US + a1);
	assert_true(r.start[op1] >= r.start[c[0]]); /* the copy after the buffer it copies from */
	assert_int_equal(r.start[c[1]], r.start[c[0]] + 5 * US + 92 * US + a1);
	assert_int_equal(r.start[c[2]], r.start[c[1]] + 5 * US + 92 * US);
	assert_int_equal(r.start[c[3]], r.start[c[2]] + 5 * US + 92 * US + a4);
	td_rp_times_free(&r);
	/* a trace taken later in the run: the buffers are there */
	x.a.whatif->g.pin_alloc = 0;
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[c[0]], 3000 * US);
	assert_int_equal(r.start[c[3]], r.start[c[0]] + 3 * (5 + 92) * US);
	td_rp_times_free(&r);
	done(&x);
}

/* A loop launching 100 us kernels every 10 us into a launch queue of 20 (generated): from the
 * 24th call on, each call blocks until the kernel launched 21 before it ends, and returns 5 us
 * later; after a 5 ms pause the next 40 launches come slower than the GPU and never block. The
 * queue is 19 ops deep as measured (those still pending when a blocked call returns), 17 calls
 * blocked. With the kernels at half their time the blocked calls return as soon as the kernel
 * that frees them ends, and a thread whose waits stop keeps them. */
static void test_launch_queue(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t c30, c39, k9, k18, c60;
	int64_t end39;
	(void)state;

	load(th_fixture("replay/queue.json"), &x);
	c30 = node(&x, "cudaLaunchKernel", 915);
	c39 = node(&x, "cudaLaunchKernel", 1815);
	c60 = node(&x, "cudaLaunchKernel", 13015);
	k9 = node(&x, "k9", 905);
	k18 = node(&x, "k18", 1805);
	assert_int_equal(x.w->g.dev[0].queue_depth, 19);
	assert_int_equal(x.w->g.blocked_launches, 17);
	assert_int_equal(x.w->g.dev[0].queue_tail, 5 * US);
	assert_int_equal(x.w->g.dev[0].launch, 5 * US);
	assert_int_equal(x.w->g.src[c30], k9);
	assert_int_equal(x.w->g.src[c39], k18);
	assert_true(x.w->g.fl[c60] & TD_RPF_QUEUE); /* not blocked: an edge the trace holds */
	assert_false(td_rp_syncs(&x.w->g, c30));
	/* as recorded */
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	end39 = td_rp_end(&x.w->g, &r, c39);
	assert_int_equal(end39, td_ev_end(td_rp_event(&x.w->g, c39)));
	td_rp_times_free(&r);
	/* the kernels at half their time: the blocked calls return sooner */
	e = (struct td_rp_edit){TD_RP_FREE, td_rp_track(&x.w->g, k9), 0, 4000 * US, 50 * US, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, c30), td_rp_end(&x.w->g, &r, k9) + 5 * US);
	assert_int_equal(td_rp_end(&x.w->g, &r, c39), td_rp_end(&x.w->g, &r, k18) + 5 * US);
	assert_true(td_rp_end(&x.w->g, &r, c39) < end39 - 800 * US);
	td_rp_times_free(&r);
	/* the thread's waits stopped: the queue still holds its launches */
	e = (struct td_rp_edit){TD_RP_UNWAIT, td_rp_track(&x.w->g, c30), 0, 4000 * US, 0, 0};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(td_rp_end(&x.w->g, &r, c39), end39);
	td_rp_times_free(&r);
	done(&x);
}

/* Four kernels on stream 7 (k1 at 106 us to k4 ending at 186), then an all-reduce of 60 us on
 * stream 13 that waits for k4, and k5 on stream 7 that waits for the all-reduce. Overlapped with
 * 15 us of it left exposed, the all-reduce may start 45 us before k4 ends (141 us), once the
 * region from k1 ran a quarter of its 80 us (126), and k5 follows it at 201; with the region
 * from 160 us (k4 at 166 its first op), no earlier than a quarter of k4's 20 us (171). */
static void test_overlap(void **state)
{
	struct run x;
	struct td_rp_times r;
	struct td_rp_edit e;
	uint32_t k1, k4, c, k5;
	const char *ar = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	(void)state;

	load(th_fixture("replay/overlap.json"), &x);
	k1 = node(&x, "k1", 106);
	k4 = node(&x, "k4", 166);
	c = node(&x, ar, 186);
	k5 = node(&x, "k5", 246);
	assert_int_equal(x.w->g.dev[0].lag[0], 6 * US);
	assert_int_equal(x.w->g.cross_edges, 2);
	assert_int_equal(td_rp_prior_other(&x.w->g, c), k4);
	assert_int_equal(td_replay_run(&x.w->g, NULL, 0, &r), 0);
	assert_int_equal(r.start[c], 186 * US);
	assert_int_equal(r.start[k5], 246 * US);
	td_rp_times_free(&r);
	e = (struct td_rp_edit){TD_RP_OVERLAP, td_rp_track(&x.w->g, c), 186 * US, 187 * US,
				15 * US, 100 * US};
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[k1], 106 * US);
	assert_int_equal(r.start[c], 141 * US);
	assert_int_equal(r.start[k5], 201 * US);
	td_rp_times_free(&r);
	e.since = 160 * US;
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[c], 171 * US);
	assert_int_equal(r.start[k5], 231 * US);
	td_rp_times_free(&r);
	/* nothing left exposed, the region from the first kernel: 60 us before k4 ends */
	e.residual = 0;
	e.since = 0;
	assert_int_equal(td_replay_run(&x.w->g, &e, 1, &r), 0);
	assert_int_equal(r.start[c], 126 * US);
	assert_int_equal(r.start[k5], 186 * US); /* after k4 on its stream */
	td_rp_times_free(&r);
	done(&x);
}

/* Every real trace replays to within 1% per step (median) and 10% over its window, the model
 * alone; or, above that, the delays the replay cannot explain account for the difference. */
static void test_fidelity(void **state)
{
	static const char *const traces[] = {
		"a100-event-sync.json.gz", "b200-eager-decode.json.gz", "ddp-v100-rank1.json.gz",
		"dlrm-v100-rank1.json.gz", "gp100-gpu-annotation.json.gz", "mi210-gpu-only.json.gz",
		"mi250-rocm.json.gz", "resnet-2080ti.json.gz", "resnet50-nw0.pt.trace.json.gz",
		"resnet50-nw4.pt.trace.json.gz", "v100-ns-rank0.pt.trace.json.gz", NULL,
	};
	size_t i;
	(void)state;

	TH_SKIP_WITHOUT_SHARED();
	for (i = 0; traces[i]; i++) {
		struct run x;
		struct td_rp_report rep;
		double err;
		load(th_shared(traces[i]), &x);
		assert_int_equal(td_whatif_report(&x.a, &rep), 0);
		err = rep.window_error < 0 ? -rep.window_error : rep.window_error;
		print_message("%-34s window %+.3f%%, median step %.3f%% over %zu steps, unexplained "
			      "%.1f ms\n", traces[i], 100 * rep.window_error, 100 * rep.median_step_error,
			      rep.nsteps, (double)x.w->g.unexplained_ns / 1e6);
		if (rep.median_step_error > 0.01 || err > 0.10) {
			/* what the replay cannot explain must cover the difference */
			int64_t diff = rep.window_measured_ns - rep.window_replayed_ns;
			if (diff < 0 || x.w->g.unexplained_ns < diff)
				fail_msg("%s: replay off by %.1f%% and not explained", traces[i], 100 * err);
		}
		td_rp_report_free(&rep);
		done(&x);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_after),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_loader_gate),
		cmocka_unit_test(test_second_thread),
		cmocka_unit_test(test_side_stream),
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_engine),
		cmocka_unit_test(test_pin_alloc),
		cmocka_unit_test(test_launch_queue),
		cmocka_unit_test(test_overlap),
		cmocka_unit_test(test_fidelity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
