/* SPDX-License-Identifier: MIT */
/* One option parser for every command, so they all take options the same way: --name VALUE,
 * --name=VALUE, -x VALUE, -xVALUE, flags, --help / -h, --version, and -- before operands that
 * start with a dash. */
#include "diagnose/args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/alloc.h"

#include "diagnose/cli.h"
#include "diagnose/doc.h"
#include "parser/input.h"

static const struct cli_opt *find_long(const struct cli_opt *opts, const char *arg, size_t len)
{
	for (; opts->name; opts++)
		if (strlen(opts->name) == len && !strncmp(opts->name, arg, len))
			return opts;
	return NULL;
}

static const struct cli_opt *find_short(const struct cli_opt *opts, char c)
{
	for (; opts->name; opts++)
		if (opts->alias && opts->alias == c)
			return opts;
	return NULL;
}

static int set(const char *cmd, const struct cli_opt *o, const char *value, int have_value)
{
	if (o->value) {
		if (!have_value) {
			fprintf(stderr, "tracedoc %s: %s needs a value\n", cmd, o->name);
			return EXIT_USAGE;
		}
		*o->value = value;
	} else {
		if (have_value) {
			fprintf(stderr, "tracedoc %s: %s takes no value\n", cmd, o->name);
			return EXIT_USAGE;
		}
		*o->flag = 1;
	}
	return EXIT_OK;
}

/* "50G", "100M", "4096": a size (K, M, G, T: powers of 1024); 0 on an error. */
static int size_of(const char *s, unsigned long long *out)
{
	char *end;
	unsigned long long v, mul = 1;

	if (!*s || *s == '-')
		return 0;
	v = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': case 'k': mul = 1ull << 10; end++; break;
	case 'M': case 'm': mul = 1ull << 20; end++; break;
	case 'G': case 'g': mul = 1ull << 30; end++; break;
	case 'T': case 't': mul = 1ull << 40; end++; break;
	default: break;
	}
	if (*end || (mul > 1 && v > ~0ull / mul))
		return 0;
	*out = v * mul;
	return 1;
}

/* Options every command takes: limits on what an input decompresses to, the threads to use. */
int cli_progress; /* 1: --progress, -1: --quiet, 0: on a terminal for large inputs */
int cli_jobs;     /* -j N: threads (one trace: that parse it; a job: ranks at once); 0: default */

static int common_opt(const char *cmd, const char *name, size_t len, const char *value)
{
	static unsigned long long total, ratio = TD_INPUT_RATIO_DEFAULT;
	unsigned long long v;
	int is_total = len == 17 && !strncmp(name, "--max-input-bytes", len);
	int is_ratio = len == 11 && !strncmp(name, "--max-ratio", len);
	int is_jobs = len == 6 && !strncmp(name, "--jobs", len);

	if (is_jobs)
		return cli_count(cmd, "-j", value ? value : "", 1, 4096, &cli_jobs);
	if (!is_total && !is_ratio)
		return -1;
	if (!value || !size_of(value, &v)) {
		fprintf(stderr, "tracedoc %s: %.*s needs a %s (0: no limit)\n", cmd, (int)len, name,
			is_total ? "size, like 50G" : "whole number, like 500");
		return EXIT_USAGE;
	}
	if (is_total)
		total = v;
	else
		ratio = v;
	td_input_set_limits(total, ratio);
	return EXIT_OK;
}

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
	      struct cli_operands *ops, void (*usage)(FILE *))
{
	int i, rc, only_operands = 0;
	char sh[512];

	ops->n = 0;
	ops->rest = argc;
	ops->v = td_malloc((size_t)(argc > 0 ? argc : 1) * sizeof(*ops->v));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct cli_opt *o;

		if (only_operands || a[0] != '-' || !a[1]) { /* "-" is stdin: an operand */
			if (ops->stop_at_operand) {
				ops->rest = i;
				return EXIT_OK;
			}
			ops->v[ops->n++] = a;
			continue;
		}
		if (!strcmp(a, "--")) {
			if (ops->stop_at_operand) {
				ops->rest = i + 1;
				return EXIT_OK;
			}
			only_operands = 1;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return CLI_DONE;
		}
		if (!strcmp(a, "--version")) {
			printf("tracedoc %s %s\n", cmd, TD_VERSION);
			return CLI_DONE;
		}
		if (a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t len = eq ? (size_t)(eq - a) : strlen(a);
			o = find_long(opts, a, len);
			if (!o && !eq && (!strcmp(a, "--progress") || !strcmp(a, "--quiet"))) {
				cli_progress = a[2] == 'p' ? 1 : -1;
				continue;
			}
			if (!o) {
				const char *v = eq ? eq + 1 : i + 1 < argc ? argv[i + 1] : NULL;
				rc = common_opt(cmd, a, len, v);
				if (rc < 0)
					goto unknown;
				if (rc != EXIT_OK)
					return rc;
				if (!eq)
					i++;
				continue;
			}
			if (eq)
				rc = set(cmd, o, eq + 1, 1);
			else if (o->value && i + 1 < argc)
				rc = set(cmd, o, argv[++i], 1);
			else
				rc = set(cmd, o, NULL, 0);
		} else {
			o = find_short(opts, a[1]);
			if (!o && a[1] == 'j') { /* -j N, -jN: --jobs */
				rc = common_opt(cmd, "--jobs", 6, a[2] ? a + 2 : i + 1 < argc ? argv[++i] : NULL);
				if (rc != EXIT_OK)
					return rc;
				continue;
			}
			if (!o)
				goto unknown;
			if (a[2]) /* -oFILE */
				rc = set(cmd, o, a + 2, 1);
			else if (o->value && i + 1 < argc)
				rc = set(cmd, o, argv[++i], 1);
			else
				rc = set(cmd, o, NULL, 0);
		}
		if (rc != EXIT_OK)
			return rc;
		continue;
unknown:
		fprintf(stderr, "tracedoc %s: unknown option '%s'\n", cmd, cli_shown(a, sh, sizeof(sh)));
		usage(stderr);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cli_parse_exactly(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
		      struct cli_operands *ops, void (*usage)(FILE *), int want)
{
	int rc = cli_parse(cmd, argc, argv, opts, ops, usage);

	if (rc == EXIT_OK && ops->n != want) {
		usage(stderr);
		rc = EXIT_USAGE;
	}
	if (rc != EXIT_OK)
		cli_operands_free(ops);
	return rc;
}

int cli_parse_one(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
		  void (*usage)(FILE *), const char *too_many, const char **operand)
{
	struct cli_operands ops = {0};
	int rc = cli_parse(cmd, argc, argv, opts, &ops, usage);

	if (rc == EXIT_OK && ops.n > 1) {
		fprintf(stderr, "tracedoc %s: %s\n", cmd, too_many);
		rc = EXIT_USAGE;
	}
	*operand = ops.n ? ops.v[0] : NULL; /* argv's, not the array's */
	cli_operands_free(&ops);
	if (rc == EXIT_OK && !*operand) {
		usage(stderr);
		rc = EXIT_USAGE;
	}
	return rc;
}

void cli_operands_free(struct cli_operands *ops)
{
	free(ops->v);
	ops->v = NULL;
}

int cli_one_of(const char *cmd, const char *opt, const char *value, const char *const *choices)
{
	const char *const *c;
	char list[256] = "";

	for (c = choices; *c; c++)
		if (!strcmp(value, *c))
			return EXIT_OK;
	for (c = choices; *c; c++) {
		size_t n = strlen(list);
		snprintf(list + n, sizeof(list) - n, "%s%s", c == choices ? "" : c[1] ? ", " : " or ",
			 *c);
	}
	fprintf(stderr, "tracedoc %s: %s must be %s, not '%s'\n", cmd, opt, list, value);
	return EXIT_USAGE;
}

int cli_count(const char *cmd, const char *opt, const char *value, long min, long max, int *out)
{
	char *end;
	long v = strtol(value, &end, 10);

	if (!*value || *end || v < min || v > max) {
		fprintf(stderr, "tracedoc %s: %s must be a whole number from %ld to %ld, not '%s'\n", cmd,
			opt, min, max, value);
		return EXIT_USAGE;
	}
	*out = (int)v;
	return EXIT_OK;
}
