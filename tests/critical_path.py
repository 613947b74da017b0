#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tracedoc critical-path: on every real trace in ../shared/traces and every fixture, each
step's categories add up to the step (within 1 ns) and the step is the trace's own
ProfilerStep# span (read here from the raw events); on generated loops whose bottleneck is
known (gen_trace: a host-bound loop, a GPU-bound loop that syncs each step, a loop waiting on
its DataLoader), the dominant category is that bottleneck.
usage: critical_path.py TRACEDOC SOURCE_DIR GEN_TRACE"""
import glob
import gzip
import json
import os
import subprocess
import sys
import tempfile

TD, SRC, GEN = sys.argv[1], sys.argv[2], sys.argv[3]
SHARED = os.path.join(SRC, "..", "shared", "traces")
CATS = ["cpu", "launch", "data_loading", "gpu_compute", "communication", "copies", "waits",
        "kernel_delay"]
failures = []


def run(path):
    r = subprocess.run([TD, "critical-path", "--format", "json", path], capture_output=True,
                       text=True)
    if r.returncode == 3 and "nothing" not in r.stderr and "no host calls" not in r.stderr:
        failures.append(f"{path}: exit 3: {r.stderr.strip()[:200]}")
    if r.returncode not in (0, 3):
        failures.append(f"{path}: exit {r.returncode}: {r.stderr.strip()[:200]}")
    if r.returncode != 0:
        return None
    d = json.loads(r.stdout)
    if d.get("schema") != "tracedoc.critical_path/1":
        failures.append(f"{path}: schema {d.get('schema')}")
    return d


def profiler_steps(path):
    """ProfilerStep#N -> its duration in ns, from the raw events."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        d = json.load(f)
    ev = d if isinstance(d, list) else d.get("traceEvents", [])
    out = {}
    for e in ev:
        if isinstance(e, dict) and e.get("ph") == "X" and \
                e.get("cat") != "gpu_user_annotation" and \
                str(e.get("name", "")).startswith("ProfilerStep#"):
            try:
                out[int(e["name"][13:])] = round(float(e.get("dur", 0)) * 1000)
            except ValueError:
                pass
    return out


def check_sums(path, real):
    d = run(path)
    if d is None:
        return None
    steps = profiler_steps(path) if real else {}
    name = os.path.relpath(path, SRC)
    for s in d["steps"]:
        by = s["by_ns"]
        if set(by) != set(CATS) or any(v < 0 for v in by.values()):
            failures.append(f"{name}: step {s['number']}: categories {by}")
        if abs(sum(by.values()) - s["duration_ns"]) > 1:
            failures.append(f"{name}: step {s['number']}: {sum(by.values())} ns on the path, "
                            f"the step is {s['duration_ns']} ns")
        if s["number"] in steps and abs(steps[s["number"]] - s["duration_ns"]) > 1:
            failures.append(f"{name}: step {s['number']} is {s['duration_ns']} ns, its "
                            f"ProfilerStep# {steps[s['number']]} ns")
    total = sum(s["duration_ns"] for s in d["steps"])
    for fx in d.get("fixes", []):  # the path inside a finding's evidence: part of the path
        if fx["on_path_ns"] is not None and not 0 <= fx["on_path_ns"] <= total:
            failures.append(f"{name}: {fx['rule']}: {fx['on_path_ns']} ns on a {total} ns path")
    return d


def main():
    paths = sorted(glob.glob(os.path.join(SRC, "fixtures", "*.json*")) +
                   glob.glob(os.path.join(SRC, "fixtures", "rules", "*.json")))
    for p in paths:
        check_sums(p, False)
    if not os.path.isdir(SHARED):
        print(f"skip real traces: {SHARED} is absent (the shared traces sit beside the checkout)")
    else:
        for p in sorted(glob.glob(os.path.join(SHARED, "*.json*")) +
                        glob.glob(os.path.join(SHARED, "dlrm-8rank", "*.json"))):
            check_sums(p, True)
            print("checked", os.path.basename(p))
    with tempfile.TemporaryDirectory() as tmp:
        for args, want in ((["--host-bound", "--loader-us", "0"], "cpu"),
                           (["--loader-us", "0"], "gpu_compute"),
                           (["--loader-us", "20000", "--single-loader"], "data_loading")):
            out = os.path.join(tmp, "t.json")
            subprocess.run([GEN, "--steps", "6", "--ops", "50", "-o", out] + args, check=True)
            d = check_sums(out, True)
            if d is None or d["dominant"] != want:
                failures.append(f"gen_trace {' '.join(args)}: dominant "
                                f"{d and d['dominant']}, expected {want}")
            else:
                print(f"ok gen_trace {' '.join(args)}: {want}")
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
