#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A caching-allocator snapshot pickle at scale, printed as figures: bench/gen_snapshot.py writes
# ENTRIES trace entries with the structure of the real snapshots (kept in bench/out between
# runs); tracedoc memory reads it (best of 3: wall time, peak RSS, and RSS as a share of the
# file), and the figures it prints are checked against the generator's.
# Targets (issue 48): 1M entries in under 5 s, under 10% of the file in RSS plus fixed buffers.
# usage: bench/snapshot.sh [ENTRIES] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
n=${1:-1000000}
build=${2:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc rssrun >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
. bench/lib.sh
f=$out/snapshot-$n.pickle
if [ ! -s "$f.truth" ]; then
	echo "generating $n entries in $f ..." >&2
	python3 bench/gen_snapshot.py "$f" "$n" >"$f.truth"
fi
bytes=$(stat -c %s "$f")
best_of 3 "$td" memory "$f"
echo "snapshot: $n entries, $((bytes / 1000000)) MB of pickle, $(nproc) cores; best of 3"
awk -v s="$best" -v kb="$maxkb" -v b="$bytes" 'BEGIN {
	printf "%-46s %8.2f s %9.1f MB peak RSS (%.1f%% of the file)\n", "memory FILE", s,
	       kb / 1024, 100 * kb * 1024 / b }'
"$td" memory --format json "$f" | python3 -c '
import json, sys
want = dict(zip(*[iter(open(sys.argv[1]).read().split())] * 2))
d = json.load(sys.stdin)["devices"][0]
got = {"entries": d["entries"], "reserved": d["reserved_bytes"], "peak": d["peak_allocated_bytes"]}
bad = [k for k in got if str(got[k]) != want[k]]
print("figures:", "as generated" if not bad else "WRONG " + str(bad), got)
sys.exit(1 if bad else 0)' "$f.truth"
