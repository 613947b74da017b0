#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tracedoc ops against PyTorch's own key_averages(), cell by cell.

1. Real runs: small models profiled with torch.profiler (a linear layer with SGD, a conv net, an
   Adam step, a DataLoader loop); their exported trace goes to `tracedoc ops --wide`, and every
   cell of PyTorch's printed table that the trace can give is compared with tracedoc's printed
   cell (Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, # of Calls), and calls,
   Self CPU and CPU total with PyTorch's values to the nanosecond.
   Debian's torch is built without Kineto: its trace is the legacy array, with no [memory]
   samples, shapes or FLOPs, so tracedoc must leave those columns out (asserted).
2. FLOPs: the same runs' events (key_averages(group_by_input_shape=True)) written as a Kineto
   trace with their Input Dims (and the convolutions' Concrete Inputs, as newer Kineto writes
   them): tracedoc's FLOPs per (op, shapes) equal PyTorch's.
3. Real GPU traces (../shared/traces, skipped when absent): PyTorch's key_averages code over the
   file (tests/torch_reference.py) against tracedoc's JSON rows, nine fields each.

usage: torch_tables.py TRACEDOC [SHARED_TRACES_DIR]"""
import json
import multiprocessing
import os
import re
import subprocess
import sys
import tempfile

import torch
from torch.autograd.profiler_util import _format_time
from torch.profiler import ProfilerActivity, profile, record_function

TD = sys.argv[1]
SHARED = sys.argv[2] if len(sys.argv) > 2 else ""
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_reference  # noqa: E402  (PyTorch's key_averages over a saved trace)
failures = []


def fail(msg):
    failures.append(msg)
    if len(failures) <= 40:
        print("FAIL:", msg)


def run(*args):
    r = subprocess.run([TD, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"tracedoc {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def linear_sgd():
    m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))

    def step():
        loss = torch.nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return step


# what newer Kineto writes as the convolutions' "Concrete Inputs" (stride, padding, dilation,
# groups), by their input's shape: Debian's torch 1.13 records none, so the test says them
CONCRETE = {"[4, 3, 16, 16]": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],
            "[4, 8, 16, 16]": ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "2"]}


def conv_net():
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                            torch.nn.ReLU(), torch.nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=2),
                            torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 4 * 4, 10))
    x = torch.randn(4, 3, 16, 16)

    def step():
        with torch.no_grad():
            m(x)
    return step


def adam_step():
    m = torch.nn.Linear(256, 256)
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x = torch.randn(16, 256)

    def step():
        m(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def data_loader():
    ds = torch.utils.data.TensorDataset(torch.randn(64, 20), torch.randn(64, 1))
    dl = torch.utils.data.DataLoader(ds, batch_size=16, num_workers=0)
    m = torch.nn.Linear(20, 1)

    def step():
        for xb, yb in dl:
            torch.nn.functional.mse_loss(m(xb), yb).backward()
    return step


def table_rows(text, header_names):
    """PyTorch's or tracedoc's printed table: {name: {column: cell}}"""
    lines = text.splitlines()
    rows, cols = {}, None
    for ln in lines:
        if ln.startswith("---") or not ln.strip():
            continue
        cells = re.split(r"\s{2,}", ln.strip())
        if cols is None:
            if cells and cells[0] == "Name":
                cols = cells
            continue
        if len(cells) != len(cols) or ln.startswith(("Self CPU time total", "tracedoc ")):
            continue
        rows[cells[0]] = dict(zip(cols, cells))
    return rows, cols or []


def short(name):
    # _build_table: a name of 52 characters or more is cut to 52 and "..."
    return name[:52] + "..." if len(name) >= 52 else name


def real_runs(tmp):
    torch.manual_seed(0)
    for label, make in [("linear_sgd", linear_sgd), ("conv_net", conv_net),
                        ("adam_step", adam_step), ("data_loader", data_loader)]:
        step = make()
        step()  # warm-up outside the profile
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                     profile_memory=True, with_flops=True, with_stack=True) as p:
            for i in range(3):
                with record_function("step%d" % i):
                    step()
        trace = os.path.join(tmp, label + ".json")
        p.export_chrome_trace(trace)
        ka = p.key_averages()
        printed = ka.table(sort_by="cpu_time_total", row_limit=1000)
        pt_rows, pt_cols = table_rows(printed, None)
        js = json.loads(run("ops", trace, "--window", "all", "--format", "json"))
        td = {r["name"]: r for r in js["rows"]}
        td_rows, td_cols = table_rows(run("ops", trace, "--window", "all", "--wide",
                                          "--top", "100000"), None)
        n = 0
        for e in ka:
            r = td.get(e.key)
            if r is None:
                fail(f"{label}: no row {e.key!r}")
                continue
            for f, v in [("calls", e.count), ("self_cpu_ns", int(round(e.self_cpu_time_total * 1000))),
                         ("cpu_total_ns", int(round(e.cpu_time_total * 1000)))]:
                if r[f] != v:
                    fail(f"{label}: {e.key} {f}: tracedoc {r[f]}, PyTorch {v}")
            n += 1
        if len(td) != len(list(ka)):
            fail(f"{label}: {len(td)} rows, PyTorch {len(list(ka))}")
        for absent in ("cpu_mem_bytes", "flops", "self_cuda_ns"):
            if any(absent in r for r in js["rows"]):
                fail(f"{label}: {absent} given, but the legacy trace holds no such data")
        cells = 0
        for name, pr in pt_rows.items():
            tr = next((v for k, v in td_rows.items() if short(k) == name), None)
            if tr is None:
                fail(f"{label}: printed row {name!r} not in tracedoc's table")
                continue
            for col in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                        "# of Calls"):
                if pr.get(col) != tr.get(col):
                    fail(f"{label}: {name} {col}: tracedoc {tr.get(col)!r}, PyTorch {pr.get(col)!r}")
                cells += 1
        total = re.search(r"Self CPU time total: (\S+)", printed).group(1)
        if _format_time(js["self_cpu_total_ns"] / 1000) != total:
            fail(f"{label}: Self CPU time total {js['self_cpu_total_ns']} ns, PyTorch {total}")
        print(f"ok {label}: {n} rows, {cells} printed cells")
        flops_check(tmp, label, p)


def flops_check(tmp, label, p):
    """PyTorch's FLOPs per (op, shapes) against tracedoc's from the same Input Dims"""
    evs = []
    for e in p.events():
        if e.device_type.name != "CPU":
            continue
        args = {"Input Dims": e.input_shapes}
        if e.name == "aten::conv2d" and e.input_shapes and str(e.input_shapes[0]) in CONCRETE:
            args["Concrete Inputs"] = CONCRETE[str(e.input_shapes[0])]
        evs.append({"ph": "X", "cat": "cpu_op", "name": e.name, "pid": 1, "tid": e.thread,
                    "ts": e.time_range.start, "dur": e.time_range.end - e.time_range.start,
                    "args": args})
    path = os.path.join(tmp, label + ".kineto.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": evs}, f)
    js = json.loads(run("ops", path, "--window", "all", "--group-by", "shape",
                        "--format", "json"))
    td = {(r["name"], r["shape"]): r for r in js["rows"]}
    n = 0
    for e in p.key_averages(group_by_input_shape=True):
        r = td.get((e.key, str(e.input_shapes)))
        if r is None:
            fail(f"{label}: no row {e.key} {e.input_shapes}")
            continue
        want = e.flops if e.flops else None
        if r.get("flops") != want and not (want is None and r.get("flops") in (None, 0)):
            fail(f"{label}: {e.key} {e.input_shapes} flops: tracedoc {r.get('flops')}, "
                 f"PyTorch {e.flops}")
        n += bool(want)
    print(f"ok {label}: FLOPs of {n} (op, shapes) rows")


def shared_traces():
    if not SHARED or not os.path.isdir(SHARED):
        print("SKIPPED: real GPU traces: ../shared/traces is absent")
        return
    names = sorted(f for f in os.listdir(SHARED) if f.endswith((".json", ".json.gz")))
    dlrm = os.path.join(SHARED, "dlrm-8rank")
    paths = [os.path.join(SHARED, f) for f in names]
    if os.path.isdir(dlrm):
        paths += [os.path.join(dlrm, sorted(os.listdir(dlrm))[0])]
    fields = ["calls", "self_cpu_ns", "cpu_total_ns", "self_cuda_ns", "cuda_total_ns",
              "cpu_mem_bytes", "self_cpu_mem_bytes", "cuda_mem_bytes", "self_cuda_mem_bytes"]
    # PyTorch's tables of every trace, two at a time in processes that share the import
    with multiprocessing.get_context("fork").Pool(2) as pool:
        refs = pool.map(torch_reference.rows, paths, chunksize=1)
    for path, ref in zip(paths, refs):
        js = json.loads(run("ops", path, "--window", "all", "--format", "json"))
        td = {(r["name"], "cuda" if r["kind"] == "gpu" else "cpu"): r for r in js["rows"]}
        if len(td) != len(ref):
            fail(f"{os.path.basename(path)}: {len(td)} rows, PyTorch {len(ref)}")
        cells = 0
        for r in ref:
            t = td.get((r["name"], r["device"]))
            if t is None:
                fail(f"{os.path.basename(path)}: no row {r['name']!r} ({r['device']})")
                continue
            for f in fields:
                # a column the trace cannot give is absent: PyTorch's 0 there
                if t.get(f, 0) != r[f]:
                    fail(f"{os.path.basename(path)}: {r['name'][:60]} {f}: tracedoc "
                         f"{t.get(f)}, PyTorch {r[f]}")
                cells += 1
        print(f"ok {os.path.basename(path)}: {len(ref)} rows, {cells} values")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        real_runs(tmp)
    shared_traces()
    if failures:
        print(f"{len(failures)} failures")
        sys.exit(1)


if __name__ == "__main__":
    main()
