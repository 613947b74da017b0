#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What blind judges (readers of the raw events) found wrong in tracedoc's report on real traces
of ../shared/traces, each point checked against figures computed here from the raw events, not
from tracedoc's output:
- the breakdown table ("where the GPU idle time went") puts the idle a one-off finding claims
  under that one-off: sglang-mi300x's 493 ms wait on work from before the trace, switch-a100's
  queued kernels held while a first launch loads its module (lazy loading);
- idle under hipFree calls made on the autograd thread is the allocator's, not the main
  thread's Python (hipfree-mi300x);
- a material share of compute in kernels built for an older architecture than the device's is
  named (vllm-gb10-decode: an SM80 WMMA GEMM on an SM121), and nowhere else;
- MFU holds FP32 ops whose kernels run TF32 to the TF32 peak (negq-rank0), and says it is a
  floor where graph replays run kernels with no FLOPs known (flux-mi300x).
usage: judged_report.py TRACEDOC"""
import gzip
import json
import os
import re
import subprocess
import sys

from intervals import union  # the union of [start, end) intervals
from real_traces import overlap  # the intersection of two sorted disjoint interval lists

TD = sys.argv[1]
SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                      "traces")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def events(name):
    path = os.path.join(SHARED, name)
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        return [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]


def report(name):
    r = subprocess.run([TD, "diagnose", "--format", "json", os.path.join(SHARED, name)],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def rows(d):
    return {r.get("title", r["cause"]): r["ns"] for r in d["summary"]["idle_by_cause"]}


def near(got, want, tol):
    return abs(got - want) <= tol * want


def untraced_wait():
    """sglang-mi300x: a blocking copy waits behind a stream wait on work from before the
    trace; the GPU op after it starts when the wait ends. That wait is the one-off's row."""
    ev = events("sglang-mi300x.json.gz")
    copy = max((e for e in ev if e.get("cat") == "cuda_runtime" and "Memcpy" in e["name"]),
               key=lambda e: e["dur"])
    waited = any("StreamWaitEvent" in e["name"] and e["ts"] < copy["ts"] for e in ev)
    first = min(e["ts"] for e in ev if e.get("cat") in GPU_CATS and e["ts"] >= copy["ts"])
    want = (first - copy["ts"]) * 1000  # ns
    d = report("sglang-mi300x.json.gz")
    r = rows(d)
    oneoff = sum(v for k, v in r.items() if k.startswith("one-off"))
    bad = []
    if not waited:
        bad.append("no stream wait before the copy in the raw events")
    if not near(oneoff, want, 0.01):
        bad.append(f"one-off row {oneoff / 1e6:.1f} ms, the events say {want / 1e6:.1f} ms")
    if r.get("dependency", 0) > 0.01 * want:
        bad.append(f"{r['dependency'] / 1e6:.1f} ms still under waiting on another stream")
    for p in d.get("phases", []):  # the serving phases' summary says the same
        if not near(p["idle_by_cause"].get("oneoff", 0), want, 0.01) or \
                p["idle_held_most_cause"] != "oneoff":
            bad.append(f"phase {p['phase']}: idle {p['idle_by_cause']}, held most by "
                       f"{p['idle_held_most_by']!r}")
    return bad


def lazy_loading():
    """switch-a100: kernels queued while the host is in a long first launch (its module
    loading) wait for it; only the queued waits outside such calls are waits on a stream."""
    ev = events("switch-a100.json")
    gpu = sorted((e for e in ev if e.get("cat") in GPU_CATS), key=lambda e: e["ts"])
    launch = {e["args"]["correlation"]: e for e in ev
              if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    long_calls = union([(e["ts"], e["ts"] + e["dur"]) for e in ev
                        if e.get("cat") == "cuda_runtime" and e["dur"] > 1000])
    end = gpu[0]["ts"] + gpu[0]["dur"]
    waits = []
    for k in gpu[1:]:
        lc = launch.get(k["args"].get("correlation"))
        q0 = max(lc["ts"] + lc["dur"], end) if lc else k["ts"]
        if k["ts"] - q0 > 50:  # queued, and waited longer than a launch's latency
            waits.append((q0, k["ts"]))
        end = max(end, k["ts"] + k["dur"])
    waits = union(waits)
    under = overlap(waits, long_calls)
    rest = (sum(e - s for s, e in waits) - under) * 1000
    r = rows(report("switch-a100.json"))
    bad = []
    if under < 5000:
        bad.append(f"only {under / 1e3:.1f} ms of queued waits under long launches in the events")
    if not near(r.get("dependency", 0), rest, 0.25):
        bad.append(f"waiting on another stream {r.get('dependency', 0) / 1e6:.2f} ms, the events "
                   f"say {rest / 1e6:.2f} ms outside the first launches")
    return bad


def autograd_frees():
    """hipfree-mi300x: hipFree runs on the autograd thread while the main thread waits in
    run_backward; the GPU idle under hipFree/hipMalloc calls, on any thread, is the
    allocator's."""
    ev = events("hipfree-mi300x.json.gz")
    busy = union([(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") in GPU_CATS])
    idle = [(busy[i][1], busy[i + 1][0]) for i in range(len(busy) - 1)]
    calls = [e for e in ev if e.get("cat") == "cuda_runtime" and e["name"] in ("hipFree",
                                                                             "hipMalloc")]
    threads = {e["tid"] for e in calls}
    under = overlap(idle, union([(e["ts"], e["ts"] + e["dur"]) for e in calls])) * 1000
    total = sum(e - s for s, e in idle) * 1000
    r = rows(report("hipfree-mi300x.json.gz"))
    bad = []
    if len(threads) < 2:
        bad.append("the allocation calls are on one thread only")
    if r.get("allocator", 0) < 0.98 * under:
        bad.append(f"allocator {r.get('allocator', 0) / 1e6:.1f} ms, the GPU idles "
                   f"{under / 1e6:.1f} ms under hipFree/hipMalloc")
    if r.get("host", 0) > (total - under) + 1e6:
        bad.append(f"CPU op / Python {r.get('host', 0) / 1e6:.1f} ms, more than the "
                   f"{(total - under) / 1e6:.1f} ms of idle outside the allocation calls")
    return bad


ARCH = re.compile(r"(?:(?<![A-Za-z0-9])sm|(?<=[a-z])Sm|cutlass_)(\d{2,3})(?![A-Za-z0-9])")


def older_arch_share(name):
    """The share of kernel time in kernels whose name says an architecture of an older major
    version than the device's (deviceProperties), and the largest such kernel's name."""
    path = os.path.join(SHARED, name)
    with (gzip.open if path.endswith(".gz") else open)(path, "rt") as f:
        d = json.load(f)
    major = d["deviceProperties"][0]["computeMajor"]
    tot, old, top = 0.0, {}, None
    for e in d["traceEvents"]:
        if e.get("ph") == "X" and e.get("cat") == "kernel":
            tot += e["dur"]
            m = ARCH.search(e["name"])
            if m and int(m.group(1)) // 10 < major:
                old[e["name"]] = old.get(e["name"], 0) + e["dur"]
    if old:
        top = max(old, key=old.get)
    return sum(old.values()) / tot, top


def old_arch():
    """vllm-gb10-decode: 13% of the compute in an SM80 WMMA GEMM on an SM121 is named; the
    A100 traces' SM80 kernels run on an SM80 and are not."""
    bad = []
    share, top = older_arch_share("vllm-gb10-decode.json.gz")
    f = [x for x in report("vllm-gb10-decode.json.gz")["findings"] if x["rule"] == "gpu-bound"]
    got = f[0]["values"].get("old_arch_ns", 0) / f[0]["values"]["compute_busy_ns"] if f else 0
    if share < 0.05 or not near(got, share, 0.15):
        bad.append(f"older-arch share {got:.1%}, the events say {share:.1%}")
    if f and not any(top.split("<")[-1][:20] in w for w in f[0]["where"]):
        bad.append(f"the where lines do not name {top[:60]}")
    for name in ("negq-rank0.json.gz", "nccl-a100-rank0.json.gz"):
        share, _ = older_arch_share(name)
        named = [x["rule"] for x in report(name)["findings"] if "old_arch_ns" in x["values"]]
        if share == 0 and named:
            bad.append(f"{name}: {named} name an older architecture the events do not show")
    return bad


def mfu_tf32_and_graphs():
    """negq-rank0: its FP32 GEMMs run CUTLASS TF32 kernels (tensorop_s1688gemm), so the MFU's
    peak is TF32's; flux-mi300x: graph replays run most kernels with no op, so the MFU line
    says it is a floor, with their share."""
    bad = []
    ev = events("negq-rank0.json.gz")
    tf32 = {e["args"]["correlation"] for e in ev if e.get("cat") == "kernel" and (
        "tf32" in e["name"].lower() or ("tensorop_s1688gemm" in e["name"] and
                                        "f16" not in e["name"]))}
    launches = [e for e in ev if e.get("cat") == "cuda_runtime" and
                e.get("args", {}).get("correlation") in tf32]
    fp32_ops = [e for e in ev if e.get("cat") == "cpu_op" and e["name"] in (
        "aten::mm", "aten::addmm") and "float" in str(e.get("args", {}).get("Input type"))]
    under = [op for op in fp32_ops if any(l["tid"] == op["tid"] and op["ts"] <= l["ts"] <=
                                          op["ts"] + op["dur"] for l in launches)]
    m = report("negq-rank0.json.gz")["summary"]["mfu"]
    if under and m["dtype"] != "tf32":
        bad.append(f"{len(under)} FP32 GEMM ops launch TF32 kernels, the MFU's dtype is "
                   f"{m['dtype']}")
    sw = report("switch-a100.json")["summary"]["mfu"]  # ampere_sgemm: FP32 SIMT, no TF32
    if sw["dtype"] != "fp32":
        bad.append(f"switch-a100's FP32 sgemm read as {sw['dtype']}")
    ev = events("flux-mi300x.json.gz")
    graph = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and
             "GraphLaunch" in e["name"] and "correlation" in e.get("args", {})}
    kern = [e for e in ev if e.get("cat") == "kernel"]
    share = sum(e["dur"] for e in kern if e["args"].get("correlation") in graph) / \
        sum(e["dur"] for e in kern)
    m = report("flux-mi300x.json.gz")["summary"]["mfu"]
    got = m.get("kernel_graph_ns", 0) / max(m.get("kernel_ns", 0), 1)
    if not near(got, share, 0.05):
        bad.append(f"graph-replayed share {got:.1%}, the events say {share:.1%}")
    text = subprocess.run([TD, "diagnose", os.path.join(SHARED, "flux-mi300x.json.gz")],
                          capture_output=True, text=True).stdout
    line = " ".join(l.strip() for l in text.split("\n\n")[0].splitlines()
                    if l.startswith("MFU") or l.startswith("         "))
    if share >= 0.1 and "a floor" not in line:
        bad.append("the MFU line does not say it is a floor")
    return bad


CHECKS = [untraced_wait, lazy_loading, autograd_frees, old_arch, mfu_tf32_and_graphs]


def main():
    if not os.path.isdir(SHARED):
        print("SKIPPED: the judged real traces: ../shared/traces is absent")
        return 77
    failed = 0
    for check in CHECKS:
        bad = check()
        print(("ok   " if not bad else "FAIL ") + check.__name__ + ": " +
              check.__doc__.split("\n")[0])
        for b in bad:
            print("       " + b)
        failed += bool(bad)
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
