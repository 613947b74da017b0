#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every real trace in ../shared/traces: `tracedoc stats --format json` must equal an independent
computation made here with Python's json module (times exact through Decimal): the number of
traceEvents elements, the kernel/memcpy/memset/cpu_op/runtime counts, and per device the op
count, busy_ns (union of kernel+memcpy+memset intervals, first op start to last op end) and
busy_fraction. Skips with a message when ../shared is absent.
usage: real_traces.py TRACEDOC REPO_ROOT"""
import gzip
import json
import os
import statistics
import subprocess
import tempfile
import sys
from decimal import Decimal

GPU = {"kernel": "kernel", "gpu_memcpy": "memcpy", "memcpy": "memcpy", "gpu_memset": "memset",
       "memset": "memset"}
CPU = {"cpu_op", "operator"}
RUNTIME = {"cuda_runtime", "cuda_driver", "runtime"}


def ns(v):
    return int(Decimal(str(v)) * 1000) if not isinstance(v, int) else v * 1000


def reference(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        doc = json.load(f, parse_float=Decimal)
    events = doc if isinstance(doc, list) else doc["traceEvents"]
    kinds = {"kernel": 0, "memcpy": 0, "memset": 0, "cpu_op": 0, "runtime": 0}
    ivs = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X":
            continue
        cat = str(e.get("cat", "")).lower()
        if cat in CPU:
            kinds["cpu_op"] += 1
        elif cat in RUNTIME:
            kinds["runtime"] += 1
        if cat not in GPU:
            continue
        kinds[GPU[cat]] += 1
        dev = e.get("args", {}).get("device", e.get("pid"))
        s = ns(e["ts"])
        ivs.setdefault(dev, []).append((s, s + ns(e.get("dur", 0))))
    devices = {}
    for dev, iv in ivs.items():
        iv.sort()
        busy, cs, ce = 0, None, None
        for s, e in iv:
            if cs is not None and s <= ce:
                ce = max(ce, e)
                continue
            if cs is not None:
                busy += ce - cs
            cs, ce = s, e
        busy += ce - cs
        span = max(e for _, e in iv) - min(s for s, _ in iv)
        devices[dev] = {"ops": len(iv), "busy_ns": busy, "span_ns": span,
                        "busy_fraction": round(busy / span, 6) if span else 0.0}
    return len(events), kinds, devices


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def union(iv, lo, hi):
    out = []
    for s, e in sorted(iv):
        s, e = max(s, lo), min(e, hi)
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def overlap(a, b):
    i = j = total = 0
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if e > s:
            total += e - s
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def communication_reference(path):
    """Collective time, its overlap with compute and the exposed rest over the steady state:
    the ProfilerStep# span on the host, run on to the end of the GPU work its steps launched.
    Collectives are kernels whose name holds nccl; compute the other kernels."""
    ev = [e for e in load(path) if isinstance(e, dict) and e.get("ph") == "X"]
    steps = [e for e in ev if str(e.get("name", "")).startswith("ProfilerStep#")]
    hs = min(ns(e["ts"]) for e in steps)
    he = max(ns(e["ts"]) + ns(e.get("dur", 0)) for e in steps)
    launch = {e["args"]["correlation"]: ns(e["ts"]) for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    we = he
    for e in ev:
        if e.get("cat") in GPU and hs <= launch.get(e.get("args", {}).get("correlation"), -1) < he:
            we = max(we, ns(e["ts"]) + ns(e.get("dur", 0)))
    comm = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels
                  if "nccl" in e["name"].lower()], hs, we)
    comp = union([(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in kernels
                  if "nccl" not in e["name"].lower()], hs, we)
    c = sum(e - s for s, e in comm)
    o = overlap(comm, comp)
    return {"comm_ns": c, "overlap_ns": o, "exposed_ns": c - o, "steps": len(steps)}


def check_communication(tracedoc, path):
    """The collectives' time, overlap and exposed rest against the reference, as the rank's
    summary gives them (whether or not a finding is left: one whose collectives are off the
    critical path wins nothing); the finding, where there is one, says the same and is sized
    by the idle it claims or, replayed with the collectives free, by no more."""
    ref, problems = communication_reference(path), []
    with tempfile.TemporaryDirectory() as tmp:
        dst = os.path.join(tmp, "s.json")
        out = subprocess.run([tracedoc, "summarize", path, "-o", dst], capture_output=True)
        if out.returncode != 0:
            return [f"summarize exit {out.returncode}"]
        with open(dst) as f:
            summ = json.load(f)
    have = {"comm_ns": summ["comm_ns"], "exposed_ns": summ["exposed_comm_ns"],
            "overlap_ns": summ["comm_ns"] - summ["exposed_comm_ns"]}
    for key in ("comm_ns", "overlap_ns", "exposed_ns"):
        if have[key] != ref[key]:
            problems.append(f"summary {key} {have[key]} != {ref[key]}")
    out = subprocess.run([tracedoc, "diagnose", "--format", "json", path], capture_output=True)
    if out.returncode != 0:
        return problems + [f"diagnose exit {out.returncode}"]
    got = [f for f in json.loads(out.stdout)["findings"] if f["rule"] == "communication"]
    if not got:
        return problems
    vals = got[0]["values"]
    for key, want in ref.items():
        if vals.get(key) != want:
            problems.append(f"communication {key} {vals.get(key)} != {want}")
    per = got[0]["est_savings_per_step_ns"]
    claim = (got[0]["gpu_idle_ns"] + ref["exposed_ns"]) // ref["steps"]
    if got[0]["sizing"] == "idle" and per != claim:
        problems.append(f"communication per step {per} != {claim}")
    if got[0]["sizing"] == "bound" and not (0 < per < claim or (per == 0 and got[0]["advice"])):
        problems.append(f"communication per step {per}, bound, not under its claim {claim} "
                        "nor a note off the critical path")
    return problems


GPU_TRACK = set(GPU) | {"cuda_sync", "hip_sync", "gpu_user_annotation"}
OPS = {"cpu_op", "operator", "user_annotation"}


def load_doc(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc if isinstance(doc, list) else doc["traceEvents"]


def kind(cat):
    """The model's order at equal start and length: annotation, Python, op, runtime, other."""
    c = (cat or "").lower()
    return {"user_annotation": 0, "python_function": 1, "python": 1, "cpu_op": 2,
            "operator": 2}.get(c, 3 if c in RUNTIME else 4)


def tid_norm(v):
    return int(v) if isinstance(v, str) and v.isdigit() else v


def ops_reference(path):
    """The ops table by its definitions (docs/tables.md), for --window all: CPU-track spans per thread
    sorted as the model sorts them (start, longer first, annotation > Python > op > runtime,
    then the file's order), parents by containment, runtime calls to GPU ops by
    correlation (the first runtime call of an id)."""
    events = load_doc(path)
    tracks = {}
    gpu = []
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        cat = (e.get("cat") or "").lower()
        if cat in GPU_TRACK:
            if cat in GPU:
                gpu.append(e)
            continue
        key = (tid_norm(e.get("pid")), tid_norm(e.get("tid")))
        tracks.setdefault(key, []).append(e)
    parent = {}
    runtime_by_corr = {}
    for key, evs in tracks.items():
        for e in evs:
            e["_ts"] = ns(e["ts"]); d = ns(e.get("dur", 0)) if "dur" in e else 0
            e["_dur"] = max(d, 0); e["_end"] = e["_ts"] + e["_dur"]
        # stable: events of one start, length and kind keep the file's order
        evs.sort(key=lambda e: (e["_ts"], -e["_dur"], kind(e.get("cat"))))
        stack = []
        for e in evs:
            while stack and not (e["_ts"] >= stack[-1]["_ts"] and e["_end"] <= stack[-1]["_end"]):
                stack.pop()
            parent[id(e)] = stack[-1] if stack else None
            stack.append(e)
            if kind(e.get("cat")) == 3 and "correlation" in e.get("args", {}):
                runtime_by_corr.setdefault(e["args"]["correlation"], e)
    def op_parent(e):
        p = parent[id(e)]
        while p is not None and (p.get("cat") or "").lower() not in OPS:
            p = parent[id(p)]
        return p
    rows = {}
    selfs = {}
    def name_of(e):
        n = e.get("name", "")
        return "ProfilerStep*" if n.startswith("ProfilerStep#") else n
    allops = [e for evs in tracks.values() for e in evs if (e.get("cat") or "").lower() in OPS]
    for e in allops:
        r = rows.setdefault(name_of(e), dict(calls=0, self_cpu=0, cpu_total=0, self_cuda=0, cuda_total=0))
        r["calls"] += 1; r["cpu_total"] += e["_dur"]
        selfs[id(e)] = e["_dur"]
    for e in allops:
        p = op_parent(e)
        if p is not None: selfs[id(p)] -= e["_dur"]
    for e in allops:
        rows[name_of(e)]["self_cpu"] += max(selfs[id(e)], 0)
    for g in gpu:
        c = g.get("args", {}).get("correlation")
        r = runtime_by_corr.get(c)
        if r is None: continue
        o = op_parent(r)
        if o is None: continue
        d = max(ns(g.get("dur", 0)), 0)
        rows[name_of(o)]["self_cuda"] += d
        while o is not None:
            rows[name_of(o)]["cuda_total"] += d
            o = op_parent(o)
    return rows


def kernels_reference(path):
    """Per GPU op name: calls, total, min, max (--window all)."""
    events = load_doc(path)
    rows = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or "ts" not in e:
            continue
        if (e.get("cat") or "").lower() not in GPU:
            continue
        d = max(ns(e["dur"]), 0) if "dur" in e else 0
        r = rows.setdefault(e.get("name", ""), dict(calls=0, total=0, min=d, max=d, durs=[], regs=None))
        r["calls"] += 1; r["total"] += d; r["min"] = min(r["min"], d); r["max"] = max(r["max"], d)
        r["durs"].append(d)
        a = e.get("args", {})
        if (e.get("cat") or "").lower() == "kernel" and isinstance(a.get("registers per thread"), int):
            r["regs"] = max(r["regs"] or 0, a["registers per thread"])
    for r in rows.values():
        v = sorted(r.pop("durs"))
        n = len(v)
        r["median"] = v[n // 2] if n % 2 else v[n // 2 - 1] // 2 + v[n // 2] // 2 + (v[n // 2 - 1] % 2 + v[n // 2] % 2) // 2
        # the sample standard deviation, as pandas (and HTA) compute it
        r["stddev"] = round(statistics.stdev(v)) if n > 1 else None
    return rows


def check_tables(tracedoc, path):
    """tracedoc ops and kernels (--window all, json) against ops_reference, kernels_reference:
    every row, every value."""
    problems = []
    for cmd, ref, cols in (("ops", ops_reference(path), (("calls", "calls"), ("self_cpu", "self_cpu_ns"),
                                                         ("cpu_total", "cpu_total_ns"), ("self_cuda", "self_cuda_ns"),
                                                         ("cuda_total", "cuda_total_ns"))),
                           ("kernels", kernels_reference(path), (("calls", "calls"), ("total", "total_ns"),
                                                                 ("min", "min_ns"), ("max", "max_ns"),
                                                                 ("median", "median_ns"), ("stddev", "stddev_ns"),
                                                                 ("regs", "registers")))):
        # ops as tracedoc folds it (PyTorch's own rows: tests/torch_tables.py)
        out = subprocess.run([tracedoc, cmd, "--window", "all", "--format", "json", path]
                             + (["--fold-runtime"] if cmd == "ops" else []), capture_output=True)
        if out.returncode != 0:
            problems.append(f"{cmd} exit {out.returncode}")
            continue
        got = {r["name"]: r for r in json.loads(out.stdout)["rows"]}
        if set(got) != set(ref):
            problems.append(f"{cmd}: names differ: {sorted(set(got) ^ set(ref))[:3]}")
        for name, r in ref.items():
            for k, gk in cols:
                # a trace without GPU ops has no CUDA columns: 0 by the reference; an
                # absent kernels value (one call's stddev, no registers) is None
                want = r[k]
                if name in got and got[name].get(gk, 0 if cmd == "ops" else None) != want:
                    problems.append(f"{cmd} {name[:40]} {gk} {got[name].get(gk)} != {r[k]}")
    return problems[:8]


def check_memory(tracedoc, path):
    """tracedoc memory: each device's peak of Total Allocated and Total Reserved equal the
    largest values of its [memory] samples (Device Type 1)."""
    want = {}
    for e in load_doc(path):
        if isinstance(e, dict) and e.get("name") == "[memory]":
            a = e.get("args", {})
            if a.get("Device Type") == 1 and "Total Allocated" in a:
                w = want.setdefault(a["Device Id"], [-1, -1])
                w[0] = max(w[0], a["Total Allocated"])
                w[1] = max(w[1], a.get("Total Reserved", -1))
    out = subprocess.run([tracedoc, "memory", "--format", "json", path], capture_output=True)
    if out.returncode != 0:
        return [f"memory exit {out.returncode}"]
    got = {d["id"]: [d["peak_allocated_bytes"], d["peak_reserved_bytes"]]
           for d in json.loads(out.stdout)["devices"] if d["id"] >= 0}
    return [] if got == want else [f"memory peaks {got} != {want}"]


def check_diff(tracedoc, base, cur):
    """tracedoc diff of resnet50 without workers against with them: the DataLoader first."""
    out = subprocess.run([tracedoc, "diff", "--format", "json", base, cur], capture_output=True)
    if out.returncode != 0:
        return [f"diff exit {out.returncode}"]
    d = json.loads(out.stdout)
    why = [d["rows"][i]["name"] for i in d["why"]]
    if not why or not why[0].startswith("enumerate(DataLoader)"):
        return [f"diff names {why[:2]} first, not the DataLoader"]
    if d["step_change_ns"] >= 0:
        return [f"diff: with workers the step is not shorter ({d['step_change_ns']})"]
    return []


def median(v):
    """tracedoc's median: the mean of the two middle values rounded down, for an even count."""
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else v[n // 2 - 1] + (v[n // 2] - v[n // 2 - 1]) // 2


def job_reference(paths):
    """Per rank, its NCCL kernels in the steady-state window (first step start to the end of
    the GPU work its steps launched), matched across ranks by name and order: the rank with
    the shortest kernel arrived last; the others wait (their duration - the shortest); the
    median rank waits (median - shortest) for the last one."""
    per = {}
    for p in paths:
        ev = [e for e in load(p) if e.get("ph") == "X"]
        rank = int(os.path.basename(p).split("_")[0].replace("worker", ""))
        steps = [e for e in ev if e["name"].startswith("ProfilerStep#")]
        hs = min(ns(e["ts"]) for e in steps)
        he = max(ns(e["ts"]) + ns(e["dur"]) for e in steps)
        rt = {e["args"]["correlation"]: e for e in ev if e.get("cat") in RUNTIME
              and "correlation" in e.get("args", {})}
        we = he
        for g in ev:
            r = rt.get(g.get("args", {}).get("correlation")) if GPU.get(g.get("cat")) else None
            if r and hs <= ns(r["ts"]) < he:
                we = max(we, ns(g["ts"]) + ns(g["dur"]))
        nccl = sorted((ns(e["ts"]), ns(e["dur"]), e["name"]) for e in ev
                      if e.get("cat") == "kernel" and "nccl" in e["name"].lower()
                      and hs <= ns(e["ts"]) < we)
        seq, lst = {}, {}
        for ts, dur, name in nccl:
            lst[(name, seq.get(name, 0))] = dur
            seq[name] = seq.get(name, 0) + 1
        per[rank] = lst
    wait = {r: 0 for r in per}
    late = {r: 0 for r in per}
    count = {r: 0 for r in per}
    for key in set().union(*per.values()):
        if not all(key in per[r] for r in per):
            continue
        durs = {r: per[r][key] for r in per}
        last = min(durs, key=lambda r: (durs[r], r))
        for r in per:
            wait[r] += durs[r] - durs[last]
        late[last] += median(durs.values()) - durs[last]
        count[last] += 1
    return wait, late, count


def check_job(tracedoc, sub):
    """diagnose DIR on the 8-rank DLRM job against job_reference; the same report from the
    ranks' summaries; each rank's row against its own diagnose."""
    paths = sorted(os.path.join(sub, f) for f in os.listdir(sub) if f.endswith(".json"))
    out = subprocess.run([tracedoc, "diagnose", "--format", "json", sub], capture_output=True)
    if out.returncode != 0:
        return [f"diagnose DIR exit {out.returncode}: {out.stderr.decode(errors='replace')}"]
    job, problems = json.loads(out.stdout), []
    wait, late, count = job_reference(paths)
    rows = {r["rank"]: r for r in job["ranks"]}
    for r in wait:
        for key, want in (("collective_wait_ns", wait[r]), ("late_ns", late[r]),
                          ("late_collectives", count[r])):
            if rows[r][key] != want:
                problems.append(f"rank {r} {key} {rows[r][key]} != {want}")
    want_rank = max(late, key=lambda r: (late[r], -r))
    st = [f for f in job["findings"] if f["rule"] == "straggler"]
    if not st or st[0]["values"]["rank"] != want_rank or st[0]["values"]["wait_ns"] != late[want_rank]:
        problems.append(f"straggler {st[0]['values'] if st else None} != rank {want_rank} "
                        f"waited for {late[want_rank]}")
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            dst = os.path.join(tmp, os.path.basename(p) + ".summary.json")
            subprocess.run([tracedoc, "summarize", p, "-o", dst], check=True)
        again = subprocess.run([tracedoc, "diagnose", "--format", "json", tmp],
                               capture_output=True)
        if again.stdout != out.stdout:
            problems.append("the job from summaries differs from the job from traces")
    for p in paths[:2]:
        one = json.loads(subprocess.run([tracedoc, "diagnose", "--format", "json", p],
                                        capture_output=True).stdout)
        r = one["trace"].get("rank")
        comm = [f for f in one["findings"] if f["rule"] == "communication"]
        dev = one["devices"][0]
        if comm and rows[r]["exposed_comm_ns"] != comm[0]["values"]["exposed_ns"]:
            problems.append(f"rank {r} exposed {rows[r]['exposed_comm_ns']} != its own "
                            f"{comm[0]['values']['exposed_ns']}")
        if abs(rows[r]["busy_fraction"] - dev["busy_fraction"]) > 1e-6:
            problems.append(f"rank {r} busy {rows[r]['busy_fraction']} != {dev['busy_fraction']}")
    return problems


def main():
    tracedoc, root = sys.argv[1], sys.argv[2]
    tdir = os.path.normpath(os.path.join(root, "..", "shared", "traces"))
    if not os.path.isdir(tdir):
        print(f"SKIPPED: {tdir} not found; real-trace checks need ../shared beside the checkout")
        return 0
    paths = sorted(os.path.join(tdir, f) for f in os.listdir(tdir) if f.endswith(".json.gz"))
    sub = os.path.join(tdir, "dlrm-8rank")
    if os.path.isdir(sub):
        paths += sorted(os.path.join(sub, f) for f in os.listdir(sub) if f.endswith(".json"))
    passed = failed = 0
    for p in paths:
        out = subprocess.run([tracedoc, "stats", "--format", "json", p], capture_output=True)
        problems = []
        if out.returncode != 0:
            problems.append(f"exit {out.returncode}: {out.stderr.decode(errors='replace')}")
        else:
            got = json.loads(out.stdout)
            n, kinds, devices = reference(p)
            if got["events"] != n:
                problems.append(f"events {got['events']} != {n}")
            if got["partial"]:
                problems.append("marked partial")
            for k, v in kinds.items():
                if got["by_kind"].get(k, 0) != v:
                    problems.append(f"{k} {got['by_kind'].get(k, 0)} != {v}")
            gdev = {d["id"]: d for d in got["devices"]}
            if sorted(gdev) != sorted(devices):
                problems.append(f"devices {sorted(gdev)} != {sorted(devices)}")
            for dev, ref in devices.items():
                g = gdev.get(dev, {})
                for key in ("ops", "busy_ns", "span_ns"):
                    if g.get(key) != ref[key]:
                        problems.append(f"device {dev} {key} {g.get(key)} != {ref[key]}")
                if abs(float(g.get("busy_fraction", -1)) - ref["busy_fraction"]) > 1.5e-6:
                    problems.append(f"device {dev} busy_fraction {g.get('busy_fraction')} != "
                                    f"{ref['busy_fraction']}")
        name = os.path.relpath(p, tdir)
        if not problems and p.endswith(".gz"):
            problems += check_tables(tracedoc, p)
        if not problems and os.path.basename(p) == "ddp-v100-rank1.json.gz":
            problems += check_memory(tracedoc, p)
        if not problems and os.path.basename(p) == "resnet50-nw0.pt.trace.json.gz":
            problems += check_diff(tracedoc, p, p.replace("nw0", "nw4"))
        if not problems and os.path.basename(p) in ("ddp-v100-rank1.json.gz",
                                                     "dlrm-v100-rank1.json.gz"):
            problems += check_communication(tracedoc, p)
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
        else:
            passed += 1
            print(f"ok   {name}")
    if os.path.isdir(sub):
        problems = check_job(tracedoc, sub)
        if problems:
            failed += 1
            print("FAIL dlrm-8rank job: " + "; ".join(problems))
        else:
            passed += 1
            print("ok   dlrm-8rank job (straggler, waits, summaries, rows)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
