#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gate` and `diff` between an Nsight Systems export and a Kineto trace of the same run (issue
49). No real pair exists, so one is made: a small Kineto trace from bench/gen_trace, and its
export written here with the same kernels, copies, runtime calls, syncs and ranges, in the
tables and columns of a real nsys 2024.6 export (SCHEMA: the CREATE TABLE statements of
../shared/traces/nsys/nsys-2024.6-cs336-2.7B-nvtx-a100.sqlite, comments left out; checked
against it when ../shared is there). Kineto's ranges (ProfilerStep#N, the DataLoader) and ops
become NVTX push/pop ranges, as `nsys profile --trace=cuda,nvtx --pytorch=autograd-nvtx`
records them; runtime calls keep nsys's "_v7000" suffixes; times are ns from the first event.
Asserted: the kernel table (name, calls, total) is the same from both, `diff` between them
finds no GPU op that changed and no step-time change, and `gate` passes each against the other
as baseline.
usage: nsys_pair.py TRACEDOC GEN_TRACE REPO_ROOT
       nsys_pair.py --convert TRACE.json OUT.sqlite"""
import decimal
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

SCHEMA = {
    "StringIds":
        ("id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL"),
    "ThreadNames":
        ("nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER"),
    "PROCESSES":
        ("globalPid INTEGER, pid INTEGER, name TEXT"),
    "TARGET_INFO_GPU":
        ("vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete "
         "INTEGER, l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate "
         "INTEGER, smCount INTEGER, pwGpuId INTEGER, uuid TEXT, luid INTEGER, chipName TEXT, "
         "cuDevice INTEGER, ctxswDevPath TEXT, ctrlDevPath TEXT, revision INTEGER, nodeMask "
         "INTEGER, constantMemory INTEGER, maxIPC INTEGER, maxRegistersPerBlock INTEGER, "
         "maxShmemPerBlock INTEGER, maxShmemPerBlockOptin INTEGER, maxShmemPerSm INTEGER, "
         "maxRegistersPerSm INTEGER, threadsPerWarp INTEGER, asyncEngines INTEGER, maxWarpsPerSm "
         "INTEGER, maxBlocksPerSm INTEGER, maxThreadsPerBlock INTEGER, maxBlockDimX INTEGER, "
         "maxBlockDimY INTEGER, maxBlockDimZ INTEGER, maxGridDimX INTEGER, maxGridDimY INTEGER, "
         "maxGridDimZ INTEGER, computeMajor INTEGER, computeMinor INTEGER, smMajor INTEGER, "
         "smMinor INTEGER"),
    "ENUM_CUDA_MEMCPY_OPER":
        ("id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"),
    "ENUM_CUDA_MEM_KIND":
        ("id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"),
    "ENUM_CUPTI_SYNC_TYPE":
        ("id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT"),
    "CUPTI_ACTIVITY_KIND_KERNEL":
        ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId "
         "INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
         "INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT "
         "NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread "
         "INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT "
         "NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, "
         "staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, "
         "localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL, gridId "
         "INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, "
         "sharedMemoryLimitConfig INTEGER"),
    "CUPTI_ACTIVITY_KIND_MEMCPY":
        ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId "
         "INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
         "INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, "
         "deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, "
         "srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause "
         "INTEGER, graphNodeId INTEGER, virtualAddress INTEGER"),
    "CUPTI_ACTIVITY_KIND_RUNTIME":
        ("start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid "
         "INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, "
         "callchainId INTEGER"),
    "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION":
        ("start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId "
         "INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId "
         "INTEGER, globalPid INTEGER, syncType INTEGER NOT NULL, eventId INTEGER NOT NULL"),
    "NVTX_EVENTS":
        ("start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, "
         "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
         "textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, doubleValue "
         "REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, jsonTextId INTEGER, "
         "jsonText TEXT, binaryData TEXT"),
}
REAL = "nsys-2024.6-cs336-2.7B-nvtx-a100.sqlite"
MEMCPY_KIND = {"HtoD": 1, "DtoH": 2, "DtoD": 8, "HtoH": 9, "PtoP": 10}
MEM_KIND = {"Pageable": 0, "Pinned": 1, "Device": 2, "Array": 3, "Managed": 4}
SYNC_TYPE = {"Event Sync": 1, "Stream Wait Event": 2, "Stream Sync": 3, "Context Sync": 4}
# the runtime calls nsys names with their API version, as real exports show
VERSIONED = {"cudaLaunchKernel": "_v7000", "cudaMemcpyAsync": "_v3020",
             "cudaStreamSynchronize": "_v3020"}
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def convert(src, dst):
    """The Kineto trace src as an nsys 2024.6 export at dst."""
    with open(src) as f:
        tr = json.load(f, parse_float=decimal.Decimal)
    ev = [e for e in tr["traceEvents"] if e.get("ph") == "X"]
    ns = lambda us: int(decimal.Decimal(us) * 1000)
    t0 = min(ns(e["ts"]) for e in ev) - 1000
    if os.path.exists(dst):
        os.unlink(dst)
    db = sqlite3.connect(dst)
    for t, cols in SCHEMA.items():
        db.execute(f"CREATE TABLE {t} ({cols})")
    sids = {}

    def sid(s):
        if s not in sids:
            sids[s] = len(sids) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (sids[s], s))
        return sids[s]

    def ins(t, **kv):
        db.execute(f"INSERT INTO {t} ({', '.join(kv)}) VALUES ({', '.join('?' * len(kv))})",
                   tuple(kv.values()))

    gtid = lambda e: (1 << 48) | (int(e["pid"]) << 24) | int(e["tid"])
    for i, n in enumerate(("UNKNOWN", "HTOD", "DTOH", "HTOA", "ATOH", "ATOA", "ATOD", "DTOA",
                           "DTOD", "HTOH", "PTOP")):
        ins("ENUM_CUDA_MEMCPY_OPER", id=i, name="CUDA_MEMCPY_KIND_" + n)
    for n, i in MEM_KIND.items():
        ins("ENUM_CUDA_MEM_KIND", id=i, name="CUDA_MEMOPR_MEMORY_KIND_" + n.upper())
    for n, i in SYNC_TYPE.items():
        ins("ENUM_CUPTI_SYNC_TYPE", id=i, name="CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_" +
            n.upper().replace(" ", "_"))
    for p in tr.get("deviceProperties", []):
        ins("TARGET_INFO_GPU", vmId=1 << 48, id=p["id"], name=p["name"],
            totalMemory=p["totalGlobalMem"], smCount=p["numSms"],
            computeMajor=p["computeMajor"], computeMinor=p["computeMinor"])
    pids = {}
    for e in sorted(ev, key=lambda e: ns(e["ts"])):
        a, start = e.get("args", {}), ns(e["ts"]) - t0
        end = start + ns(e.get("dur", 0))
        cat = e.get("cat", "")
        if cat == "kernel":
            base = re.sub(r"^void |<.*$|\(.*$", "", e["name"]).split("::")[-1]
            ins("CUPTI_ACTIVITY_KIND_KERNEL", start=start, end=end, deviceId=a["device"],
                contextId=a["context"], streamId=a["stream"], correlationId=a["correlation"],
                globalPid=1 << 48, demangledName=sid(e["name"]), shortName=sid(base),
                registersPerThread=a["registers per thread"], gridX=a["grid"][0],
                gridY=a["grid"][1], gridZ=a["grid"][2], blockX=a["block"][0],
                blockY=a["block"][1], blockZ=a["block"][2], staticSharedMemory=0,
                dynamicSharedMemory=a["shared memory"], localMemoryPerThread=0,
                localMemoryTotal=0, gridId=a["correlation"])
        elif cat == "gpu_memcpy":
            m = re.match(r"Memcpy (\w+) \((\w+) -> (\w+)\)", e["name"])
            ins("CUPTI_ACTIVITY_KIND_MEMCPY", start=start, end=end, deviceId=a["device"],
                contextId=a["context"], streamId=a["stream"], correlationId=a["correlation"],
                globalPid=1 << 48, bytes=a["bytes"], copyKind=MEMCPY_KIND[m.group(1)],
                srcKind=MEM_KIND[m.group(2)], dstKind=MEM_KIND[m.group(3)])
        elif cat in ("cuda_runtime", "cuda_driver"):
            ins("CUPTI_ACTIVITY_KIND_RUNTIME", start=start, end=end, eventClass=1,
                globalTid=gtid(e), correlationId=a.get("correlation", 0),
                nameId=sid(e["name"] + VERSIONED.get(e["name"], "")), returnValue=0)
        elif cat == "cuda_sync":
            ins("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", start=start, end=end,
                deviceId=a["device"], contextId=a["context"], streamId=a["stream"],
                correlationId=a["correlation"], globalPid=1 << 48,
                syncType=SYNC_TYPE[a["cuda_sync_kind"]], eventId=0)
        elif cat in ("user_annotation", "cpu_op"):
            ins("NVTX_EVENTS", start=start, end=end, eventType=59, text=e["name"],
                globalTid=gtid(e))
        elif cat.startswith("gpu_"):
            raise SystemExit(f"{src}: {cat} events are not converted")
        else:
            continue
        if cat in ("cuda_runtime", "user_annotation", "cpu_op"):
            pids.setdefault(int(e["pid"]), set()).add(int(e["tid"]))
    for p, tids in sorted(pids.items()):
        ins("PROCESSES", globalPid=(1 << 48) | (p << 24), pid=p, name="python")
        for t in sorted(tids):
            ins("ThreadNames", nameId=sid("python"), priority=20,
                globalTid=(1 << 48) | (p << 24) | t)
    db.commit()
    db.close()


def check_schema(real):
    """SCHEMA's columns are the real 2024.6 export's, in order, with their types."""
    db = sqlite3.connect(f"file:{real}?mode=ro", uri=True)
    mem = sqlite3.connect(":memory:")
    for t, cols in SCHEMA.items():
        mem.execute(f"CREATE TABLE {t} ({cols})")
        a = [c[1:4] + c[5:] for c in db.execute(f"PRAGMA table_info({t})")]
        b = [c[1:4] + c[5:] for c in mem.execute(f"PRAGMA table_info({t})")]
        if a != b:
            fail(f"{t}: the columns here differ from {REAL}'s: {set(a) ^ set(b)}")


def run(td, *args):
    return subprocess.run([td, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=300)


def kernel_table(td, path):
    out = run(td, "kernels", "--format", "json", "--window", "all", path)
    if out.returncode != 0:
        fail(f"kernels {path}: exit {out.returncode}: {out.stderr[:300]!r}")
        return {}
    return {r["name"]: (r["calls"], r["total_ns"]) for r in json.loads(out.stdout)["rows"]}


def kineto_kernels(path):
    """(name, calls, total ns) per kernel and copy name, over the Kineto trace in Python."""
    with open(path) as f:
        ev = json.load(f, parse_float=decimal.Decimal)["traceEvents"]
    out = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy"):
            n, t = out.get(e["name"], (0, 0))
            out[e["name"]] = (n + 1, t + int(decimal.Decimal(e["dur"]) * 1000))
    return out


def export_kernels(path):
    """The same over the export, in SQL."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    out = {n: (c, t) for n, c, t in db.execute(
        "SELECT s.value, count(*), sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k "
        "JOIN StringIds s ON s.id = k.demangledName GROUP BY 1")}
    kind = {1: "HtoD", 2: "DtoH", 8: "DtoD"}
    mem = {v: k for k, v in MEM_KIND.items()}
    for ck, sk, dk, c, t in db.execute(
            "SELECT copyKind, srcKind, dstKind, count(*), sum(end - start) FROM "
            "CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1, 2, 3"):
        out[f"Memcpy {kind[ck]} ({mem[sk]} -> {mem[dk]})"] = (c, t)
    db.close()
    return out


def check_pair(td, kin, exp, slower):
    """The export read as its Kineto trace: the same kernel table (each side also against the
    raw data), no GPU op or step-time change in `diff`, `gate` passing both ways, and failing
    against a run whose DataLoader is slower (that gate reads across formats at all)."""
    ref = kineto_kernels(kin)
    if export_kernels(exp) != ref:
        fail(f"the export's kernels in SQL differ from the Kineto trace's: "
             f"{sorted(set(export_kernels(exp).items()) ^ set(ref.items()))[:2]}")
    for path in (kin, exp):
        got = kernel_table(td, path)
        if got != ref:
            fail(f"kernels {os.path.basename(path)}: "
                 f"{sorted(set(got.items()) ^ set(ref.items()))[:2]} differ from the events")
    out = run(td, "diff", "--format", "json", kin, exp)
    if out.returncode != 0:
        fail(f"diff: exit {out.returncode}: {out.stderr[:300]!r}")
        return
    d = json.loads(out.stdout)
    if d["base"] != d["current"] or d["step_change_ns"] != 0:
        fail(f"diff: the runs differ: {d['base']} / {d['current']}")
    if not d["base"]["steps"]:
        fail("diff: no steps found on either side")
    gpu = [r for r in d["rows"] if r["kind"] == "gpu"]
    if not gpu or any(r["change_ns"] or r["base_calls"] != r["current_calls"] or r["status"]
                      for r in gpu):
        fail(f"diff: GPU ops changed: {[r for r in gpu if r['change_ns'] or r['status']][:2]}")
    if {r["name"] for r in gpu} - set(ref):
        fail(f"diff: GPU ops not in the trace: {sorted({r['name'] for r in gpu} - set(ref))}")
    for base, cur in ((kin, exp), (exp, kin)):
        out = run(td, "gate", "--baseline", base, cur)
        if out.returncode != 0 or b"PASS" not in out.stdout:
            fail(f"gate --baseline {os.path.basename(base)} {os.path.basename(cur)}: exit "
                 f"{out.returncode}: {out.stdout[:400]!r}")
    out = run(td, "gate", "--baseline", kin, slower)
    if out.returncode != 1 or b"idle_dataloader_ns_per_step" not in out.stdout:
        fail(f"gate against the export of a slower DataLoader: exit {out.returncode}")


def main():
    if sys.argv[1] == "--convert":
        convert(sys.argv[2], sys.argv[3])
        return 0
    td, gen, root = sys.argv[1:4]
    if b"sqlite" not in run(td, "--version").stdout.lower():
        print("SKIPPED: this tracedoc was built without SQLite")
        return 77
    real = os.path.join(root, "..", "shared", "traces", "nsys", REAL)
    if os.path.exists(real):
        check_schema(real)
    else:
        print(f"SKIPPED (the schema's check): {real} not found; it needs ../shared")
    tmp = tempfile.mkdtemp(prefix="td-nsys-pair-")
    try:
        # pageable and blocking copies, allocations and .item() syncs: more than kernels
        args = ["--steps", "8", "--ops", "12", "--seed", "3", "--pageable", "--allocs", "2",
                "--side-copies", "2", "--items", "2"]
        kin, exp = os.path.join(tmp, "run.json"), os.path.join(tmp, "run.sqlite")
        subprocess.run([gen, *args, "-o", kin], check=True)
        convert(kin, exp)
        slow = os.path.join(tmp, "slow.json")
        subprocess.run([gen, *args, "--loader-us", "6000", "-o", slow], check=True)
        convert(slow, os.path.join(tmp, "slow.sqlite"))
        check_pair(td, kin, exp, os.path.join(tmp, "slow.sqlite"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
