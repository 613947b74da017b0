#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The serving traces of ../shared/traces read by iteration: from the raw events, with none of
tracedoc's code, the engine's iterations (vLLM's model runner execute_model, SGLang's
scheduler run_batch; none under _dummy_run or a graph capture; the outermost of nested ones),
each running to the next one's start, the last to the end of the GPU work it launched, and
each iteration's phase from the engine's execute_..context_C(..)_generation_G(..) annotation.
Asserted on `tracedoc diagnose --format json`: the window's steps, its median step, and the
phases array (count and median per phase); on `tracedoc stats --format json`: every
iteration, start-up ones included; diff's phases and gate's decode budget. The same on a
serving loop gen_trace --serve writes (decode replayed from graphs, prefill and mixed
batches, a sampled-token copy, a scheduler bubble), which runs without ../shared.
Collectives per phase: a tensor-parallel loop gen_trace --serve-tp 2 --serve-allreduce-us
writes (a table per device, the exposed all-reduce per iteration its parameters make), and
the shared traces' collective kernels against their raw events (none where they have none).
usage: serving_traces.py TRACEDOC GEN_TRACE"""
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

from intervals import union  # the union of [start, end) intervals

TD = sys.argv[1]
GEN = sys.argv[2]
SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                      "traces")
# trace: the iterations its raw events show (asserted below against the Python count too)
TRACES = {"vllm-gb10-decode.json.gz": 10, "b200-eager-decode.json.gz": 1,
          "sglang-mi300x.json.gz": 1, "vllm-capture-mi300x.json.gz": 0}
FAMILIES = [re.compile(r"model_runner\.py\(\d+\): execute_model$"),
            re.compile(r"scheduler\.py\(\d+\): (run_batch|_run_batch_inner)$"),
            re.compile(r"py_executor\.py\(\d+\): _forward_step$"),
            re.compile(r"causal_lm\.py\(\d+\): generate_token$"),
            re.compile(r"pipelines/base\.py\(\d+\): __call__$")]
STARTUP = re.compile(r"_dummy_run|profile_run|capture|warm_?up")
PHASE = re.compile(r"^execute_(?:\d+_)?context_(\d+)\(.*_generation_(\d+)\(")
MODE = {"EXTEND": 1, "PREFILL": 1, "DECODE": 2, "MIXED": 3}
WARMUP_RATIO = 3.0  # config/params.c's warmup_step_ratio default


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def iterations(ev):
    spans = [e for e in ev if e.get("ph") == "X" and "dur" in e]
    for fam in FAMILIES:
        cand = [e for e in spans if fam.search(e.get("name", ""))]
        if not cand:
            continue
        holders = [e for e in spans if STARTUP.search(e.get("name", ""))] + cand
        out = []
        for e in cand:
            inside = any(h is not e and h["tid"] == e["tid"] and h["pid"] == e["pid"] and
                         h["ts"] <= e["ts"] and e["ts"] + e["dur"] <= h["ts"] + h["dur"] and
                         (h["dur"] > e["dur"] or h["ts"] < e["ts"]) for h in holders)
            if not inside:
                out.append(e)
        if out:
            return sorted(out, key=lambda e: e["ts"])
    # else the outermost user annotation repeated most (3 or more), not PyTorch's own
    ann = [e for e in spans if e.get("cat") == "user_annotation" and
           not re.match(r"Optimizer\.|enumerate\(|TorchDynamo|## |nccl:|capture_|ProfilerStep",
                        e["name"])]
    outer = [e for e in ann if not any(
        h is not e and h["tid"] == e["tid"] and h["pid"] == e["pid"] and
        h.get("cat") in ("user_annotation", "cpu_op") and h["ts"] <= e["ts"] and
        e["ts"] + e["dur"] <= h["ts"] + h["dur"] and (h["dur"] > e["dur"] or h["ts"] < e["ts"])
        for h in spans)]
    count = {}
    for e in outer:
        count[e["name"]] = count.get(e["name"], 0) + 1
    best = max(count, key=count.get) if count else None
    if best and count[best] >= 3:
        return sorted((e for e in outer if e["name"] == best), key=lambda e: e["ts"])
    return []


def steps(ev, its):
    """host spans in ns, chained; the last to the end of the GPU work launched in it; leading
    cold iterations (3x the median of their phase's, when it has 3 or more) left out"""
    st = chained(ev, its)
    if len(st) >= 3:
        ph = phases(ev, st)
        while len(st) > 1:
            same = [b - a for (a, b), p in zip(st, ph) if p == ph[0]]
            if len(same) < 3 or st[0][1] - st[0][0] < WARMUP_RATIO * statistics.median(same):
                break
            st.pop(0)
            ph.pop(0)
    return st


def chained(ev, its):
    """every iteration's host span in ns, each to the next one's start, the last to the end of
    the GPU work launched in it"""
    st = [[round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)] for e in its]
    for k in range(len(st) - 1):
        st[k][1] = st[k + 1][0]
    if st:
        lo, own = st[-1][0], st[-1][1]
        calls = {e["args"]["correlation"]: e["ts"] * 1000 for e in ev
                 if e.get("cat") in ("cuda_runtime", "cuda_driver") and
                 "correlation" in e.get("args", {})}
        for e in ev:
            if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
                c = calls.get(e.get("args", {}).get("correlation"))
                if c is not None and lo <= c < own:
                    st[-1][1] = max(st[-1][1], round((e["ts"] + e["dur"]) * 1000))
    return st


def phases(ev, st):
    """each step's phase from the engine's marks (vLLM's execute_context annotation, SGLang's
    step[MODE ...], TGI's Prefill / Decode), else from the first embedding's token count
    against the median (4x or more: prefill)"""
    bits, tokens = [0] * len(st), [0] * len(st)
    for e in ev:
        n, mid = e.get("name", ""), (e.get("ts", 0) + e.get("dur", 0) / 2) * 1000
        k = next((i for i, (a, b) in enumerate(st) if a <= mid < b), None)
        if k is None or e.get("ph") != "X":
            continue
        m = PHASE.match(n)
        if m and e.get("cat") == "user_annotation":
            bits[k] |= (1 if int(m.group(1)) else 0) | (2 if int(m.group(2)) else 0)
        elif n.startswith("step[") and n[5:].split(" ")[0].rstrip("]") in MODE:
            bits[k] |= MODE[n[5:].split(" ")[0].rstrip("]")]
        elif re.search(r"\): (Prefill|forward_extend)$", n):
            bits[k] |= 1
        elif re.search(r"\): (Decode|forward_decode)$", n):
            bits[k] |= 2
        elif n == "aten::embedding" and not tokens[k]:
            dims = e.get("args", {}).get("Input Dims")
            if dims and len(dims) > 1 and dims[1]:
                tokens[k] = 1
                for x in dims[1]:
                    tokens[k] *= x
    if not any(bits) and len(st) >= 3 and all(tokens):
        med = statistics.median(tokens)
        bits = [1 if t >= 4 * med and t > med else 2 for t in tokens]
    return [{1: "prefill", 2: "decode", 3: "mixed"}.get(b, "") for b in bits]


def check(name, path, want):
    """1 when tracedoc's window or phases differ from the raw events' (or want)"""
    ev = load(path)
    its = iterations(ev)
    bad = 0
    if len(its) != want:
        print("FAIL %s: the raw events hold %d iterations, not %d" % (name, len(its), want))
        bad = 1
    st = steps(ev, its)
    ph = phases(ev, st)
    r = subprocess.run([TD, "diagnose", "--format", "json", path], capture_output=True,
                       text=True)
    if r.returncode != 0:
        print("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr[:300]))
        return 1
    rep = json.loads(r.stdout)
    w = rep["window"]
    errs = []
    if w["steps"] != len(st):
        errs.append("steps %d, the raw events %d" % (w["steps"], len(st)))
    if st:
        med = statistics.median(b - a for a, b in st)
        if abs(w["median_step_ns"] - med) > 2000:
            errs.append("median step %d ns, the raw events %d" % (w["median_step_ns"], med))
    want_ph = {}
    for p, (a, b) in zip(ph, st):
        if p:
            want_ph.setdefault(p, []).append(b - a)
    got = {p["phase"]: p for p in rep.get("phases", [])}
    if set(got) != set(want_ph):
        errs.append("phases %s, the raw events %s" % (sorted(got), sorted(want_ph)))
    for p, durs in want_ph.items():
        if p in got and (got[p]["iterations"] != len(durs) or
                         abs(got[p]["median_step_ns"] - statistics.median(durs)) > 2000):
            errs.append("%s: %d iterations, median %d ns; the raw events %d, %d" %
                        (p, got[p]["iterations"], got[p]["median_step_ns"], len(durs),
                         statistics.median(durs)))
    # tracedoc stats: every iteration, start-up ones included, and their median
    r = subprocess.run([TD, "stats", "--format", "json", path], capture_output=True, text=True)
    it = json.loads(r.stdout).get("iterations", {"count": 0}) if r.returncode == 0 else None
    every = chained(ev, its)
    if it is None or it["count"] != len(every) or \
       (every and abs(it["median_ns"] - statistics.median(b - a for a, b in every)) > 2000):
        errs.append("stats: iterations %s, the raw events %d" % (it, len(every)))
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("ok   %s: %d iterations, phases %s" %
          (name, len(st), {p: len(d) for p, d in want_ph.items()}))
    return bad


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        gen = os.path.join(tmp, "serve.json")
        subprocess.run([GEN, "--serve", "14", "-o", gen], check=True)
        bad += check("gen_trace --serve 14", gen, 14)
        for engine in ("sglang", "trtllm", "tgi", "hf", "annotation"):
            other = os.path.join(tmp, engine + ".json")
            subprocess.run([GEN, "--serve", "14", "--serve-engine", engine, "-o", other],
                           check=True)
            bad += check("gen_trace --serve 14 --serve-engine " + engine, other, 14)
        rep = json.loads(subprocess.run([TD, "diagnose", "--format", "json", gen],
                                        capture_output=True, text=True).stdout)
        dec = [p for p in rep.get("phases", []) if p["phase"] == "decode"]
        # decode: 4 graph launches an iteration, every kernel from a graph but the embedding's
        if not dec or dec[0]["graph_launches"] != 4 * dec[0]["iterations"] or \
           not 0.8 < dec[0]["graph_ns"] / max(dec[0]["busy_ns"], 1) <= 1.0:
            print("FAIL gen_trace --serve: decode's graph launches or share: %s" % dec)
            bad += 1
        # the HTML header words the window by what it holds: the engine's iterations
        html = subprocess.run([TD, "diagnose", "--format", "html", gen], capture_output=True,
                              text=True).stdout
        n = len(steps(load(gen), iterations(load(gen))))
        if "%d steady-state iterations (vLLM execute_model)" % n not in html or \
           "steady-state steps" in html:
            print("FAIL gen_trace --serve: the HTML header does not say %d iterations" % n)
            bad += 1
        # diff by phase: a scheduler bubble 300 us longer makes every iteration 300 us longer
        slow = os.path.join(tmp, "slow.json")
        subprocess.run([GEN, "--serve", "14", "--bubble-us", "600", "-o", slow], check=True)
        d = json.loads(subprocess.run([TD, "diff", "--format", "json", gen, slow],
                                      capture_output=True, text=True).stdout)
        ph = [{p["phase"]: p for p in d[side].get("phases", [])} for side in ("base", "current")]
        if set(ph[0]) != {"prefill", "decode", "mixed"} or set(ph[1]) != set(ph[0]) or \
           any(abs(ph[1][p]["median_step_ns"] - ph[0][p]["median_step_ns"] - 300000) > 2000
               for p in ph[0]):
            print("FAIL diff by phase: %s" % ph)
            bad += 1
        # the scheduler's 300 us between iterations is the longest host work the GPU waits on
        if not dec or "scheduler.py:217 schedule" not in dec[0]["idle_held_most_by"]:
            print("FAIL gen_trace --serve: decode's idle not held by the scheduler: %s" % dec)
            bad += 1
        bad += tensor_parallel(tmp)
        bad += diff_devices(tmp)
        kv = os.path.join(tmp, "kv.json")
        subprocess.run([GEN, "--serve", "14", "--serve-kv-gib", "6", "-o", kv], check=True)
        bad += kv_cache("gen_trace --serve 14 --serve-kv-gib 6", kv, True)
    if not os.path.isdir(SHARED):
        print("SKIP: ../shared/traces is absent (the real traces live beside the checkout)")
        return 1 if bad else 77
    for name, want in TRACES.items():
        path = os.path.join(SHARED, name)
        if not os.path.exists(path):
            print("SKIP %s: absent" % name)
            continue
        bad += check(name, path, want)
        bad += collectives(name, path)
        bad += kv_cache(name, path, False)
    bad += decode_budget()
    bad += graph_busy()
    return 1 if bad else 0


# gen_serve.c's shape: the layers of an iteration (decode: 4 graphs of 8 GEMMs; prefill and
# mixed: 24 eager GEMMs), a decode GEMM's time, and how much of an all-reduce overlaps its GEMM
LAYERS = {"decode": 4 * 8, "prefill": 24, "mixed": 24}
COMM = re.compile(r"(?i)nccl|rccl|cross_device_reduce|multimem_all_reduce|one_shot_all_reduce|"
                  r"two_shot_all_reduce|quickreduce|allreduce_prototype|oneshotallreduce|"
                  r"twoshotallreduce|allreduce_fusion")


def tensor_parallel(tmp):
    """gen_trace --serve 14 --serve-tp 2 --serve-allreduce-us 12: every kernel on GPUs 0 and 1,
    a 12 us custom all-reduce after each layer's GEMM, 3 us of it (a quarter, under half of
    any GEMM) beside the GEMM: the phase table covers both devices, and each phase's exposed
    collective time per iteration is its layers x 9 us, of layers x 12 us"""
    path = os.path.join(tmp, "tp.json")
    ar = 12000
    subprocess.run([GEN, "--serve", "14", "--serve-tp", "2", "--serve-allreduce-us", "12",
                    "-o", path], check=True)
    ev = load(path)
    devs = sorted({e["args"]["device"] for e in ev if e.get("cat") == "kernel"})
    bad = check("gen_trace --serve 14 --serve-tp 2", path, 14)
    rep = json.loads(subprocess.run([TD, "diagnose", "--format", "json", path],
                                    capture_output=True, text=True).stdout)
    got = {(p["device"], p["phase"]): p for p in rep.get("phases", [])}
    want = {(d, p) for d in devs for p in LAYERS}
    if devs != [0, 1] or set(got) != want:
        print("FAIL tensor parallel: phases on %s, the raw events' devices %s" %
              (sorted(got), devs))
        return bad + 1
    for (d, p), ph in sorted(got.items()):
        exp = LAYERS[p] * (ar - min(ar // 4, 9000 // 2))
        if ph["collective_exposed_per_iteration_ns"] != exp or \
           ph["collective_ns"] != LAYERS[p] * ar * ph["iterations"]:
            print("FAIL tensor parallel GPU %d %s: collectives %d ns, exposed %d ns an iteration;"
                  " the generator's %d ns, %d ns" % (d, p, ph["collective_ns"],
                                                     ph["collective_exposed_per_iteration_ns"],
                                                     LAYERS[p] * ar * ph["iterations"], exp))
            bad += 1
    md = subprocess.run([TD, "diagnose", "--format", "md", path], capture_output=True,
                        text=True).stdout
    if md.count("collectives exposed / iteration") != 2:
        print("FAIL tensor parallel: the md report has not one phase table per device")
        bad += 1
    if not bad:
        print("ok   gen_trace --serve-tp 2 --serve-allreduce-us 12: both devices, exposed "
              "all-reduce per iteration as generated")
    return bad


def per_iteration(ev, dev):
    """{phase: (GPU busy, exposed collectives) ns per iteration on device dev}: the union of its
    kernels, copies and memsets clipped to each iteration, and its collective kernels' time
    with no other kernel beside them, summed by phase, over the phase's iterations"""
    st = steps(ev, iterations(ev))
    ph = phases(ev, st)
    mine = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and
            e.get("args", {}).get("device") == dev]
    ops = union([e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000] for e in mine)
    out, n = {}, {}
    for (lo, hi), p in zip(st, ph):
        iv = [(max(lo, e["ts"] * 1000), min(hi, (e["ts"] + e["dur"]) * 1000), e) for e in mine
              if e.get("cat") == "kernel"]
        comm = union([a, b] for a, b, e in iv if b > a and COMM.search(e["name"]))
        comp = union([a, b] for a, b, e in iv if b > a and not COMM.search(e["name"]))
        busy, exp = out.get(p, (0, 0))
        out[p] = (busy + sum(max(0, min(b, hi) - max(a, lo)) for a, b in ops),
                  exp + minus(comm, comp))
        n[p] = n.get(p, 0) + 1
    return {p: (out[p][0] / n[p], out[p][1] / n[p]) for p in out}


def diff_devices(tmp):
    """diff compares phases on every device: a tensor-parallel loop against the same loop with
    a 20 us all-reduce for 12: on both sides, both GPUs' phases, each with the GPU busy time
    and the exposed all-reduce per iteration the raw events hold"""
    paths, bad = [], 0
    for us in (12, 20):
        paths.append(os.path.join(tmp, "tp%d.json" % us))
        subprocess.run([GEN, "--serve", "14", "--serve-tp", "2", "--serve-allreduce-us",
                        str(us), "-o", paths[-1]], check=True)
    d = json.loads(subprocess.run([TD, "diff", "--format", "json"] + paths,
                                  capture_output=True, text=True).stdout)
    for side, path in (("base", paths[0]), ("current", paths[1])):
        ev = load(path)
        got = {(p["device"], p["phase"]): p for p in d[side].get("phases", [])}
        if set(got) != {(dv, p) for dv in (0, 1) for p in LAYERS}:
            print("FAIL diff on every device: %s phases %s" % (side, sorted(got)))
            bad += 1
            continue
        for dv in (0, 1):
            raw = per_iteration(ev, dv)
            for p in LAYERS:
                g = got[(dv, p)]
                if abs(g["gpu_busy_per_iteration_ns"] - raw[p][0]) > 1000 or \
                   abs(g["collective_exposed_per_iteration_ns"] - raw[p][1]) > 1000:
                    print("FAIL diff on every device: %s GPU %d %s: busy %d, exposed %d ns an "
                          "iteration; the raw events %.0f, %.0f" %
                          (side, dv, p, g["gpu_busy_per_iteration_ns"],
                           g["collective_exposed_per_iteration_ns"], raw[p][0], raw[p][1]))
                    bad += 1
    text = subprocess.run([TD, "diff", "--format", "md"] + paths, capture_output=True,
                          text=True).stdout
    if "| GPU 1 decode exposed/iter |" not in text:
        print("FAIL diff on every device: the text has no row for GPU 1's decode")
        bad += 1
    if not bad:
        print("ok   diff of two tensor-parallel loops: phases on both GPUs, busy and exposed "
              "all-reduce per iteration as the raw events")
    return bad


KV_FN = {"initialize_kv_cache", "initialize_kv_cache_tensors", "_allocate_kv_cache_tensors",
         "_init_cache_engine", "init_memory_pool", "_create_buffers"}


def kv_cache(name, path, want):
    """the engine's KV-cache allocation frame (a Python frame of one of KV_FN, the first
    outermost), the [memory] instants on its thread under it on one device: the bytes they
    allocate less what they free, how many allocate, the device's reserved memory at the last
    instant before the frame and the last under it; against diagnose's kv_cache (and its text
    line); want: whether the trace shows one"""
    ev = load(path)
    frames = [e for e in ev if e.get("cat") == "python_function" and "dur" in e and
              e["name"].split("): ")[-1] in KV_FN]
    outer = sorted((f for f in frames if not any(
        g is not f and g["tid"] == f["tid"] and g["ts"] <= f["ts"] and
        f["ts"] + f["dur"] <= g["ts"] + g["dur"] for g in frames)), key=lambda f: f["ts"])
    mem = sorted((e for e in ev if e.get("name") == "[memory]" and
                  e.get("args", {}).get("Device Type", 1) != 0), key=lambda e: e["ts"])
    raw = None
    for f in outer[:1]:
        under = [m for m in mem if m["tid"] == f["tid"] and f["ts"] <= m["ts"] < f["ts"] + f["dur"]]
        if under:
            dev = under[0]["args"]["Device Id"]
            under = [m for m in under if m["args"]["Device Id"] == dev]
            before = [m for m in mem if m["ts"] < f["ts"] and m["args"]["Device Id"] == dev]
            raw = {"frame": f["name"], "device": dev,
                   "bytes": sum(m["args"]["Bytes"] for m in under),
                   "allocations": sum(1 for m in under if m["args"]["Bytes"] > 0),
                   "reserved_before_bytes": before[-1]["args"]["Total Reserved"] if before else -1,
                   "reserved_after_bytes": under[-1]["args"]["Total Reserved"],
                   "complete": bool(before)}
            if raw["bytes"] <= 0:
                raw = None
    rep = json.loads(subprocess.run([TD, "diagnose", "--format", "json", path],
                                    capture_output=True, text=True).stdout)
    got = rep.get("kv_cache")
    if (raw is not None) != want or (got is None) != (raw is None) or \
       (raw and any(got.get(k) != v for k, v in raw.items())):
        print("FAIL %s KV cache: tracedoc %s, the raw events %s" % (name, got, raw))
        return 1
    if raw:
        text = subprocess.run([TD, "diagnose", path], capture_output=True, text=True).stdout
        if "KV cache " not in text or "in %d allocations" % raw["allocations"] not in text:
            print("FAIL %s KV cache: no text line" % name)
            return 1
        print("ok   %s: KV cache %d bytes in %d allocations, reserved %d -> %d" %
              (name, raw["bytes"], raw["allocations"], raw["reserved_before_bytes"],
               raw["reserved_after_bytes"]))
    return 0


def minus(c, p):
    """the time of interval set c (merged) outside interval set p (merged)"""
    total, j = 0, 0
    for a, b in c:
        while j < len(p) and p[j][1] <= a:
            j += 1
        k, cur = j, a
        while k < len(p) and p[k][0] < b:
            if p[k][0] > cur:
                total += p[k][0] - cur
            cur = max(cur, p[k][1])
            k += 1
        total += max(0, b - cur)
    return total


def collectives(name, path):
    """a shared trace's collective kernels over its iterations' span, from the raw events: their
    time and the part of it no other kernel on the device overlaps, against the phases' (summed
    over phases, within 1%); a trace without them: none in its phases, no such column"""
    ev = load(path)
    kern = [e for e in ev if e.get("cat") == "kernel" and "dur" in e]
    rep = json.loads(subprocess.run([TD, "diagnose", "--format", "json", path],
                                    capture_output=True, text=True).stdout)
    if any(COMM.search(e["name"]) for e in kern):
        st = steps(ev, iterations(ev))
        if not st:
            return 0
        lo, hi = st[0][0], st[-1][1]
        bad = 0
        for dev in sorted({e["args"].get("device") for e in kern}):
            iv = [(max(lo, e["ts"] * 1000), min(hi, (e["ts"] + e["dur"]) * 1000), e) for e in kern
                  if e["args"].get("device") == dev]
            comm = union([a, b] for a, b, e in iv if b > a and COMM.search(e["name"]))
            comp = union([a, b] for a, b, e in iv if b > a and not COMM.search(e["name"]))
            tot, exp = sum(b - a for a, b in comm), minus(comm, comp)
            ph = [p for p in rep.get("phases", []) if p["device"] == dev]
            got = sum(p["collective_ns"] for p in ph), sum(p["collective_exposed_ns"] for p in ph)
            if abs(got[0] - tot) > 0.01 * tot or abs(got[1] - exp) > 0.01 * max(exp, 1000):
                print("FAIL %s GPU %s: collectives %d ns, exposed %d ns; the raw events %.0f, %.0f"
                      % (name, dev, got[0], got[1], tot, exp))
                bad += 1
            else:
                print("ok   %s GPU %s: collectives %.2f ms in the iterations, %.2f ms exposed" %
                      (name, dev, tot / 1e6, exp / 1e6))
        return bad
    md = subprocess.run([TD, "diagnose", "--format", "md", path], capture_output=True,
                        text=True).stdout
    if any(p["collective_ns"] or p["collective_exposed_ns"] for p in rep.get("phases", [])) or \
       "collectives exposed" in md:
        print("FAIL %s: collective time in phases without a collective kernel" % name)
        return 1
    return 0


def graph_busy():
    """vllm-gb10-decode replays its decode from CUDA graphs: the kernels a cudaGraphLaunch
    put on the GPU are busy time, never idle. From the raw events: the union of kernels, copies
    and memsets over the iterations' span, and the time of the kernels whose launch was a
    cudaGraphLaunch in an iteration (their union: two streams at once count once); tracedoc's
    decode phase must hold the same"""
    path = os.path.join(SHARED, "vllm-gb10-decode.json.gz")
    if not os.path.exists(path):
        return 0
    ev = load(path)
    st = steps(ev, iterations(ev))
    lo, hi = st[0][0], st[-1][1]
    ops = sorted((e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000) for e in ev
                 if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
    busy, end = 0.0, lo
    for a, b in ops:
        a, b = max(a, end), min(b, hi)
        if b > a:
            busy += b - a
            end = b
    graph_calls = {e["args"]["correlation"]: e["ts"] * 1000 for e in ev
                   if e.get("name") == "cudaGraphLaunch" and "correlation" in e.get("args", {})}
    graph = sum(b - a for a, b in union(
        [e["ts"] * 1000, (e["ts"] + e["dur"]) * 1000] for e in ev if e.get("cat") == "kernel"
        and lo <= graph_calls.get(e.get("args", {}).get("correlation"), -1) < hi))
    rep = json.loads(subprocess.run([TD, "diagnose", "--format", "json", path],
                                    capture_output=True, text=True).stdout)
    dec = [p for p in rep.get("phases", []) if p["phase"] == "decode"]
    if not dec or abs(dec[0]["busy_ns"] - busy) > 0.002 * busy or \
       abs(dec[0]["graph_ns"] - graph) > 0.002 * graph:
        print("FAIL vllm-gb10-decode graph-replayed busy time: tracedoc %s, the raw events busy "
              "%.0f ns, from graphs %.0f ns" % (dec, busy, graph))
        return 1
    print("ok   vllm-gb10-decode: busy %.1f%% of the iterations, %.1f%% of it from graphs" %
          (100 * busy / (hi - lo), 100 * graph / busy))
    return 0


def decode_budget():
    """gate's max_decode_step_time_us on vllm-gb10-decode: its median decode iteration from
    the raw events, a budget 5% under it fails (exit 1), 5% over it passes (exit 0)"""
    path = os.path.join(SHARED, "vllm-gb10-decode.json.gz")
    if not os.path.exists(path):
        return 0
    ev = load(path)
    st = steps(ev, iterations(ev))
    med = statistics.median(b - a for (a, b), p in zip(st, phases(ev, st)) if p == "decode")
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for factor, want in ((0.95, 1), (1.05, 0)):
            cfg = os.path.join(tmp, "c.json")
            with open(cfg, "w") as f:
                json.dump({"gate": {"budgets": {"max_decode_step_time_us":
                                                round(med * factor / 1000)}}}, f)
            rc = subprocess.run([TD, "gate", "--config", cfg, path],
                                capture_output=True).returncode
            if rc != want:
                print("FAIL gate max_decode_step_time_us %.0f us (median decode %.0f us): exit "
                      "%d, not %d" % (med * factor / 1000, med / 1000, rc, want))
                bad += 1
    if not bad:
        print("ok   gate max_decode_step_time_us on vllm-gb10-decode")
    return bad


if __name__ == "__main__":
    sys.exit(main())
