/* SPDX-License-Identifier: MIT */
/* The command table's row, and what the MCP server (cmd_mcp.c) needs of it: main.c hands it
 * the table before any command runs, so the server runs commands by name without calling back
 * into main.c. A command added to the table (check, critical-path) becomes a tool by itself
 * where mcp_tools.c describes it. */
#ifndef TD_DIAGNOSE_MCP_H
#define TD_DIAGNOSE_MCP_H

#include <stddef.h>

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* The table main.c runs commands from (kept, not copied: main.c's is static). */
void mcp_set_commands(const struct cmd *cmds, size_t n);

int cmd_mcp(int argc, char **argv);

#endif
