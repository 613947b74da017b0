#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Throughput and memory of the reader on a generated Kineto trace (default ~1 GB), beside yajl's
# json_verify and Python's json.load: first the targets, each measured side by side with what it
# is compared to (A and B in turn, RUNS pairs, medians), with PASS or MISS; then a table.
# usage: bench/run.sh [SIZE_MB] [BUILD_DIR]   (RUNS=N pairs, default 5; TABLE=0 skips the table;
#        BASELINE=an earlier build's tracedoc that takes -j, for the -j 1 row; MIX=1: the mix of
#        a real profile, with_stack and profile_memory on: gen_trace --profile-mix; HOST=1: a
#        host-bound run, the GPU waiting on each op's host time: gen_trace --host-bound)
set -eu
cd "$(dirname "$0")/.."
size=${1:-1000}
build=${2:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc gen_trace rssrun yajl_empty burn >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
. bench/lib.sh
mix=${MIX:-0}
if [ "$mix" = 1 ]; then
	trace=$out/trace-mix-${size}MB.json
	genflags=--profile-mix
elif [ "${HOST:-0}" = 1 ]; then
	trace=$out/trace-host-${size}MB.json
	genflags=--host-bound
else
	trace=$out/trace-${size}MB.json
	genflags=
fi
if [ ! -s "$trace" ]; then
	echo "generating $trace ..." >&2
	"$build/bench/gen_trace" --size "$size" --pageable $genflags -o "$trace"
fi
[ -s "$trace.gz" ] || gzip -1 -c "$trace" >"$trace.gz"
[ -s "$trace.zst" ] || zstd -q -3 -c "$trace" >"$trace.zst"
if [ ! -s "$trace.mf.zst" ]; then # frames of 8 MiB, as the collector writes one per buffer
	tmpd=$(mktemp -d)
	split -b 8M "$trace" "$tmpd/p"
	for f in "$tmpd"/p*; do zstd -q -3 -c "$f"; done >"$trace.mf.zst"
	rm -rf "$tmpd"
fi
bytes=$(stat -c %s "$trace")
events=$("$td" stats --format json "$trace" | sed -n 's/^  "events": \([0-9]*\),/\1/p')

runs=${RUNS:-5}
# row LABEL CMD...: runs CMD $runs times, reports the fastest run (this machine is shared, and
# the minimum is the figure least disturbed by other load) and the largest peak RSS.
row() {
	local label=$1 best maxkb
	shift
	best_of "$runs" "$@"
	awk -v l="$label" -v s="$best" -v kb="$maxkb" -v b="$bytes" 'BEGIN {
		printf "%-40s %7.2f s %8.1f MB/s %9.1f MB RSS %7.2f%% of trace\n",
		       l, s, b / 1e6 / s, kb / 1024, 100 * kb * 1024 / b }'
}

# rss LABEL TARGET CMD: the peak RSS as a share of the trace against TARGET percent
rss_row() {
	local label=$1 target=$2 kb
	shift 2
	kb=$(once "$@"); kb=${kb#* }
	awk -v l="$label" -v kb="$kb" -v by="$bytes" -v t="$target" 'BEGIN { p = 100 * kb * 1024 / by;
		printf "%-52s %6.1f MB = %5.2f%% of the trace (target <= %g%%) %s\n", l, kb / 1024, p,
		       t, (p <= t ? "PASS" : "MISS") }'
}

burn=$build/bench/burn
b1=$(once "$burn"); b2=$(once sh -c "$burn & $burn; wait")
cap=$(awk -v a="${b1% *}" -v b="${b2% *}" 'BEGIN { printf "%.2f", b / a }')
echo "trace: $trace, $((bytes / 1000000)) MB, $events events, $(nproc) cores"
echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1);" \
	"$(grep -qw avx2 /proc/cpuinfo && echo AVX2 || echo no AVX2) (the byte scan uses it)"
echo "capacity check: two CPU loops at once take ${cap}x one (1.0: the cores are all there;"
echo "  2.0: they share one core's worth, and parallel figures mean nothing)"
echo
[ "${HOST:-0}" = 1 ] && echo "host-bound: the targets are the plain and mix traces'; this one shows where they stand"
echo "targets (A against B side by side, $runs pairs, medians; x = B's time / A's time):"
# the reader's: stats 1.5x and 10% (#14); diagnose with the replay's sizing: 1.1x and 12% (#25)
j=$(nproc)
pair "stats, -j $j, vs json_verify" 1.5 sh -c "json_verify -q < $trace" -- "$td" stats "$trace"
pair "diagnose --format json vs json_verify" 1.1 sh -c "json_verify -q < $trace" -- \
	"$td" diagnose --format json "$trace"
pair "stats FILE.gz vs zcat FILE.gz | json_verify" 1.5 sh -c "zcat $trace.gz | json_verify -q" -- \
	"$td" stats "$trace.gz"
pair "stats FILE.zst vs zstd -dc FILE.zst | json_verify" 1.5 \
	sh -c "zstd -dc $trace.zst | json_verify -q" -- "$td" stats "$trace.zst"
if [ -n "${BASELINE:-}" ]; then # an earlier build's tracedoc: -j 1 must not be slower
	pair "stats -j 1 vs $BASELINE stats -j 1" 0.97 "$BASELINE" stats -j 1 "$trace" -- \
		"$td" stats -j 1 "$trace"
else
	echo "(BASELINE=PATH_TO_AN_EARLIER_TRACEDOC compares -j 1 with it)"
fi
pair "stats -j 1, whitespace left out vs kept (TD_SQUEEZE=0)" 1.0 env TD_SQUEEZE=0 "$td" stats -j 1 \
	"$trace" -- "$td" stats -j 1 "$trace"
rss_row "stats, -j 2: peak RSS" 10 "$td" stats -j 2 "$trace"
rss_row "diagnose --format json, -j 2: peak RSS" 12 "$td" diagnose --format json -j 2 "$trace"
[ "${TABLE:-1}" = 0 ] && exit 0
echo

echo "trace: $trace, $((bytes / 1000000)) MB, $events events, $(nproc) cores; best of $runs runs"
row "json_verify (yajl, no callbacks)" sh -c "json_verify -q < $trace"
row "yajl, empty callbacks" sh -c "$build/bench/yajl_empty < $trace"
row "tracedoc stats" "$td" stats "$trace"
row "tracedoc stats -j 1" "$td" stats -j 1 "$trace"
row "tracedoc stats (one thread: TD_NO_THREAD=1)" env TD_NO_THREAD=1 "$td" stats "$trace"
row "tracedoc diagnose" "$td" diagnose "$trace"
row "tracedoc ops" "$td" ops "$trace"
row "tracedoc kernels" "$td" kernels "$trace"
row "tracedoc memory" "$td" memory "$trace"
row "tracedoc diff (the trace against itself)" "$td" diff "$trace" "$trace"
runs_saved=$runs; runs=1; row "python3 json.load (1 run)" python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$trace"
runs=$runs_saved
echo "compressed input ($(($(stat -c %s "$trace.gz") / 1000000)) MB gzip, $(($(stat -c %s "$trace.zst") / 1000000)) MB zstd; MB/s of uncompressed bytes):"
row "tracedoc stats FILE.gz" "$td" stats "$trace.gz"
row "zcat FILE.gz | tracedoc stats -" sh -c "zcat $trace.gz | $td stats -"
row "tracedoc stats FILE.zst" "$td" stats "$trace.zst"
row "zstd -dc FILE.zst | tracedoc stats -" sh -c "zstd -dc $trace.zst | $td stats -"
echo "zstd of 8 MiB frames ($(($(stat -c %s "$trace.mf.zst") / 1000000)) MB), decoded frame by frame on threads or not:"
row "tracedoc stats FILE.mf.zst (no frame decoders)" env TD_ZSTD_THREADS=-1 "$td" stats "$trace.mf.zst"
row "tracedoc stats FILE.mf.zst (1 frame decoder)" env TD_ZSTD_THREADS=1 "$td" stats "$trace.mf.zst"
