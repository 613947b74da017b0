#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the nsys fuzz target's seeds (tests/fuzz/corpus-nsys): small made-up exports in the
table layout nsys writes, one with the ENUM_* tables and one without (2022.1's). Made here, not
copied from a real export. usage: make_nsys_corpus.py DIR"""
import os
import sqlite3
import sys


def make(path, enums):
    if os.path.exists(path):
        os.unlink(path)
    d = sqlite3.connect(path)
    d.execute("PRAGMA page_size=512")
    x = d.execute
    x("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)")
    for i, s in enumerate(["cudaLaunchKernel_v7000", "cudaMemcpyAsync_v3020", "gemm_kernel",
                           "void add<float>(float*)", "step", "main", "aten::mm, seq = 1"], 1):
        x("INSERT INTO StringIds VALUES (?, ?)", (i, s))
    x('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL, '
      "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, demangledName INTEGER, "
      "shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER, "
      "blockY INTEGER, blockZ INTEGER, registersPerThread INTEGER, staticSharedMemory INTEGER, "
      "dynamicSharedMemory INTEGER)")
    x('CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, "end" INTEGER, deviceId INTEGER, '
      "streamId INTEGER, correlationId INTEGER, bytes INTEGER, copyKind INTEGER, "
      "srcKind INTEGER, dstKind INTEGER)")
    x('CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, "end" INTEGER, deviceId INTEGER, '
      "streamId INTEGER, correlationId INTEGER, bytes INTEGER, memKind INTEGER)")
    x('CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, "end" INTEGER, '
      "eventClass INTEGER, globalTid INTEGER, correlationId INTEGER, nameId INTEGER)")
    x('CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (start INTEGER, "end" INTEGER, '
      "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, syncType INTEGER)")
    x('CREATE TABLE NVTX_EVENTS (start INTEGER, "end" INTEGER, eventType INTEGER, '
      "globalTid INTEGER, text TEXT, textId INTEGER, domainId INTEGER)")
    x("CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT, totalMemory INTEGER, "
      "smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER)")
    x("CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER)")
    tid = (77 << 24) | 78
    for i in range(3):
        t0 = 1000 + i * 10000
        x("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, NULL, 5, 0)", (t0, t0 + 9000, tid))
        x("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, ?, NULL, 7, 0)", (t0 + 10, t0 + 900, tid))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 1)",
          (t0 + 100, t0 + 200, tid, 3 * i + 1))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, 0, 7, ?, 3, 3, 24, 1, 1, 128, "
          "1, 1, 32, 0, 1024)", (t0 + 300, t0 + 2000, 3 * i + 1))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 0, ?, ?, 2)",
          (t0 + 2100, t0 + 2600, tid, 3 * i + 2))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, 0, 7, ?, 4096, 1, 0, 2)",
          (t0 + 2200, t0 + 2500, 3 * i + 2))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (?, ?, 0, 7, ?, 512, 2)",
          (t0 + 3000, t0 + 3100, 3 * i + 3))
        x("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (?, ?, 0, 7, ?, 3)",
          (t0 + 3200, t0 + 3300, 3 * i + 3))
    # OS runtime calls: one long enough to be read (a CPU op "poll"), one left out
    x('CREATE TABLE OSRT_API (start INTEGER, "end" INTEGER, eventClass INTEGER, '
      "globalTid INTEGER, nameId INTEGER, returnValue INTEGER, nestingLevel INTEGER)")
    x("INSERT INTO StringIds VALUES (8, 'poll')")
    x("INSERT INTO OSRT_API VALUES (40000, 190000, 27, ?, 8, 0, 0)", (tid,))
    x("INSERT INTO OSRT_API VALUES (190100, 190300, 27, ?, 8, 0, 0)", (tid,))
    x("INSERT INTO TARGET_INFO_GPU VALUES (0, 'Made-up GPU', 17179869184, 40, 8, 6)")
    x("INSERT INTO ThreadNames VALUES (6, 2, ?)", (tid,))
    if enums:
        x("CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
        for i, n in enumerate(["PAGEABLE", "PINNED", "DEVICE"]):
            x("INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)",
              (i, "CUDA_MEMOPR_MEMORY_KIND_" + n, n.title()))
        x("CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT)")
        for i, n in enumerate(["UNKNOWN", "HTOD", "DTOH"]):
            x("INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)", (i, "CUDA_MEMCPY_KIND_" + n, n))
    d.commit()
    d.execute("VACUUM")
    d.close()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    make(os.path.join(out, "enums.sqlite"), True)
    make(os.path.join(out, "no-enums.sqlite"), False)


if __name__ == "__main__":
    main()
