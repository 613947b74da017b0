#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An annotated trace: the input's bytes whole with one insertion, tracedoc stats reading it
back with the input's counts plus the added events, and every added event as Perfetto's JSON
importer wants it (ph, ts, pid, tid; X with a non-negative dur; counters as ph C with numbers).
Slices on one track must nest or be disjoint.
usage: annotate_check.py TRACEDOC INPUT OUTPUT STDERR_OF_ANNOTATE"""
import gzip
from decimal import Decimal
import json
import re
import subprocess
import sys


def raw(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return subprocess.run(["zstd", "-dc", path], capture_output=True, check=True).stdout
    return data


def common_prefix(a, b):
    """The length of the bytes a and b start with: slices compared in C, halving the span."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # a[:lo] == b[:lo]; the first difference is below hi
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def stats(td, path):
    out = subprocess.run([td, "stats", "--format", "json", path], capture_output=True, check=True)
    return json.loads(out.stdout)


def main():
    td, src, dst, err = sys.argv[1:5]
    m = re.search(r"added (\d+) events \((\d+) idle gaps, (\d+) finding slices, (\d+) counter "
                  r"samples, (\d+) metadata\) in process (\d+)", open(err).read())
    if not m:
        print("  no count of added events")
        return 1
    n, gaps, slices, counters, meta, pid = map(int, m.groups())
    problems = []
    a, b = raw(src), raw(dst)
    i = common_prefix(a, b)
    if not b.endswith(a[i:]) or len(b) <= len(a):
        problems.append("the input is not kept whole around one insertion")
    s0, s1 = stats(td, src), stats(td, dst)
    if s1["events"] != s0["events"] + n:
        problems.append(f"stats reads {s1['events']} events, not {s0['events']} + {n}")
    for kind, extra in (("counter", counters), ("metadata", meta), ("other_span", gaps + slices)):
        if s1["by_kind"].get(kind, 0) != s0["by_kind"].get(kind, 0) + extra:
            problems.append(f"{kind}: {s1['by_kind'].get(kind, 0)} != "
                            f"{s0['by_kind'].get(kind, 0)} + {extra}")
    doc = json.loads(b, parse_float=Decimal)  # exact: ns past 2^53 stay ns
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    added = [e for e in events if isinstance(e, dict) and e.get("pid") == pid]
    if len(added) != n:
        problems.append(f"{len(added)} events in process {pid}, not {n}")
    for e in added:
        if not all(k in e for k in ("ph", "ts", "pid", "tid")):
            problems.append(f"missing keys: {e}")
        elif e["ph"] == "X" and not (isinstance(e.get("dur"), (int, Decimal)) and e["dur"] >= 0):
            problems.append(f"bad dur: {e}")
        elif e["ph"] == "C" and not all(isinstance(v, (int, Decimal)) for v in e.get("args", {}).values()):
            problems.append(f"bad counter: {e}")
        elif e["ph"] not in ("X", "C", "M"):
            problems.append(f"unexpected ph: {e}")
        if len(problems) > 5:
            break
    # slices on one track (pid, tid) nest or are disjoint: Perfetto refuses others on import
    tracks = {}
    for e in added:
        if e["ph"] == "X":
            tracks.setdefault(e["tid"], []).append((Decimal(e["ts"]), Decimal(e["ts"]) + Decimal(e["dur"]), e["name"]))
    for tid, v in tracks.items():
        v.sort(key=lambda x: (x[0], -x[1]))
        open_ends = []
        for s_, e_, name in v:
            while open_ends and open_ends[-1] <= s_:
                open_ends.pop()
            if open_ends and e_ > open_ends[-1]:
                problems.append(f"track {tid}: {name[:60]} [{s_}, {e_}) overlaps a slice "
                                f"ending at {open_ends[-1]} without nesting")
                break
            open_ends.append(e_)
    for p in problems:
        print(f"  {src}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
