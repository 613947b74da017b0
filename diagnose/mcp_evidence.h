/* SPDX-License-Identifier: MIT */
/* The MCP server's evidence tool (mcp_evidence.c): the events of every track around a
 * timestamp, from the loaded model, as tracedoc.evidence/1 JSON. */
#ifndef TD_DIAGNOSE_MCP_EVIDENCE_H
#define TD_DIAGNOSE_MCP_EVIDENCE_H

/* Run as a command: evidence --ts NS [--window NS] [--limit N] -- TRACE; the JSON on stdout,
 * errors on stderr; returns an exit code (cli.h). The last trace read is kept for the next
 * call while its file is unchanged. */
int mcp_evidence(int argc, char **argv);
/* The kept trace freed. */
void mcp_evidence_free(void);

#endif
