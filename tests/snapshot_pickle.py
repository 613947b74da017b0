#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""_dump_snapshot()'s pickle read natively: every layout, written by Python's own pickler with
protocols 2 to 5 (and a few pickles written byte by byte), gives the same `tracedoc memory`
report as the same dict saved as JSON; the figures are checked against the raw dict here
(reserved = the segments' sizes per device, the peak by replaying the trace entries, what was
live at each oom); the real snapshots in ../shared/traces/snapshots too (skipped with a message
when ../shared is not beside the checkout).
usage: snapshot_pickle.py TRACEDOC REPO_ROOT"""
import copy
import json
import os
import pickle
import subprocess
import sys
import tempfile

TD, ROOT = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SHARED = os.path.join(ROOT, "..", "shared", "traces", "snapshots")
GB, MB = 1 << 30, 1 << 20
fails = 0
tmp = tempfile.mkdtemp(prefix="td-pickle-")


def bad(msg):
    global fails
    fails += 1
    print("FAIL", msg)


class NoGlobals(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"global {module}.{name} refused")


def to_json(o):
    """the dict as json.dump can write it: tuples and sets as lists, bytes as latin-1 text"""
    if isinstance(o, dict):
        return {k if isinstance(k, str) else str(k): to_json(v) for k, v in o.items()}
    if isinstance(o, (list, tuple, set, frozenset)):
        return [to_json(x) for x in o]
    if isinstance(o, (bytes, bytearray)):
        return o.decode("latin-1")
    return o


def report(path):
    r = subprocess.run([TD, "memory", "--format", "json", path], capture_output=True)
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace")
    d = json.loads(r.stdout)
    d.pop("path", None)
    return d, ""


def segments_of(d):
    return d if isinstance(d, list) else d.get("segments", [])


def traces_of(d):
    return [] if isinstance(d, list) else d.get("device_traces", [])


def expected(d):
    """per device: reserved, live at the end, and the replay's start, peak and ooms"""
    dev = {}
    live_end = {}
    for s in segments_of(d):
        x = dev.setdefault(s.get("device", 0), {"reserved": 0, "ooms": []})
        x["reserved"] += s.get("total_size", 0)
        for b in s.get("blocks", []):
            if b.get("state") in ("active_allocated", "active_pending_free"):
                live_end.setdefault(s.get("device", 0), {})[b["address"]] = b["size"]
    for i, tr in enumerate(traces_of(d)):
        dev.setdefault(i, {"reserved": 0, "ooms": []})
    for i in dev:
        tr = traces_of(d)[i] if i < len(traces_of(d)) else []
        known, start = {}, {}
        for e in tr:
            if e["action"] == "alloc":
                known[e["addr"]] = e["size"]
            elif e["action"] == "free_completed":
                if e["addr"] in known:
                    del known[e["addr"]]
                else:
                    start[e["addr"]] = e["size"]
        for a, sz in live_end.get(i, {}).items():
            if a not in known and a not in start:
                start[a] = sz
        live = dict(start)
        peak = total = sum(start.values())
        # reserved at each entry: the segments' sizes less what is mapped after it
        segev = [(e["size"] if e["action"] in ("segment_alloc", "segment_map") else
                  -e["size"] if e["action"] in ("segment_free", "segment_unmap") else 0)
                 for e in tr]
        after = sum(segev)
        dev[i]["start"] = total
        for k, e in enumerate(tr):
            after -= segev[k]
            if e["action"] == "alloc":
                live[e["addr"]] = e["size"]
                total += e["size"]
            elif e["action"] == "free_completed" and e["addr"] in live:
                total -= live.pop(e["addr"])
            elif e["action"] == "oom":
                reserved = dev[i]["reserved"] - after
                spare = max(reserved - total, 0) + max(e.get("device_free", -1), 0)
                dev[i]["ooms"].append((e["size"], e.get("device_free", -1), total, reserved,
                                       "fragmentation" if spare >= e["size"] else "live memory"))
            peak = max(peak, total)
        dev[i]["peak"] = peak
        dev[i]["entries"] = len(tr)
    return dev


def check_figures(name, d, rep):
    want = expected(d)
    got = {x["id"]: x for x in rep["devices"]}
    for i, w in want.items():
        if i not in got:
            bad(f"{name}: device {i} missing")
            continue
        g = got[i]
        pairs = [("reserved_bytes", w["reserved"]), ("peak_allocated_bytes", w["peak"]),
                 ("allocated_at_trace_start_bytes", w["start"]), ("entries", w["entries"])]
        for k, v in pairs:
            if g[k] != v:
                bad(f"{name}: device {i} {k} {g[k]}, the raw dict says {v}")
        oo = [(o["requested_bytes"], o["device_free_bytes"], o["allocated_bytes"],
               o["reserved_bytes"], o["cause"]) for o in g["ooms"]]
        if oo != w["ooms"]:
            bad(f"{name}: device {i} ooms {oo}, the raw dict says {w['ooms']}")


def compare(name, d, data):
    """the pickle bytes `data` and d saved as JSON: the same report, the figures right"""
    pk = os.path.join(tmp, name + ".pickle")
    js = os.path.join(tmp, name + ".json")
    with open(pk, "wb") as f:
        f.write(data)
    with open(js, "w") as f:
        json.dump(to_json(d), f)
    a, ea = report(pk)
    b, eb = report(js)
    if a is None or b is None:
        bad(f"{name}: pickle: {ea.strip()} json: {eb.strip()}")
        return
    if a != b:
        bad(f"{name}: the pickle's report differs from the JSON's")
        return
    check_figures(name, d, a)


def frame(f, line, name):
    return {"filename": f, "line": line, "name": name}


def layouts():
    base = json.load(open(os.path.join(ROOT, "fixtures", "memory", "snapshot.json")))
    out = {"fixture": base}
    cur = copy.deepcopy(base)
    cur["allocator_settings"] = {"PYTORCH_CUDA_ALLOC_CONF": "", "max_split_size": -1,
                                 "garbage_collection_threshold": 0.0,
                                 "expandable_segments": False,
                                 "roundup_power2_divisions": {"1": 0, "2": 0}}
    cur["external_annotations"] = [{"stage": "START", "name": "step", "device": 0,
                                    "time_us": 1}]
    for s in cur["segments"]:
        s["segment_pool_id"] = (0, 0)
        s["is_expandable"] = False
    for e in cur["device_traces"][0]:
        e["compile_context"] = "N/A"
        e["user_metadata"] = b"meta"
    out["current"] = cur
    # frames shared by reference between a block and its trace entry (torch shares them)
    shared = copy.deepcopy(base)
    st = shared["segments"][0]["blocks"][1]["frames"]
    shared["device_traces"][0][1]["frames"] = st
    out["shared-frames"] = shared
    # older PyTorch: no time_us, one trace list per device, two devices, the first empty
    old = {"segments": [
        {"device": 0, "address": 1 << 40, "total_size": 2 * MB, "stream": 0,
         "blocks": [{"address": 1 << 40, "size": MB, "state": "active_allocated",
                     "frames": [frame("a.py", 1, "f")]}]},
        {"device": 1, "address": 1 << 41, "total_size": 20 * MB, "stream": 0,
         "blocks": [{"address": 1 << 41, "size": 4 * MB, "state": "active_allocated",
                     "frames": []}]}],
        "device_traces": [[], [
            {"action": "alloc", "addr": 1 << 41, "size": 4 * MB, "stream": 0,
             "frames": [frame("b.py", 2, "g")]},
            {"action": "alloc", "addr": (1 << 41) + 4 * MB, "size": 8 * MB, "stream": 0,
             "frames": [frame("b.py", 3, "h")]},
            {"action": "free_completed", "addr": (1 << 41) + 4 * MB, "size": 8 * MB,
             "stream": 0, "frames": []}]]}
    out["older"] = old
    # torch.cuda.memory_snapshot(): the bare list of segments, three devices
    out["bare-list"] = [{"device": d % 3, "address": d * GB, "total_size": (d + 1) * MB,
                         "stream": 0, "blocks": []} for d in range(7)]
    out["bare-one"] = [{"device": 2, "address": 0, "total_size": 3 * MB, "blocks": [
        {"address": 0, "size": MB, "state": "active_allocated", "frames": []}]}]
    # 70,000 distinct sites, each stack shared by its alloc and its free: more notes than the
    # memo's 2-byte slots hold (kept in the memo itself past 0xfffe)
    many, trm = {"segments": [{"device": 0, "address": 0, "total_size": GB, "blocks": []}]}, []
    stacks = []
    for i in range(70000):
        st = [frame(f"site_{i}.py", i, "f")]
        stacks.append(st)
        trm.append({"action": "alloc", "addr": 4096 * i, "size": 512 * (1 + i % 7),
                    "stream": 0, "time_us": 2 * i, "frames": st})
        if i % 3:
            trm.append({"action": "free_completed", "addr": 4096 * i, "size": 512 * (1 + i % 7),
                        "stream": 0, "time_us": 2 * i + 1, "frames": st})
    for i in range(69990, 70000):  # stacks met again past the 65,535th note: the top sites
        trm.append({"action": "alloc", "addr": GB + MB * i, "size": MB, "stream": 0,
                    "time_us": 200000 + i, "frames": stacks[i]})
    many["device_traces"] = [trm]
    out["many-sites"] = many
    # expandable segments, an interleaved snapshot action, an oom
    exp = copy.deepcopy(base)
    tr = exp["device_traces"][0]
    tr.insert(1, {"action": "segment_map", "addr": 1 << 45, "size": 2 * MB, "stream": 0,
                  "time_us": 1, "frames": []})
    tr.insert(3, {"action": "snapshot", "addr": 0, "size": 0, "stream": 0, "time_us": 2,
                  "frames": []})
    tr.append({"action": "segment_unmap", "addr": 1 << 45, "size": 2 * MB, "stream": 0,
               "time_us": 99, "frames": []})
    tr.append({"action": "oom", "addr": 0, "size": 7 * GB, "stream": 0, "time_us": 100,
               "device_free": 12345, "frames": [frame("train.py", 80, "again")]})
    for s in exp["segments"]:
        s["is_expandable"] = True
    out["expandable-oom"] = exp
    # batches: 1001 entries (a trailing single APPEND), 2000 (two full batches), one entry
    for n in (1, 1000, 1001, 2000):
        t = []
        for i in range(n):
            t.append({"action": "alloc", "addr": 4096 * i, "size": 512 + i, "stream": 0,
                      "time_us": i, "frames": [frame("loop.py", i % 7, "step")]})
            if i % 3 == 2:
                t.append({"action": "free_completed", "addr": 4096 * (i - 1), "size": 512 + i - 1,
                          "stream": 0, "time_us": i, "frames": []})
        t = t[:n]
        out[f"batch-{n}"] = {"segments": [{"device": 0, "address": 0, "total_size": 8 * MB,
                                           "blocks": []}], "device_traces": [t]}
    # odd values a dict may hold: large addresses, negative and huge ints, floats, None, sets
    odd = copy.deepcopy(base)
    odd["segments"][0]["blocks"][0]["address"] = (1 << 64) - 1
    odd["extra"] = {"neg": -5, "huge": 1 << 100, "f": 1.5, "n": None, "t": True,
                    "s": {1, 2}, "fs": frozenset({3}), "nested": [[[(1, 2, 3, 4, 5)]]]}
    out["odd-values"] = odd
    return out


def handwritten():
    """pickles written byte by byte: protocol 2 with BINPUT / SETITEM / APPEND, and protocol 4
    with FRAME, MEMOIZE, LONG_BINGET"""
    seg = (b"}q\x03(X\x06\x00\x00\x00deviceq\x04K\x01X\n\x00\x00\x00total_sizeq\x05"
           b"J\x00\x00\x10\x00u")
    p2 = b"\x80\x02}q\x00X\x08\x00\x00\x00segmentsq\x01]q\x02" + seg + b"as."
    body = (b"}\x94(\x8c\x08segments\x94]\x94(}\x94(\x8c\x06device\x94K\x00\x8c\ntotal_size"
            b"\x94\x8a\x05\x00\x00\x00\x00\x01u}\x94(j\x04\x00\x00\x00K\x00j\x05\x00\x00\x00"
            b"M\x00\x04ue\x8c\rdevice_traces\x94]\x94]\x94au.")
    p4 = b"\x80\x04\x95" + len(body).to_bytes(8, "little") + body
    return {"hand-proto2": p2, "hand-proto4": p4}


for name, d in layouts().items():
    for proto in (2, 3, 4, 5):
        data = pickle.dumps(d, protocol=proto)
        glob = -1
        for g in (b"c_codecs\n", b"c__builtin__\n", b"cbuiltins\n"):
            if g in data and (glob < 0 or data.index(g) < glob):
                glob = data.index(g)
        if glob >= 0:
            # bytes (protocol 2) and sets (2, 3) need a global (codecs.encode, builtins.set):
            # refused, with the opcode and its byte
            p = os.path.join(tmp, f"{name}-p{proto}.pickle")
            with open(p, "wb") as f:
                f.write(data)
            r = subprocess.run([TD, "memory", p], capture_output=True)
            if r.returncode != 3 or f"byte {glob}: opcode GLOBAL".encode() not in r.stderr:
                bad(f"{name}-p{proto}: exit {r.returncode}, {r.stderr[:200]!r}")
            continue
        compare(f"{name}-p{proto}", d, data)
for name, data in handwritten().items():
    compare(name, NoGlobals(__import__("io").BytesIO(data)).load(), data)

# a pickle under a .json name: told by its bytes
d = layouts()["current"]
p = os.path.join(tmp, "saved-as.json")
with open(p, "wb") as f:
    f.write(pickle.dumps(d, protocol=4))
a, err = report(p)
if a is None:
    bad(f"a pickle named .json: {err.strip()}")
else:
    check_figures("saved-as.json", d, a)

if not os.path.isdir(SHARED):
    print(f"skip: the real snapshots: {SHARED} is not there")
else:
    for f in sorted(os.listdir(SHARED)):
        if f.endswith(".pickle"):
            data = open(os.path.join(SHARED, f), "rb").read()
            compare("real-" + f[:-7], NoGlobals(__import__("io").BytesIO(data)).load(), data)
            print("ok", f)

subprocess.run(["rm", "-rf", tmp])
print(f"snapshot_pickle: {fails} failed")
sys.exit(1 if fails else 0)
