/* SPDX-License-Identifier: MIT */
/* The messages every part of the command prints: a path as messages show it, a command's
 * error wrapped, a write that failed. At the bottom of diagnose/ (only out.c below), so the
 * option parser, the loaders and the commands can all use them. */
#include "diagnose/msg.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "diagnose/out.h"

const char *cli_shown(const char *path, char *buf, size_t cap)
{
	if (!strcmp(path, "-"))
		return "<stdin>";
	td_utf8_escape_controls(buf, cap, path, strlen(path));
	return buf;
}

void cli_error(const char *cmd, const char *msg)
{
	fprintf(stderr, "tracedoc %s: ", cmd);
	out_text_wrap(stderr, msg, 11 + (int)strlen(cmd), 2, 100);
	fputc('\n', stderr);
}

void cli_cannot_write(const char *path, int e)
{
	char s[512];

	fprintf(stderr, "tracedoc: cannot write %s: %s\n", strcmp(path, "-") ? cli_shown(path, s,
		sizeof(s)) : "stdout", strerror(e));
}
