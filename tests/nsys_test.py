#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Nsight Systems SQLite exports (issue 49), checked against SQL over the export itself:

- every export in ../shared/traces/nsys: `stats --format json` per GPU (ops, busy_ns: the union
  of kernel, copy and memset intervals, first op to last) and the kernel / memcpy / memset
  counts equal what the CUPTI tables hold (a graph traced whole, CUPTI_ACTIVITY_KIND_GRAPH_TRACE,
  is a kernel a launch); `kernels --format json` per kernel name equals what
  `nsys stats --report cuda_gpu_kern_sum` computes (instances, total, avg, med, min, max,
  stddev, and time % recomputed from the totals), here in SQL and Python; `diagnose` gives a
  report; the export without CUDA tables says "no CUDA activity was recorded";
- what an export lacks (no CUDA tables, no NVTX_EVENTS, graphs traced whole), told here from
  its tables, is in the JSON report's trace.lacks and the HTML header's note, on every export
  and on the H200 export copied without NVTX_EVENTS;
- OS runtime calls (OSRT_API) of 100 us or more: per call name, `ops` counts the calls and
  time SQL gives;
- an export cut down to an older schema (no ENUM_* tables, no deprecatedSyncType, names only
  by shortName) reads to the same kernel table;
- non-UTF-8 text in an NVTX range: read, counted, and the JSON output valid UTF-8;
- the made-up seed exports: steps from the outermost repeated NVTX range, aten:: ranges as ops;
- hostile inputs made here with sqlite3: a database that is no export, a missing column, a
  column of the wrong type, corrupt pages, a cut file, a huge StringIds entry, a view in place
  of a table: each a clear error and exit 3 (or read, for the view: it is not run);
- a report file (.nsys-rep): without nsys on PATH exit 3 with the export command; with an
  `nsys` on PATH (a stand-in script that writes the export) read as its export is.
usage: nsys_test.py TRACEDOC REPO_ROOT"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile

KERNEL, MEMCPY, MEMSET, GRAPH = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
                                 "CUPTI_ACTIVITY_KIND_MEMSET",
                                 "CUPTI_ACTIVITY_KIND_GRAPH_TRACE")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def run(td, *args, env=None):
    return subprocess.run([td, *args], capture_output=True, env=env, timeout=300)


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def union_ns(iv):
    total, cur = 0, None
    for s, e in sorted(iv):
        if e <= s:
            continue
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                total += cur[1] - cur[0]
            cur = [s, e]
    if cur:
        total += cur[1] - cur[0]
    return total


def reference(path):
    """Per device: ops, busy (union of the op intervals), span; counts by kind."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = tables(db)
    counts = {"kernel": 0, "memcpy": 0, "memset": 0}
    iv, ops, first, last = {}, {}, {}, {}
    for table, kind in ((KERNEL, "kernel"), (GRAPH, "kernel"), (MEMCPY, "memcpy"),
                        (MEMSET, "memset")):
        if table not in have:
            continue
        for dev, s, e in db.execute(f'SELECT deviceId, start, "end" FROM {table}'):
            counts[kind] += 1
            e = max(e, s)
            iv.setdefault(dev, []).append((s, e))
            ops[dev] = ops.get(dev, 0) + 1
            first[dev] = min(first.get(dev, s), s)
            last[dev] = max(last.get(dev, e), e)
    devs = {d: (ops[d], union_ns(iv[d]), last[d] - first[d]) for d in ops}
    db.close()
    return counts, devs


def kern_sum(path):
    """cuda_gpu_kern_sum's figures per kernel name (demangled), as its SQL computes them."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = tables(db)
    durs = {}
    if KERNEL in have:
        q = (f'SELECT s.value, k."end" - k.start FROM {KERNEL} k JOIN StringIds s '
             "ON s.id = coalesce(k.demangledName, k.shortName)")
        for name, d in db.execute(q):
            durs.setdefault(name, []).append(max(d, 0))
    db.close()
    grand = sum(sum(v) for v in durs.values())
    out = {}
    for name, v in durs.items():
        out[name] = {"instances": len(v), "total": sum(v), "avg": sum(v) / len(v),
                     "med": statistics.median(v), "min": min(v), "max": max(v),
                     "stddev": statistics.stdev(v) if len(v) > 1 else 0.0,
                     "time_pct": 100.0 * sum(v) / grand if grand else 0.0}
    return out


def check_export(td, path):
    name = os.path.basename(path)
    out = run(td, "stats", "--format", "json", path)
    if out.returncode != 0:
        fail(f"{name}: stats exit {out.returncode}: {out.stderr.decode(errors='replace')}")
        return
    got = json.loads(out.stdout)
    counts, devs = reference(path)
    for k, v in counts.items():
        if got["by_kind"].get(k, 0) != v:
            fail(f"{name}: {k} {got['by_kind'].get(k, 0)} != {v} in the export")
    gdev = {d["id"]: d for d in got["devices"]}
    if sorted(gdev) != sorted(devs):
        fail(f"{name}: devices {sorted(gdev)} != {sorted(devs)}")
    for d, (nops, busy, span) in devs.items():
        g = gdev.get(d)
        if g and (g["ops"], g["busy_ns"], g["span_ns"]) != (nops, busy, span):
            fail(f"{name}: GPU {d} ops/busy/span {g['ops']}/{g['busy_ns']}/{g['span_ns']} != "
                 f"{nops}/{busy}/{span}")
    # the kernel table against cuda_gpu_kern_sum
    out = run(td, "kernels", "--format", "json", "--window", "all", path)
    if out.returncode != 0:
        fail(f"{name}: kernels exit {out.returncode}")
        return
    rows = {r["name"]: r for r in json.loads(out.stdout)["rows"]
            if r["category"].split()[0] not in ("memcpy", "memset")}
    ref = kern_sum(path)
    if GRAPH not in tables(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) and \
            sorted(rows) != sorted(ref):
        fail(f"{name}: kernel names differ: {sorted(set(rows) ^ set(ref))[:3]}")
    grand = sum(r["total_ns"] for r in rows.values() if r["name"] in ref)
    for kname, k in ref.items():
        r = rows.get(kname)
        if r is None:
            continue
        pairs = [("instances", r["calls"], k["instances"], 0), ("total", r["total_ns"],
                  k["total"], 0), ("avg", r["avg_ns"], k["avg"], 1), ("med", r["median_ns"],
                  k["med"], 1), ("min", r["min_ns"], k["min"], 0), ("max", r["max_ns"],
                  k["max"], 0), ("stddev", r.get("stddev_ns", 0), k["stddev"], 1),
                 ("time %", 100.0 * r["total_ns"] / grand if grand else 0.0, k["time_pct"],
                  1e-9)]
        for what, a, b, tol in pairs:
            if abs(a - b) > tol:
                fail(f"{name}: {kname[:60]}: {what} {a} != {b} (cuda_gpu_kern_sum)")
    out = run(td, "diagnose", path)
    if out.returncode != 0 or b"tracedoc diagnose" not in out.stdout:
        fail(f"{name}: diagnose exit {out.returncode}: {out.stderr.decode(errors='replace')}")
    if not counts["kernel"] + counts["memcpy"] + counts["memset"]:
        if b"no CUDA activity was recorded" not in out.stdout:
            fail(f"{name}: an export without CUDA tables: no 'no CUDA activity was recorded'")


def check_lacks(td, path):
    """What the export lacks, told from its tables here: in the JSON report's trace.lacks and
    the HTML report's header note, and absent from both when nothing is lacking."""
    name = os.path.basename(path)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    have = tables(db)
    db.close()
    want = []
    if not any(t.startswith("CUPTI_ACTIVITY_KIND_") for t in have):
        want.append("no CUDA activity was recorded")
    if "NVTX_EVENTS" not in have:
        want.append("no NVTX: steps cannot be found; record with --trace=nvtx")
    if GRAPH in have:
        want.append("CUDA graphs were traced whole")
    out = run(td, "diagnose", "--format", "json", path)
    got = json.loads(out.stdout)["trace"].get("lacks") if out.returncode == 0 else None
    if want and (got is None or any(w not in got for w in want)):
        fail(f"{name}: JSON trace.lacks {got!r} lacks {want}")
    if not want and got is not None:
        fail(f"{name}: JSON trace.lacks {got!r} for an export that lacks nothing")
    out = run(td, "diagnose", "--format", "html", path)
    head = out.stdout.decode(errors="replace").split("<h2>", 1)[0]
    note = head.split("<b>Note:</b> ", 1)[1] if "<b>Note:</b> " in head else None
    if want and (note is None or any(w not in note for w in want)):
        fail(f"{name}: the HTML header's note {note!r} lacks {want}")
    if not want and note is not None:
        fail(f"{name}: an HTML note {note!r} for an export that lacks nothing")
    return want


def check_osrt(td, path):
    """OS runtime calls of 100 us or more (OSRT_API) are host ops named by the call: per name,
    `ops` counts as many calls and as much time as SQL over the export gives."""
    name = os.path.basename(path)
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    if "OSRT_API" not in tables(db):
        return 0
    ref = {n: (c, t) for n, c, t in db.execute(
        "SELECT s.value, count(*), sum(o.end - o.start) FROM OSRT_API o JOIN StringIds s "
        "ON s.id = o.nameId WHERE o.end - o.start >= 100000 GROUP BY 1")}
    nvtx = set()
    if "NVTX_EVENTS" in tables(db):
        nvtx = {r[0] for r in db.execute("SELECT DISTINCT coalesce(n.text, s.value) FROM "
                                         "NVTX_EVENTS n LEFT JOIN StringIds s ON "
                                         "s.id = n.textId")}
    db.close()
    out = run(td, "ops", "--format", "json", "--window", "all", "--fold-runtime", path)
    if out.returncode != 0:
        fail(f"{name}: ops exit {out.returncode}")
        return 0
    rows = {r["name"]: r for r in json.loads(out.stdout)["rows"] if r.get("kind", "op") == "op"}
    for call, (n, ns) in ref.items():
        r = rows.get(call)
        if call in nvtx:
            continue  # an NVTX range of that name too: not told apart here
        if r is None or (r["calls"], r["cpu_total_ns"]) != (n, ns):
            fail(f"{name}: OS call {call}: ops {r and (r['calls'], r['cpu_total_ns'])} != "
                 f"{n} calls, {ns} ns in OSRT_API (100 us or more)")
    return sum(n for n, _ in ref.values())


def copy_tables(src, dst, keep, drop_cols=()):
    """dst: src's tables in keep, the columns in drop_cols left out."""
    s = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    d = sqlite3.connect(dst)
    for t in sorted(tables(s) & set(keep)):
        cols = [c[1] for c in s.execute(f"PRAGMA table_info({t})") if c[1] not in drop_cols]
        d.execute(f"CREATE TABLE {t} ({', '.join(cols)})")
        q = f"SELECT {', '.join(chr(34) + c + chr(34) for c in cols)} FROM {t}"
        d.executemany(f"INSERT INTO {t} VALUES ({', '.join('?' * len(cols))})", s.execute(q))
    d.commit()
    d.close()
    s.close()


def kernel_rows(td, path):
    out = run(td, "kernels", "--format", "json", "--window", "all", path)
    if out.returncode != 0:
        return None
    return [(r["name"], r["calls"], r["total_ns"]) for r in json.loads(out.stdout)["rows"]]


def check_old_schema(td, src, tmp):
    """2022-style: no ENUM tables (the constants name the copies), no deprecatedSyncType."""
    dst = os.path.join(tmp, "old.sqlite")
    copy_tables(src, dst, ["StringIds", KERNEL, MEMCPY, MEMSET, "CUPTI_ACTIVITY_KIND_RUNTIME",
                           "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "NVTX_EVENTS",
                           "TARGET_INFO_GPU", "ThreadNames"], ("deprecatedSyncType",))
    a, b = kernel_rows(td, src), kernel_rows(td, dst)
    if a is None or a != b:
        fail(f"old schema: kernel table differs from the full export's ({a and a[:2]} / "
             f"{b and b[:2]})")


def make_db(path, script, params=()):
    if os.path.exists(path):
        os.unlink(path)
    db = sqlite3.connect(path)
    for stmt, p in zip(script, list(params) + [()] * len(script)):
        db.execute(stmt, p)
    db.commit()
    db.close()


MIN_KERNEL = ('CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER, '
              "deviceId INTEGER, streamId INTEGER, correlationId INTEGER, "
              "demangledName INTEGER, shortName INTEGER)")
STRINGS = "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)"


def expect_exit3(td, path, what, needle):
    out = run(td, "diagnose", path)
    err = out.stderr.decode(errors="replace")
    if out.returncode != 3:
        fail(f"hostile {what}: exit {out.returncode} (want 3): {err[:200]}")
    elif needle.encode() not in out.stderr or os.path.basename(path).encode() not in out.stderr:
        fail(f"hostile {what}: message lacks '{needle}' or the file's name: {err[:300]}")


def check_hostile(td, tmp, real):
    p = os.path.join(tmp, "h.sqlite")
    make_db(p, ["CREATE TABLE notes (x TEXT)", "INSERT INTO notes VALUES ('hi')"])
    expect_exit3(td, p, "not an export", "not an Nsight Systems export")
    make_db(p, [STRINGS, 'CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, "end" INTEGER)',
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2)"])
    expect_exit3(td, p, "missing column", "has no column deviceId")
    make_db(p, [STRINGS, MIN_KERNEL, "INSERT INTO StringIds VALUES (1, 'k')",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES ('soon', 2, 0, 7, 1, 1, 1)"])
    expect_exit3(td, p, "wrong type", "holds text")
    make_db(p, [STRINGS, MIN_KERNEL, "INSERT INTO StringIds VALUES (1, 'k')",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1.5, 1, 1)"])
    expect_exit3(td, p, "wrong type (real)", "holds a real number")
    # an OS runtime call long enough to be read whose name id is text
    osrt = ('CREATE TABLE OSRT_API (start INTEGER, "end" INTEGER, eventClass INTEGER, '
            'globalTid INTEGER, nameId INTEGER)')
    make_db(p, [STRINGS, MIN_KERNEL, osrt, "INSERT INTO StringIds VALUES (1, 'k')",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1, 1, 1)",
                "INSERT INTO OSRT_API VALUES (10, 500000, 27, 4294967297, 'poll')"])
    expect_exit3(td, p, "OSRT_API wrong type", "OSRT_API, row 1: column nameId holds text")
    # corrupt pages: every page after the first (the schema) overwritten
    make_db(p, [STRINGS, MIN_KERNEL, "INSERT INTO StringIds VALUES (1, 'k')"] +
            ["INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%d, %d, 0, 7, %d, 1, 1)" %
             (i * 10, i * 10 + 5, i) for i in range(3000)])
    with open(p, "r+b") as f:
        f.seek(4096)
        size = os.path.getsize(p)
        f.write(bytes((i * 37 + 11) & 0xFF for i in range(size - 4096)))
    expect_exit3(td, p, "corrupt pages", "SQLite")
    if real:  # a real export cut in half
        with open(real, "rb") as f:
            data = f.read()
        with open(p, "wb") as f:
            f.write(data[:len(data) // 2])
        expect_exit3(td, p, "cut file", "SQLite")
    # a StringIds entry past SQLite's length limit here (16 MiB)
    make_db(p, [STRINGS, MIN_KERNEL, "INSERT INTO StringIds VALUES (1, ?)",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1, 1, 1)"],
            [(), (), ("x" * (20 << 20),)])
    expect_exit3(td, p, "huge StringIds", "larger than 16 MiB")
    # a long one under it: read, cut at 1 MiB and counted
    make_db(p, [STRINGS, MIN_KERNEL, "INSERT INTO StringIds VALUES (1, ?)",
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1, 1, 1)"],
            [(), (), ("y" * (3 << 20),)])
    out = run(td, "stats", "--format", "json", p)
    if out.returncode != 0 or json.loads(out.stdout)["anomalies"].get("long_strings") != 1:
        fail(f"long StringIds entry: exit {out.returncode}, {out.stdout[-300:]!r}")
    # an export through a FIFO: refused by its bytes, not read as JSON
    fifo = os.path.join(tmp, "export.fifo")
    os.mkfifo(fifo)
    seed = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "corpus-nsys",
                        "enums.sqlite")
    writer = subprocess.Popen(["sh", "-c", 'cat "$1" > "$2"', "sh", seed, fifo])
    out = run(td, "stats", fifo)
    writer.wait(timeout=60)
    if out.returncode != 3 or b"read from a file" not in out.stderr:
        fail(f"an export through a FIFO: exit {out.returncode}: {out.stderr[:200]!r}")
    # a view in place of a table is not run (it could compute anything): no kernels read
    make_db(p, [STRINGS, "CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS WITH RECURSIVE c(x) AS "
                "(SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x AS start, x AS \"end\", "
                "0 AS deviceId, 7 AS streamId, x AS correlationId, 1 AS demangledName FROM c"])
    out = run(td, "stats", "--format", "json", p)
    if out.returncode != 0 or json.loads(out.stdout)["by_kind"].get("kernel", 0) != 0:
        fail(f"a view named as a table: exit {out.returncode}")


def check_non_utf8(td, tmp):
    """An NVTX range and a kernel name in cp1251: read, counted, valid UTF-8 out."""
    p = os.path.join(tmp, "cp1251.sqlite")
    text = "шаг".encode("cp1251")
    make_db(p, [STRINGS, MIN_KERNEL,
                "CREATE TABLE NVTX_EVENTS (start INTEGER, \"end\" INTEGER, eventType INTEGER, "
                "globalTid INTEGER, text TEXT, textId INTEGER)",
                "INSERT INTO StringIds VALUES (1, CAST(? AS TEXT))"] +
            ["INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%d, %d, 0, 7, %d, 1, 1)" %
             (i * 1000 + 10, i * 1000 + 500, i) for i in range(5)] +
            ["INSERT INTO NVTX_EVENTS VALUES (%d, %d, 59, 4294967297, CAST(? AS TEXT), NULL)" %
             (i * 1000, i * 1000 + 900) for i in range(5)],
            [(), (), (), (b"kern\xff" + text,)] + [()] * 5 + [(text,)] * 5)
    out = run(td, "stats", "--format", "json", p)
    if out.returncode != 0:
        fail(f"non-UTF-8: stats exit {out.returncode}: {out.stderr[:200]!r}")
        return
    got = json.loads(out.stdout.decode("utf-8"))
    if got["anomalies"].get("invalid_utf8_names", 0) < 2 or got["by_kind"].get("kernel") != 5:
        fail(f"non-UTF-8: {got['anomalies']} {got['by_kind']}")
    for cmd in (["kernels", "--format", "json"], ["diagnose", "--format", "json"]):
        out = run(td, *cmd, p)
        try:
            json.loads(out.stdout.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            fail(f"non-UTF-8: {cmd[0]} output is not valid UTF-8 JSON: {e}")


def check_steps_ops(td, root):
    """The made-up seed export: steps from the outermost repeated NVTX range, aten:: ranges
    as ops (--pytorch=autograd-nvtx), each counted here in SQL."""
    for name in ("enums.sqlite", "no-enums.sqlite"):
        p = os.path.join(root, "tests", "fuzz", "corpus-nsys", name)
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        texts = "coalesce(n.text, (SELECT value FROM StringIds WHERE id = n.textId))"
        outer = db.execute(
            f"SELECT {texts}, count(*) FROM NVTX_EVENTS n WHERE NOT EXISTS (SELECT 1 FROM "
            "NVTX_EVENTS o WHERE o.globalTid = n.globalTid AND o.start <= n.start AND "
            'o."end" >= n."end" AND o.rowid != n.rowid) GROUP BY 1 ORDER BY 2 DESC').fetchone()
        aten = db.execute(f"SELECT count(*) FROM NVTX_EVENTS n WHERE {texts} LIKE 'aten::%'"
                          ).fetchone()[0]
        db.close()
        out = run(td, "diagnose", "--format", "json", p)
        steps = json.loads(out.stdout)["window"]["steps"] if out.returncode == 0 else None
        if steps != (outer[1] if outer[1] >= 3 else 0):
            fail(f"{name}: {steps} steps, the outermost repeated NVTX range {outer}")
        out = run(td, "ops", "--format", "json", p)
        rows = {r["name"]: r["calls"] for r in json.loads(out.stdout)["rows"]}
        if rows.get("aten::mm") != aten:
            fail(f"{name}: aten::mm {rows.get('aten::mm')} calls, {aten} aten:: NVTX ranges")


def check_report(td, tmp, rep, sqlite_path):
    env = dict(os.environ, PATH=os.path.join(tmp, "empty"))
    os.makedirs(env["PATH"], exist_ok=True)
    out = run(td, "stats", rep, env=env)
    if out.returncode != 3 or b"nsys export --type sqlite --output " not in out.stderr:
        fail(f".nsys-rep without nsys: exit {out.returncode}: {out.stderr[:300]!r}")
    # a stand-in nsys that writes the export where it is told (argv: export --type sqlite
    # --output OUT INPUT), and one that fails
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir, exist_ok=True)
    fake = os.path.join(bindir, "nsys")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\n[ "$1 $2 $3 $4" = "export --type sqlite --output" ] || exit 9\n'
                f'[ "$6" = "$NSYS_TEST_INPUT" ] || exit 8\necho exporting\ncp "{sqlite_path}" "$5"\n')
    os.chmod(fake, 0o755)
    env = dict(os.environ, PATH=bindir + ":/usr/bin:/bin", NSYS_TEST_INPUT=rep)
    a = run(td, "stats", "--format", "json", rep, env=env)
    b = run(td, "stats", "--format", "json", sqlite_path)
    if a.returncode != 0 or json.loads(a.stdout)["devices"] != json.loads(b.stdout)["devices"]:
        fail(f".nsys-rep through nsys export: exit {a.returncode}: {a.stderr[:300]!r}")
    if b"exporting" in a.stdout:
        fail(".nsys-rep: nsys's output reached tracedoc's standard output")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\nexit 5\n")
    a = run(td, "stats", rep, env=env)
    if a.returncode != 3 or b"nsys export failed (exit status 5)" not in a.stderr:
        fail(f".nsys-rep, nsys failing: exit {a.returncode}: {a.stderr[:300]!r}")


STARTUP_WORDS = ("warmup", "warm-up", "warm up", "initialize", "initialise", "init", "setup")


def check_after_startup(td, ndir):
    """Exports whose NVTX ranges name the run's preparation ("Initialize Model", "Warm-up",
    "init_model", "warmup") and repeat nothing at the top: the steady state is what begins
    after the last of them - its outermost ranges, or the range repeated inside one that covers
    most of it - worked out here in SQL and Python, and diagnose's window must be it."""
    import re
    word = re.compile(r"(?<![A-Za-z])(" + "|".join(re.escape(w) for w in STARTUP_WORDS) +
                      r")(?![A-Za-z])", re.I)
    for name in ("nsys-2025.1-cs336-small-fwdbwd-rtx3070ti.sqlite",
                 "nsys-2024.6-cs336-2.7B-nvtx-a100.sqlite"):
        p = os.path.join(ndir, name)
        if not os.path.exists(p):
            continue
        db = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        rows = db.execute('SELECT coalesce(n.text, (SELECT value FROM StringIds WHERE id = '
                          'n.textId)), n.start, n."end", n.globalTid FROM NVTX_EVENTS n WHERE '
                          'n."end" IS NOT NULL ORDER BY n.start, n."end" DESC').fetchall()
        db.close()

        def parent(r):
            best = None
            for o in rows:
                if o is not r and o[3] == r[3] and o[1] <= r[1] and o[2] >= r[2] and \
                        (best is None or o[2] - o[1] < best[2] - best[1]):
                    best = o
            return best
        end = max(r[2] for r in rows if word.search(r[0]))
        outer = [r for r in rows if r[1] >= end and not word.search(r[0]) and
                 (parent(r) is None or parent(r)[1] < end)]
        steps = []
        for o in outer:
            kids = [r for r in rows if parent(r) is o]
            names = {}
            for k in kids:
                names.setdefault(k[0], []).append(k)
            top = max(names.values(), key=len) if names else []
            if len(top) >= 3 and 5 * sum(k[2] - k[1] for k in top) >= 4 * (o[2] - o[1]):
                steps += top
            else:
                steps.append(o)
        out = run(td, "diagnose", "--format", "json", p)
        w = json.loads(out.stdout)["window"] if out.returncode == 0 else {}
        span = max(s[2] for s in steps) - min(s[1] for s in steps)
        if w.get("steps") != len(steps) or abs(w.get("duration_ns", 0) - span) > span // 100:
            fail(f"{name}: window {w.get('steps')} steps, {w.get('duration_ns')} ns; the ranges "
                 f"after the start-up ones: {len(steps)} steps over {span} ns")
        top = json.loads(out.stdout)["findings"][0]["rule"] if out.returncode == 0 else None
        if top != "gpu-bound":  # both run FP32 GEMMs back to back once warmed up
            fail(f"{name}: top finding {top}; the steady state is GPU-bound")


def main():
    td, root = sys.argv[1], sys.argv[2]
    ndir = os.path.normpath(os.path.join(root, "..", "shared", "traces", "nsys"))
    out = run(td, "--version")
    if b"sqlite" not in out.stdout.lower():
        print("SKIPPED: this tracedoc was built without SQLite")
        return 77
    tmp = tempfile.mkdtemp(prefix="td-nsys-")
    try:
        check_non_utf8(td, tmp)
        check_steps_ops(td, root)
        if not os.path.isdir(ndir):
            print(f"SKIPPED (the exports): {ndir} not found; they need ../shared beside the "
                  "checkout")
            check_hostile(td, tmp, None)
        else:
            exports = sorted(os.path.join(ndir, f) for f in os.listdir(ndir)
                             if f.endswith(".sqlite"))
            lacking, osrt = set(), 0
            for p in exports:
                check_export(td, p)
                lacking.update(w[:6] for w in check_lacks(td, p))
                osrt += check_osrt(td, p)
            if not osrt:
                fail("no OS runtime call of 100 us or more read from the shared exports")
            if lacking != {"no CUD", "no NVT", "CUDA g"}:
                fail(f"the shared exports lack {sorted(lacking)}: each note not met once")
            h200 = os.path.join(ndir, "nsys-2025.1-nvfuser-thunder-xent-h200.sqlite")
            nonvtx = os.path.join(tmp, "no-nvtx.sqlite")
            copy_tables(h200, nonvtx, sorted(tables(sqlite3.connect(
                f"file:{h200}?mode=ro", uri=True)) - {"NVTX_EVENTS"}))
            if check_lacks(td, nonvtx) != ["no NVTX: steps cannot be found; record with "
                                           "--trace=nvtx"]:
                fail("the H200 export without NVTX_EVENTS: not told as lacking NVTX alone")
            check_after_startup(td, ndir)
            big = max(exports, key=os.path.getsize)
            check_old_schema(td, big, tmp)
            check_hostile(td, tmp, big)
            for rep in sorted(f for f in os.listdir(ndir) if f.endswith(".nsys-rep")):
                check_report(td, tmp, os.path.join(ndir, rep),
                             os.path.join(ndir, rep[:-len(".nsys-rep")] + ".sqlite"))
            print(f"{len(exports)} exports checked")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failures")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
