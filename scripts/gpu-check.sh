#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector on a real GPU, in under 3 minutes: builds scripts/gpu/probe.cu, records it with
# tracedoc record, and checks the trace: event counts, both memory kinds, the sync calls and
# records, NVTX ranges, zero dropped records, no hang in the forked child, every GPU op linked
# to its launch, and that diagnose reports the pageable copy and the syncs' idle. Prints the
# recording overhead (wall time with and without the collector).
# usage: scripts/gpu-check.sh [BUILD_DIR]   (TD_NO_BUILD=1: BUILD_DIR already holds tracedoc and
#        libtracedoc_collector.so, built elsewhere - a GPU machine without the -dev packages;
#        TD_KEEP=DIR: the probe's trace is copied there)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ "${TD_NO_BUILD:-0}" != 1 ]; then
	cmake -S . -B "$build" -DTD_WITH_CUPTI=ON >/dev/null
	cmake --build "$build" -j"$(nproc)" --target tracedoc tracedoc_collector >/dev/null
fi
"$nvcc" -O2 -o "$out/probe" scripts/gpu/probe.cu -ldl
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true

t0=$(date +%s.%N)
timeout 60 "$out/probe"
t1=$(date +%s.%N)
timeout 120 "$build/tracedoc" record -o "$out/trace" -- "$out/probe"
t2=$(date +%s.%N)
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); print(f'wall: {b - a:.2f} s plain, {c - b:.2f} s recorded, overhead {100 * ((c - b) / (b - a) - 1):.0f}%')" "$t0" "$t1" "$t2"

trace=$(ls "$out"/trace/*.json.zst)
[ "$(echo "$trace" | wc -l)" = 1 ] || { echo "FAIL: expected one trace (the fork child writes none): $trace"; exit 1; }
[ -z "${TD_KEEP:-}" ] || cp "$trace" "$TD_KEEP/" # TD_KEEP=DIR: the probe's trace kept there
"$build/tracedoc" stats --format json "$trace" >"$out/stats.json"
"$build/tracedoc" diagnose --format json "$trace" >"$out/diag.json"
"$build/tracedoc" diagnose "$trace" >"$out/diag.txt"
head -40 "$out/diag.txt" # not through a pipe: head leaving early is no failure under pipefail
python3 scripts/gpu/check_probe.py "$out/stats.json" "$out/diag.json" "$trace"
echo "gpu-check: passed"
