/* SPDX-License-Identifier: MIT */
/* In-place introsort generator. glibc's qsort() copies the whole array into a temporary buffer
 * when it can, which would double the memory of a large trace model; this sorts in place with
 * an inlined comparison. TD_DEFINE_SORT(fn, T, LESS) defines `static void fn(T *a, size_t n)`
 * where LESS(x, y) compares two `const T *`. Not stable: make LESS a total order. Input that is
 * already in order (a stream's ops by time, most often) costs one pass.
 *
 * TD_DEFINE_STABLE_SORT(fn, T, LESS) defines `static void fn(T *a, size_t n, T *tmp)`: a bottom-up
 * merge sort that keeps equal elements in their order (tmp: room for n elements, the caller's).
 *
 * TD_DEFINE_SELECT(fn, T, SORT) defines `static void fn(T *a, size_t n, size_t k)` (k < n):
 * a[k] becomes the element SORT (a TD_DEFINE_SORT of T) would put there, with none after it
 * less and none before it greater: quickselect on SORT's partition, linear on average, SORT
 * itself on input that defeats the pivots.
 *
 * TD_DEFINE_MEDIAN(fn, T, SELECT, VAL) defines `static int64_t fn(T *a, size_t n)` (n > 0): the
 * median of VAL(&a[i]) (an int64_t; the mean of the two middle values for an even n, without
 * overflow), by SELECT (a TD_DEFINE_SELECT of T ordered by VAL); reorders a. */
#ifndef TD_COMMON_SORT_H
#define TD_COMMON_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TD_DEFINE_SORT(fn, T, LESS)                                                          \
	static void fn##_sift(T *a, size_t root, size_t n)                                   \
	{                                                                                    \
		for (;;) {                                                                   \
			size_t c = 2 * root + 1;                                             \
			T tmp;                                                               \
			if (c >= n)                                                          \
				return;                                                      \
			if (c + 1 < n && LESS(&a[c], &a[c + 1]))                             \
				c++;                                                         \
			if (!LESS(&a[root], &a[c]))                                          \
				return;                                                      \
			tmp = a[root];                                                       \
			a[root] = a[c];                                                      \
			a[c] = tmp;                                                          \
			root = c;                                                            \
		}                                                                            \
	}                                                                                    \
	static void fn##_heap(T *a, size_t n)                                                \
	{                                                                                    \
		size_t i;                                                                    \
		for (i = n / 2; i-- > 0;)                                                    \
			fn##_sift(a, i, n);                                                  \
		for (i = n; i-- > 1;) {                                                      \
			T tmp = a[0];                                                        \
			a[0] = a[i];                                                         \
			a[i] = tmp;                                                          \
			fn##_sift(a, 0, i);                                                  \
		}                                                                            \
	}                                                                                    \
	/* median of three as the pivot, then Hoare's partition: returns j with a[0..j] <= the  \
	 * pivot <= a[j+1..n) (n > 16) */                                                    \
	static size_t fn##_part(T *a, size_t n)                                              \
	{                                                                                    \
		size_t i = 0, j = n - 1, mid = n / 2;                                        \
		T pivot, tmp;                                                                \
		if (LESS(&a[mid], &a[0])) {                                                  \
			tmp = a[mid]; a[mid] = a[0]; a[0] = tmp;                             \
		}                                                                            \
		if (LESS(&a[n - 1], &a[mid])) {                                              \
			tmp = a[mid]; a[mid] = a[n - 1]; a[n - 1] = tmp;                     \
			if (LESS(&a[mid], &a[0])) {                                          \
				tmp = a[mid]; a[mid] = a[0]; a[0] = tmp;                     \
			}                                                                    \
		}                                                                            \
		pivot = a[mid];                                                              \
		for (;;) {                                                                   \
			while (LESS(&a[i], &pivot))                                          \
				i++;                                                         \
			while (LESS(&pivot, &a[j]))                                          \
				j--;                                                         \
			if (i >= j)                                                          \
				return j;                                                    \
			tmp = a[i]; a[i] = a[j]; a[j] = tmp;                                 \
			i++;                                                                 \
			j--;                                                                 \
		}                                                                            \
	}                                                                                    \
	static void fn##_rec(T *a, size_t n, int depth)                                      \
	{                                                                                    \
		while (n > 16) {                                                             \
			size_t j;                                                            \
			if (depth-- == 0) {                                                  \
				fn##_heap(a, n);                                             \
				return;                                                      \
			}                                                                    \
			j = fn##_part(a, n);                                                 \
			/* recurse into the smaller side */                                  \
			if (j + 1 < n - j - 1) {                                             \
				fn##_rec(a, j + 1, depth);                                   \
				a += j + 1;                                                  \
				n -= j + 1;                                                  \
			} else {                                                             \
				fn##_rec(a + j + 1, n - j - 1, depth);                       \
				n = j + 1;                                                   \
			}                                                                    \
		}                                                                            \
		{                                                                            \
			size_t i, j;                                                         \
			for (i = 1; i < n; i++) {                                            \
				T tmp = a[i];                                                \
				for (j = i; j > 0 && LESS(&tmp, &a[j - 1]); j--)             \
					a[j] = a[j - 1];                                     \
				a[j] = tmp;                                                  \
			}                                                                    \
		}                                                                            \
	}                                                                                    \
	static void fn(T *a, size_t n)                                                       \
	{                                                                                    \
		int depth = 0;                                                               \
		size_t m = n, i;                                                             \
		for (i = 1; i < n && !LESS(&a[i], &a[i - 1]); i++)                           \
			;                                                                    \
		if (i >= n)                                                                  \
			return;                                                              \
		while (m > 1) {                                                              \
			depth += 2;                                                          \
			m >>= 1;                                                             \
		}                                                                            \
		fn##_rec(a, n, depth);                                                       \
	}

#define TD_DEFINE_STABLE_SORT(fn, T, LESS)                                                   \
	static void fn(T *a, size_t n, T *tmp)                                               \
	{                                                                                    \
		size_t w, i;                                                                 \
		for (w = 1; w < n; w *= 2) {                                                 \
			for (i = 0; i < n; i += 2 * w) {                                     \
				size_t x = i, xm = i + w < n ? i + w : n, y = xm,            \
				       ym = i + 2 * w < n ? i + 2 * w : n, o = i;            \
				while (x < xm && y < ym)                                     \
					tmp[o++] = LESS(&a[y], &a[x]) ? a[y++] : a[x++];     \
				while (x < xm)                                               \
					tmp[o++] = a[x++];                                   \
				while (y < ym)                                               \
					tmp[o++] = a[y++];                                   \
			}                                                                    \
			memcpy(a, tmp, n * sizeof(*a));                                      \
		}                                                                            \
	}

#define TD_DEFINE_SELECT(fn, T, SORT)                                                        \
	static void fn(T *a, size_t n, size_t k)                                             \
	{                                                                                    \
		int depth = 0;                                                               \
		size_t m = n;                                                                \
		while (m > 1) {                                                              \
			depth += 2;                                                          \
			m >>= 1;                                                             \
		}                                                                            \
		while (n > 16 && depth-- > 0) {                                              \
			size_t j = SORT##_part(a, n);                                        \
			if (k <= j) { /* go on in the side that holds k */                   \
				n = j + 1;                                                   \
			} else {                                                             \
				a += j + 1;                                                  \
				k -= j + 1;                                                  \
				n -= j + 1;                                                  \
			}                                                                    \
		}                                                                            \
		SORT(a, n);                                                                  \
	}

/* lo = the first index in [0, n) at which BEFORE is false - BEFORE, an expression in the index
 * `mid`, holding for a prefix of the indices (a sorted array's elements below a key): a lower
 * bound, n when it holds throughout. */
#define TD_LOWER_BOUND(lo, n, BEFORE)                                                        \
	do {                                                                                 \
		size_t td_hi_ = (n);                                                         \
		(lo) = 0;                                                                    \
		while ((lo) < td_hi_) {                                                      \
			size_t mid = (lo) + (td_hi_ - (lo)) / 2;                              \
			if (BEFORE)                                                          \
				(lo) = mid + 1;                                              \
			else                                                                 \
				td_hi_ = mid;                                                \
		}                                                                            \
	} while (0)

/* TD_LOWER_BOUND starting from a guess: probes 1, 2, 4, ... away from `hint` (forward where
 * BEFORE holds there, else back), then searches the bracket found. The same result in
 * O(log d) for an answer d away: for queries that come in order, each next to the last. */
#define TD_LOWER_BOUND_NEAR(lo, n, hint, BEFORE)                                              \
	do {                                                                                 \
		size_t td_n_ = (n), td_h_ = (hint) < td_n_ ? (hint) : td_n_, td_a_, td_b_,    \
		       td_s_ = 1, mid;                                                       \
		if (td_h_ < td_n_ && (mid = td_h_, (BEFORE))) { /* the answer is past it */  \
			td_a_ = td_h_ + 1;                                                   \
			td_b_ = td_n_;                                                       \
			while ((mid = td_h_ + td_s_) < td_n_) {                               \
				if (!(BEFORE)) {                                             \
					td_b_ = mid;                                         \
					break;                                               \
				}                                                            \
				td_a_ = mid + 1;                                             \
				td_s_ *= 2;                                                  \
			}                                                                    \
		} else { /* at or before it */                                               \
			td_a_ = 0;                                                           \
			td_b_ = td_h_;                                                       \
			while (td_s_ <= td_h_) {                                             \
				mid = td_h_ - td_s_;                                         \
				if (BEFORE) {                                                \
					td_a_ = mid + 1;                                     \
					break;                                               \
				}                                                            \
				td_b_ = mid;                                                 \
				td_s_ *= 2;                                                  \
			}                                                                    \
		}                                                                            \
		while (td_a_ < td_b_) {                                                      \
			mid = td_a_ + (td_b_ - td_a_) / 2;                                    \
			if (BEFORE)                                                          \
				td_a_ = mid + 1;                                             \
			else                                                                 \
				td_b_ = mid;                                                 \
		}                                                                            \
		(lo) = td_a_;                                                                \
	} while (0)

#define TD_DEFINE_MEDIAN(fn, T, SELECT, VAL)                                                 \
	static int64_t fn(T *a, size_t n)                                                    \
	{                                                                                    \
		int64_t lo;                                                                  \
		size_t i;                                                                    \
		SELECT(a, n, n / 2);                                                         \
		if (n % 2)                                                                   \
			return VAL(&a[n / 2]);                                               \
		/* the other middle value: the largest of those before it */                 \
		for (lo = VAL(&a[0]), i = 1; i < n / 2; i++)                                 \
			if (VAL(&a[i]) > lo)                                                 \
				lo = VAL(&a[i]);                                             \
		return lo + (VAL(&a[n / 2]) - lo) / 2;                                       \
	}

#endif
