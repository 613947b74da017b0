#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The torch.profiler handler (python/tracedoc_torch.py) on a real model: PyTorch (Debian's
python3-torch, CPU) profiles a few training steps of a small MLP fed by a DataLoader; the
handler must export the trace compressed, tracedoc must read the steps the profiler's schedule
recorded, the top findings must come as one line each, and the Markdown report be written. A
missing tracedoc is an error when the handler is made. Skips (77) without torch.
usage: torch_handler_test.py TRACEDOC REPO_ROOT"""
import io
import json
import os
import subprocess
import sys
import tempfile

tracedoc, root = os.path.abspath(sys.argv[1]), sys.argv[2]
try:
    import torch
except ImportError:
    print("SKIPPED: torch is not importable here (scripts/setup.sh --test installs python3-torch)")
    sys.exit(77)
sys.path.insert(0, os.path.join(root, "python"))
from tracedoc_torch import TracedocError, tracedoc_handler  # noqa: E402

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}")


tmp = tempfile.mkdtemp()
# tracedoc missing: said when the handler is made, before anything is profiled
try:
    tracedoc_handler(tmp, tracedoc=os.path.join(tmp, "no-tracedoc"))
    check(False, "a missing tracedoc was not an error")
except TracedocError as e:
    check("tracedoc not found" in str(e), f"the error says why: {e}")

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.DataLoader(
    torch.utils.data.TensorDataset(torch.randn(512, 64), torch.randint(0, 10, (512,))),
    batch_size=32)
lines = io.StringIO()
h = tracedoc_handler(os.path.join(tmp, "traces"), md=os.path.join(tmp, "report-{step}.md"),
                     tracedoc=tracedoc, out=lines)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3,
                                                                     repeat=1),
                            on_trace_ready=h, record_shapes=True) as prof:
    for i, (x, y) in enumerate(data):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
        if i == 6:
            break

trace = h.last_trace
check(trace and trace.endswith(".pt.trace.json.gz") and os.path.exists(trace),
      f"the trace was not written: {trace}")
if trace and os.path.exists(trace):
    with open(trace, "rb") as f:
        check(f.read(2) == b"\x1f\x8b", "the trace is not gzip")
    stats = json.loads(subprocess.run([tracedoc, "stats", "--format", "json", trace],
                                      stdout=subprocess.PIPE, check=True).stdout)
    check(stats["steps"]["count"] == 3, f"tracedoc read {stats['steps']} steps, not the 3 active")
    check(stats["by_kind"].get("cpu_op", 0) > 50, f"too few ops: {stats['by_kind']}")
report = h.last_report or {}
check(report.get("schema") == "tracedoc.report/1", "no tracedoc.report/1 kept")
out = lines.getvalue().splitlines()
check(out and all(l.startswith("tracedoc: ") for l in out), f"the lines printed: {out}")
check(len(out) == max(1, min(3, len(report.get("findings", [])))), f"{len(out)} lines printed")
for f in report.get("findings", [])[:3]:
    check(any(f["title"] in l and f"[{f['severity']}] {f['rule']}" in l for l in out),
          f"finding {f['rule']} not printed")
md = [p for p in os.listdir(tmp) if p.startswith("report-") and p.endswith(".md")]
check(len(md) == 1, f"markdown reports: {md}")
if md:
    with open(os.path.join(tmp, md[0])) as f:
        check(f.read().startswith("### tracedoc"), "the Markdown report is not tracedoc's")
print("\n".join(out))
print(f"torch handler: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
