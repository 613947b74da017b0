#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tracedoc ops' memory columns against PyTorch's rule, computed here from the raw trace of every
real trace in ../shared/traces with [memory] samples (skipped with a message when absent).

PyTorch (torch/autograd/profiler.py, _parse_kineto_results) gives each CPU event the [memory]
samples of ANY thread whose time is within [start, end] (MemRecordsAcc.in_interval, both ends
included), host bytes (Device Type 0) as CPU Mem, the others as CUDA Mem; key_averages sums them
per name (ProfilerStep#N as ProfilerStep*); self = the event's minus its direct children's, the
children being the events nested in it on its thread (EventList._populate_cpu_children), an
event nested alone in one of its own name merged into it (EventList._remove_dup_nodes).
Checked: every row's CPU Mem and CUDA Mem, and the ProfilerStep* row's self columns (its children
are plain ops). With --memory-own-thread, ProfilerStep*'s CUDA Mem counts its own thread's only.
usage: ops_memory.py TRACEDOC REPO_ROOT"""
import bisect
import gzip
import json
import os
import subprocess
import sys
from decimal import Decimal

TD, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SHARED = os.path.join(ROOT, "..", "shared", "traces")
FILTERED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
            "profiler::_record_function_enter_new", "profiler::_record_function_exit",
            "aten::is_leaf", "aten::output_nr", "aten::_version"}
CPU_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "Operator", "Runtime"}
fails = 0


def bad(msg):
    global fails
    fails += 1
    print("FAIL", msg)


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value())


def load(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def name_of(n):
    return "ProfilerStep*" if n.startswith("ProfilerStep#") else n


def expected(evs, own_thread=False):
    """per row name: [cpu, cuda] totals; per ProfilerStep event's self: [cpu, cuda] summed"""
    mem = {}  # thread key (None: any) -> sorted [(ts, cpu bytes, cuda bytes)]
    for e in evs:
        if isinstance(e, dict) and e.get("ph") == "i" and e.get("name") == "[memory]":
            a = e.get("args") or {}
            b = int(a.get("Bytes", 0))
            cuda = int(a.get("Device Type", 0)) != 0
            k = (str(e.get("pid")), str(e.get("tid"))) if own_thread else None
            mem.setdefault(k, []).append((ns(e["ts"]), 0 if cuda else b, b if cuda else 0))
    for v in mem.values():
        v.sort()
    starts = {k: [x[0] for x in v] for k, v in mem.items()}
    cum = {}
    for k, v in mem.items():
        c = [(0, 0)]
        for _, h, d in v:
            c.append((c[-1][0] + h, c[-1][1] + d))
        cum[k] = c
    per_thread = {}
    for e in evs:
        if not isinstance(e, dict) or e.get("ph") != "X" or "dur" not in e:
            continue
        if e.get("cat") not in CPU_CATS or e.get("name") in FILTERED:
            continue
        s = ns(e["ts"])
        end = s + ns(e["dur"])
        th = (str(e.get("pid")), str(e.get("tid")))
        k = th if own_thread else None
        cpu = cuda = 0
        if k in mem:
            lo = bisect.bisect_left(starts[k], s)
            hi = bisect.bisect_right(starts[k], end)
            cpu = cum[k][hi][0] - cum[k][lo][0]
            cuda = cum[k][hi][1] - cum[k][lo][1]
        per_thread.setdefault(th, []).append([s, end, name_of(e["name"]), cpu, cuda, None, []])
    rows, step_self = {}, [0, 0]
    for th, lst in per_thread.items():
        lst.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for x in lst:  # PyTorch's nesting: the innermost open event holding it is its parent
            while stack and (x[0] >= stack[-1][1] or x[1] > stack[-1][1]):
                stack.pop()
            x[5] = stack[-1] if stack else None
            if stack:
                stack[-1][6].append(x)
            stack.append(x)
        while True:  # EventList._remove_dup_nodes: an event alone in one of its name merged
            gone = set()
            for i, x in enumerate(lst):
                p = x[5]
                if p is not None and p[2] == x[2] and len(p[6]) == 1:
                    p[6] = x[6]
                    for ch in x[6]:
                        ch[5] = p
                    gone.add(i)
            if not gone:
                break
            lst[:] = [x for i, x in enumerate(lst) if i not in gone]
        for x in lst:
            r = rows.setdefault(x[2], [0, 0])
            r[0] += x[3]
            r[1] += x[4]
            if x[2] == "ProfilerStep*":
                step_self[0] += x[3] - sum(ch[3] for ch in x[6])
                step_self[1] += x[4] - sum(ch[4] for ch in x[6])
    return rows, step_self


def ops(path, *extra):
    r = subprocess.run([TD, "ops", path, "--window", "all", "--format", "json", *extra],
                       capture_output=True)
    if r.returncode:
        bad(f"{path}: ops exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return {}
    return {x["name"]: x for x in json.loads(r.stdout)["rows"] if x["kind"] != "gpu"}


def main():
    if not os.path.isdir(SHARED):
        print(f"SKIPPED: {SHARED} is absent (the real traces sit beside the checkout)")
        sys.exit(77)
    checked = 0
    for f in sorted(os.listdir(SHARED)):
        path = os.path.join(SHARED, f)
        if not f.endswith((".json", ".json.gz")):
            continue
        evs = load(path)
        if not any(isinstance(e, dict) and e.get("name") == "[memory]" for e in evs):
            continue
        rows, step_self = expected(evs)
        got = ops(path)
        cells = 0
        for name, (cpu, cuda) in rows.items():
            g = got.get(name)
            if g is None:
                continue  # a row tracedoc merges or leaves out: torch_tables.py checks rows
            for col, want in (("cpu_mem_bytes", cpu), ("cuda_mem_bytes", cuda)):
                if g.get(col, 0) != want:
                    bad(f"{f}: {name[:60]} {col}: tracedoc {g.get(col)}, PyTorch's rule {want}")
                cells += 1
        if "ProfilerStep*" in rows:
            g = got["ProfilerStep*"]
            for col, want in (("self_cpu_mem_bytes", step_self[0]),
                              ("self_cuda_mem_bytes", step_self[1])):
                if g.get(col, 0) != want:
                    bad(f"{f}: ProfilerStep* {col}: tracedoc {g.get(col)}, PyTorch's rule {want}")
                cells += 1
            own_rows, own_self = expected(evs, own_thread=True)
            g = ops(path, "--memory-own-thread").get("ProfilerStep*", {})
            for col, want in (("cuda_mem_bytes", own_rows["ProfilerStep*"][1]),
                              ("self_cuda_mem_bytes", own_self[1])):
                if g.get(col, 0) != want:
                    bad(f"{f}: --memory-own-thread ProfilerStep* {col}: tracedoc {g.get(col)}, "
                        f"its thread's {want}")
            if own_rows["ProfilerStep*"][1] == rows["ProfilerStep*"][1]:
                print(f"  {f}: ProfilerStep*'s CUDA Mem is the same counted either way")
        print(f"ok {f}: {cells} memory cells")
        checked += 1
    if not checked:
        bad("no real trace with [memory] samples")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
