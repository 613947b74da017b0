/* SPDX-License-Identifier: MIT */
/* Allocation wrappers. Running out of memory while building a trace model is not recoverable in
 * a useful way, so these call the OOM handler (default: abort()) instead of returning NULL. The
 * CLI installs a handler that prints a clear message first. */
#ifndef TD_COMMON_ALLOC_H
#define TD_COMMON_ALLOC_H

#include <stddef.h>

typedef void (*td_oom_fn)(size_t bytes);
void td_set_oom_handler(td_oom_fn fn);

void *td_malloc(size_t n);
void *td_calloc(size_t n, size_t size);
void *td_realloc(void *p, size_t n);
char *td_strndup(const char *s, size_t n);

#endif
