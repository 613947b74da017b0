#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates an Nsight Systems SQLite export of about SIZE_MB with a real export's mix: the rows
per CUPTI table, NVTX ranges and the kernel and runtime names of MODEL (a real export; default
the RTX 3070 Ti training run of ../shared/traces/nsys, else a built-in mix of that run), in its
tables' layout (the columns nsys 2025 writes). A training loop: each step an NVTX range, runtime
calls on one thread launching kernels, copies and memsets on stream 7, a stream sync at the
end. For bench/nsys.sh.
usage: gen_nsys.py SIZE_MB OUT [MODEL]"""
import os
import random
import sqlite3
import sys

# rows per step of the built-in mix (the 3070 Ti export's ratios)
MIX = {"kernel": 1000, "memcpy": 16, "memset": 89, "runtime_other": 95, "sync": 10}
KERNEL_COLS = ("start, end, deviceId, contextId, greenContextId, streamId, correlationId, "
               "globalPid, demangledName, shortName, mangledName, launchType, cacheConfig, "
               "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, "
               "staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, "
               "localMemoryTotal, gridId, sharedMemoryExecuted, graphNodeId, "
               "sharedMemoryLimitConfig")


def model_mix(path):
    """Rows per step and names from a real export (None when it cannot be read)."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        n = lambda t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        k = n("CUPTI_ACTIVITY_KIND_KERNEL")
        scale = 1000 / k
        mix = {"kernel": 1000, "memcpy": round(n("CUPTI_ACTIVITY_KIND_MEMCPY") * scale),
               "memset": round(n("CUPTI_ACTIVITY_KIND_MEMSET") * scale),
               "sync": max(1, round(n("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") * scale))}
        rt = n("CUPTI_ACTIVITY_KIND_RUNTIME")
        mix["runtime_other"] = max(0, round(rt * scale) - 1000 - mix["memcpy"] - mix["memset"]
                                   - mix["sync"])
        kn = [r[0] for r in db.execute(
            "SELECT s.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s "
            "ON s.id = k.demangledName GROUP BY 1 ORDER BY count(*) DESC LIMIT 200")]
        db.close()
        return mix, kn
    except sqlite3.Error:
        return None


def main():
    size_mb, out = float(sys.argv[1]), sys.argv[2]
    model = sys.argv[3] if len(sys.argv) > 3 else os.path.join(
        os.path.dirname(__file__), "..", "..", "shared", "traces", "nsys",
        "nsys-2025.1-cs336-small-fwdbwd-rtx3070ti.sqlite")
    got = model_mix(model) if os.path.exists(model) else None
    mix, knames = got if got else (MIX, [f"void gemm_kernel<{i}>(float*, float const*)"
                                         for i in range(60)])
    if os.path.exists(out):
        os.unlink(out)
    db = sqlite3.connect(out, isolation_level=None)  # transactions by hand
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")
    x = db.execute
    x("CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL)")
    x(f"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL ({', '.join(c + ' INTEGER' for c in KERNEL_COLS.split(', '))})")
    x("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER, "
      "contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, "
      "globalPid INTEGER, bytes INTEGER, copyKind INTEGER, deprecatedSrcId INTEGER, "
      "srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, "
      "dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, "
      "virtualAddress INTEGER)")
    x("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, "
      "contextId INTEGER, greenContextId INTEGER, streamId INTEGER, correlationId INTEGER, "
      "globalPid INTEGER, value INTEGER, bytes INTEGER, graphNodeId INTEGER, memKind INTEGER)")
    x("CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, eventClass INTEGER, "
      "globalTid INTEGER, correlationId INTEGER, nameId INTEGER, returnValue INTEGER, "
      "callchainId INTEGER)")
    x("CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, end INTEGER, "
      "deviceId INTEGER, contextId INTEGER, greenContextId INTEGER, streamId INTEGER, "
      "correlationId INTEGER, globalPid INTEGER, syncType INTEGER, eventId INTEGER)")
    x("CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER, rangeId INTEGER, "
      "category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, "
      "textId INTEGER, domainId INTEGER, uint64Value INTEGER, int64Value INTEGER, "
      "doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL, "
      "jsonTextId INTEGER, jsonText TEXT, binaryData TEXT)")
    x("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, "
      "smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER)")
    x("INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA GeForce RTX 3070 Ti', 8361738240, 48, "
      "8, 6)")
    names = ["cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
             "cudaStreamSynchronize_v3020", "cudaStreamIsCapturing_v10000", "step"] + knames
    x("BEGIN")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", enumerate(names, 1))
    rnd = random.Random(49)
    gpid, gtid = 282398931605280 & ~0xffffff, 282398931605280
    t, corr, step = 1_000_000_000, 1, 0
    kernels, copies, sets, calls, syncs, nvtx = [], [], [], [], [], []
    limit = size_mb * 1e6
    while True:
        step_start = t
        plan = (["k"] * mix["kernel"] + ["c"] * mix["memcpy"] + ["s"] * mix["memset"] +
                ["o"] * mix["runtime_other"])
        rnd.shuffle(plan)
        gpu = t + 20_000
        for p in plan:
            dur = rnd.randint(2_000, 6_000)
            if p == "o":
                calls.append((t, t + dur, 0, gtid, corr, 5, 0, 0))
            else:
                name = {"k": 1, "c": 2, "s": 3}[p]
                calls.append((t, t + dur, 0, gtid, corr, name, 0, 0))
                gpu = max(gpu, t + 5_000)
                g = rnd.randint(3_000, 400_000)
                if p == "k":
                    k = 7 + rnd.randrange(len(knames))
                    kernels.append((gpu, gpu + g, 0, 1, None, 7, corr, gpid, k, k, None, 0, 0,
                                    rnd.choice((32, 64, 128)), rnd.randint(1, 4096), 1, 1,
                                    rnd.choice((128, 256)), 1, 1, 0, rnd.choice((0, 16384)), 0,
                                    0, corr, 0, None, 0))
                elif p == "c":
                    copies.append((gpu, gpu + g // 10, 0, 1, None, 7, corr, gpid,
                                   rnd.randint(4, 1 << 22), 1, None, 0, 2, 0, 1, 0, 1, 0,
                                   None, None))
                else:
                    sets.append((gpu, gpu + g // 50, 0, 1, None, 7, corr, gpid, 0,
                                 rnd.randint(4, 1 << 20), None, 2))
                gpu += g + rnd.randint(500, 3_000)
            corr += 1
            t += dur + rnd.randint(200, 2_000)
        for _ in range(mix["sync"]):
            end = max(t + 3_000, gpu)
            calls.append((t, end, 0, gtid, corr, 4, 0, 0))
            syncs.append((t + 1_000, end - 500, 0, 1, None, 7, corr, gpid, 0, None))
            corr += 1
            t = end + 1_000
        nvtx.append((step_start, t, 59, None, None, None, "train_step", gtid, None, None, 0,
                     None, None, None, None, None, None, None, None, None))
        step += 1
        for table, rows in (("CUPTI_ACTIVITY_KIND_KERNEL", kernels),
                            ("CUPTI_ACTIVITY_KIND_MEMCPY", copies),
                            ("CUPTI_ACTIVITY_KIND_MEMSET", sets),
                            ("CUPTI_ACTIVITY_KIND_RUNTIME", calls),
                            ("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", syncs),
                            ("NVTX_EVENTS", nvtx)):
            if rows:
                db.executemany(f"INSERT INTO {table} VALUES ({', '.join('?' * len(rows[0]))})",
                               rows)
                rows.clear()
        if step % 20 == 0:
            x("COMMIT")
            x("BEGIN")
            if os.path.getsize(out) >= limit:
                break
    x("COMMIT")
    db.close()
    print(f"{out}: {os.path.getsize(out) / 1e6:.0f} MB, {step} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
