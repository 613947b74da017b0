#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each fix a finding states beside its own, against the run made with that fix: bench/gen_trace
writes a Python loop over a tensor's elements, `total += t[i].cpu()`, and the same loop fixed
each way (--element-fix vec: t.sum(), no loop; cpu: one .cpu() before the loop; gpu: the adds
kept on the GPU). The element-loop finding's "alternatives" (JSON) must promise, each, within
25% of what its run wins per step - measured here from the raw events: the mean ProfilerStep#
span, the first steps left out, before less after.

And a DataLoader whose 2 workers cannot keep up (each 40 ms a batch, prefetch_factor 2,
pin_memory=True: a pin thread that pins each batch, calling the CUDA runtime), the workers in
step or drifted apart: the finding's saving (the waits gone) against the same run with 16
workers, its double_workers against 4 (the first 4 steps left out: the pool filling);
and on 3- and 20-step traces of such a pool, a dataloader finding whose saving is within 25% of
the waits the raw events show (each __next__ less the shortest, a ready batch's cost).

usage: fix_alternatives.py TRACEDOC GEN_TRACE"""
import json
import subprocess
import sys
import tempfile

FIXES = {"vec": "vectorise", "cpu": "copy_once", "gpu": "keep_on_gpu"}


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def mean_step_ns(path, skip=1):
    """The mean ProfilerStep# span, the first `skip` left out (warm-up), from the raw events."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    steps = sorted((e["ts"], e["dur"]) for e in ev
                   if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"))
    durs = [d for _, d in steps[skip:]]
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


POOL = ["--workers-us", "40000", "--loader-us", "100", "--pin-us", "1000"]


def loader_spans(path):
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    return [e["dur"] * 1e3 for e in ev
            if e.get("ph") == "X" and e["name"].startswith("enumerate(DataLoader)#")]


def loader_finding(td, path):
    d = json.loads(run(td, "diagnose", "--format", "json", path))
    f = [x for x in d["findings"] if x["rule"] == "dataloader"]
    return d, (f[0] if f else None)


def pool(td, gen, tmp):
    bad = 0
    # in step (2 batches at a time: every other __next__ gets a ready one), and drifted apart
    # (--pool-stagger: each batch comes alone, every __next__ waits, the shortest too)
    # and a pin thread slower than the loop (8 ms a batch): it holds the pace after the fix
    for how, extra in (("in step", []), ("apart", ["--pool-stagger"]),
                       ("pin 8ms", ["--pin-us", "8000"])):
        paths = {}
        for k in (2, 4, 16):
            paths[k] = f"{tmp}/pool{k}.json"
            run(gen, "--steps", "40", "--workers", str(k), *POOL, *extra, "-o", paths[k])
        d, f = loader_finding(td, paths[2])
        if not f:
            print(f"FAIL: no dataloader finding for 2 workers ({how}) that cannot keep up")
            bad += 1
            continue
        alts = {x["name"]: x["saving_ns"] for x in f.get("alternatives", [])}
        base = mean_step_ns(paths[2], 4)
        for k, name, promised in ((16, "the waits gone", f["est_savings_ns"]),
                                  (4, "double_workers", alts.get("double_workers", 0))):
            won = base - mean_step_ns(paths[k], 4)
            per = promised / d["window"]["steps"]
            ratio = per / won if won > 0 else float("inf")
            ok = abs(ratio - 1) <= 0.25
            print(f"{'ok  ' if ok else 'FAIL'} 2 workers ({how:7}) -> {k:2}: {name:15} won "
                  f"{won / 1e6:7.2f} ms/step, promised {per / 1e6:7.2f} ({ratio:.3f}x)")
            bad += not ok
    for steps in (3, 20):
        path = f"{tmp}/pool-{steps}.json"
        run(gen, "--steps", str(steps), "--workers", "2", *POOL, "-o", path)
        spans = loader_spans(path)
        waits = sum(x - min(spans) for x in spans)
        d, f = loader_finding(td, path)
        saved = f["est_savings_ns"] if f else 0
        ratio = saved / waits if waits else float("inf")
        ok = f is not None and abs(ratio - 1) <= 0.25
        print(f"{'ok  ' if ok else 'FAIL'} {steps} steps of 2 workers that cannot keep up: "
              f"waits {waits / 1e6:.1f} ms, the finding saves {saved / 1e6:.1f} ({ratio:.3f}x)")
        bad += not ok
    return bad


def main():
    td, gen = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        bad = element_loops(td, gen, tmp) + pool(td, gen, tmp)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
