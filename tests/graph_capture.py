#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""--capture FILE: graph-replayed kernels attributed to the ops that captured them, computed
here from the raw events with none of tracedoc's code. A capture region is a
cudaStreamBeginCapture .. cudaStreamEndCapture (hip* alike) on one thread; its kernel launch
calls (each naming its kernel in args "kernel") run under ops (cpu_op, user_annotation) that
began inside it. A graph launch's kernels (its correlation id), in time order, match a region
with as many launches, the k-th kernel of a name the k-th launch of that name; several
matching regions must give each kernel the same op names. Asserted on `tracedoc ops --window
all --capture`: each op's self GPU time (the innermost op's: the capture's plus what the op
runs eagerly, as the table without --capture has it) and total (every op of the chain once,
at least), the counts in the table's header, and `tracedoc kernels`' top op; on a
pair gen_trace --serve --serve-capture writes (a known mapping), and on the shared capture
traces, which come from other servers than the shared replays: nothing attributed, counted.
A trace holding its own captures needs no --capture; newer PyTorch's graph annotations (a
"name" in a replayed kernel's args) give the kernel that name with no capture at all.
usage: graph_capture.py TRACEDOC GEN_TRACE"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

TD = sys.argv[1]
GEN = sys.argv[2]
SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared",
                      "traces")
LAUNCH = ("cudaLaunch", "__cudaLaunch", "cuLaunch", "hipLaunch", "hipModuleLaunch",
          "hipExtModuleLaunch", "hipExtLaunch")


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def regions(ev):
    """[[(kernel name or None, [op names innermost first])...]...] per capture region"""
    out = []
    by_tid = {}
    for e in ev:
        if e.get("ph") == "X" and "dur" in e:
            by_tid.setdefault((e["pid"], e["tid"]), []).append(e)
    for evs in by_tid.values():
        evs.sort(key=lambda e: (e["ts"], -e["dur"]))
        rt = [e for e in evs if e.get("cat") in ("cuda_runtime", "cuda_driver")]
        begin = None
        for e in rt:
            if "BeginCapture" in e["name"]:
                begin = e
            elif "EndCapture" in e["name"] and begin is not None:
                reg = []
                for x in rt:
                    if begin["ts"] < x["ts"] < e["ts"] and x["name"].startswith(LAUNCH) and \
                       "Graph" not in x["name"]:
                        ops = [o for o in evs if o.get("cat") in ("cpu_op", "user_annotation")
                               and o["ts"] >= begin["ts"] and o["ts"] <= x["ts"] and
                               x["ts"] + x["dur"] <= o["ts"] + o["dur"]]
                        ops.sort(key=lambda o: (-o["ts"], o["dur"]))  # innermost first
                        reg.append((x.get("args", {}).get("kernel"), [o["name"] for o in ops]))
                out.append(reg)
                begin = None
    return out


def expected(rep, cap):
    """{op: [self ns, total ns]} of the replay's graph kernels from the capture's ops; the
    replayed and attributed kernel counts"""
    regs = regions(load(cap))
    ev = load(rep)
    graph = {e["args"]["correlation"] for e in ev if e.get("cat") in ("cuda_runtime",
             "cuda_driver") and "GraphLaunch" in e["name"] and "correlation" in e.get("args", {})}
    groups = {}
    for e in ev:
        if e.get("cat") == "kernel" and e.get("args", {}).get("correlation") in graph:
            groups.setdefault(e["args"]["correlation"], []).append(e)
    want, replayed, matched = {}, 0, 0
    for ks in groups.values():
        ks.sort(key=lambda e: e["ts"])
        replayed += len(ks)
        chains = None
        for reg in regions_like(regs, ks):
            got = assign(reg, ks)
            if chains is None:
                chains = got
            elif got != chains:
                chains = None
                break
        if not chains:
            continue
        for k, ch in zip(ks, chains):
            if not ch:
                continue
            matched += 1
            d = round(k["dur"] * 1000)
            want.setdefault(ch[0], [0, 0])[0] += d
            for name in dict.fromkeys(ch):
                want.setdefault(name, [0, 0])[1] += d
    return want, replayed, matched


def regions_like(regs, ks):
    """the regions that fit kernels ks: as many launches, and (when every launch names its
    kernel) the same names as often"""
    for reg in regs:
        if len(reg) != len(ks):
            continue
        if all(n is not None for n, _ in reg) and \
           sorted(n for n, _ in reg) != sorted(k["name"] for k in ks):
            continue
        yield reg


def assign(reg, ks):
    """each kernel's op chain: the k-th of a name to the k-th launch of it (by position when
    the region names none)"""
    if not all(n is not None for n, _ in reg):
        return [ch for _, ch in reg]
    seen, out = {}, []
    for k in ks:
        i = seen.get(k["name"], 0)
        seen[k["name"]] = i + 1
        out.append([ch for n, ch in reg if n == k["name"]][i])
    return out


def eager_self(rep):
    """an op the replay also runs eagerly (aten::embedding) keeps its own kernels' time: each
    op's self GPU time from the kernels of its launch calls (not a graph's, not under capture),
    the op the innermost cpu_op or user_annotation around the call"""
    ev = load(rep)
    spans = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("cpu_op",
                                                                       "user_annotation")]
    calls = {}
    for e in ev:
        a = e.get("args", {})
        if e.get("cat") == "cuda_runtime" and "GraphLaunch" not in e["name"] and \
           "correlation" in a:
            around = [o for o in spans if o["tid"] == e["tid"] and o["ts"] <= e["ts"] and
                      e["ts"] + e["dur"] <= o["ts"] + o["dur"]]
            if around:
                calls[a["correlation"]] = max(around, key=lambda o: (o["ts"], -o["dur"]))["name"]
    out = {}
    for e in ev:
        op = calls.get(e.get("args", {}).get("correlation")) if e.get("cat") == "kernel" else None
        if op:
            out[op] = out.get(op, 0) + round(e["dur"] * 1000)
    return out


def annotated(name, path):
    """newer PyTorch's graph annotations: a graph-replayed kernel whose args hold a "name" is
    that name's (its row's self GPU time), with no capture"""
    ev = load(path)
    graph = {e["args"]["correlation"] for e in ev if e.get("cat") == "cuda_runtime" and
             "GraphLaunch" in e["name"]}
    want, n = {}, 0
    for e in ev:
        a = e.get("args", {})
        if e.get("cat") == "kernel" and a.get("correlation") in graph and a.get("name"):
            want[a["name"]] = want.get(a["name"], 0) + round(e["dur"] * 1000)
            n += 1
    t = json.loads(subprocess.run([TD, "ops", "--window", "all", "--format", "json", path],
                                  capture_output=True, text=True).stdout)
    rows = {x["name"]: x["self_cuda_ns"] for x in t["rows"] if x.get("kind") != "gpu"}
    errs = ["%s: %s ns, the raw events %d" % (k, rows.get(k), v) for k, v in sorted(want.items())
            if rows.get(k) != v]
    if not n or t.get("graph_kernels_annotated") != n:
        errs.append("annotated kernels %s, the raw events %d" % (t.get("graph_kernels_annotated"), n))
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("ok   %s: %d annotated graph kernels to %d names" % (name, n, len(want)))
    return 0


def check(name, rep, cap, want_matched=None):
    """cap is rep: the trace's own captures, with no --capture (and nothing said)"""
    want, replayed, matched = expected(rep, cap)
    flag = ["--capture", cap] if cap != rep else []
    r = subprocess.run([TD, "ops", "--window", "all", "--format", "json"] + flag + [rep],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr[:300]))
        return 1
    t = json.loads(r.stdout)
    rows = {x["name"]: x for x in t["rows"] if x.get("kind") != "gpu"}
    eager = eager_self(rep)
    errs = []
    if want_matched is not None and matched != want_matched:
        errs.append("the raw events attribute %d kernels, not %d" % (matched, want_matched))
    if t.get("graph_kernels") != replayed or t.get("graph_kernels_from_capture") != matched:
        errs.append("graph kernels %s / %s from the capture; the raw events %d / %d" %
                    (t.get("graph_kernels"), t.get("graph_kernels_from_capture"), replayed,
                     matched))
    for op, (s, tot) in sorted(want.items()):
        x = rows.get(op)
        if not x or x["self_cuda_ns"] != s + eager.get(op, 0) or x["cuda_total_ns"] < tot:
            errs.append("%s: self %s total %s ns; the capture gives %d, %d" %
                        (op, x and x["self_cuda_ns"], x and x["cuda_total_ns"], s, tot))
    if flag and (str(matched) not in r.stderr or "--capture" not in r.stderr):
        errs.append("no line on stderr saying how many: %r" % r.stderr[:200])
    if errs:
        print("FAIL %s: %s" % (name, "; ".join(errs)))
        return 1
    print("ok   %s: %d of %d graph-replayed kernels to %d captured ops" %
          (name, matched, replayed, len(want)))
    return 0


def ambiguous(tmp):
    """two captures launching the same kernels under other ops, a replay of those kernels: it
    could be either, so nothing is attributed (and stderr says why); with the second capture's
    ops the same as the first's, both kernels are"""
    bad = 0
    for same in (False, True):
        ev, corr = [], [0]

        def x(cat, name, ts, dur, tid=1, **args):
            ev.append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts,
                       "dur": dur, "args": args})

        def call(name, ts, **args):
            corr[0] += 1
            x("cuda_runtime", name, ts, 1, correlation=corr[0], **args)
        for r, op in enumerate(("aten::mm", "aten::mm" if same else "aten::addmm")):
            t = 100 * r
            call("cudaStreamBeginCapture", t)
            x("cpu_op", op, t + 2, 10)
            call("cudaLaunchKernel", t + 3, kernel="gemm")
            call("cudaLaunchKernel", t + 5, kernel="bias")
            call("cudaStreamEndCapture", t + 20)
        cap = os.path.join(tmp, "amb-cap.json")
        with open(cap, "w") as f:
            json.dump({"traceEvents": ev}, f)
        ev, corr[0] = [], 0
        call("cudaGraphLaunch", 1000)
        for i, k in enumerate(("gemm", "bias")):
            ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7,
                       "ts": 1002 + 3 * i, "dur": 2,
                       "args": {"device": 0, "stream": 7, "correlation": corr[0]}})
        rep = os.path.join(tmp, "amb-rep.json")
        with open(rep, "w") as f:
            json.dump({"traceEvents": ev}, f)
        bad += check("two captures of the same kernels, %s ops" % ("the same" if same else
                                                                  "other"), rep, cap,
                     2 if same else 0)
        err = subprocess.run([TD, "ops", "--capture", cap, rep], capture_output=True,
                             text=True).stderr
        if ("several" in err) == same:
            print("FAIL two captures: stderr %r" % err)
            bad += 1
    return bad


def main():
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        rep, cap = os.path.join(tmp, "rep.json"), os.path.join(tmp, "cap.json")
        subprocess.run([GEN, "--serve", "14", "--serve-capture", cap, "-o", rep], check=True)
        # 9 decode iterations of 4 graphs of 8 kernels, every one from the capture
        bad += check("gen_trace --serve 14 --serve-capture", rep, cap, 9 * 4 * 8)
        # the captured ops only hold time through the capture: without it, none of it
        plain = json.loads(subprocess.run([TD, "ops", "--window", "all", "--format", "json",
                                           rep], capture_output=True, text=True).stdout)
        if any(x["name"] == "vllm::rms_norm" for x in plain["rows"]):
            print("FAIL gen_trace --serve: vllm::rms_norm without --capture")
            bad += 1
        # kernels: the GEMM's top op is the one that captured most of it
        k = json.loads(subprocess.run([TD, "kernels", "--window", "all", "--format", "json",
                                       "--capture", cap, rep], capture_output=True,
                                      text=True).stdout)
        top = {x["name"]: x.get("top_op") for x in k["rows"]}
        if top.get("rms_norm_kernel") != "vllm::rms_norm" or \
           top.get("paged_attention_v2_kernel") != "vllm::unified_attention":
            print("FAIL kernels --capture: top ops %s" % top)
            bad += 1
        # diagnose's HTML tables: the captured ops there only with --capture
        html = [subprocess.run([TD, "diagnose", "--format", "html"] + extra + [rep],
                               capture_output=True, text=True).stdout
                for extra in ([], ["--capture", cap])]
        if "vllm::unified_attention" in html[0] or "vllm::unified_attention" not in html[1]:
            print("FAIL diagnose --capture: the HTML op table's captured ops")
            bad += 1
        # the capture in the replay trace itself: no --capture needed
        inl = os.path.join(tmp, "inline.json")
        subprocess.run([GEN, "--serve", "14", "--serve-capture-inline", "-o", inl], check=True)
        bad += check("gen_trace --serve 14 --serve-capture-inline", inl, inl, 9 * 4 * 8)
        ann = os.path.join(tmp, "annotated.json")
        subprocess.run([GEN, "--serve", "14", "--serve-annotate", "-o", ann], check=True)
        bad += annotated("gen_trace --serve 14 --serve-annotate", ann)
        # a capture of another server: the serving loop's kernels are not the trace's own
        other = os.path.join(tmp, "other.json")
        subprocess.run([GEN, "--serve", "14", "-o", other], check=True)
        bad += check("a replay with another server's capture", other, cap, 0)
        bad += ambiguous(tmp)
    if not os.path.isdir(SHARED):
        print("SKIP: ../shared/traces is absent (the real traces live beside the checkout)")
        return 1 if bad else 77
    # the shared capture traces are MI300X captures (vLLM FULL, SGLang bs 32 decode); the
    # shared replay, vllm-gb10-decode, is a GB10's piecewise graphs: nothing matches
    pairs = [("vllm-gb10-decode.json.gz", "vllm-capture-mi300x.json.gz"),
             ("vllm-gb10-decode.json.gz", "sglang-capture-mi300x.json.gz")]
    for rep, cap in pairs:
        r, c = os.path.join(SHARED, rep), os.path.join(SHARED, cap)
        if os.path.exists(r) and os.path.exists(c):
            bad += check("%s --capture %s" % (rep, cap), r, c, 0)
            err = subprocess.run([TD, "kernels", "--capture", c, r], capture_output=True,
                                 text=True).stderr
            if "match no capture" not in err or "the capture is a ROCm trace" not in err:
                print("FAIL %s --capture %s: stderr does not say why: %r" % (rep, cap, err))
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
