#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A memory snapshot beside the other commands: a trace command given one (a pickle, its dict
as JSON, torch.cuda.memory_snapshot()'s bare list, compressed, on a pipe) says what it is and
which command reads it (exit 3); `tracedoc memory A B` compares two snapshots, its figures
computed here from the raw dicts; a gate budget on a snapshot's peak.
usage: snapshot_commands.py TRACEDOC REPO_ROOT"""
import gzip
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
tmp = tempfile.mkdtemp(prefix="td-snapcmd-")


def bad(msg):
    global fails
    fails += 1
    print("FAIL", msg)


def run(*args, stdin=None):
    return subprocess.run([TD, *args], capture_output=True, input=stdin)


def write(name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def frame(f, line, name):
    return {"filename": f, "line": line, "name": name}


# --- 1. a snapshot given to a trace command
snap = json.load(open(os.path.join(ROOT, "fixtures", "memory", "snapshot.json")))
inputs = {
    "pickle": write("s.pickle", pickle.dumps(snap, protocol=4)),
    "json": write("s.json", json.dumps(snap).encode()),
    "bare-list": write("bare.json", json.dumps(snap["segments"]).encode()),
    "pickle-gz": write("s.pickle.gz", gzip.compress(pickle.dumps(snap, protocol=5))),
    "pickle-as-json": write("saved.json", pickle.dumps(snap, protocol=4)),
}
trace_cmds = ["diagnose", "stats", "ops", "kernels", "summarize", "replay", "whatif", "check",
              "critical-path"]
for kind, p in inputs.items():
    for c in trace_cmds + ["gate"]:
        r = run(c, p)
        want = f"{p} is a PyTorch memory snapshot".encode()
        if r.returncode != 3 or want not in r.stderr or f"tracedoc memory {p}".encode() \
                not in r.stderr:
            bad(f"{c} {kind}: exit {r.returncode}, {r.stderr[:300]!r}")
    r = run("memory", p)  # and memory reads each of them
    if r.returncode != 0:
        bad(f"memory {kind}: exit {r.returncode}, {r.stderr[:300]!r}")
for c in ("diagnose", "gate"):  # a pipe, told by its head
    r = run(c, "-", stdin=open(inputs["pickle"], "rb").read())
    if r.returncode != 3 or b"<stdin> is a PyTorch memory snapshot" not in r.stderr:
        bad(f"{c} - (a pickle on stdin): exit {r.returncode}, {r.stderr[:300]!r}")
r = run("diff", inputs["pickle"], inputs["json"])
if r.returncode != 3 or b"is a PyTorch memory snapshot" not in r.stderr:
    bad(f"diff of two snapshots: exit {r.returncode}, {r.stderr[:300]!r}")

subprocess.run(["rm", "-rf", tmp])
print(f"snapshot_commands: {fails} failed")
sys.exit(1 if fails else 0)
