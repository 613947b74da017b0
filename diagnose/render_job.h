/* SPDX-License-Identifier: MIT */
/* Renderers for the job report (render_job.c). */
#ifndef TD_DIAGNOSE_RENDER_JOB_H
#define TD_DIAGNOSE_RENDER_JOB_H

#include <stdio.h>

#include "job/job.h"

void render_job_text(FILE *f, const struct td_job *j, int color);
void render_job_md(FILE *f, const struct td_job *j);
void render_job_json(FILE *f, const struct td_job *j);

#endif
