/* SPDX-License-Identifier: MIT */
/* What the text renderers share: colour codes on a terminal, and lines wrapped at the report's
 * 100 columns. */
#ifndef TD_DIAGNOSE_RENDER_TEXT_H
#define TD_DIAGNOSE_RENDER_TEXT_H

#include <stdio.h>

#include "diagnose/out.h"

#define WIDTH 100

struct col {
	FILE *f;
	int color;
};

static inline void sgr(const struct col *c, const char *code)
{
	if (c->color)
		fprintf(c->f, "\033[%sm", code);
}

static inline void wrap(FILE *f, const char *s, int col, int indent)
{
	out_text_wrap(f, s, col, indent, WIDTH);
}

#endif
