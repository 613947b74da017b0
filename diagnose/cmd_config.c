/* SPDX-License-Identifier: MIT */
/* tracedoc config --print-defaults | --check FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/args.h"
#include "diagnose/cli.h"
#include "config/config.h"

static void config_usage(FILE *f)
{
	fprintf(f, "usage: tracedoc config --print-defaults   the defaults, as a valid config file\n"
		   "       tracedoc config --check FILE       read FILE and report its first error\n");
}

int cmd_config(int argc, char **argv)
{
	const char *check = NULL;
	int defaults = 0, rc;
	const struct cli_opt opts[] = {
		{"--print-defaults", 0, NULL, &defaults}, {"--check", 0, &check, NULL},
		{NULL, 0, NULL, NULL},
	};
	struct cli_operands ops = {0};

	rc = cli_parse("config", argc, argv, opts, &ops, config_usage);
	if (rc == EXIT_OK && (ops.n || defaults == !!check)) {
		config_usage(stderr);
		rc = EXIT_USAGE;
	}
	cli_operands_free(&ops);
	if (rc != EXIT_OK)
		return rc == CLI_DONE ? EXIT_OK : rc;
	if (defaults) {
		char *s = td_config_defaults_json();
		fputs(s, stdout);
		free(s);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_INTERNAL;
	} else {
		struct td_config cfg;
		rc = cli_config(check, &cfg);
		if (rc == EXIT_OK) {
			printf("%s: ok\n", check);
			td_config_free(&cfg);
		}
		return rc;
	}
}
