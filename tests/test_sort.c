/* SPDX-License-Identifier: MIT */
/* The in-place introsort: sorted output, a permutation of the input, on adversarial shapes;
 * selection; the lower bound searched from a guess. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/sort.h"

struct kv {
	int64_t k;
	uint32_t id;
};
#define KV_LESS(a, b) ((a)->k < (b)->k || ((a)->k == (b)->k && (a)->id < (b)->id))
TD_DEFINE_SORT(sort_kv, struct kv, KV_LESS)
TD_DEFINE_SELECT(select_kv, struct kv, sort_kv)

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void check(struct kv *a, size_t n)
{
	size_t i;
	uint64_t sum_before = 0, sum_after = 0;

	for (i = 0; i < n; i++)
		sum_before += (uint64_t)a[i].k * 31 + a[i].id;
	sort_kv(a, n);
	for (i = 0; i < n; i++)
		sum_after += (uint64_t)a[i].k * 31 + a[i].id;
	assert_true(sum_before == sum_after);
	for (i = 1; i < n; i++)
		assert_true(KV_LESS(&a[i - 1], &a[i]));
}

static void test_shapes(void **state)
{
	size_t sizes[] = {0, 1, 2, 3, 16, 17, 100, 1000, 100000};
	size_t s, i, n;
	int shape;
	(void)state;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		n = sizes[s];
		for (shape = 0; shape < 6; shape++) {
			struct kv *a = malloc((n ? n : 1) * sizeof(*a));
			for (i = 0; i < n; i++) {
				a[i].id = (uint32_t)i;
				switch (shape) {
				case 0: a[i].k = (int64_t)(next() % 1000000); break;
				case 1: a[i].k = (int64_t)i; break;                 /* sorted */
				case 2: a[i].k = (int64_t)(n - i); break;           /* reversed */
				case 3: a[i].k = 7; break;                          /* all equal keys */
				case 4: a[i].k = (int64_t)(i % 3); break;           /* few values */
				default: a[i].k = (int64_t)((i & 1) ? i : n - i);   /* organ pipe */
				}
			}
			check(a, n);
			free(a);
		}
	}
}

/* select: a[k] is the sorted array's a[k], nothing before it greater, nothing after it less */
static void test_select(void **state)
{
	size_t sizes[] = {1, 2, 3, 16, 17, 100, 1001, 100000};
	size_t s, i, n, k;
	int shape;
	(void)state;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		n = sizes[s];
		for (shape = 0; shape < 6; shape++) {
			size_t ks[] = {0, n / 2, n - 1, (n - 1) / 3};
			struct kv *a = malloc(n * sizeof(*a)), *ref = malloc(n * sizeof(*a));
			for (i = 0; i < n; i++) {
				ref[i].id = (uint32_t)i;
				switch (shape) {
				case 0: ref[i].k = (int64_t)(next() % 1000); break;
				case 1: ref[i].k = (int64_t)i; break;
				case 2: ref[i].k = (int64_t)(n - i); break;
				case 3: ref[i].k = 7; break;
				case 4: ref[i].k = (int64_t)(i % 3); break;
				default: ref[i].k = (int64_t)((i & 1) ? i : n - i);
				}
			}
			for (k = 0; k < sizeof(ks) / sizeof(ks[0]); k++) {
				struct kv *sorted = malloc(n * sizeof(*a));
				memcpy(a, ref, n * sizeof(*a));
				memcpy(sorted, ref, n * sizeof(*a));
				sort_kv(sorted, n);
				select_kv(a, n, ks[k]);
				assert_true(a[ks[k]].k == sorted[ks[k]].k && a[ks[k]].id == sorted[ks[k]].id);
				for (i = 0; i < n; i++)
					assert_true(i < ks[k] ? !KV_LESS(&a[ks[k]], &a[i])
						    : !KV_LESS(&a[i], &a[ks[k]]));
				free(sorted);
			}
			free(a);
			free(ref);
		}
	}
}

/* TD_LOWER_BOUND_NEAR gives TD_LOWER_BOUND's answer whatever the guess: every key around a
 * sorted array with runs of equal values, from every guess (past the end too). */
static void test_lower_bound_near(void **state)
{
	size_t sizes[] = {0, 1, 2, 3, 5, 8, 33, 100};
	size_t s, i, h, n;
	int64_t key;
	(void)state;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int64_t v[100];
		n = sizes[s];
		for (i = 0; i < n; i++)
			v[i] = (int64_t)(i / 3) * 2; /* 0 0 0 2 2 2 4 ... */
		for (key = -1; key <= (int64_t)n; key++)
			for (h = 0; h <= n + 2; h++) {
				size_t want, got;
				TD_LOWER_BOUND(want, n, v[mid] < key);
				TD_LOWER_BOUND_NEAR(got, n, h, v[mid] < key);
				assert_int_equal(got, want);
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_lower_bound_near),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
