#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What diagnose costs beside stats, which only reads (issue 46's cost targets), on three
# generated traces, each pair run in turn (RUNS pairs, default 3, medians) with PASS or MISS:
#   a million steps of one launch each (gen_trace --bare): diagnose at most 3x stats, and its
#     JSON report (a replay and a critical path per step) shown beside it;
#   100k devices of one kernel each (tests/hostile/make.py's devices-100k shape): diagnose
#     within 5 s;
#   the 1 GB trace of a real profile's mix (gen_trace --profile-mix, as MIX=1 bench/run.sh):
#     diagnose --format json within 1.15x of stats.
# Run it on a machine nothing else loads: the figures are wall-clock times.
# usage: bench/cost.sh [BUILD_DIR]   (RUNS=N pairs; STEPS=N instead of a million, DEVICES=N
#        instead of 100k, MIX_MB=N instead of 1000)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
out=bench/out
mkdir -p "$out"
cmake --build "$build" -j2 --target tracedoc gen_trace rssrun >/dev/null
td=$build/tracedoc
rss=$build/bench/rssrun
runs=${RUNS:-3}
. bench/lib.sh
steps=${STEPS:-1000000} ndev=${DEVICES:-100000} mb=${MIX_MB:-1000}

# x = stats' time / diagnose's: diagnose within N times stats is x >= 1/N
trace=$out/steps-$steps.json
[ -s "$trace" ] || "$build/bench/gen_trace" --bare --steps "$steps" -o "$trace"
bytes=$(stat -c %s "$trace")
echo "trace: $trace, $((bytes / 1000000)) MB, $steps steps, $(nproc) cores"
pair "diagnose vs stats (within 3x)" 0.333 "$td" stats "$trace" -- "$td" diagnose "$trace"
pair "diagnose --format json vs stats (shown)" 0 "$td" stats "$trace" -- \
	"$td" diagnose --format json -o /dev/null "$trace"

trace=$out/devices-$ndev.json
[ -s "$trace" ] || python3 - "$trace" "$ndev" <<'EOF'
import json, sys
ev = []
for d in range(int(sys.argv[2])):  # a launch and its kernel on device d
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": 95 + d, "dur": 3, "args": {"correlation": d + 1}})
    ev.append({"ph": "X", "cat": "kernel", "name": "k", "pid": d, "tid": 7, "ts": 100 + d,
               "dur": 1, "args": {"device": d, "stream": 7, "correlation": d + 1}})
open(sys.argv[1], "w").write(json.dumps({"traceEvents": ev}))
EOF
bytes=$(stat -c %s "$trace")
echo "trace: $trace, $((bytes / 1000000)) MB, $ndev devices"
for fmt in text json; do # JSON once: its replay of every device is quadratic in them (MISS)
	t=""
	n=$runs; [ $fmt = text ] || n=1
	for _ in $(seq "$n"); do r=$(once "$td" diagnose --format $fmt -o /dev/null "$trace"); t="$t ${r% *}"; done
	t=$(echo $t | tr ' ' '\n' | median)
	awk -v t="$t" -v f="$fmt" 'BEGIN { printf "%-52s %6.2f s (target <= 5 s) %s\n",
		"diagnose --format " f, t, (t <= 5 ? "PASS" : "MISS") }'
done

trace=$out/trace-mix-${mb}MB.json
[ -s "$trace" ] || "$build/bench/gen_trace" --size "$mb" --pageable --profile-mix -o "$trace"
bytes=$(stat -c %s "$trace")
echo "trace: $trace, $((bytes / 1000000)) MB"
pair "diagnose --format json vs stats (within 1.15x)" 0.87 "$td" stats "$trace" -- \
	"$td" diagnose --format json -o /dev/null "$trace"
