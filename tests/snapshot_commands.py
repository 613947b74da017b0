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
    for c in trace_cmds:
        r = run(c, p)
        want = f"{p} is a PyTorch memory snapshot".encode()
        if r.returncode != 3 or want not in r.stderr or f"tracedoc memory {p}".encode() \
                not in r.stderr:
            bad(f"{c} {kind}: exit {r.returncode}, {r.stderr[:300]!r}")
    r = run("memory", p)  # and memory reads each of them
    if r.returncode != 0:
        bad(f"memory {kind}: exit {r.returncode}, {r.stderr[:300]!r}")
for c in ("diagnose", "stats"):  # a pipe, told by its head
    r = run(c, "-", stdin=open(inputs["pickle"], "rb").read())
    if r.returncode != 3 or b"<stdin> is a PyTorch memory snapshot" not in r.stderr:
        bad(f"{c} - (a pickle on stdin): exit {r.returncode}, {r.stderr[:300]!r}")
r = run("diff", inputs["pickle"], inputs["json"])
if r.returncode != 3 or b"is a PyTorch memory snapshot" not in r.stderr:
    bad(f"diff of two snapshots: exit {r.returncode}, {r.stderr[:300]!r}")


# --- 2. two snapshots compared


def make(batch, extra):
    """a snapshot of two training steps on GPU 0 (and a small GPU 1 when extra): parameters,
    activations of `batch` rows, gradients; `extra` adds a site and a segment"""
    MB = 1 << 20
    tr, addr, live = [], [1 << 32], {}

    def alloc(dev, size, site, tr=tr):
        a = addr[0]
        addr[0] += size + 4096
        f, line, name = site
        tr.append({"action": "alloc", "addr": a, "size": size, "stream": 0,
                   "time_us": len(tr), "frames": [frame(f, line, name)]})
        live[a] = (size, site)
        return a

    def free(a):
        tr.append({"action": "free_requested", "addr": a, "size": live[a][0], "stream": 0,
                   "time_us": len(tr), "frames": []})
        tr.append({"action": "free_completed", "addr": a, "size": live[a][0], "stream": 0,
                   "time_us": len(tr), "frames": []})
        del live[a]

    def seg(act, size):
        tr.append({"action": act, "addr": 1 << 40, "size": size, "stream": 0,
                   "time_us": len(tr), "frames": []})

    seg("segment_alloc", 256 * MB)
    params = [alloc(0, 4 * MB, ("model.py", 10, "__init__")) for _ in range(4)]
    for step in range(2):
        acts = [alloc(0, batch * MB, ("model.py", 42, "forward")) for _ in range(3)]
        if extra:
            seg("segment_alloc", 64 * MB)
            acts.append(alloc(0, 16 * MB, ("attn.py", 7, "softmax")))
        grads = [alloc(0, 4 * MB, ("train.py", 60, "backward")) for _ in params]
        for a in acts:
            free(a)
        for g in grads:
            free(g)
        if extra:
            seg("segment_free", 64 * MB)
    blocks = [{"address": a, "size": sz, "state": "active_allocated",
               "frames": [frame(*site)]} for a, (sz, site) in sorted(live.items())]
    d = {"segments": [{"device": 0, "address": 1 << 40, "total_size": 256 * MB, "stream": 0,
                       "blocks": blocks}], "device_traces": [tr]}
    if not extra:
        d["segments"].append({"device": 1, "address": 1 << 41, "total_size": 2 * MB,
                              "stream": 0, "blocks": [{"address": 1 << 41, "size": MB,
                                                       "state": "active_allocated",
                                                       "frames": [frame("x.py", 1, "f")]}]})
        d["device_traces"].append([])
    return d


def peaks(d):
    """per device: peak allocated, peak reserved, and {site: bytes} at the peak, replayed"""
    out = {}
    for dev, tr in enumerate(d["device_traces"]):
        res = sum(s["total_size"] for s in d["segments"] if s["device"] == dev)
        changes = [e["size"] if e["action"] == "segment_alloc" else -e["size"]
                   if e["action"] == "segment_free" else 0 for e in tr]
        after = sum(changes)
        rpeak = res - after
        live, total, peak = {}, 0, 0
        site_at = {}
        if not tr:  # no history: what is live at the snapshot
            for s in d["segments"]:
                for b in s["blocks"] if s["device"] == dev else []:
                    f = b["frames"][0]
                    k = f"{f['filename']}({f['line']}): {f['name']}"
                    site_at[k] = site_at.get(k, 0) + b["size"]
            peak = sum(site_at.values())
        for e, c in zip(tr, changes):
            after -= c
            rpeak = max(rpeak, res - after)
            if e["action"] == "alloc":
                f = e["frames"][0]
                live[e["addr"]] = (e["size"], f"{f['filename']}({f['line']}): {f['name']}")
                total += e["size"]
            elif e["action"] == "free_completed":
                total -= live.pop(e["addr"])[0]
            if total > peak:
                peak = total
                site_at = {}
                for sz, k in live.values():
                    site_at[k] = site_at.get(k, 0) + sz
        out[dev] = (peak, rpeak, site_at)
    return out


A, B = make(8, False), make(12, True)
pa = write("a.pickle", pickle.dumps(A, protocol=4))
pb = write("b.json", json.dumps(B).encode())
r = run("memory", pa, pb, "--format", "json")
if r.returncode != 0:
    bad(f"memory A B: exit {r.returncode}, {r.stderr[:300]!r}")
else:
    got = json.loads(r.stdout)
    ea, eb = peaks(A), peaks(B)
    if got["schema"] != "tracedoc.memory_diff/1" or got["base"] != pa or got["current"] != pb:
        bad(f"memory A B: head {got['schema']} {got['base']} {got['current']}")
    devs = {x["id"]: x for x in got["devices"]}
    if sorted(devs) != sorted(set(ea) | set(eb)):
        bad(f"memory A B: devices {sorted(devs)}, the dicts have {sorted(set(ea) | set(eb))}")
    for dev, x in devs.items():
        for side, e in (("base", ea), ("current", eb)):
            if dev not in e:
                if x[side] is not None:
                    bad(f"device {dev} is not in {side}, yet {x[side]}")
                continue
            w = {"peak_allocated_bytes": e[dev][0], "peak_reserved_bytes": e[dev][1]}
            g = {k: x[side][k] for k in w}
            if g != w:
                bad(f"device {dev} {side}: {g}, the dict says {w}")
        sa = ea.get(dev, (0, 0, {}))[2]
        sb = eb.get(dev, (0, 0, {}))[2]
        want = [(k, sa.get(k, 0), sb.get(k, 0)) for k in set(sa) | set(sb)
                if sa.get(k, 0) != sb.get(k, 0)]
        want.sort(key=lambda t: (-abs(t[2] - t[1]), t[0]))
        have = [(c["site"], c["base_bytes"], c["current_bytes"]) for c in x["site_changes"]]
        if have != want:
            bad(f"device {dev} site changes {have}, the dicts say {want}")
    # the known difference, by hand: 3 activations of 12 MB against 8, a softmax of 16 MB
    # only in B; parameters and gradients alike
    d0 = [(c["site"], c["base_bytes"], c["current_bytes"]) for c in devs[0]["site_changes"]]
    if d0 != [("attn.py(7): softmax", 0, 16 * MB), ("model.py(42): forward", 24 * MB, 36 * MB)]:
        bad(f"device 0's changes {d0}")
for fmt in ("text", "md"):
    r = run("memory", pa, pb, "--format", fmt)
    if r.returncode != 0 or b"model.py(42): forward" not in r.stdout:
        bad(f"memory A B --format {fmt}: exit {r.returncode}, {r.stderr[:300]!r}")
r = run("memory", pa, os.path.join(ROOT, "fixtures", "memory", "legacy-bytes.json"))
if r.returncode != 3 or b"is not a caching-allocator snapshot" not in r.stderr:
    bad(f"memory SNAPSHOT TRACE: exit {r.returncode}, {r.stderr[:300]!r}")
r = run("memory", pa, pb, pb)
if r.returncode != 2:
    bad(f"memory with three operands: exit {r.returncode}")

# --- 3. gate: a snapshot's peak against gate.budgets.max_snapshot_peak_bytes


def gate(snapshot, budget, *extra):
    cfg = write("cfg.json", json.dumps({"gate": {"budgets": {
        "max_snapshot_peak_bytes": budget}}}).encode())
    r = run("gate", snapshot, "--config", cfg, "--format", "json", *extra)
    return r, json.loads(r.stdout) if r.stdout else None


eb = peaks(B)
peak_b = eb[0][0]  # B's peak on GPU 0, replayed here
for budget, want_rc in ((peak_b, 0), (peak_b - 1, 1)):
    r, g = gate(pb, budget)
    if r.returncode != want_rc or g is None:
        bad(f"gate B, budget {budget} (peak {peak_b}): exit {r.returncode}, {r.stderr[:300]!r}")
        continue
    checks = {c["name"]: c for c in g["checks"]}
    c = checks.get("peak_allocated_bytes (GPU 0)")
    if not c or c["current"] != peak_b or c["threshold"] != budget or \
            c["verdict"] != ("pass" if want_rc == 0 else "fail"):
        bad(f"gate B, budget {budget}: check {c}")
# A has two devices: GPU 1 without history is judged on what is live at the snapshot
ea = peaks(A)
r, g = gate(pa, max(ea[0][0], ea[1][0]))
if r.returncode != 0 or g is None or len(g["checks"]) != 2:
    bad(f"gate A: exit {r.returncode}, {r.stderr[:300]!r}")
elif [c["current"] for c in g["checks"]] != [ea[0][0], ea[1][0]]:
    bad(f"gate A: peaks {[c['current'] for c in g['checks']]}, the dict says "
        f"{[ea[0][0], ea[1][0]]}")
r = run("gate", pb, "--format", "json")  # no budget: nothing to judge, which fails
if r.returncode != 1 or b"max_snapshot_peak_bytes is not set" not in r.stderr:
    bad(f"gate without the budget: exit {r.returncode}, {r.stderr[:300]!r}")
r, g = gate(pb, peak_b, "--baseline", pa)  # a snapshot has no baseline
if r.returncode != 2:
    bad(f"gate --baseline SNAPSHOT SNAPSHOT: exit {r.returncode}, {r.stderr[:300]!r}")
r = run("config", "--check", write("neg.json", b'{"gate": {"budgets": '
                                                b'{"max_snapshot_peak_bytes": -1}}}'))
if r.returncode != 2:
    bad(f"a negative max_snapshot_peak_bytes: exit {r.returncode}")

# --- 4. --device-memory: a figure above the device's memory is called out as impossible
peak_b, rpeak_b = eb[0][0], eb[0][1]
res_b = sum(s["total_size"] for s in B["segments"] if s["device"] == 0)
for cap in (rpeak_b - 1, peak_b - 1, max(rpeak_b, peak_b)):
    r = run("memory", pb, "--device-memory", str(cap), "--format", "json")
    d0 = json.loads(r.stdout)["devices"][0] if r.returncode == 0 else None
    want = [k for k, v in (("reserved_bytes", res_b), ("peak_reserved_bytes", rpeak_b),
                           ("peak_allocated_bytes", peak_b)) if v > cap]
    if d0 is None or d0["device_memory_bytes"] != cap or \
            [k for k in d0["above_device_memory"] if k != "allocated_at_trace_start_bytes"] != want:
        bad(f"--device-memory {cap}: {d0 and (d0['device_memory_bytes'], d0['above_device_memory'])}"
            f", want {want}")
    t = run("memory", pb, "--device-memory", str(cap)).stdout
    if (b"impossible on a device" in t) != bool(want):
        bad(f"--device-memory {cap}: the text {'does not call' if want else 'calls'} it impossible")
    t = run("memory", pa, pb, "--device-memory", str(cap), "--format", "json")
    if t.returncode or [k for k in json.loads(t.stdout)["devices"][0]["current"]["above_device_memory"]
                        if k != "allocated_at_trace_start_bytes"] != want:
        bad(f"memory A B --device-memory {cap}: exit {t.returncode}")
r = run("memory", pb, "--format", "json")
if json.loads(r.stdout)["devices"][0]["device_memory_bytes"] != -1:
    bad("without --device-memory the device's memory is unknown (-1)")
for v, want in (("2GiB", 2 << 30), ("1.5KB", 1500), ("81920MiB", 81920 << 20)):
    r = run("memory", pb, "--device-memory", v, "--format", "json")
    if r.returncode or json.loads(r.stdout)["devices"][0]["device_memory_bytes"] != want:
        bad(f"--device-memory {v}: exit {r.returncode}")
for v in ("", "x", "-5", "12QB", "0"):
    r = run("memory", pb, "--device-memory", v)
    if r.returncode != 2 or b"--device-memory" not in r.stderr:
        bad(f"--device-memory {v!r}: exit {r.returncode}, {r.stderr[:200]!r}")

subprocess.run(["rm", "-rf", tmp])
print(f"snapshot_commands: {fails} failed")
sys.exit(1 if fails else 0)
