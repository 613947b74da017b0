#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each fix a finding states beside its own, against the run made with that fix: bench/gen_trace
writes a Python loop over a tensor's elements, `total += t[i].cpu()`, and the same loop fixed
each way (--element-fix vec: t.sum(), no loop; cpu: one .cpu() before the loop; gpu: the adds
kept on the GPU). The element-loop finding's "alternatives" (JSON) must promise, each, within
25% of what its run wins per step - measured here from the raw events: the mean ProfilerStep#
span, the first step left out, before less after.

usage: fix_alternatives.py TRACEDOC GEN_TRACE"""
import json
import subprocess
import sys
import tempfile

FIXES = {"vec": "vectorise", "cpu": "copy_once", "gpu": "keep_on_gpu"}


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def mean_step_ns(path):
    """The mean ProfilerStep# span, the first left out (warm-up), from the raw events."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    steps = sorted((e["ts"], e["dur"]) for e in ev
                   if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    durs = [d for _, d in steps[1:]]
    return sum(durs) / len(durs) * 1e3


def element_loops(td, gen, tmp):
    bad = 0
    for n in (4096, 512):
        before = f"{tmp}/loop{n}.json"
        run(gen, "--steps", "8", "--element-loop", str(n), "--single-loader", "-o", before)
        d = json.loads(run(td, "diagnose", "--format", "json", before))
        f = [x for x in d["findings"] if x["rule"] == "element-loop"]
        if not f:
            print(f"FAIL: no element-loop finding over {n} elements")
            bad += 1
            continue
        alts = {x["name"]: x["saving_ns"] for x in f[0].get("alternatives", [])}
        steps = d["window"]["steps"]
        base = mean_step_ns(before)
        for opt, name in FIXES.items():
            after = f"{tmp}/loop{n}-{opt}.json"
            run(gen, "--steps", "8", "--element-loop", str(n), "--element-fix", opt,
                "--single-loader", "-o", after)
            won = base - mean_step_ns(after)
            if name not in alts:
                print(f"FAIL: {n} elements: no alternative {name}: {f[0].get('alternatives')}")
                bad += 1
                continue
            promised = alts[name] / steps
            ratio = promised / won if won > 0 else float("inf")
            ok = abs(ratio - 1) <= 0.25
            print(f"{'ok  ' if ok else 'FAIL'} {n} elements, {name:12} won {won / 1e6:8.2f} "
                  f"ms/step, promised {promised / 1e6:8.2f} ({ratio:.3f}x)")
            bad += not ok
        if f[0]["est_savings_ns"] != alts.get("vectorise"):
            print(f"FAIL: the headline {f[0]['est_savings_ns']} is not the loop removed "
                  f"{alts.get('vectorise')}")
            bad += 1
    return bad


def main():
    td, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        bad = element_loops(td, gen, tmp)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
