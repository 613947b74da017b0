#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Throughput and memory of the reader on a generated Kineto trace (default ~1 GB), beside yajl's
# json_verify (the ceiling for any yajl-based reader) and Python's json.load. Prints a table.
# usage: bench/run.sh [SIZE_MB] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
size=${1:-1000}
build=${2:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc gen_trace rssrun yajl_empty >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
trace=$out/trace-${size}MB.json
if [ ! -s "$trace" ]; then
	echo "generating $trace ..." >&2
	"$build/bench/gen_trace" --size "$size" --pageable -o "$trace"
fi
[ -s "$trace.gz" ] || gzip -1 -c "$trace" >"$trace.gz"
[ -s "$trace.zst" ] || zstd -q -3 -c "$trace" >"$trace.zst"
bytes=$(stat -c %s "$trace")
events=$("$td" stats --format json "$trace" | sed -n 's/^  "events": \([0-9]*\),/\1/p')

runs=${RUNS:-5}
# row LABEL CMD...: runs CMD $runs times, reports the fastest run (this machine is shared, and
# the minimum is the figure least disturbed by other load) and the largest peak RSS.
row() {
	local label=$1 i line secs kb best="" maxkb=0
	shift
	for i in $(seq "$runs"); do
		line=$("$rss" "$@" 2>&1 >/dev/null | grep '^rssrun:')
		secs=$(echo "$line" | sed 's/rssrun: \([0-9.]*\) s.*/\1/')
		kb=$(echo "$line" | sed 's/.*, \([0-9]*\) KB/\1/')
		if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$secs
		fi
		[ "$kb" -gt "$maxkb" ] && maxkb=$kb
	done
	awk -v l="$label" -v s="$best" -v kb="$maxkb" -v b="$bytes" 'BEGIN {
		printf "%-40s %7.2f s %8.1f MB/s %9.1f MB RSS %7.2f%% of trace\n",
		       l, s, b / 1e6 / s, kb / 1024, 100 * kb * 1024 / b }'
}

echo "trace: $trace, $((bytes / 1000000)) MB, $events events, $(nproc) cores; best of $runs runs"
row "json_verify (yajl, no callbacks)" sh -c "json_verify -q < $trace"
row "yajl, empty callbacks" sh -c "$build/bench/yajl_empty < $trace"
row "tracedoc stats" "$td" stats "$trace"
row "tracedoc stats (one thread)" env TD_NO_THREAD=1 "$td" stats "$trace"
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
