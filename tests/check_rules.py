#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tracedoc check against PyTorch's own trace validator, on every real trace in
../shared/traces and on the fixtures in fixtures/check/ (each breaks one rule once).

The six rules are torch/profiler/_trace_validator.py's (pytorch/pytorch, main, 2026): taken from
an installed torch when it has them, else the port below, which reads the events as that file
does: the same pairing keys, the same event filters, the same unit of one violation. Per rule,
tracedoc's "violations" must equal the validator's count and "checked" the items it looked at.
usage: check_rules.py TRACEDOC SOURCE_DIR"""
import collections
import glob
import gzip
import json
import os
import subprocess
import sys

TD, SRC = sys.argv[1], sys.argv[2]
SHARED = os.path.join(SRC, "..", "shared", "traces")
failures = []

RECORD_NAMES = {"cudaEventRecord", "cudaEventRecord_ptsz", "cudaEventRecordWithFlags",
                "cudaEventRecordWithFlags_ptsz"}
COMMS_KEYS = {"Collective name", "dtype", "In msg nelems", "Out msg nelems", "Group size"}


def spans(events):
    for e in events:
        if e.get("ph") == "X":
            a = e.get("args", {})
            yield e, a if isinstance(a, dict) else {}


def gpu_kernel_causality(events):
    # per External id: the earliest "kernel" against the earliest cuda_runtime cudaLaunchKernel
    launch, kern = {}, {}
    for e, a in spans(events):
        x = a.get("External id")
        if x is None:
            continue
        if e.get("cat", "") == "cuda_runtime" and e.get("name", "") == "cudaLaunchKernel":
            d = launch
        elif e.get("cat", "") == "kernel":
            d = kern
        else:
            continue
        x, ts = int(x), float(e.get("ts", 0))
        if x not in d or ts < d[x]:
            d[x] = ts
    both = [x for x in kern if x in launch]
    return len(both), sum(1 for x in both if kern[x] < launch[x])


def stream_wait_corr_id_populated(events):
    n = bad = 0
    for e, a in spans(events):
        if a.get("cuda_sync_kind") in ("Stream Wait Event", "Event Sync"):
            n += 1
            r = a.get("wait_on_cuda_event_record_corr_id")
            bad += r is None or int(r) < 0
    return n, bad


def stream_sync_overlap(events):
    # one violation per (Stream Sync, kernel of its stream running when it starts)
    syncs = [(float(e.get("ts", 0)), a.get("device"), a.get("stream")) for e, a in spans(events)
             if e.get("cat") == "cuda_sync" and a.get("cuda_sync_kind") == "Stream Sync"]
    ks = collections.defaultdict(list)
    for e, a in spans(events):
        if e.get("cat") == "kernel":
            ts = float(e.get("ts", 0))
            ks[(a.get("device"), a.get("stream"))].append((ts, ts + float(e.get("dur", 0))))
    bad = sum(1 for ts, dev, st in syncs for s, t in ks.get((dev, st), []) if s < ts < t)
    return len(syncs), bad


def stream_wait_corr_id_in_past(events):
    rec = {}
    for e, a in spans(events):
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("name") in RECORD_NAMES:
            ts = float(e.get("ts", 0))
            for f in ("External id", "correlation"):
                c = a.get(f)
                if c is not None and (int(c) not in rec or ts < rec[int(c)]):
                    rec[int(c)] = ts
    n = bad = 0
    for e, a in spans(events):
        if a.get("cuda_sync_kind") != "Stream Wait Event":
            continue
        r = a.get("wait_on_cuda_event_record_corr_id")
        if r is None or int(r) < 0:
            continue
        n += 1
        t = rec.get(int(r))
        bad += t is None or t > float(e.get("ts", 0))
    return n, bad


def nccl_metadata(events):
    n = bad = 0
    for e, a in spans(events):
        if e.get("name") == "record_param_comms":
            n += 1
            bad += bool(COMMS_KEYS - set(a))
    return n, bad


def backward_seq_id_uniqueness(events):
    ops = collections.defaultdict(set)
    for e, a in spans(events):
        name = e.get("name", "")
        if "autograd::engine::evaluate_function:" not in name:
            continue
        s = a.get("Sequence number") or a.get("seq_num")  # a 0 falls through, as there
        if s is None:
            continue
        ops[int(s)].add(name.split(":", 1)[-1].strip())
    return len(ops), sum(1 for v in ops.values() if len(v) > 1)


RULES = {"check_gpu_kernel_causality": gpu_kernel_causality,
         "check_stream_wait_corr_id_populated": stream_wait_corr_id_populated,
         "check_stream_sync_overlap": stream_sync_overlap,
         "check_stream_wait_corr_id_in_past": stream_wait_corr_id_in_past,
         "check_nccl_metadata": nccl_metadata,
         "check_backward_seq_id_uniqueness": backward_seq_id_uniqueness}

try:  # PyTorch's own rules, when the installed torch has them: only their violation counts
    from torch.profiler import _trace_validator as tv
    OWN = {name: getattr(tv, name) for name in RULES if hasattr(tv, name)}
except ImportError:
    OWN = {}


def events_of(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        d = json.load(f)
    ev = d if isinstance(d, list) else d.get("traceEvents", [])
    return [e for e in ev if isinstance(e, dict)]


def tracedoc_rules(path):
    r = subprocess.run([TD, "check", "--format", "json", path], capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"{path}: exit {r.returncode}: {r.stderr.strip()[:200]}")
        return None
    d = json.loads(r.stdout)
    if d.get("schema") != "tracedoc.check/1":
        failures.append(f"{path}: schema {d.get('schema')}")
    return {x["rule"]: x for x in d["rules"]}


def compare(path, expect_one=None):
    got = tracedoc_rules(path)
    if got is None:
        return
    ev = events_of(path)
    name = os.path.relpath(path, SRC)
    for rule, fn in RULES.items():
        checked, bad = fn(ev)
        if rule in OWN:
            bad = len(OWN[rule](ev))
        g = got.get(rule)
        if g is None or (g["checked"], g["violations"]) != (checked, bad):
            failures.append(f"{name}: {rule}: tracedoc {g and (g['checked'], g['violations'])}"
                            f", validator {(checked, bad)}")
        if expect_one is not None and bad != (1 if rule == expect_one else 0):
            failures.append(f"{name}: the fixture should break {expect_one} once; "
                            f"{rule} finds {bad}")
    print(f"ok {name}" if not any(f.startswith(name) for f in failures) else f"FAIL {name}")


def main():
    fixtures = sorted(glob.glob(os.path.join(SRC, "fixtures", "check", "*.json")))
    for p in fixtures:
        compare(p, expect_one=os.path.basename(p)[:-5])
    if not os.path.isdir(SHARED):
        print(f"skip real traces: {SHARED} is absent (the shared traces sit beside the checkout)")
    else:
        for p in sorted(glob.glob(os.path.join(SHARED, "*.json*")) +
                        glob.glob(os.path.join(SHARED, "dlrm-8rank", "*.json"))):
            compare(p)
    for f in failures:
        print("FAIL " + f)
    print(f"{len(failures)} failures; validator: {'torch' if OWN else 'port'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
