/* SPDX-License-Identifier: MIT */
/* A fix replayed across the ranks' collectives: each rank's own replay (its summary's
 * collective shifts) says how much earlier each of its collectives starts once the fix is in,
 * with the others' waits unchanged; here the ranks meet again. All ranks of a collective end
 * together, so the rank that waited least (its duration the shortest) arrived last and the
 * collective's own time is that duration; the others' excess is their wait. With the fix, a
 * collective ends when its last rank arrives, plus its own time. Each rank's work between two
 * collectives moves with the end of the first (what it does after it needs it) - unless its
 * own replay shows it does not: where the fix moves the first collective earlier than the work
 * after it (the time between them grows by g), the work did not wait for that end, and a later
 * end is taken from that slack first, an earlier one gains it nothing. In shifts (later:
 * positive), for rank r and collective i in order, d(r, i) its own shift, w(r, i) its wait and
 * late(r, i) = end(i-1) - d(r, i-1) how much later the collective before ended than its own
 * replay had it:
 *
 *     arrive(r, i) = d(r, i) + late - g        late > g, g = max(0, d(r, i) - d(r, i-1))
 *                  = d(r, i)                   0 <= late <= g, or late < 0 < g
 *                  = d(r, i) + late            late < 0, g = 0
 *     end(i) = max over r of (arrive(r, i) - w(r, i)),   end(-1) = 0, d(r, -1) = 0
 *
 * and rank r's window ends own(r) earlier by its own replay less what moved with the last
 * collective: the job wins min over r of (own(r) + d(r, last) - end(last)). The rank that
 * arrives last may change from one collective to the next, as the fix moves the ranks. */
#include "job/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/sort.h"
#include "sizing/whatif.h"

int64_t td_job_joint(size_t n, size_t m, const int64_t *wait, const int64_t *shift,
		     const int64_t *own, size_t *holder, size_t *arrives)
{
	int64_t *prev = td_calloc(n ? n : 1, sizeof(*prev)), end = 0, best;
	size_t *lasts = td_calloc(n ? n : 1, sizeof(*lasts)), r, i, most = 0;

	*holder = *arrives = 0;
	for (i = 0; i < m; i++) {
		int64_t e = INT64_MIN;
		size_t last = 0;
		for (r = 0; r < n; r++) {
			int64_t d = shift[r * m + i] == TD_SHIFT_NONE ? prev[r] : shift[r * m + i];
			/* saturating: the shifts and durations come from files */
			int64_t slack = d > prev[r] ? td_sat_sub(d, prev[r]) : 0;
			int64_t late = td_sat_sub(end, prev[r]);
			int64_t x = td_sat_sub(td_sat_add(d, late > 0 ? (late > slack ? late - slack : 0)
							  : slack ? 0 : late), wait[r * m + i]);
			if (x > e) {
				e = x;
				last = r;
			}
			prev[r] = d;
		}
		end = e;
		lasts[last]++;
	}
	for (r = 1; r < n; r++)
		if (lasts[r] > lasts[most])
			most = r;
	/* the rank that then arrives last most often holds the step, unless one's work after the
	 * last collective gains less */
	best = n ? td_sat_sub(td_sat_add(own[most], prev[most]), end) : 0;
	*holder = most;
	for (r = 0; r < n; r++) {
		int64_t g = td_sat_sub(td_sat_add(own[r], prev[r]), end);
		if (g < best) {
			best = g;
			*holder = r;
		}
	}
	*arrives = n && *holder == most ? lasts[most] : 0; /* 0: held after the last */
	free(prev);
	free(lasts);
	return best;
}

/* --- from the summaries ------------------------------------------------------------------ */

/* The collectives every rank that meets the others ran, in order: for each, each such rank's
 * index in its summary's collectives and its wait. */
struct jm {
	size_t n, m;      /* ranks (rows[]), collectives */
	size_t *rows;     /* job rows: not partial, with collectives */
	uint32_t *idx;    /* rows * m: the collective's index in the row's summary */
	int64_t *wait;    /* rows * m */
};

struct at {
	uint32_t key, seq, row, idx; /* key: id in the job's table; idx: in the row's colls */
};
#define AT_LESS(x, y) ((x)->key < (y)->key || ((x)->key == (y)->key && ((x)->seq < (y)->seq || \
	((x)->seq == (y)->seq && (x)->row < (y)->row))))
TD_DEFINE_SORT(sort_at, struct at, AT_LESS)
struct grp {
	uint32_t first; /* in the array of struct at */
	uint32_t order; /* its place among the first row's collectives */
};
#define GRP_LESS(x, y) ((x)->order < (y)->order)
TD_DEFINE_SORT(sort_grp, struct grp, GRP_LESS)

static void jm_free(struct jm *x)
{
	free(x->rows);
	free(x->idx);
	free(x->wait);
}

/* 0, or -1 when fewer than two ranks meet or no collective is on all of them */
static int jm_build(const struct td_job *j, struct jm *x)
{
	struct td_strtab keys;
	struct at *v;
	struct grp *gs;
	size_t cap = 0, nv = 0, ng = 0, i, g, r, n = 0;

	memset(x, 0, sizeof(*x));
	x->rows = td_malloc((j->n ? j->n : 1) * sizeof(*x->rows));
	for (r = 0; r < j->n; r++)
		if (!j->rows[r].s->partial && j->rows[r].s->colls.len) {
			x->rows[n++] = r;
			cap += j->rows[r].s->colls.len;
		}
	x->n = n;
	if (n < 2)
		return -1;
	td_strtab_init(&keys);
	v = td_malloc(cap * sizeof(*v));
	for (r = 0; r < n; r++) {
		const struct td_summary *s = j->rows[x->rows[r]].s;
		for (i = 0; i < s->colls.len; i++) {
			const struct td_sum_coll *c = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
			const char *k = td_strtab_str(&s->keys, c->key);
			v[nv++] = (struct at){td_strtab_intern(&keys, k, strlen(k)), c->seq,
					      (uint32_t)r, (uint32_t)i};
		}
	}
	sort_at(v, nv);
	gs = td_malloc((nv / n + 1) * sizeof(*gs));
	for (i = 0; i < nv; i = g) { /* the collectives every rank ran, each rank once */
		for (g = i; g < nv && v[g].key == v[i].key && v[g].seq == v[i].seq; g++)
			;
		if (g - i == n)
			gs[ng++] = (struct grp){(uint32_t)i, v[i].idx};
	}
	sort_grp(gs, ng);
	x->m = ng;
	x->idx = td_malloc((n * ng + 1) * sizeof(*x->idx));
	x->wait = td_malloc((n * ng + 1) * sizeof(*x->wait));
	for (g = 0; g < ng; g++) {
		const struct at *a = &v[gs[g].first]; /* a[r]: rank r's, in order */
		int64_t min = INT64_MAX;
		for (r = 0; r < n; r++) {
			x->idx[r * ng + g] = a[r].idx;
			if (TD_VEC_AT(&j->rows[x->rows[r]].s->colls, struct td_sum_coll, a[r].idx).dur < min)
				min = TD_VEC_AT(&j->rows[x->rows[r]].s->colls, struct td_sum_coll,
						a[r].idx).dur;
		}
		for (r = 0; r < n; r++)
			x->wait[r * ng + g] = td_sat_sub(TD_VEC_AT(&j->rows[x->rows[r]].s->colls,
								   struct td_sum_coll, a[r].idx).dur, min);
	}
	td_strtab_free(&keys);
	free(v);
	free(gs);
	return ng ? 0 : -1;
}

int td_job_joint_finding(const struct td_job *j, const struct td_sum_finding *const *fs,
			 int64_t *gain, size_t *holder, size_t *arrives, size_t *ncoll)
{
	struct jm x;
	int64_t *shift, *own;
	size_t r, g, h;

	for (r = 0; r < j->n; r++)
		if (fs[r] && !fs[r]->shifts && !j->rows[r].s->partial && j->rows[r].s->colls.len)
			return -1; /* a rank's summary without them: the job cannot replay it */
	if (jm_build(j, &x) != 0) {
		jm_free(&x);
		return -1;
	}
	shift = td_malloc(x.n * x.m * sizeof(*shift));
	own = td_malloc(x.n * sizeof(*own));
	for (r = 0; r < x.n; r++) {
		const struct td_sum_finding *f = fs[x.rows[r]];
		for (g = 0; g < x.m; g++)
			shift[r * x.m + g] = f ? f->shifts[x.idx[r * x.m + g]] : 0;
		own[r] = f ? SIZED(f) : 0;
	}
	*gain = td_job_joint(x.n, x.m, x.wait, shift, own, &h, arrives);
	*holder = x.rows[h];
	*ncoll = x.m;
	free(shift);
	free(own);
	jm_free(&x);
	return 0;
}

int td_job_joint_on_time(const struct td_job *j, size_t row, int64_t *gain, size_t *next,
			 size_t *arrives, size_t *ncoll)
{
	struct jm x;
	int64_t *shift, *own, d = 0;
	size_t r, g, h, s = SIZE_MAX;

	if (jm_build(j, &x) != 0) {
		jm_free(&x);
		return -1;
	}
	for (r = 0; r < x.n; r++)
		if (x.rows[r] == row)
			s = r;
	if (s == SIZE_MAX) {
		jm_free(&x);
		return -1;
	}
	shift = td_calloc(x.n * x.m, sizeof(*shift));
	own = td_calloc(x.n, sizeof(*own));
	for (g = 0; g < x.m; g++) {
		int64_t second = INT64_MAX; /* the least wait of the others: the next to arrive */
		for (r = 0; r < x.n; r++)
			if (r != s && x.wait[r * x.m + g] < second)
				second = x.wait[r * x.m + g];
		if (x.wait[s * x.m + g] == 0 && second != INT64_MAX)
			d = td_sat_sub(d, second);
		shift[s * x.m + g] = d;
	}
	own[s] = d == INT64_MIN ? INT64_MAX : -d;
	*gain = td_job_joint(x.n, x.m, x.wait, shift, own, &h, arrives);
	*next = x.rows[h];
	*ncoll = x.m;
	free(shift);
	free(own);
	jm_free(&x);
	return 0;
}
