#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What scripts/gpu-check.sh asks of the probe's trace (scripts/gpu/probe.cu recorded by
tracedoc record): the events the probe made, zero dropped records, every GPU op linked to its
launch, and the diagnosis. Also run by the tests on fixtures/collector/h200-probe.json.zst, the
trace the collector wrote on an NVIDIA H200.
usage: check_probe.py STATS_JSON DIAGNOSE_JSON TRACE_ZST"""
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
    # the probe's syncs wait little on an H200 (8 us a step: no finding), but their idle is
    # the synchronizing calls'
    "diagnose: the syncs' idle": any(c["cause"] == "sync" and c["ns"] > 0
                                     for c in diag["summary"]["idle_by_cause"]),
}
launch = sorted({e["name"] for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and "aunch" in e["name"]})
print("launch calls seen:", launch)
bad = [k for k, v in checks.items() if not v]
for k, v in checks.items(): print(("ok   " if v else "FAIL ") + k)
sys.exit(1 if bad else 0)
