#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The sizing contract, on every real trace in ../shared/traces, the bundled fixtures and the
generated before/after pairs: what diagnose and whatif promise must be a saving a replay can
give, on the window it is measured against.
- every finding: 0 <= saving <= the window (est_savings_fraction <= 1), the same in whatif
  and for each alternative fix a finding states;
- a replayed saving more than 2x away from the time its mechanism holds (the GPU idle it
  claims plus the GPU time it removes; for a fix that frees the host, that host time too)
  says why in a where line (one of the sizing's explanations);
- whatif's fixes together save at most the window and at least the largest single fix.
usage: sizing_contract.py TRACEDOC SOURCE_DIR [GEN_TRACE]"""
import glob
import gzip
import json
import re
import os
import subprocess
import sys
import tempfile

from intervals import union  # the union of [start, end) intervals

TD, SRC = sys.argv[1], sys.argv[2]
GEN = sys.argv[3] if len(sys.argv) > 3 else None
SHARED = os.path.join(SRC, "..", "shared", "traces")
# where lines that say why a replayed saving is far from what the mechanism holds: the
# sizing's own words (sizing/whatif.c, the rules' bound texts)
WHY = ("replayed with", "once the host's", "the rest is", "beside the GPU", "off the critical",
       "the freed time", "holds the step", "after the fix", "the time freed comes off",
       "does not shorten it")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg)


def run(*args):
    r = subprocess.run([TD] + list(args), capture_output=True, text=True)
    if r.returncode not in (0, 1):
        fail(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[:200]}")
        return None
    return json.loads(r.stdout)


UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
LAG = re.compile(r"the GPU runs [\d.]+ steps behind the host: a step takes the GPU's "
                 r"([\d.]+) (ns|us|ms|s) \(the host's own ([\d.]+) (ns|us|ms|s)\)")
ALONE = re.compile(r"at most the ([\d.]+) (ns|us|ms|s)( a step)? of compute that runs with no "
                   r"collective beside it")
COMM = re.compile(r"nccl|rccl|SendRecv|AllReduce|AllGather|ReduceScatter", re.I)


def raw_events(path):
    if path.endswith(".sqlite"):
        return None
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def total(iv):
    return sum(e - s for s, e in iv)


def reasons(name, path, d, f):
    """A where line's figures checked against the raw events, computed here on their own."""
    for line in f.get("where", []):
        m, a = LAG.search(line), ALONE.search(line)
        if not (m or a):
            continue
        ev = raw_events(path)
        if ev is None:
            continue
        steps = [e for e in ev if e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"
                 and str(e.get("name", "")).startswith("ProfilerStep#")]
        if m:  # the host's own step: the median ProfilerStep
            durs = sorted(e["dur"] for e in steps)
            med = durs[len(durs) // 2] if len(durs) % 2 else \
                (durs[len(durs) // 2 - 1] + durs[len(durs) // 2]) / 2
            said = float(m.group(3)) * UNITS[m.group(4)] / 1e3
            if abs(said - med) > 0.01 * med + 0.05 * UNITS[m.group(4)] / 1e3:
                fail(f"{name}: {f['rule']} says the host's step is {said} us; its "
                     f"ProfilerSteps' median is {med} us")
        if a:  # the compute that runs with no collective beside it, per step
            w0, w1 = d["window"]["start_ns"] / 1e3, d["window"]["end_ns"] / 1e3
            gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel" and
                   e["ts"] < w1 and
                   e["ts"] + e["dur"] > w0]
            clip = [(max(e["ts"], w0), min(e["ts"] + e["dur"], w1), COMM.search(e["name"]))
                    for e in gpu]
            comm = union([(s, e) for s, e, c in clip if c])
            comp = union([(s, e) for s, e, c in clip if not c])
            both = total(union(comm + comp))
            alone = (both - total(comm)) / max(1, d["window"].get("steps") or 1
                                                if a.group(3) else 1)
            said = float(a.group(1)) * UNITS[a.group(2)] / 1e3
            if abs(said - alone) > 0.02 * alone + 0.05 * UNITS[a.group(2)] / 1e3:
                fail(f"{name}: {f['rule']} says {said} us of compute runs alone; the raw "
                     f"kernels say {alone:.1f} us")


def check(path):
    name = os.path.basename(path)
    d = run("diagnose", "--format", "json", path)
    w = run("whatif", "--format", "json", path)
    if d is None or w is None:
        return 0
    window = d["window"]["duration_ns"]
    n = 0
    for f in d["findings"]:
        s, fr = f.get("est_savings_ns", 0), f.get("est_savings_fraction", 0)
        n += 1
        if s < 0 or (window and s > window * 1.0001) or fr > 1.0001:
            fail(f"{name}: {f['rule']} saves {s} ns ({fr:.1%}) of a {window} ns window")
        # what the mechanism holds: the GPU time the finding claims (idle it explains, busy
        # time it removes), and up to the host time its fix frees besides
        lo = f.get("gpu_idle_ns", 0) + f.get("gpu_busy_ns", 0)
        hi = lo + f.get("host_freed_ns", 0)
        if f.get("sizing") in ("replay", "bound") and hi > 0 and s > 0.01 * window and \
                (s > 2 * hi or 2 * s < lo):
            if not any(any(k in line for k in WHY) for line in f.get("where", [])):
                fail(f"{name}: {f['rule']} saves {s / 1e6:.1f} ms; its mechanism holds "
                     f"{lo / 1e6:.1f} ms of GPU time and frees {(hi - lo) / 1e6:.1f} ms of "
                     f"host time; no where line says why")
        # each alternative fix of its mechanism (element-loop), replayed alike: a saving too
        for x in f.get("alternatives", []):
            if x["saving_ns"] < 0 or (window and x["saving_ns"] > window * 1.0001):
                fail(f"{name}: {f['rule']}'s alternative {x['name']} saves {x['saving_ns']} ns "
                     f"of a {window} ns window")
        # the decomposition of a replayed saving: the GPU work removed and the GPU idle closed
        # add up to it (within 1%), each measured on the replayed windows before and after
        reasons(name, path, d, f)
        dc = f.get("decomposition")
        if dc and s > 0:
            parts = dc["gpu_busy_removed_ns"] + dc["gpu_idle_closed_ns"]
            shrink = dc["window_before_ns"] - dc["window_after_ns"]
            holds = "gpu" if 10 * dc["gpu_busy_after_ns"] >= 9 * dc["window_after_ns"] \
                else "other"
            if abs(parts - s) > 0.01 * s or abs(shrink - s) > 0.01 * s or \
                    dc["gpu_busy_after_ns"] > dc["window_after_ns"] or dc["holds_after"] != holds:
                fail(f"{name}: {f['rule']} saves {s} ns; its decomposition {dc} does not add up")
    fixes = w.get("fixes", [])
    wm = w.get("window_replayed_ns") or w.get("window_measured_ns") or 0
    for x in fixes:
        if x["saves_ns"] < 0 or (wm and x["saves_ns"] > wm):
            fail(f"{name}: whatif {x['rule']} saves {x['saves_ns']} of {wm}")
    t = w.get("together")
    if t and fixes:
        best = max(x["saves_ns"] for x in fixes)
        if t["saves_ns"] > wm or t["saves_ns"] < best * 0.99:
            fail(f"{name}: together {t['saves_ns']} ns, the largest alone {best}, window {wm}")
    return n


def main():
    paths = sorted(glob.glob(os.path.join(SRC, "fixtures", "*.json*")) +
                   glob.glob(os.path.join(SRC, "fixtures", "rules", "*.json")))
    if os.path.isdir(SHARED):
        paths += sorted(glob.glob(os.path.join(SHARED, "*.json*")))
    else:
        print("SKIPPED: the real traces: ../shared/traces is absent")
    with tempfile.TemporaryDirectory() as tmp:
        if GEN:
            for i, opts in enumerate((["--workers-us", "3000"], ["--items", "4"],
                                      ["--pageable"], ["--allocs", "8"],
                                      ["--launch-loop", "200"], ["--allreduce-mb", "64"],
                                      ["--side-copies", "4", "--consumer-wait"],
                                      ["--element-loop", "128"],
                                      ["--element-loop", "128", "--element-fix", "gpu"],
                                      ["--workers", "2", "--workers-us", "40000",
                                       "--pin-us", "1000"])):
                out = os.path.join(tmp, f"gen{i}.json")
                r = subprocess.run([GEN, "--steps", "20", "-o", out] + opts,
                                   capture_output=True, text=True)
                if r.returncode == 0:
                    paths.append(out)
        n = sum(check(p) for p in paths)
    print(f"sizing contract: {len(paths)} traces, {n} findings")
    print(f"{n - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
