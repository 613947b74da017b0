#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The job view at scale, printed as figures: diagnose of a generated 256-rank job on one machine
# (wall time and peak RSS at -j 1 and -j cores: memory is bounded by the models read at once,
# not by the ranks), and the reduce of 10,000 rank summaries (what reduce.sbatch runs).
# usage: bench/job.sh [RANKS] [SUMMARIES] [BUILD_DIR]
set -eu
cd "$(dirname "$0")/.."
ranks=${1:-256}
nsum=${2:-10000}
build=${3:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc gen_trace rssrun >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
. bench/lib.sh
job=$out/job-$ranks
if [ ! -s "$job/truth.txt" ]; then
	rm -rf "$job" && mkdir -p "$job"
	echo "generating $ranks ranks in $job ..." >&2
	"$build/bench/gen_trace" --ranks "$ranks" --straggler $((ranks / 3)) --delay 2 --steps 8 \
		--ops 120 -o "$job"
fi
bytes=$(du -sb "$job" | cut -f1)

# row LABEL CMD...: the fastest of 3 runs and the largest peak RSS
row() {
	local label=$1 best maxkb
	shift
	best_of 3 "$@"
	awk -v l="$label" -v s="$best" -v kb="$maxkb" 'BEGIN {
		printf "%-46s %8.2f s %9.1f MB peak RSS\n", l, s, kb / 1024 }'
}

echo "job: $ranks generated ranks, $((bytes / 1000000)) MB of traces, $(nproc) cores; best of 3"
row "diagnose DIR -j 1" "$td" diagnose -j 1 "$job"
row "diagnose DIR -j $(nproc)" "$td" diagnose -j "$(nproc)" "$job"
one=$(ls "$job"/rank-0.json)
row "diagnose of one rank alone (for scale)" "$td" diagnose "$one"

# 10,000 summaries: one rank's summary, renumbered
sums=$out/sums-$nsum
if [ ! -s "$sums/rank-$((nsum - 1)).summary.json" ]; then
	rm -rf "$sums" && mkdir -p "$sums"
	"$td" summarize "$one" -o "$out/one.summary.json"
	python3 - "$out/one.summary.json" "$sums" "$nsum" <<'PY'
import json, sys
src, dst, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
d = json.load(open(src))
for r in range(n):
    d["trace"]["rank"], d["trace"]["world_size"] = r, n
    d["trace"]["path"] = f"ranks/rank-{r}.json"
    with open(f"{dst}/rank-{r}.summary.json", "w") as f:
        json.dump(d, f, separators=(",", ":"))
PY
fi
sbytes=$(du -sb "$sums" | cut -f1)
echo "reduce: $nsum summaries, $((sbytes / 1000000)) MB ($((sbytes / nsum / 1000)) KB each)"
row "diagnose SUMMARY_DIR -j 1" "$td" diagnose -j 1 "$sums"
row "diagnose SUMMARY_DIR -j $(nproc)" "$td" diagnose -j "$(nproc)" "$sums"
