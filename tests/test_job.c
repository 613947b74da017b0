/* SPDX-License-Identifier: MIT */
/* A fix replayed across the ranks' collectives (job/joint.c), on hand-made ranks whose answer is
 * worked out in the comments: what the job wins, and which rank then holds the step. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "job/internal.h"
#include "sizing/whatif.h"

/* Every rank wins the same in every segment: the ranks keep meeting as before, and the job
 * wins what each rank does. */
static void test_same_on_every_rank(void **state)
{
	/* 3 ranks, 4 collectives; rank 2 arrives last everywhere (waits 0) */
	const int64_t wait[12] = {50, 60, 70, 80, 10, 20, 30, 40, 0, 0, 0, 0};
	const int64_t shift[12] = {-10, -20, -30, -40, -10, -20, -30, -40, -10, -20, -30, -40};
	const int64_t own[3] = {45, 45, 45}; /* 5 more after the last collective */
	size_t holder, arrives;
	(void)state;

	assert_int_equal(td_job_joint(3, 4, wait, shift, own, &holder, &arrives), 45);
	assert_int_equal(holder, 2);
	assert_int_equal(arrives, 4);
}

/* Only the straggler is fixed, and the rank that arrives last changes on the way: a sum of the
 * waits over the window cannot follow that. Rank 0 arrives last (waits 0); rank 1 waits 100,
 * 30 and 50. Rank 0's fix wins it 40, 80 and 30 before the three collectives and 20 after them
 * (own 170); rank 1 has no fix.
 *   1st: rank 0 at -40, rank 1 at 0 - 100 = -100: ends 40 earlier (rank 0 last)
 *   2nd: rank 0 at -40 - 80 = -120, rank 1 at -40 - 30 = -70: ends 70 earlier (rank 1 last)
 *   3rd: rank 0 at -70 - 30 = -100, rank 1 at -70 - 50 = -120: ends 100 earlier (rank 0 last)
 * Rank 0 then ends 100 + 20 earlier, rank 1 only 100 (its work after it is as long): the job
 * wins 100, held by rank 1 after the last collective. Weighed by the waits over the window,
 * the job would win min(0 + 170, 180 - 0) = 170. */
static void test_last_rank_changes(void **state)
{
	const int64_t wait[6] = {0, 0, 0, 100, 30, 50};
	const int64_t shift[6] = {-40, -120, -150, 0, 0, 0};
	const int64_t own[2] = {170, 0};
	size_t holder, arrives;
	(void)state;

	assert_int_equal(td_job_joint(2, 3, wait, shift, own, &holder, &arrives), 100);
	assert_int_equal(holder, 1);
	assert_int_equal(arrives, 0); /* held after the last collective */
}

/* A rank without the fix that holds every collective: the job wins nothing, whatever the
 * others save; a collective whose shift is not known moves as the one before it. */
static void test_holder_without_fix(void **state)
{
	const int64_t wait[6] = {0, 0, 0, 500, 500, 500};
	const int64_t shift[6] = {0, 0, 0, -200, TD_SHIFT_NONE, -400};
	const int64_t own[2] = {0, 450};
	size_t holder, arrives;
	(void)state;

	assert_int_equal(td_job_joint(2, 3, wait, shift, own, &holder, &arrives), 0);
	assert_int_equal(holder, 0);
	assert_int_equal(arrives, 3);
}

/* A rank whose own replay moves a collective earlier than the work after it (the time between
 * them grows by 500: that work did not wait for its end): a later end is taken from that slack
 * first. Rank 1 has no fix and arrives last at the 1st (rank 0 waited 200 there); rank 0's fix
 * moves its collectives 800 and 300 earlier, and rank 1 waits 1000 at the 2nd.
 *   1st: rank 0 at -800 - 200, rank 1 at 0: ends as before (rank 1 last)
 *   2nd: rank 0: the 1st ended 800 later than its replay had it, 500 of it slack: at -300 + 300
 *        = 0; rank 1 at 0 - 1000: ends as before (rank 0 last)
 * The job wins nothing; moved with the 1st's end (no slack), rank 0 would arrive at the 2nd 500
 * late and the job lose 500. */
static void test_slack(void **state)
{
	const int64_t wait[4] = {200, 0, 0, 1000};
	const int64_t shift[4] = {-800, -300, 0, 0};
	const int64_t own[2] = {300, 0};
	size_t holder, arrives;
	(void)state;

	assert_int_equal(td_job_joint(2, 2, wait, shift, own, &holder, &arrives), 0);
}

/* No collectives: each rank keeps its own saving, and the least holds. */
static void test_no_collectives(void **state)
{
	const int64_t own[3] = {30, 10, 20};
	size_t holder, arrives;
	(void)state;

	assert_int_equal(td_job_joint(3, 0, NULL, NULL, own, &holder, &arrives), 10);
	assert_int_equal(holder, 1);
	assert_int_equal(td_job_joint(0, 0, NULL, NULL, NULL, &holder, &arrives), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_on_every_rank),
		cmocka_unit_test(test_last_rank_changes),
		cmocka_unit_test(test_holder_without_fix),
		cmocka_unit_test(test_slack),
		cmocka_unit_test(test_no_collectives),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
