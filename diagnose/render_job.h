/* SPDX-License-Identifier: MIT */
/* Renderers for the job report (render_job.c). */
#ifndef TD_DIAGNOSE_RENDER_JOB_H
#define TD_DIAGNOSE_RENDER_JOB_H

#include <stdio.h>

#include "job/job.h"

void render_job_text(FILE *f, const struct td_job *j, int color);
void render_job_md(FILE *f, const struct td_job *j);
void render_job_json(FILE *f, const struct td_job *j);

/* "missing: ranks 4, 5 and 2 more of the 8 (no trace of them was read)" into buf. */
const char *render_job_missing(const struct td_job *j, char *buf, size_t cap);

#endif
