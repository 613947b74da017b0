#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector on a real GPU, in under 3 minutes: builds scripts/gpu/probe.cu, records it with
# tracedoc record, and checks the trace: event counts, both memory kinds, the sync calls and
# records, NVTX ranges, zero dropped records, no hang in the forked child, every GPU op linked
# to its launch, and that diagnose reports the pageable copy and the syncs. Prints the
# recording overhead (wall time with and without the collector).
# usage: scripts/gpu-check.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=$(mktemp -d)
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
cmake -S . -B "$build" -DTD_WITH_CUPTI=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target tracedoc tracedoc_collector >/dev/null
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
"$build/tracedoc" stats --format json "$trace" >"$out/stats.json"
"$build/tracedoc" diagnose --format json "$trace" >"$out/diag.json"
"$build/tracedoc" diagnose "$trace" | head -40
python3 - "$out/stats.json" "$out/diag.json" "$trace" <<'PY'
import json, subprocess, sys
stats = json.load(open(sys.argv[1])); diag = json.load(open(sys.argv[2]))
raw = subprocess.run(["zstd", "-dc", sys.argv[3]], capture_output=True, check=True).stdout
doc = json.loads(raw)
ev = doc["traceEvents"]
def n(pred): return sum(1 for e in ev if pred(e))
checks = {
    "kernels == 40": n(lambda e: e.get("cat") == "kernel") == 40,
    "pageable uploads == 20": n(lambda e: e.get("name") == "Memcpy HtoD (Pageable -> Device)") == 20,
    "pinned uploads == 20": n(lambda e: e.get("name") == "Memcpy HtoD (Pinned -> Device)") == 20,
    "downloads to pageable == 20": n(lambda e: e.get("name") == "Memcpy DtoH (Device -> Pageable)") == 20,
    "memsets == 20": n(lambda e: e.get("cat") == "gpu_memset") == 20,
    "stream syncs >= 20": n(lambda e: e.get("cat") == "cuda_sync" and e["name"] == "Stream Sync") >= 20,
    "event syncs >= 20": n(lambda e: e.get("cat") == "cuda_sync" and e["name"] == "Event Sync") >= 20,
    "cudaDeviceSynchronize call": n(lambda e: e.get("name", "").startswith("cudaDeviceSynchronize")) >= 1,
    "NVTX ranges == 20": n(lambda e: e.get("cat") == "user_annotation" and e["name"] == "step") == 20,
    "dropped records == 0": doc["tracedoc_collector"]["droppedRecords"] == 0,
    "every GPU op has its launch": stats["anomalies"].get("gpu_ops_without_launch", 0) == 0,
    "diagnose: pageable copy": any(f["rule"] == "transfer" and "pageable" in f["title"] for f in diag["findings"]),
    "diagnose: sync stall": any(f["rule"] == "sync-stall" for f in diag["findings"]),
}
launch = sorted({e["name"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and "aunch" in e["name"]})
print("launch calls seen:", launch)
bad = [k for k, v in checks.items() if not v]
for k, v in checks.items(): print(("ok   " if v else "FAIL ") + k)
sys.exit(1 if bad else 0)
PY
echo "gpu-check: passed"
