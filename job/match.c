/* SPDX-License-Identifier: MIT */
/* Matching the ranks' collectives (td_job_match, job/internal.h): the same collective on each
 * rank by process group, collective, size and order; each row's wait and lateness, and the
 * collectives the others wait longest in for the straggler. Below job.c and stragglers.c. */
#include "job/job.h"
#include "job/internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"
#include "common/sat.h"
#include "common/sort.h"

struct inst {
	uint32_t key, seq;   /* key: id in the job's key table */
	uint32_t row;
	int64_t start, dur, in_step, gpu_in_step;
};
#define INST_LESS(x, y) ((x)->key < (y)->key || ((x)->key == (y)->key && ((x)->seq < (y)->seq || \
	((x)->seq == (y)->seq && (x)->row < (y)->row))))
TD_DEFINE_SORT(sort_inst, struct inst, INST_LESS)

void td_job_match(struct td_job *j, struct td_strtab *keys, struct worst *top, size_t ntop,
		  size_t *nworst, uint32_t straggler_row, int pass)
{
	struct inst *v;
	size_t n = 0, cap = 0, i, g, r, kranks;
	int64_t *durs = td_malloc(j->n * sizeof(*durs)), **ends = NULL;
	int64_t *offs = td_malloc(j->n * sizeof(*offs));
	size_t *nends = NULL;

	for (r = 0; r < j->n; r++)
		cap += j->rows[r].s->colls.len;
	v = td_malloc((cap ? cap : 1) * sizeof(*v));
	for (r = 0; r < j->n; r++) {
		const struct td_summary *s = j->rows[r].s;
		if (s->partial) /* it ends early: its last collectives would match nothing */
			continue;
		for (i = 0; i < s->colls.len; i++) {
			const struct td_sum_coll *c = &TD_VEC_AT(&s->colls, struct td_sum_coll, i);
			const char *k = td_strtab_str(&s->keys, c->key);
			v[n].key = td_strtab_intern(keys, k, strlen(k));
			v[n].seq = c->seq;
			v[n].row = (uint32_t)r;
			v[n].start = c->start;
			v[n].dur = c->dur;
			v[n].in_step = c->in_step;
			v[n].gpu_in_step = c->gpu_in_step;
			n++;
		}
	}
	sort_inst(v, n);
	if (pass == 0) {
		ends = td_calloc(j->n, sizeof(*ends));
		nends = td_calloc(j->n, sizeof(*nends));
		for (r = 0; r < j->n; r++)
			ends[r] = td_malloc((j->rows[r].s->colls.len + 1) * sizeof(int64_t));
		j->matched = j->unmatched = 0;
	}
	for (i = 0, kranks = 0; i < n; i = g) {
		int64_t min, med;
		uint32_t late = v[i].row;
		size_t lpos = i;
		for (g = i; g < n && v[g].key == v[i].key && v[g].seq == v[i].seq; g++)
			;
		if (v[i].seq == 0) /* the first of a key: the ranks that run it (its group) */
			kranks = g - i;
		if (g - i != kranks || kranks < 2) { /* not on every rank of its group */
			if (pass == 0)
				j->unmatched++;
			continue;
		}
		min = v[i].dur;
		for (r = i; r < g; r++) {
			durs[r - i] = v[r].dur;
			if (v[r].dur < min) {
				min = v[r].dur;
				late = v[r].row;
				lpos = r;
			}
		}
		med = td_median_i64(durs, g - i);
		if (pass == 0) {
			j->matched++;
			for (r = i; r < g; r++) {
				j->rows[v[r].row].wait_ns = td_sat_add(j->rows[v[r].row].wait_ns,
								      v[r].dur - min);
				/* ends coincide: each rank's end minus the first rank's is its clock
				 * offset, from the groups that include that rank */
				if (v[i].row == 0)
					ends[v[r].row][nends[v[r].row]++] = td_sat_sub(
						td_sat_add(v[r].start, v[r].dur),
						td_sat_add(v[i].start, v[i].dur));
			}
			j->rows[late].late_ns = td_sat_add(j->rows[late].late_ns, med - min);
			j->rows[late].late_count++;
			if (med - min > j->rows[late].late_max_ns)
				j->rows[late].late_max_ns = med - min;
			/* did it launch later into its step than the others, or start the step late? */
			{
				size_t no = 0;
				for (r = i; r < g; r++)
					if (r != lpos && v[r].in_step >= 0)
						offs[no++] = v[r].in_step;
				if (v[lpos].in_step >= 0 && no == g - i - 1) {
					int64_t d = td_sat_sub(v[lpos].in_step, td_median_i64(offs, no));
					j->rows[late].late_in_step_ns = td_sat_add(
						j->rows[late].late_in_step_ns, d > 0 ? d : 0);
					for (r = i, no = 0; r < g; r++)
						if (r != lpos)
							offs[no++] = v[r].gpu_in_step;
					d = td_sat_sub(v[lpos].gpu_in_step, td_median_i64(offs, no));
					j->rows[late].late_gpu_in_step_ns = td_sat_add(
						j->rows[late].late_gpu_in_step_ns, d > 0 ? d : 0);
					j->rows[late].late_known++;
				}
			}
		} else if (late == straggler_row && med > min) {
			/* the collectives the straggler held up most, for evidence */
			struct worst w;
			size_t k;
			for (r = i; r < g; r++)
				if (v[r].row == straggler_row)
					break;
			w.delay = med - min;
			w.start = v[r].start;
			w.dur = v[r].dur;
			w.median = med;
			w.key = v[i].key;
			w.seq = v[i].seq;
			for (k = *nworst; k > 0 && top[k - 1].delay < w.delay; k--)
				if (k < ntop)
					top[k] = top[k - 1];
			if (k < ntop) {
				top[k] = w;
				if (*nworst < ntop)
					(*nworst)++;
			}
		}
	}
	if (pass == 0) {
		for (r = 0; r < j->n; r++) {
			if (nends[r]) {
				j->rows[r].clock_offset_ns = td_median_i64(ends[r], nends[r]);
				j->rows[r].has_offset = 1;
			}
			free(ends[r]);
		}
		free(ends);
		free(nends);
	}
	free(offs);
	free(durs);
	free(v);
}
