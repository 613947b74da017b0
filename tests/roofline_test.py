#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The roofline of every GEMM and convolution with shapes in the real traces, recomputed here
from the raw events: each call's FLOPs and bytes from its Input Dims / Input type / Concrete
Inputs, the GPU time of the kernels launched inside it (correlation id to the runtime call,
the runtime call to the ops around it on its thread), the device's peaks from
docs/roofline.md's table, then per op name the achieved TFLOP/s and TB/s, the bound and the
share of the roof; `tracedoc ops --window all --format json` must agree. Inductor's Triton
launches (fixtures/roofline/inductor.json) are costed by their own kernel_flop / kernel_num_gb.
Skips the real traces with a message when ../shared is absent.
usage: roofline_test.py TRACEDOC REPO_ROOT"""
import gzip
import json
import math
import os
import re
import subprocess
import sys
from decimal import Decimal

TRACES = ["switch-a100.json", "sglang-mi300x.json.gz", "hipfree-mi300x.json.gz",
          "ddp-resnet-mi300x.json.gz", "flux-mi300x.json.gz", "b200-eager-decode.json.gz",
          "sglang-capture-mi300x.json.gz", "mi250-rocm.json.gz", "negq-rank0.json.gz",
          "dlrm-v100-rank1.json.gz", "resnet50-nw4.pt.trace.json.gz"]
DTYPES = {"float": ("fp32", 4), "double": ("fp64", 8), "c10::Half": ("fp16", 2),
          "c10::BFloat16": ("bf16", 2)}
RUNTIME = {"cuda_runtime", "cuda_driver", "runtime"}
GEMMS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::linear", "aten::matmul"}
CONVS = {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::convolution",
         "aten::_convolution", "aten::convolution_backward"}

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL:", msg)


def ns(v):
    return int(Decimal(str(v)) * 1000)


def peaks_table(root):
    """docs/roofline.md's rows: (names, {dtype: tflops}, tbps), in order"""
    rows = []
    with open(os.path.join(root, "docs/roofline.md"), encoding="utf-8") as f:
        for line in f:
            c = [x.strip() for x in line.strip().strip("|").split("|")]
            if len(c) != 12 or c[0] in ("part",) or c[0].startswith("---"):
                continue
            fig = lambda s: 0.0 if s == "\u2014" else float(s)
            tf = dict(zip(["fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "fp4"],
                          [fig(x) for x in c[2:9]]))
            rows.append((c[0], [n.strip() for n in c[1].split(",")], tf, fig(c[9])))
    return rows


def find_peaks(rows, dev):
    name = dev.get("name") or ""
    for part, names, tf, bw in rows:
        for n in names:
            anchored = n.endswith("$")
            n = n.rstrip("$").lower()
            if (name.lower().endswith(n) if anchored else n in name.lower()) and name:
                return part, tf, bw
    cc = (dev.get("computeMajor"), dev.get("computeMinor"), dev.get("numSms"))
    if not name or re.search("amd|radeon", name, re.I):
        by = {(9, 4, 304): "AMD Instinct MI300X", (9, 0, 104): "AMD Instinct MI210",
              (9, 0, 110): "AMD Instinct MI250X (one GCD)", (9, 5, 256): "AMD Instinct MI355X"}
        want = by.get(cc)
        if want == "AMD Instinct MI300X" and dev.get("totalGlobalMem", 0) > 220e9:
            want = "AMD Instinct MI325X"
        for part, names, tf, bw in rows:
            if part == want:
                return part, tf, bw
    return None


def dims_of(a):
    return a.get("Input Dims") or []


def tensor(dims, types, i):
    return i < len(dims) and i < len(types) and isinstance(dims[i], list) and \
        all(isinstance(x, int) for x in dims[i]) and types[i] in DTYPES or \
        (i < len(types) and types[i] in ("long int", "int", "bool", "unsigned char") and
         i < len(dims) and isinstance(dims[i], list) and all(isinstance(x, int) for x in dims[i]))


def esize(t):
    return {"long int": 8, "int": 4, "bool": 1, "unsigned char": 1}.get(t, DTYPES.get(t, (0, 0))[1])


def nbytes(dims, types, i):
    return math.prod(dims[i]) * esize(types[i]) if tensor(dims, types, i) else 0


def concrete_ints(conc, i):
    if not conc or i >= len(conc):
        return None
    return [int(x) for x in re.findall(r"\d+", conc[i])]


def inductor_figure(v, scale):
    """kernel_flop / kernel_num_gb x 10^scale as an int, or None when not a number >= 0"""
    if isinstance(v, bool) or not isinstance(v, (int, Decimal)) or v < 0:
        return None
    v = int(Decimal(v) * 10 ** scale)  # toward zero
    return v if v < 2 ** 63 else None


def cost(name, a):
    """(flops, bytes, dtype) of one call, or None"""
    fl, by = inductor_figure(a.get("kernel_flop"), 0), inductor_figure(a.get("kernel_num_gb"), 9)
    if fl is not None or by is not None:  # an Inductor Triton launch: its own estimate
        if not fl and not by:
            return None
        types = a.get("Input type") or []
        return fl or 0, by or 0, next((DTYPES[t][0] for t in types if t in DTYPES), None)
    dims, types = dims_of(a), a.get("Input type") or []
    conc = a.get("Concrete Inputs")
    first = next((i for i in range(min(len(dims), len(types), 8)) if tensor(dims, types, i)), None)
    if first is None:
        return None
    dt = DTYPES.get(types[first], (None,))[0]
    ins = sum(nbytes(dims, types, i) for i in range(min(len(dims), len(types), 8)))
    if name in GEMMS:
        x, y = (1, 2) if name in ("aten::addmm", "aten::baddbmm") else (0, 1)
        if not (tensor(dims, types, x) and tensor(dims, types, y)):
            return None
        A, B = dims[x], dims[y]
        if name == "aten::linear":
            if len(B) != 2 or not A or A[-1] != B[1]:
                return None
            k, n = A[-1], B[0]
        else:
            if not A or not B or (len(B) > 2 and len(B) != len(A)):
                return None
            k = A[-1]
            if B[-2 if len(B) >= 2 else 0] != k:
                return None
            n = B[-1] if len(B) >= 2 else 1
        if name == "aten::bmm" and len(A) != 3:
            return None
        rows = math.prod(A) // k
        return 2 * rows * k * n, ins + rows * n * esize(types[x]), dt
    if name == "aten::convolution_backward":
        go, inp, w = dims[0], dims[1], dims[2]
        if len(go) != len(w) or not 3 <= len(go) <= 5:
            return None
        f = 2 * go[0] * go[1] * w[1] * math.prod(w[2:]) * math.prod(go[2:])
        mask = conc[10] if conc and len(conc) > 10 else ""
        flags = re.findall(r"True|False", mask) or ["True", "True"]
        grads = (flags[0] == "True") + (flags[1] == "True")
        out = (nbytes(dims, types, 1) if flags[0] == "True" else 0) + \
            (nbytes(dims, types, 2) if flags[1] == "True" else 0)
        return f * grads, ins + out, dt
    if name in CONVS:
        x, w = dims[0], dims[1]
        if len(x) != len(w) or not 3 <= len(x) <= 5:
            return None
        sd = len(x) - 2
        st, pad, dil = concrete_ints(conc, 3), concrete_ints(conc, 4), concrete_ints(conc, 5)
        if not st or len(st) != sd or len(pad or []) != sd or len(dil or []) != sd:
            return None
        if conc and len(conc) > 6 and conc[6] == "True":
            return None
        osp = [(x[2 + i] + 2 * pad[i] - dil[i] * (w[2 + i] - 1) - 1) // st[i] + 1 for i in range(sd)]
        f = 2 * x[0] * w[0] * w[1] * math.prod(w[2:]) * math.prod(osp)
        return f, ins + x[0] * w[0] * math.prod(osp) * esize(types[0]), dt
    return None


def roof(tf, bw, dt, flops, by, t):
    p = tf.get(dt or "fp32", 0)
    if p <= 0 and dt in ("bf16", "fp16"):
        p = tf["fp16" if dt == "bf16" else "bf16"]
    if p <= 0:
        p = tf["fp32"]
    tc = flops / p / 1e3 if flops > 0 and p > 0 else -1
    tm = by / bw / 1e3 if by > 0 and bw > 0 else -1
    if tc < 0 and tm < 0:
        return None, None
    return ("compute" if tc >= tm else "memory"), max(tc, tm) / t


def check(tracedoc, root, rows, path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="surrogateescape") as f:
        doc = json.load(f, parse_float=Decimal)
    events = [e for e in doc["traceEvents"] if isinstance(e, dict) and e.get("ph") == "X"]
    devs = doc.get("deviceProperties") or []
    # the device with the most GPU ops, as tracedoc picks it
    count = {}
    for e in events:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            d = (e.get("args") or {}).get("device", e.get("pid"))
            count[d] = count.get(d, 0) + 1
    props = [d for d in devs if isinstance(d, dict)]
    best = max(props, key=lambda d: count.get(d.get("id"), 0), default=None)
    pk = find_peaks(rows, best) if best else None
    if not pk:
        print(f"ok {os.path.basename(path)}: no device peaks (no roofline expected)")
        return
    part, tf, bw = pk
    # ops with a cost, and the runtime calls on each thread
    ops, runtime = {}, {}
    for e in events:
        cat = e.get("cat")
        key = (e.get("pid"), e.get("tid"))
        if cat == "cpu_op":
            c = cost(e["name"], e.get("args") or {})
            if c:
                ops.setdefault(key, []).append([ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0)),
                                                e["name"], c, 0])
        elif cat in RUNTIME and "correlation" in (e.get("args") or {}):
            runtime[e["args"]["correlation"]] = (key, ns(e["ts"]))
    for v in ops.values():
        v.sort(key=lambda o: o[0])
    for e in events:
        if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset") or \
                "correlation" not in (e.get("args") or {}):
            continue
        r = runtime.get(e["args"]["correlation"])
        if not r:
            continue
        for o in ops.get(r[0], []):  # every op with a cost around the launch
            if o[0] > r[1]:
                break
            if o[0] <= r[1] < o[1]:
                o[4] += ns(e.get("dur", 0))
    want = {}
    for v in ops.values():
        for s, e, name, (fl, by, dt), t in v:
            w = want.setdefault(name, [0, 0, 0, dt, 0])
            w[0] += fl
            w[1] += by
            w[2] += t
            w[4] += 1
    out = subprocess.run([tracedoc, "ops", path, "--window", "all", "--format", "json"],
                         capture_output=True, check=True).stdout
    got = {r["name"]: r for r in json.loads(out)["rows"] if r.get("kind") == "op"}
    n = 0
    for name, (fl, by, t, dt, calls) in sorted(want.items()):
        r = got.get(name)
        if t <= 0:
            continue
        if not r or "pct_of_roofline" not in r:
            fail(f"{path}: {name}: no roofline in tracedoc's row")
            continue
        bound, pct = roof(tf, bw, dt, fl, by, t)
        close = lambda a, b: abs(a - b) <= 2e-6 + 1e-4 * abs(b)
        if not close(r.get("achieved_tflops", 0), fl / t / 1e3):
            fail(f"{path}: {name}: {r.get('achieved_tflops')} TFLOP/s, recomputed {fl / t / 1e3}")
        if not close(r.get("achieved_tbps", 0), by / t / 1e3):
            fail(f"{path}: {name}: {r.get('achieved_tbps')} TB/s, recomputed {by / t / 1e3}")
        if r.get("bound") != bound or not close(r["pct_of_roofline"], pct):
            fail(f"{path}: {name}: {r.get('bound')} {r['pct_of_roofline']}, recomputed "
                 f"{bound} {pct}")
        n += 1
    print(f"ok {os.path.basename(path)} ({part}): {n} GEMM / convolution rows recomputed")


def check_inductor(tracedoc, root, rows):
    """fixtures/roofline/inductor.json: Triton launches costed by their kernel_flop /
    kernel_num_gb (check() above), their kernels with the same figures, and MFU over them"""
    path = os.path.join(root, "fixtures/roofline/inductor.json")
    check(tracedoc, root, rows, path)
    run = lambda *a: json.loads(subprocess.run([tracedoc, *a, path, "--format", "json"],
                                               capture_output=True, check=True).stdout)
    ops = {r["name"]: r for r in run("ops", "--window", "all")["rows"] if r["kind"] == "op"}
    keys = ("achieved_tflops", "achieved_tbps", "intensity", "bound", "pct_of_roofline")
    n = 0
    for k in run("kernels", "--window", "all")["rows"]:
        if k["name"].startswith("triton_"):  # one kernel per launch, named as its launch
            want = {x: ops[k["name"]].get(x) for x in keys}
            if {x: k.get(x) for x in keys} != want:
                fail(f"inductor: kernel {k['name']}: {k}, its launch's row {want}")
            n += 1
    if n != 4:
        fail(f"inductor: {n} Triton kernels, want 4")
    with open(path) as f:
        doc = json.load(f, parse_float=Decimal)
    flops = sum(cost(e["name"], e["args"])[0] for e in doc["traceEvents"]
                if e.get("cat") == "cpu_op" and cost(e["name"], e["args"]))
    mfu = run("diagnose")["summary"].get("mfu") or {}
    if mfu.get("model_flops") != flops:
        fail(f"inductor: MFU's model_flops {mfu.get('model_flops')}, want {flops}")
    for name in ("triton_per_fused_softmax_3", "triton_poi_fused_add_relu_1"):
        if name not in ops:
            fail(f"inductor: no row {name}")
    if "pct_of_roofline" in ops.get("triton_per_fused_softmax_3", {}):
        fail("inductor: unreadable kernel_flop / kernel_num_gb gave a cost")
    if ops.get("triton_poi_fused_add_relu_1", {}).get("bound") != "memory":
        fail("inductor: a pointwise kernel with only bytes is not memory-bound")


def main():
    tracedoc, root = sys.argv[1], sys.argv[2]
    shared = os.path.join(root, "..", "shared", "traces")
    rows = peaks_table(root)
    check_inductor(tracedoc, root, rows)
    if not os.path.isdir(shared):
        print("SKIPPED: ../shared/traces is absent" + (" (the fixture failed)" if failures else ""))
        return 1 if failures else 77
    for t in TRACES:
        p = os.path.join(shared, t)
        if os.path.exists(p):
            check(tracedoc, root, rows, p)
        else:
            print(f"SKIPPED: {t} is absent")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
