/* SPDX-License-Identifier: MIT */
/* The analysis's second thread (sizing/internal.h). After the read, the analysis and the
 * rules run on one thread; this one builds the replay's graph and replays the trace as
 * recorded meanwhile, then replays each fix as soon as its rule has stated it, so that
 * td_whatif_size() finds most of them done. A replay's result depends on the graph and its
 * edits only: which thread ran it, and when, changes nothing in the report. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "analysis/finding.h"
#include "sizing/internal.h"

struct wq_task {
	int kind, device;
	const struct td_rp_edit *pre; /* T_BOTH: the loader's (the queue's copy), applied first */
	size_t npre;
	struct td_rp_edit *ed;     /* a copy while it is needed (NULL after: a fix's edits run to
				    * megabytes), then known by its hash */
	size_t ned;
	uint64_t hash;
	int done;
	int64_t win, busy;
};

struct td_wq {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int built;            /* the graph and its baseline are there */
	int closing;          /* no more tasks: the thread ends once none is left */
	int joined;
	struct wq_task **task;
	size_t n, cap, next;  /* next: the next task to run */
	int shared;           /* td_wq_share() has been called: pool (NULL: none) is what the
			       * thread runs once its queue is empty */
	void (*pool)(void *arg, struct td_rp_times *r);
	void *pool_arg;
	int has_loader;       /* the DataLoader's fix is known: each fix on its device is also
			       * replayed after it (T_BOTH) */
	int loader_device;
	struct td_rp_edit *loader;
	size_t nloader;
	td_whatif_replay_fn *replay; /* what a task runs (td_wq_start()) */
};

/* The edits' bytes, hashed 8 at a time (the tail zero-padded) - what a result is matched by
 * once the copy is gone. */
static uint64_t edits_hash(const struct td_rp_edit *pre, size_t npre, const struct td_rp_edit *ed,
			   size_t ned)
{
	const unsigned char *part[2] = {(const unsigned char *)pre, (const unsigned char *)ed};
	size_t len[2] = {npre * sizeof(*pre), ned * sizeof(*ed)}, i, k;
	uint64_t h = 0x243f6a8885a308d3ull ^ (npre + ned);

	for (k = 0; k < 2; k++)
		for (i = 0; i < len[k]; i += 8) {
			uint64_t w = 0;
			memcpy(&w, part[k] + i, len[k] - i < 8 ? len[k] - i : 8);
			h = (h ^ w) * 0x9e3779b97f4a7c15ull;
			h ^= h >> 29;
		}
	return h;
}

/* A run task's copy of its edits goes, unless a fix alone may still be replayed after the
 * loader's (td_wq_loader() builds that from it; the lock held). */
static void let_go(struct td_analysis *a, struct td_wq *q, struct wq_task *tk)
{
	if (tk->kind != T_BOTH && !q->has_loader && a->whatif->g.gates.len)
		return;
	free(tk->ed);
	tk->ed = NULL;
}

/* Runs the queued tasks on the calling thread until none is left and, with `wait`, until the
 * queue closes. */
static void work(struct td_analysis *a, struct td_wq *q, int wait, struct td_rp_times *r)
{
	pthread_mutex_lock(&q->mu);
	for (;;) {
		if (q->next < q->n) {
			struct wq_task *tk = q->task[q->next++];
			int d = td_an_dev_index(a, tk->device);
			pthread_mutex_unlock(&q->mu);
			tk->win = d < 0 ? -1 : q->replay(a, (size_t)d, tk->pre, tk->npre, tk->ed,
							 tk->ned, r, &tk->busy);
			pthread_mutex_lock(&q->mu);
			tk->done = 1;
			let_go(a, q, tk);
			pthread_cond_broadcast(&q->cv);
			continue;
		}
		if (!wait || q->closing)
			break;
		pthread_cond_wait(&q->cv, &q->mu);
	}
	pthread_mutex_unlock(&q->mu);
}

static void *second(void *arg)
{
	struct td_analysis *a = arg;
	struct td_whatif *w = a->whatif;
	struct td_wq *q = w->wq;
	struct td_rp_times r; /* each replay of this thread in the same buffers */
	void (*pool)(void *, struct td_rp_times *);

	td_whatif_build(a, w);
	if (w->built) /* the baseline: pinned allocations (set later) change only a fix's replay */
		w->base_rc = td_replay_again(&w->g, NULL, 0, &w->base_r) == 0 ? 1 : -1;
	pthread_mutex_lock(&q->mu);
	q->built = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	memset(&r, 0, sizeof(r));
	work(a, q, 1, &r);
	/* then the sizing's replays, beside the caller's thread, once it has stated them */
	pthread_mutex_lock(&q->mu);
	while (!q->shared)
		pthread_cond_wait(&q->cv, &q->mu);
	pool = q->pool;
	pthread_mutex_unlock(&q->mu);
	if (pool)
		pool(q->pool_arg, &r);
	td_rp_times_free(&r);
	return NULL;
}

int td_wq_start(struct td_analysis *a, td_whatif_replay_fn *replay)
{
	struct td_wq *q = td_calloc(1, sizeof(*q));

	q->replay = replay;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	a->whatif->wq = q;
	if (pthread_create(&q->th, NULL, second, a) == 0)
		return 0;
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
	a->whatif->wq = NULL;
	return -1;
}

void td_wq_built(struct td_whatif *w)
{
	struct td_wq *q = w->wq;

	pthread_mutex_lock(&q->mu);
	while (!q->built)
		pthread_cond_wait(&q->cv, &q->mu);
	pthread_mutex_unlock(&q->mu);
}

/* A task of edits (copied) after pre's (kept: the queue's loader copy, or NULL). */
static struct wq_task *task_new(int kind, int device, const struct td_rp_edit *pre, size_t npre,
				const struct td_rp_edit *edits, size_t nedits)
{
	struct wq_task *tk = td_calloc(1, sizeof(*tk));

	tk->kind = kind;
	tk->device = device;
	tk->pre = pre;
	tk->npre = npre;
	tk->ned = nedits;
	tk->ed = td_malloc((nedits + 1) * sizeof(*edits));
	if (nedits)
		memcpy(tk->ed, edits, nedits * sizeof(*edits));
	tk->hash = edits_hash(pre, npre, edits, nedits);
	tk->win = tk->busy = -1;
	return tk;
}

/* Whether the queue takes no more tasks (the lock held): it closes, or WQ_WAITING tasks wait
 * already - the thread runs about two replays while the rules run, and each waiting task
 * holds a copy of its edits (td_whatif_size() replays the rest in its pool). Checked before a
 * task's edits are copied and hashed (a fix's run to megabytes). */
#define WQ_WAITING 1
static int full(const struct td_wq *q)
{
	return q->closing || q->n - q->next >= WQ_WAITING;
}

/* The most edits a task copies: a fix with more (a host-bound trace's bound, an edit per
 * piece of idle: 25 MB of them on 1 GB) is replayed by td_whatif_size() from its finding's
 * own, without a copy. */
#define WQ_EDITS_MAX ((size_t)1 << 17)

/* Queues tk (the lock held; not full). */
static void push(struct td_wq *q, struct wq_task *tk)
{
	if (q->n == q->cap) {
		q->cap = q->cap ? 2 * q->cap : 16;
		q->task = td_realloc(q->task, q->cap * sizeof(*q->task));
	}
	q->task[q->n++] = tk;
	pthread_cond_broadcast(&q->cv);
}

/* A fix on the loader's device replayed after the loader's fix too (as td_whatif_size() does
 * for each fix but the loader's own; the lock held). */
static void push_after_loader(struct td_wq *q, const struct wq_task *alone)
{
	if (full(q) || alone->kind == T_BOTH || !alone->ed || alone->device != q->loader_device ||
	    alone->ned > WQ_EDITS_MAX ||
	    (alone->ned == q->nloader && !memcmp(alone->ed, q->loader, q->nloader * sizeof(*q->loader))))
		return;
	push(q, task_new(T_BOTH, alone->device, q->loader, q->nloader, alone->ed, alone->ned));
}

void td_wq_submit(struct td_analysis *a, int kind, int device, const struct td_rp_edit *edits,
		  size_t nedits)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;
	struct wq_task *tk;
	int no_room;

	if (!q || !nedits || nedits > WQ_EDITS_MAX)
		return;
	pthread_mutex_lock(&q->mu);
	no_room = full(q);
	pthread_mutex_unlock(&q->mu);
	if (no_room)
		return;
	/* copied outside the lock, while the thread runs: only this (the rules') thread submits
	 * and closes, so meanwhile the queue can only empty */
	tk = task_new(kind, device, NULL, 0, edits, nedits);
	pthread_mutex_lock(&q->mu);
	push(q, tk);
	if (q->has_loader)
		push_after_loader(q, tk);
	pthread_mutex_unlock(&q->mu);
}

void td_wq_loader(struct td_analysis *a, int device, const struct td_rp_edit *edits,
		  size_t nedits)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;
	size_t i, n;

	if (!q || nedits > WQ_EDITS_MAX)
		return;
	pthread_mutex_lock(&q->mu);
	if (!q->has_loader && !q->closing) {
		q->has_loader = 1;
		q->loader_device = device;
		q->nloader = nedits;
		q->loader = td_malloc((nedits + 1) * sizeof(*edits));
		if (nedits)
			memcpy(q->loader, edits, nedits * sizeof(*edits));
		for (i = 0, n = q->n; i < n; i++) { /* the fixes stated before it */
			push_after_loader(q, q->task[i]);
			if (q->task[i]->done)
				let_go(a, q, q->task[i]);
		}
	}
	pthread_mutex_unlock(&q->mu);
}

int td_wq_close(struct td_analysis *a)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;
	int share;

	if (!q || q->joined)
		return 0;
	pthread_mutex_lock(&q->mu);
	q->closing = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	/* a second replay beside the thread's where the memory budget holds two */
	share = td_whatif_replays_at_once(a, a->jobs, 2) > 1;
	if (!share) {
		td_wq_share(a, NULL, NULL);
		td_wq_join(a);
	}
	return share;
}

int td_wq_pending(struct td_whatif *w, int kind, int device, const struct td_rp_edit *pre,
		  size_t npre, const struct td_rp_edit *edits, size_t nedits)
{
	struct td_wq *q = w->wq;
	uint64_t h;
	size_t i;
	int found = 0;

	if (!q || q->joined)
		return 0;
	h = edits_hash(pre, npre, edits, nedits);
	pthread_mutex_lock(&q->mu);
	for (i = 0; i < q->n && !found; i++) {
		const struct wq_task *tk = q->task[i];
		found = tk->kind == kind && tk->device == device &&
			tk->npre + tk->ned == npre + nedits && tk->hash == h;
	}
	pthread_mutex_unlock(&q->mu);
	return found;
}

void td_wq_share(struct td_analysis *a, void (*pool)(void *arg, struct td_rp_times *r),
		 void *arg)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;

	if (!q || q->joined)
		return;
	pthread_mutex_lock(&q->mu);
	q->pool = pool;
	q->pool_arg = arg;
	q->shared = 1;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
}

void td_wq_help(struct td_analysis *a, struct td_rp_times *r)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;

	if (q && !q->joined)
		work(a, q, 0, r);
}

void td_wq_join(struct td_analysis *a)
{
	struct td_wq *q = a->whatif ? a->whatif->wq : NULL;

	if (!q || q->joined)
		return;
	pthread_join(q->th, NULL);
	q->joined = 1;
}

int td_wq_result(const struct td_whatif *w, int kind, int device, const struct td_rp_edit *pre,
		 size_t npre, const struct td_rp_edit *edits, size_t nedits, int64_t *win,
		 int64_t *busy)
{
	const struct td_wq *q = w->wq;
	uint64_t h;
	size_t i;

	if (!q || !q->joined)
		return 0;
	h = edits_hash(pre, npre, edits, nedits);
	for (i = 0; i < q->n; i++) {
		const struct wq_task *tk = q->task[i];
		/* the edits as they were handed over: a rule that changed a finding's edits later
		 * gets a replay of its own */
		if (tk->done && tk->kind == kind && tk->device == device &&
		    tk->npre + tk->ned == npre + nedits && tk->hash == h) {
			*win = tk->win;
			*busy = tk->busy;
			return 1;
		}
	}
	return 0;
}

void td_wq_free(struct td_whatif *w)
{
	struct td_wq *q = w->wq;
	size_t i;

	if (!q)
		return;
	if (!q->joined) {
		pthread_mutex_lock(&q->mu);
		q->closing = 1;
		q->next = q->n; /* what is queued is not wanted any more */
		if (!q->shared) {
			q->shared = 1;
			q->pool = NULL;
		}
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		pthread_join(q->th, NULL);
	}
	for (i = 0; i < q->n; i++) {
		free(q->task[i]->ed);
		free(q->task[i]);
	}
	free(q->task);
	free(q->loader);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
	w->wq = NULL;
}
