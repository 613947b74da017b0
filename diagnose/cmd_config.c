/* SPDX-License-Identifier: MIT */
/* tracedoc config --print-defaults | --check FILE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose/cli.h"
#include "rules/config.h"

int cmd_config(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--print-defaults") == 0) {
		char *s = td_config_defaults_json();
		fputs(s, stdout);
		free(s);
		return fflush(stdout) == 0 ? EXIT_OK : EXIT_INTERNAL;
	}
	if (argc == 3 && strcmp(argv[1], "--check") == 0) {
		struct td_config cfg;
		int rc = cli_config(argv[2], &cfg);
		if (rc == EXIT_OK) {
			printf("%s: ok\n", argv[2]);
			td_config_free(&cfg);
		}
		return rc;
	}
	fprintf(argc == 2 && !strcmp(argv[1], "--help") ? stdout : stderr,
		"usage: tracedoc config --print-defaults   the defaults, as a valid config file\n"
		"       tracedoc config --check FILE       read FILE and report its first error\n");
	return argc == 2 && !strcmp(argv[1], "--help") ? EXIT_OK : EXIT_USAGE;
}
