#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs a test script with a python3 that has torch: Debian's python3-torch is for
# /usr/bin/python3, which need not be the first python3 on PATH. Exit 77 (skipped) when none has.
# usage: torch_test.sh SCRIPT ARGS...
for py in /usr/bin/python3 python3; do
	if command -v "$py" >/dev/null && "$py" -c 'import torch' 2>/dev/null; then
		exec "$py" "$@"
	fi
done
echo "SKIPPED: no python3 with torch (scripts/setup.sh --test installs python3-torch)"
exit 77
