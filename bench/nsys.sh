#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Throughput and memory of the Nsight Systems SQLite reader (issue 49) on a generated export of
# a real export's mix (bench/gen_nsys.py, default ~1 GB), beside `stats` on a generated Kineto
# JSON trace of the same size (gen_trace, as bench/run.sh): events a second, MB a second, peak
# RSS and its share of the file, fastest of RUNS runs (default 3), and the targets with PASS or
# MISS: at least the JSON reader's events a second, RSS at most 10% of the file plus 16 MB.
# usage: bench/nsys.sh [SIZE_MB] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
size=${1:-1000}
build=${2:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc gen_trace rssrun >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
. bench/lib.sh
if ! "$td" --version | grep -q '^nsys  *SQLite'; then
	echo "nsys bench: $td was built without SQLite" >&2
	exit 1
fi
db=$out/nsys-${size}MB.sqlite
json=$out/trace-${size}MB.json
if [ ! -s "$db" ]; then
	echo "generating $db ..." >&2
	python3 bench/gen_nsys.py "$size" "$db"
fi
if [ ! -s "$json" ]; then
	echo "generating $json ..." >&2
	"$build/bench/gen_trace" --size "$size" --pageable -o "$json"
fi
runs=${RUNS:-3}
# measure LABEL FILE: prints the row and sets rate (events/s), kb, bytes
measure() {
	local label=$1 file=$2 events best maxkb
	events=$("$td" stats --format json "$file" | sed -n 's/^  "events": \([0-9]*\),/\1/p')
	bytes=$(stat -c %s "$file")
	best_of "$runs" "$td" stats "$file"
	kb=$maxkb
	rate=$(awk -v e="$events" -v s="$best" 'BEGIN { printf "%.0f", e / s }')
	awk -v l="$label" -v e="$events" -v s="$best" -v kb="$kb" -v b="$bytes" 'BEGIN {
		printf "%-22s %9d events %7.2f s %6.2f M events/s %7.1f MB/s %8.1f MB RSS %6.1f%% of file\n",
		       l, e, s, e / s / 1e6, b / 1e6 / s, kb / 1024, 100 * kb * 1024 / b }'
}
measure "stats nsys export" "$db"
nrate=$rate nkb=$kb nbytes=$bytes
measure "stats Kineto JSON" "$json"
jrate=$rate
awk -v n="$nrate" -v j="$jrate" 'BEGIN { printf "target events/s >= JSON reader  %s (%.2fx)\n",
	(n >= j) ? "PASS" : "MISS", n / j }'
awk -v kb="$nkb" -v b="$nbytes" 'BEGIN { lim = b * 0.10 + 16 * 1048576;
	printf "target RSS <= 10%% of file + 16 MB  %s (%.1f MB of %.1f MB)\n",
	(kb * 1024 <= lim) ? "PASS" : "MISS", kb / 1024, lim / 1048576 }'
