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

# NVTX goes to the libcupti the collector loaded (a process can hold two: PyTorch's wheel's
# and the toolkit's), where tracedoc record named one (TRACEDOC_NVTX_SET) or none is named;
# a path the user set stays
TRACEDOC_NVTX_SET=1 NVTX_INJECTION64_PATH=/elsewhere/libcupti.so.13 TRACEDOC_RECORD_DIR=$tmp \
	"$harness" "$so" >"$tmp/out" 2>/dev/null
nv=$(sed -n 's/^NVTX_INJECTION64_PATH=//p' "$tmp/out")
loaded=$(ldd "$so" | awk '/libcupti/ {print $3}')
if [ -f "$nv" ] && [ "$(readlink -f "$nv")" = "$(readlink -f "$loaded")" ]; then ok; else
	bad "NVTX_INJECTION64_PATH '$nv' is not the collector's libcupti '$loaded'"; fi
NVTX_INJECTION64_PATH=/my/own/injection.so TRACEDOC_RECORD_DIR=$tmp "$harness" "$so" >"$tmp/out" 2>/dev/null
if grep -qx 'NVTX_INJECTION64_PATH=/my/own/injection.so' "$tmp/out"; then ok; else
	bad "the user's NVTX_INJECTION64_PATH was changed"; cat "$tmp/out"; fi

TRACEDOC_COLLECTOR_DISABLE=1 TRACEDOC_RECORD_DIR=$tmp "$harness" "$so" >/dev/null 2>"$tmp/err2"
if [ -s "$tmp/err2" ]; then bad "disabled collector spoke"; else ok; fi

TRACEDOC_COLLECTOR=$so "$td" record -o "$tmp/rec" -- sh -c 'test -n "$CUDA_INJECTION64_PATH" && test -n "$NVTX_INJECTION64_PATH" && test "$TRACEDOC_NVTX_SET" = 1 && test -n "$TRACEDOC_RECORD_DIR" && exit 5' 2>"$tmp/rerr"
rc=$?
if [ $rc = 5 ]; then ok; else bad "record passed $rc, expected 5 (variables set?)"; cat "$tmp/rerr"; fi
if grep -q 'no trace written' "$tmp/rerr"; then ok; else bad "record did not say no trace was written"; fi
NVTX_INJECTION64_PATH=/my/own/injection.so TRACEDOC_COLLECTOR=$so "$td" record -o "$tmp/rec" -- \
	sh -c 'test "$NVTX_INJECTION64_PATH" = /my/own/injection.so && test -z "$TRACEDOC_NVTX_SET" && exit 5' 2>/dev/null
if [ $? = 5 ]; then ok; else bad "record changed the user's NVTX_INJECTION64_PATH"; fi
TRACEDOC_COLLECTOR=$so "$td" record -o "$tmp/rec" -- /nonexistent-program 2>/dev/null
if [ $? = 127 ]; then ok; else bad "record of a missing program"; fi
"$td" record 2>/dev/null
if [ $? = 2 ]; then ok; else bad "record without a command"; fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
