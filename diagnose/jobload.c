/* SPDX-License-Identifier: MIT */
/* The ranks of a job: the inputs expanded (directories, quoted globs), then each reduced to a
 * summary on its own thread - a trace read, analysed, diagnosed, summarized and freed at once,
 * so memory holds at most one model per thread whatever the number of ranks; a summary file
 * read as it is. */
#include "diagnose/jobload.h"

#include <dirent.h>
#include <glob.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "common/error.h"
#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "parser/trace.h"
#include "config/config.h"
#include "rules/rule.h"


static int is_trace_name(const char *n)
{
	size_t len = strlen(n);
	static const char *const ends[] = {".json", ".json.gz", ".json.zst", NULL};
	size_t i;

	for (i = 0; ends[i]; i++) {
		size_t k = strlen(ends[i]);
		if (len > k && !strcmp(n + len - k, ends[i]))
			return 1;
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void add(struct job_inputs *in, const char *path)
{
	in->paths = td_realloc(in->paths, (in->n + 1) * sizeof(*in->paths));
	in->paths[in->n++] = td_strndup(path, strlen(path));
}

int jobin_expand(const char *const *args, size_t nargs, struct job_inputs *in, char *err,
		 size_t cap)
{
	size_t i;

	memset(in, 0, sizeof(*in));
	for (i = 0; i < nargs; i++) {
		struct stat st;
		const char *a = args[i];
		char sh[512];
		if (strcmp(a, "-") && stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* a directory: its trace and summary files, by name */
			DIR *d = opendir(a);
			struct dirent *de;
			size_t first = in->n;
			if (!d) {
				snprintf(err, cap, "%s: cannot list the directory", cli_shown(a, sh, sizeof(sh)));
				return EXIT_INPUT;
			}
			while ((de = readdir(d)) != NULL) {
				char p[4096];
				if (de->d_name[0] == '.' || !is_trace_name(de->d_name))
					continue;
				snprintf(p, sizeof(p), "%s/%s", a, de->d_name);
				add(in, p);
			}
			closedir(d);
			if (in->n > first)
				qsort(in->paths + first, in->n - first, sizeof(*in->paths), cmp_str);
			if (in->n == first) {
				snprintf(err, cap, "%s: no .json, .json.gz or .json.zst files in it",
					 cli_shown(a, sh, sizeof(sh)));
				return EXIT_INPUT;
			}
		} else if (strcmp(a, "-") && stat(a, &st) != 0 && strpbrk(a, "*?[")) {
			/* a glob the shell left alone */
			glob_t g;
			size_t k;
			if (glob(a, 0, NULL, &g) != 0 || !g.gl_pathc) {
				snprintf(err, cap, "%s: no file matches", cli_shown(a, sh, sizeof(sh)));
				globfree(&g);
				return EXIT_INPUT;
			}
			for (k = 0; k < g.gl_pathc; k++)
				add(in, g.gl_pathv[k]);
			globfree(&g);
		} else {
			add(in, a);
		}
	}
	return EXIT_OK;
}

void jobin_free(struct job_inputs *in)
{
	size_t i;

	for (i = 0; i < in->n; i++)
		free(in->paths[i]);
	free(in->paths);
	memset(in, 0, sizeof(*in));
}

/* A world no job has is a file's invention: refused, so nothing is sized by it. */
static int world_ok(const char *path, const struct td_summary *s, char *msg, size_t cap)
{
	char sh[512];

	if (s->world_size <= TD_JOB_WORLD_MAX)
		return 1;
	snprintf(msg, cap, "%s: claims a world of %lld ranks, more than any job (%lld): its "
		 "distributedInfo or summary is wrong", cli_shown(path, sh, sizeof(sh)),
		 (long long)s->world_size, (long long)TD_JOB_WORLD_MAX);
	return 0;
}

/* One rank's summary from its text (d is closed). */
int jobin_summary_text(struct cli_doc *d, struct td_summary *s, char *msg, size_t cap)
{
	char *doc = cli_doc_text(d, SUMMARY_DOC_MAX, msg, cap), sh[512];
	struct td_error err;
	int rc;

	cli_doc_close(d);
	memset(s, 0, sizeof(*s));
	if (!doc)
		return EXIT_INPUT;
	memset(&err, 0, sizeof(err));
	rc = td_summary_parse(doc, s, &err); /* on an error s is freed (all zero) */
	free(doc);
	if (rc) {
		snprintf(msg, cap, "%s: %s", cli_shown(d->path, sh, sizeof(sh)), err.msg);
		return EXIT_INPUT;
	}
	if (!world_ok(d->path, s, msg, cap)) {
		td_summary_free(s);
		return EXIT_INPUT;
	}
	s->input = td_strndup(d->path, strlen(d->path));
	return EXIT_OK;
}

/* One rank: its summary, or why there is none (s all zero then: td_summary_free takes it). */
int jobin_summarize(const char *path, struct td_config *cfg, struct td_summary *s, char *msg,
		    size_t cap)
{
	static const char *const schemas[] = {TD_SUMMARY_SCHEMA, NULL};
	struct cli_doc d;
	struct td_trace t;
	struct td_analysis a;
	struct td_report r;
	struct stat st;
	char sh[512];
	int rc;

	msg[0] = '\0';
	memset(s, 0, sizeof(*s));
	/* a FIFO or a device among a job's files would hold the whole job up: a rank is a file */
	if (strcmp(path, "-") && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snprintf(msg, cap, "%s: not a regular file (%s): a rank's trace or summary must be "
			 "a file", cli_shown(path, sh, sizeof(sh)), S_ISFIFO(st.st_mode) ? "a FIFO"
			 : S_ISDIR(st.st_mode) ? "a directory" : "a device or socket");
		return EXIT_INPUT;
	}
	if ((rc = cli_doc_open(path, REPORT_DOC_MAX, &d, msg, cap)) != EXIT_OK)
		return rc;
	if (d.kind == TD_SNIFF_SCHEMA) {
		if (!cli_doc_schema_is(&d, schemas, "as a rank, or a trace", msg, cap)) {
			cli_doc_close(&d);
			return EXIT_INPUT;
		}
		return jobin_summary_text(&d, s, msg, cap);
	}
	td_trace_init(&t);
	if ((rc = cli_doc_trace_quiet(&d, &t, msg, cap)) != EXIT_OK) {
		td_trace_free(&t);
		return rc;
	}
	td_analysis_run(&a, &t, cfg);
	td_diagnose(&a, &r);
	td_summary_make(&a, &r, path, s);
	td_report_free(&r);
	td_analysis_free(&a);
	td_trace_free(&t);
	if (!world_ok(path, s, msg, cap)) {
		td_summary_free(s);
		return EXIT_INPUT;
	}
	s->input = td_strndup(path, strlen(path));
	return EXIT_OK;
}

struct pool {
	const struct job_inputs *in;
	struct td_config *cfg;
	struct td_summary *sums;
	int *rc;
	char **msg;
	size_t next;
	pthread_mutex_t mu;
};

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;
		char msg[1024];
		pthread_mutex_lock(&p->mu);
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->in->n)
			return NULL;
		p->rc[i] = jobin_summarize(p->in->paths[i], p->cfg, &p->sums[i], msg, sizeof(msg));
		p->msg[i] = *msg ? td_strndup(msg, strlen(msg)) : NULL;
	}
}

int jobin_load(const struct job_inputs *in, int jobs, struct td_config *cfg, struct td_job *j,
	       char **warnings, size_t *nwarnings, struct td_error *err)
{
	struct pool p;
	pthread_t *th;
	struct td_summary *ok;
	size_t i, n = 0, w = 0;
	int k, started = 0, worst = EXIT_OK;

	memset(&p, 0, sizeof(p));
	p.in = in;
	p.cfg = cfg;
	p.sums = td_calloc(in->n ? in->n : 1, sizeof(*p.sums));
	p.rc = td_calloc(in->n ? in->n : 1, sizeof(*p.rc));
	p.msg = td_calloc(in->n ? in->n : 1, sizeof(*p.msg));
	pthread_mutex_init(&p.mu, NULL);
	if (jobs < 1)
		jobs = 1;
	if ((size_t)jobs > in->n)
		jobs = (int)(in->n ? in->n : 1);
	th = td_calloc((size_t)jobs, sizeof(*th));
	for (k = 1; k < jobs; k++)
		if (pthread_create(&th[k], NULL, worker, &p) == 0)
			started++;
		else
			break;
	worker(&p); /* this thread works too */
	for (k = 1; k <= started; k++)
		pthread_join(th[k], NULL);
	free(th);
	pthread_mutex_destroy(&p.mu);

	/* the ranks read, in input order; the others noted with why */
	ok = td_calloc(in->n ? in->n : 1, sizeof(*ok));
	for (i = 0; i < in->n; i++) {
		if (p.rc[i] == EXIT_OK) {
			ok[n++] = p.sums[i];
			if (p.msg[i] && w < *nwarnings)
				warnings[w++] = p.msg[i];
			else
				free(p.msg[i]);
		} else {
			td_job_add_error(j, in->paths[i], p.msg[i] ? p.msg[i] : "cannot be read");
			td_summary_free(&p.sums[i]);
			free(p.msg[i]);
			if (p.rc[i] > worst)
				worst = p.rc[i];
		}
	}
	*nwarnings = w;
	free(p.sums);
	free(p.rc);
	free(p.msg);
	if (td_job_build(j, ok, n, cfg, err) != 0)
		return EXIT_USAGE;
	return worst;
}
