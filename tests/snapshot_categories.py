#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A snapshot's live memory by category (PyTorch's memory profiler's: parameter, gradient,
optimizer state, activation, autograd detail, unknown), each with the rule that inferred it:
the rules (docs/tables.md) written again here over the raw dict, independently of tracedoc, and
the replay done again, then compared with `tracedoc memory --format json` at the peak and at
each oom, and with `tracedoc memory A B`'s categories. On the real snapshots in
../shared/traces/snapshots (skipped with a message when absent) and on a made-up one that
takes every rule (as a pickle and as JSON: the same report).
usage: snapshot_categories.py TRACEDOC REPO_ROOT"""
import json
import os
import pickle
import subprocess
import sys
import tempfile

TD, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SHARED = os.path.join(ROOT, "..", "shared", "traces", "snapshots")
MB = 1 << 20
fails = 0

CATS = ["unknown", "parameter", "gradient", "optimizer state", "activation", "autograd detail"]
UNK, PARAM, GRAD, OPTIM, ACT, AUTOGRAD = range(6)
RULES = ["no-frames", "frames", "user_metadata", "frame:optimizer", "frame:AccumulateGrad",
         "frame:backward", "frame:parameter", "compile_context", "frame:forward",
         "annotation:Optimizer.step", "no-frames:engine", "life:gradient",
         "annotation:Optimizer.zero_grad", "annotation:Optimizer.step-free", "life:persistent",
         "before-trace"]
(NO_FRAMES, FRAMES, META, R_OPTIM, ACCUM, BACKWARD, R_PARAM, COMPILE, FORWARD, STEP, ENGINE,
 GRAD_LIFE, ZERO_GRAD, STEP_FREE, PERSIST, BEFORE) = range(16)
MODULE_PARAM = {"_apply", "to", "cuda", "convert", "to_empty", "load_state_dict",
                "_load_from_state_dict", "register_parameter", "half", "float", "bfloat16",
                "double", "type"}


def bad(msg):
    global fails
    fails += 1
    print("FAIL", msg)


def text(v, cap):
    """a string field as the reader keeps it: its first cap bytes"""
    if isinstance(v, bytes):
        v = v.decode("latin-1")
    return v[:cap] if isinstance(v, str) else ""


def frame_rule(fr):
    """(category, rule) of one frame, or None"""
    file = text(fr.get("filename"), 511)
    name = text(fr.get("name"), 255)
    if "AccumulateGrad" in file or "AccumulateGrad" in name:
        return GRAD, ACCUM
    if "torch::autograd::Engine::" in file or "torch::autograd::Engine::" in name:
        return AUTOGRAD, BACKWARD
    path = file.replace("\\", "/")
    base = path.rsplit("/", 1)[-1]
    if ("torch/optim/" in path and name != "zero_grad") or (name == "step" and "optim" in base.lower()):
        return OPTIM, R_OPTIM
    if name in ("backward", "_engine_run_backward"):
        return AUTOGRAD, BACKWARD
    if (("torch/nn/modules/module.py" in path and name in MODULE_PARAM)
            or name in ("load_state_dict", "_load_from_state_dict", "reset_parameters")
            or "torch/nn/init.py" in path or "torch/nn/parameter.py" in path
            or ("torch/nn/modules/" in path and name == "__init__")):
        return PARAM, R_PARAM
    if name == "forward" or ("torch/nn/modules/module.py" in path
                             and name in ("_call_impl", "_wrapped_call_impl")):
        return ACT, FORWARD
    return None


def word_cat(t):
    t = t.lower()
    for words, c in ((("optim",), OPTIM), (("grad",), GRAD), (("param", "weight"), PARAM),
                     (("activation",), ACT)):
        if any(w in t for w in words):
            return c
    return None


def merge(cur, h):
    """the stronger hint: a telling rule (>= 2) over none, the lower rule first"""
    if h[1] >= 2:
        return h if cur[1] < 2 or h[1] < cur[1] else cur
    return h if h[1] > cur[1] else cur


def hint(obj, with_keys):
    h = (UNK, NO_FRAMES)
    if with_keys:
        m = text(obj.get("user_metadata"), 255)
        c = word_cat(m) if m else None
        if c is not None:
            h = merge(h, (c, META))
        cc = text(obj.get("compile_context"), 255).lower()
        for w, c in (("backward", AUTOGRAD), ("optim", OPTIM), ("forward", ACT)):
            if w in cc:
                h = merge(h, (c, COMPILE))
                break
    for fr in obj.get("frames") or []:
        h = merge(h, frame_rule(fr) or (UNK, FRAMES))
    return h


def windows(d, device):
    """per kind (0 step, 1 zero_grad): [(time, is START)] in time order"""
    w = {0: [], 1: []}
    for i, a in enumerate(d.get("external_annotations") or []):
        name, stage, t = a.get("name", ""), a.get("stage", ""), a.get("time_us")
        k = 0 if name.startswith("Optimizer.step#") else 1 if name.startswith("Optimizer.zero_grad#") else None
        if k is None or stage not in ("START", "END") or t is None or t < 0:
            continue
        if a.get("device", 0) == device:
            w[k].append((t, i, stage == "START"))
    return {k: sorted(v) for k, v in w.items()}


def inside(w, kind, t):
    if t is None or t < 0:
        return False
    last = None
    for x in w[kind]:
        if x[0] <= t:
            last = x
    return bool(last and last[2])


def expected(d):
    """per device: categories at the peak, and at each oom: {cat: [bytes, blocks, {rule: [b, n]}]}"""
    segs = d if isinstance(d, list) else d.get("segments", [])
    traces = [] if isinstance(d, list) else d.get("device_traces", [])
    blocks = {}
    for s in segs:
        for b in s.get("blocks", []):
            if b.get("state") in ("active_allocated", "active_pending_free"):
                blocks.setdefault(s.get("device", 0), []).append((b["address"], b["size"], hint(b, False)))
    frames = any(h[1] != NO_FRAMES for v in blocks.values() for _, _, h in v) or \
        any(hint(e, True)[1] != NO_FRAMES for tr in traces for e in tr)
    out = {}
    for dev, tr in enumerate(traces):
        if not tr:
            continue
        w = windows(d, dev)
        known, start = {}, {}
        for e in tr:
            if e["action"] == "alloc":
                known[e["addr"]] = 1
            elif e["action"] == "free_completed":
                if e["addr"] in known:
                    del known[e["addr"]]
                elif e["addr"] not in start:
                    t = e.get("time_us")
                    h = (GRAD, ZERO_GRAD) if inside(w, 1, t) else (OPTIM, STEP_FREE) if inside(w, 0, t) \
                        else (UNK, BEFORE)
                    start[e["addr"]] = (e["size"], h)
        for a, sz, h in blocks.get(dev, []):
            if a not in known and a not in start:
                start[a] = (sz, h if h[1] >= META else (PARAM, PERSIST))
        live = dict(start)
        total = peak = sum(v[0] for v in live.values())

        def cats():
            c = {}
            for sz, h in live.values():
                x = c.setdefault(CATS[h[0]], [0, 0, {}])
                x[0] += sz
                x[1] += 1
                r = x[2].setdefault(RULES[h[1]], [0, 0])
                r[0] += sz
                r[1] += 1
            return c

        at_peak, ooms, steps = cats(), [], [x for x in w[0]]
        for e in tr:
            t = e.get("time_us")
            while t is not None and t >= 0 and steps and steps[0][0] <= t:
                if steps.pop(0)[2]:  # Optimizer.step begins: backward's live blocks are gradients
                    for a, (sz, h) in list(live.items()):
                        if h[0] == AUTOGRAD and h[1] in (BACKWARD, ENGINE, COMPILE):
                            live[a] = (sz, (GRAD, GRAD_LIFE))
            if e["action"] == "alloc":
                h = hint(e, True)
                if h[1] < META:
                    h = (OPTIM, STEP) if inside(w, 0, t) else (AUTOGRAD, ENGINE) \
                        if h[1] == NO_FRAMES and frames else (UNK, h[1])
                if e["addr"] in live:
                    total -= live[e["addr"]][0]
                live[e["addr"]] = (e["size"], h)
                total += e["size"]
            elif e["action"] == "free_completed" and e["addr"] in live:
                total -= live.pop(e["addr"])[0]
            elif e["action"] == "oom":
                ooms.append(cats())
            if e["action"] in ("alloc", "free_completed") and total > peak:
                peak = total
                at_peak = cats()
        out[dev] = (at_peak, ooms)
    return out


def got_cats(lst):
    return {c["category"]: [c["bytes"], c["blocks"],
                            {r["rule"]: [r["bytes"], r["blocks"]] for r in c["inferred_by"]}]
            for c in lst}


def report(path, *more):
    r = subprocess.run([TD, "memory", "--format", "json", path, *more], capture_output=True)
    if r.returncode:
        bad(f"{path}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return None
    return json.loads(r.stdout)


def check(name, path, d):
    rep = report(path)
    if rep is None:
        return None
    want = expected(d)
    devs = {x["id"]: x for x in rep["devices"]}
    for dev, (peak, ooms) in want.items():
        g = devs.get(dev)
        if g is None:
            bad(f"{name}: no device {dev}")
            continue
        if got_cats(g["peak_categories"]) != peak:
            bad(f"{name}: device {dev} at the peak: tracedoc {got_cats(g['peak_categories'])}, "
                f"the raw dict {peak}")
        gooms = [got_cats(o["live_categories"]) for o in g["ooms"]]
        if gooms != ooms:
            bad(f"{name}: device {dev} at its ooms: tracedoc {gooms}, the raw dict {ooms}")
        for c, (b, n, _) in sorted(peak.items(), key=lambda x: -x[1][0]):
            print(f"  {name} GPU {dev} at the peak: {c} {b} bytes in {n} blocks")
    return want


def frame(f, line, name):
    return {"filename": f, "line": line, "name": name}


def made_up():
    """every rule once: parameters made by .to(), AdamW state, forward activations, backward's
    temporaries and gradients (Python and C++ frames, no frames), user_metadata and
    compile_context, blocks from before the trace freed in zero_grad and in step, a persistent
    one, and an oom"""
    tr, t = [], [1000]

    def ev(act, addr, size, frames=(), **kw):
        t[0] += 10
        e = {"action": act, "addr": addr, "size": size, "stream": 0, "time_us": t[0],
             "frames": list(frames)}
        e.update(kw)
        tr.append(e)
        return t[0]

    mod = "C:\\env\\Lib\\site-packages\\torch\\nn\\modules\\module.py"
    ev("oom", 0, 64 * MB, [], device_free=0)  # what was there before the trace
    ev("alloc", 1 * MB, 4 * MB, [frame("/x/torch/nn/modules/module.py", 1340, "convert"),
                                 frame(mod, 900, "_apply"), frame("train.py", 3, "main")])
    ev("alloc", 2 * MB * 8, 4 * MB, [frame("model.py", 10, "forward"),
                                     frame("/x/torch/nn/modules/module.py", 1700, "_call_impl")])
    ev("alloc", 3 * MB * 8, 2 * MB, [frame("a.py", 1, "f")], user_metadata="grad buffer")
    ev("alloc", 4 * MB * 8, 2 * MB, [], compile_context="[0/0] forward graph")
    ann_z0 = ev("free_completed", 90 * MB * 8, 8 * MB)  # in zero_grad: from before the trace
    ev("free_completed", 92 * MB * 8, 1 * MB, [frame("a.py", 2, "g")])  # nothing tells
    ev("alloc", 5 * MB * 8, 2 * MB, [frame("??", 0, "torch::autograd::Engine::thread_main()")])
    ev("alloc", 6 * MB * 8, 3 * MB, [frame("??", 0, "torch::autograd::AccumulateGrad::apply()")])
    ev("alloc", 7 * MB * 8, 5 * MB)  # no frames: the autograd engine's thread
    ev("alloc", 8 * MB * 8, 1 * MB, [frame("/x/torch/_tensor.py", 520, "backward")])
    ev("alloc", 12 * MB * 8, 1 * MB, [frame("a.py", 5, "h")])  # frames, none telling
    ev("oom", 0, 64 * MB, [frame("/x/torch/_tensor.py", 520, "backward")], device_free=0)
    ev("free_completed", 8 * MB * 8, 1 * MB)
    ann_s0 = ev("alloc", 9 * MB * 8, 6 * MB, [frame("/x/torch/optim/adamw.py", 400, "_init_group")])
    ev("alloc", 10 * MB * 8, 1 * MB)  # inside step, no frames
    ev("free_completed", 91 * MB * 8, 7 * MB)  # in step: from before the trace
    ev("alloc", 11 * MB * 8, 2 * MB, [frame("D:\\p\\optimizer.py", 74, "step")])
    ann_s1 = ev("oom", 0, 64 * MB, [frame("model.py", 10, "forward")], device_free=MB)
    ev("free_completed", 2 * MB * 8, 4 * MB)
    segs = [{"device": 0, "address": 0, "total_size": 512 * MB, "stream": 0, "blocks": [
        {"address": 99 * MB * 8, "size": 9 * MB, "state": "active_allocated", "frames": []},
        {"address": 98 * MB * 8, "size": MB, "state": "active_allocated",
         "frames": [frame("/x/torch/nn/init.py", 30, "kaiming_uniform_")]}]}]
    anns = [{"name": "Optimizer.zero_grad#AdamW.zero_grad", "stage": "START", "device": 0,
             "time_us": ann_z0 - 1},
            {"name": "Optimizer.zero_grad#AdamW.zero_grad", "stage": "END", "device": 0,
             "time_us": ann_z0 + 1},
            {"name": "Optimizer.step#AdamW.step", "stage": "START", "device": 0, "time_us": ann_s0},
            {"name": "Optimizer.step#AdamW.step", "stage": "END", "device": 0, "time_us": ann_s1 - 1},
            {"name": "Optimizer.step#AdamW.step", "stage": "START", "device": 1, "time_us": 0}]
    return {"segments": segs, "device_traces": [tr], "external_annotations": anns}


def main():
    tmp = tempfile.mkdtemp(prefix="td-cats-")
    d = made_up()
    pk, js = os.path.join(tmp, "made-up.pickle"), os.path.join(tmp, "made-up.json")
    with open(pk, "wb") as f:
        pickle.dump(d, f, protocol=4)
    with open(js, "w") as f:
        json.dump(d, f)
    want = check("made-up", pk, d)
    a, b = report(pk), report(js)
    if a and b and (a.pop("path"), b.pop("path")) and a != b:
        bad("made-up: the pickle's report differs from the JSON's")
    rules = {r for p, ooms in want.values() for c in [p] + ooms for x in c.values() for r in x[2]}
    missing = set(RULES) - rules - {"no-frames"}
    if missing:
        bad(f"made-up: rules never taken: {sorted(missing)}")
    if not os.path.isdir(SHARED):
        print(f"SKIPPED: the real snapshots: {SHARED} is absent")
    else:
        paths = sorted(os.path.join(SHARED, f) for f in os.listdir(SHARED) if f.endswith(".pickle"))
        raw = {}
        for p in paths:
            with open(p, "rb") as f:
                raw[p] = pickle.load(f)
            check(os.path.basename(p), p, raw[p])
        if len(paths) >= 2:  # tracedoc memory A B: each side's categories at its peak
            r = subprocess.run([TD, "memory", paths[0], paths[1], "--format", "json"],
                               capture_output=True)
            diff = json.loads(r.stdout) if r.returncode == 0 else None
            for side, p in (("base", paths[0]), ("current", paths[1])):
                peak = expected(raw[p])[0][0]
                got = diff["devices"][0][side]["peak_category_bytes"] if diff else None
                want_b = {c: peak.get(c, [0])[0] for c in CATS}
                if got != want_b:
                    bad(f"memory A B {side}: {got}, the raw dict {want_b}")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
