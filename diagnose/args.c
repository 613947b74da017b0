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

int cli_parse(const char *cmd, int argc, char **argv, const struct cli_opt *opts,
	      struct cli_operands *ops, void (*usage)(FILE *))
{
	int i, rc, only_operands = 0;

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
			if (!o)
				goto unknown;
			if (eq)
				rc = set(cmd, o, eq + 1, 1);
			else if (o->value && i + 1 < argc)
				rc = set(cmd, o, argv[++i], 1);
			else
				rc = set(cmd, o, NULL, 0);
		} else {
			o = find_short(opts, a[1]);
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
		fprintf(stderr, "tracedoc %s: unknown option '%s'\n", cmd, a);
		usage(stderr);
		return EXIT_USAGE;
	}
	return EXIT_OK;
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
