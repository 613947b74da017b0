#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector without a GPU: it exports only InitializeInjection; with libcupti but no
# driver it goes inert, says so once and writes nothing; a process that does not use CUDA is
# unaffected; tracedoc record passes the exit status through and sets the injection variables.
# usage: collector_test.sh TRACEDOC COLLECTOR_SO HARNESS
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
td=$1 so=$2 harness=$3

syms=$(nm -D --defined-only "$so" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
if [ "$syms" = "InitializeInjection " ]; then ok; else bad "exported symbols: $syms"; fi

TRACEDOC_RECORD_DIR=$tmp "$harness" "$so" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 0 ] && grep -q 'InitializeInjection: 1 1' "$tmp/out"; then ok; else bad "harness rc $rc"; cat "$tmp/out" "$tmp/err"; fi
if [ "$(grep -c 'tracedoc collector: .*not recording this process' "$tmp/err")" = 1 ]; then ok; else
	bad "expected one inert message"; cat "$tmp/err"; fi
if ls "$tmp" | grep -q '\.json\.zst$'; then bad "an inert collector wrote a trace"; else ok; fi

TRACEDOC_COLLECTOR_DISABLE=1 TRACEDOC_RECORD_DIR=$tmp "$harness" "$so" >/dev/null 2>"$tmp/err2"
if [ -s "$tmp/err2" ]; then bad "disabled collector spoke"; else ok; fi

TRACEDOC_COLLECTOR=$so "$td" record -o "$tmp/rec" -- sh -c 'test -n "$CUDA_INJECTION64_PATH" && test -n "$NVTX_INJECTION64_PATH" && test -n "$TRACEDOC_RECORD_DIR" && exit 5' 2>"$tmp/rerr"
rc=$?
if [ $rc = 5 ]; then ok; else bad "record passed $rc, expected 5 (variables set?)"; cat "$tmp/rerr"; fi
if grep -q 'no trace written' "$tmp/rerr"; then ok; else bad "record did not say no trace was written"; fi
TRACEDOC_COLLECTOR=$so "$td" record -o "$tmp/rec" -- /nonexistent-program 2>/dev/null
if [ $? = 127 ]; then ok; else bad "record of a missing program"; fi
"$td" record 2>/dev/null
if [ $? = 2 ]; then ok; else bad "record without a command"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
