/* SPDX-License-Identifier: MIT */
/* Formatting for people: durations, bytes, names shortened in the middle, name marks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/fmt.h"

static void test_durations_and_bytes(void **state)
{
	char b[32];
	(void)state;

	assert_string_equal(td_fmt_dur(b, sizeof(b), 850), "850 ns");
	assert_string_equal(td_fmt_dur(b, sizeof(b), 56700), "56.7 us");
	assert_string_equal(td_fmt_dur(b, sizeof(b), 2010000000), "2.01 s");
	assert_string_equal(td_fmt_bytes(b, sizeof(b), 4), "4 B");
	assert_string_equal(td_fmt_bytes(b, sizeof(b), 33100), "33.1 KB");
	assert_string_equal(td_fmt_bytes(b, sizeof(b), 115600000), "115.6 MB");
	assert_string_equal(td_fmt_bytes(b, sizeof(b), 2312100000.0), "2.31 GB");
}

static const char *shorten(const char *s, size_t max, char *buf, size_t cap)
{
	return td_short_name(s, strlen(s), max, buf, cap);
}

static void test_short_names(void **state)
{
	char b[128];
	const char *k = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"
			"<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
			"at::detail::Array<char*, 3>)";
	(void)state;

	/* fits: as it is */
	assert_string_equal(shorten("aten::item", 60, b, sizeof(b)), "aten::item");
	/* a C++ kernel keeps its function name */
	assert_string_equal(shorten(k, 60, b, sizeof(b)),
			    "...::vectorized_elementwise_kernel<...>(...)");
	/* a Python frame keeps file:line and function */
	assert_string_equal(shorten("site-packages/vllm/model_executor/layers/fused_moe/fused_moe.py:"
				    "1633 trtllm_fp4_block_scale_moe_op", 60, b, sizeof(b)),
			    ".../fused_moe.py:1633 trtllm_fp4_block_scale_moe_op");
	/* anything else: its head and tail */
	assert_string_equal(shorten("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", 38,
				    b, sizeof(b)), "enumerate(DataLoa...oaderIter.__next__");
	assert_true(strlen(shorten(k, 20, b, sizeof(b))) <= 20);
}

static void test_rank_lists(void **state)
{
	char b[64];
	const int64_t one[] = {3}, runs[] = {0, 1, 2, 3, 4, 6, 9, 10, 11}, pair[] = {6, 7},
		      order[] = {5, 0, 1, 2};
	int64_t many[100];
	size_t i;

	(void)state;
	assert_string_equal(td_fmt_ranks(b, sizeof(b), one, 1), "rank 3");
	assert_string_equal(td_fmt_ranks(b, sizeof(b), runs, 9), "ranks 0-4, 6, 9-11");
	assert_string_equal(td_fmt_ranks(b, sizeof(b), pair, 2), "ranks 6, 7");
	assert_string_equal(td_fmt_ranks(b, sizeof(b), order, 4), "ranks 5, 0-2"); /* order kept */
	for (i = 0; i < 100; i++) /* every other rank: no ranges, more than fits */
		many[i] = 2 * (int64_t)i;
	td_fmt_ranks(b, sizeof(b), many, 100);
	assert_true(strlen(b) < sizeof(b));
	assert_non_null(strstr(b, ", ... (100 ranks)"));
	assert_int_equal(strncmp(b, "ranks 0, 2, 4, ", 15), 0);
}

static void test_marks(void **state)
{
	char b[64], *u;
	(void)state;

	td_mark(b, sizeof(b), "a\x1e" "b");
	assert_int_equal(b[0], TD_NAME_OPEN);
	assert_string_equal(b + 1, "a?b\x1f"); /* a mark inside a name cannot end it */
	u = td_unmark("at \x1e" "aten::item\x1f (3)");
	assert_string_equal(u, "at aten::item (3)");
	free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_durations_and_bytes),
		cmocka_unit_test(test_short_names),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_rank_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
