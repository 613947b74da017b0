/* SPDX-License-Identifier: MIT */
/* The messages every part of the command prints (msg.c). */
#ifndef TD_DIAGNOSE_MSG_H
#define TD_DIAGNOSE_MSG_H

#include <stddef.h>

/* The path as messages show it: "<stdin>" for "-", and every control or bidi character
 * escaped (\x1b, \u202e), so a file name cannot drive the terminal. */
const char *cli_shown(const char *path, char *buf, size_t cap);
/* "tracedoc CMD: msg", wrapped at 100 columns, every control in msg escaped. */
void cli_error(const char *cmd, const char *msg);
/* "tracedoc: cannot write PATH: why (errno e)", the path shown as above. */
void cli_cannot_write(const char *path, int e);

#endif
