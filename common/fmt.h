/* SPDX-License-Identifier: MIT */
/* Formatting shared by the library's messages and the command's output. */
#ifndef TD_COMMON_FMT_H
#define TD_COMMON_FMT_H

#include <stddef.h>
#include <stdint.h>

/* A duration for people: "850 ns", "56.7 us", "1.2 ms", "2.01 s". Returns buf. */
const char *td_fmt_dur(char *buf, size_t cap, int64_t ns);

#endif
