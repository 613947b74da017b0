#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the hostile corpus into DIR: files an attacker or a careless user hands tracedoc,
each with the outcome it must get, in DIR/cases.tsv: name, command (FILE is the case's file),
expected exit code, a fragment the output or errors must hold ('-': none). hostile_test.sh
runs them, each under 20 s and 2 GB of peak RSS. usage: make.py DIR"""
import gzip
import json
import os
import struct
import subprocess
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
cases = []


def case(name, data, cmd, rc, want, mode="wb"):
    path = os.path.join(out, name)
    with open(path, mode) as f:
        f.write(data)
    cases.append((name, cmd, rc, want))


def trace(events, **top):
    doc = {"traceEvents": events}
    doc.update(top)
    return json.dumps(doc).encode()


def X(name, ts, dur, pid=1, tid=1, cat="cpu_op", **args):
    e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
    if args:
        e["args"] = args
    return e


def kernel(c, ts, dur, dev=0, name="k"):
    return [X("cudaLaunchKernel", ts - 5, 3, cat="cuda_runtime", correlation=c),
            X(name, ts, dur, pid=dev, tid=7, cat="kernel", device=dev, stream=7, correlation=c)]


# --- small documents the repository holds: config and baseline --------------------------
case("config-deep.json", b"[" * 1000000, "gate --config FILE fixtures/mini-kineto.json", 2,
     "nests deeper than 64 levels at line 1, column 65")
case("report-deep.json", b'{"schema": "tracedoc.report/1", "metrics": ' + b"[" * 1000000,
     "gate --baseline FILE fixtures/mini-kineto.json", 3, "nests deeper than 64 levels")
base = json.loads(subprocess.run([sys.argv[2], "diagnose", "--format", "json",
                                  "fixtures/rules/sync.json"], capture_output=True,
                                 check=True).stdout)
for name, v in (("report-int64min.json", -9223372036854775808), ("report-huge.json", 1e300)):
    b = dict(base)
    b["metrics"] = dict(base["metrics"], step_time_median_ns=v)
    case(name, json.dumps(b).encode(), "gate --baseline FILE fixtures/rules/sync.json", 3,
         "metrics.step_time_median_ns: ")
b = dict(base)
b["window"] = dict(base["window"], steps=-5)
case("report-steps.json", json.dumps(b).encode(), "gate --baseline FILE fixtures/rules/sync.json",
     3, "window.steps: a whole number of steps")
case("summary-deep.summary.json", b'{"schema": "tracedoc.summary/1", "x": ' + b"{\"a\":" * 100000,
     "diagnose FILE", 3, "nests deeper than 64 levels")

# --- traces: bombs -------------------------------------------------------------------------
case("nest.json", b'{"traceEvents": [' + b"[" * 1000000, "stats FILE", 3,
     "nests deeper than 10000 levels")
case("nest.json.gz", gzip.compress(b'{"traceEvents": [' + b"[" * 50000000, 9), "stats FILE", 3,
     "nests deeper than 10000 levels")
# 4 GB of whitespace in a few MB of zstd: stopped by the ratio guard
ws = subprocess.run(["zstd", "-19", "-c"], input=b'{"traceEvents": [' + b" " * (1 << 30),
                    capture_output=True, check=True).stdout
case("spaces.json.zst", ws, "stats FILE", 3, "decompression bomb")
case("spaces-allowed.json.zst", ws, "stats --max-ratio 0 --max-input-bytes 100M FILE", 3,
     "more than --max-input-bytes")

# --- traces: shapes that were quadratic ------------------------------------------------------
ev = []
for d in range(100000):
    ev += kernel(d + 1, 100 + d, 1, dev=d)
# the JSON report replays each device once more: each replay looks at its own device's streams
case("devices-100k.json", trace(ev), "diagnose --format json FILE", 0, "-")
# 200k steps of one op each: the replay's table of steps looked each one's number up in a scan
ev = []
for i in range(200000):
    ev.append(X(f"ProfilerStep#{i}", 1000 + 100 * i, 100, cat="user_annotation"))
    ev += kernel(i + 1, 1020 + 100 * i, 30)
case("steps-200k.json", trace(ev), "replay FILE", 0, "-")
ev = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": t, "args": {"name": f"t{t}"}}
      for t in range(100000)]
ev += [X("op", t, 1, tid=t) for t in range(100000)]
case("thread-names-100k.json", trace(ev), "stats FILE", 0, "-")
ev, n = [], 100000
ev += [X("aten::deep", i, 2 * n - 2 * i, cat="cpu_op") for i in range(n)]
for k in range(200):
    ev += kernel(10 + k, n + 10 * k, 2)
case("deep-spans.json", trace(ev), "diagnose FILE", 0, "-")
ev = [X(f"deep.py({i}): f", i, 2 * n - 2 * i, cat="python_function") for i in range(n)]
for k in range(200):
    ev += kernel(10 + k, n + 10 * k, 2)
case("deep-python.json", trace(ev), "diagnose FILE", 0, "-")
# 200k op names, each first called for 2 ms before the first kernel, then once for 1 us: start-up's
# first calls scanned the rest of their thread for each name
n = 200000
ev = [X(f"op{i}", 2000 * i, 2000) for i in range(n)]
ev += [X(f"op{i}", 2000 * n + 2 * i, 1) for i in range(n)]
ev += kernel(1, 2000 * n + 2 * n + 10, 5) + kernel(2, 2000 * n + 2 * n + 110, 5)
case("first-calls-200k.json", trace(ev), "diagnose FILE", 0,
     "first call of op0 (a library initialising")
# one name of 600 MB, written in pieces (yajl re-reads a token that spans its chunks)
with open(os.path.join(out, "name-600mb.json"), "wb") as f:
    f.write(b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 1, "tid": 1, "ts": 0, '
            b'"dur": 10, "name": "')
    for _ in range(600):
        f.write(b"x" * (1 << 20))
    f.write(b'"}]}')
cases.append(("name-600mb.json", "stats FILE", 0, "long_strings 1"))
ev = []
for s in range(100000):
    ev.append(X("k", s, 1, pid=0, tid=s, cat="kernel", device=0, stream=s))
case("streams-100k.json", trace(ev), "stats FILE", 0, "-")

# --- data accepted silently before --------------------------------------------------------
case("dup-ts.json", b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, '
     b'"tid": 1, "ts": 1, "dur": 2, "ts": 5000000000}]}', "stats FILE", 0, "duplicate_keys 1")
case("dup-events.json", b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, '
     b'"ts": 1, "dur": 2}], "traceEvents": [{"ph": "X", "name": "b", "pid": 1, "tid": 1, '
     b'"ts": 1, "dur": 2}]}', "stats FILE", 0, "duplicate_trace_events 1")
case("ts-true.json", b'{"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, '
     b'"ts": true, "dur": 2}]}', "stats FILE", 0, "bad_number 1")
case("dup-names.json", b'{"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 2' +
     b', "name": "n"' * 1000000 + b"}]}", "stats FILE", 0, "duplicate_keys 1")
case("end-overflow.json", b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, '
     b'"tid": 7, "ts": 9223372036854775.000, "dur": 100, "args": {"device": 0}}]}',
     "stats FILE", 0, "dur_overflow 1")
# Inductor's kernel_flop / kernel_num_gb out of range, of the wrong type or negative: no cost,
# no crash; the one sound launch is the only row with a bound
ev = [X("ProfilerStep#1", 0, 900, cat="user_annotation")]
for i, (fl, gb) in enumerate((("1e400", "1"), ("9.3e18", "1e30"), ('"x"', "-1"), ("true", "{}"),
                              ("[1]", "null"), ("0", "0.5"))):
    ev.append(X("triton_%d" % i, 100 * i + 10, 50, kernel_flop="FL", kernel_num_gb="GB"))
    ev += kernel(i + 1, 100 * i + 20, 20, name="triton_%d" % i)
doc = trace(ev, deviceProperties=[{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]).decode()
for i, (fl, gb) in enumerate((("1e400", "1"), ("9.3e18", "1e30"), ('"x"', "-1"), ("true", "{}"),
                              ("[1]", "null"), ("0", "0.5"))):
    doc = doc.replace('"kernel_flop": "FL", "kernel_num_gb": "GB"',
                      '"kernel_flop": %s, "kernel_num_gb": %s' % (fl, gb), 1)
case("inductor-figures.json", doc.encode(), "ops --window all --format csv FILE", 0,
     "triton_5,op")

# --- formats ----------------------------------------------------------------------------------
small = trace(kernel(1, 10, 5))
skippable = struct.pack("<II", 0x184D2A50, 4) + b"tdoc"
zs = subprocess.run(["zstd", "-c"], input=small, capture_output=True, check=True).stdout
case("skippable.json.zst", skippable + zs, "stats FILE", 0, "zstd")
case("bom.json", b"\xef\xbb\xbf" + small, "stats FILE", 0, "-")
case("utf16.json", small.decode().encode("utf-16"), "stats FILE", 3, "UTF-16")
case("gzip-garbage.json.gz", gzip.compress(small) + b"garbage after the end", "stats FILE", 0,
     "after the gzip stream")
big = subprocess.run(["zstd", "--long=30", "-c"], input=small, capture_output=True,
                     check=True).stdout
case("zstd-long.json.zst", big, "stats FILE", 0, "-")
huge = subprocess.run(["zstd", "--long=31", "-c"], input=small, capture_output=True,
                      check=True).stdout
case("zstd-long31.json.zst", huge, "stats FILE", 3, "needs a window over 1 GiB")

# --- round three: the gate with nothing to judge ------------------------------------------
def aux(name, data):
    """A file a case names besides FILE (not removed after it)."""
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


td = sys.argv[2]
base_path = aux("aux-base.json", json.dumps(base).encode())
sync = json.load(open("fixtures/rules/sync.json"))
gate = f"gate --baseline {base_path} FILE"
case("gate-empty.json", b'{"traceEvents": []}', gate, 1, "nothing to judge: the current trace "
     "has no ProfilerStep# steps and no GPU activity")
case("gate-one-op.json", trace([X("aten::add", 1, 2)]), gate, 1, "no GPU activity")
nosteps = dict(sync, traceEvents=[e for e in sync["traceEvents"]
                                  if not str(e.get("name", "")).startswith("ProfilerStep")])
case("gate-no-steps.json", json.dumps(nosteps).encode(), gate, 1, "markers were lost")
case("gate-no-checks.json", json.dumps(sync).encode(), "gate FILE", 1, "there is no check to run")

# --- documents whose keys were re-ordered, or of another version -----------------------------
case("report-sorted.json", json.dumps(base, sort_keys=True, indent=1).encode(),
     "gate --baseline FILE fixtures/rules/sync.json", 0, "PASS")
case("report-bom.json", b"\xef\xbb\xbf" + json.dumps(base).encode(),
     "gate --baseline FILE fixtures/rules/sync.json", 0, "PASS")
case("report-v2.json", json.dumps(dict(base, schema="tracedoc.report/2")).encode(),
     "gate --baseline FILE fixtures/rules/sync.json", 3,
     'its "schema" is "tracedoc.report/2"; this tracedoc reads tracedoc.report/1')
summ = json.loads(subprocess.run([td, "summarize", "fixtures/rules/sync.json", "-o", "-"],
                                 capture_output=True, check=True).stdout)
case("summary-sorted.summary.json", json.dumps(summ, sort_keys=True).encode(), "diagnose FILE", 0,
     "a job of 1 rank")
case("summary-v9.summary.json", json.dumps(dict(summ, schema="tracedoc.summary/9")).encode(),
     "diagnose FILE", 3, "this tracedoc reads tracedoc.summary/1")
case("summary-kernels-obj.summary.json", json.dumps(dict(summ, kernels={"k": 1})).encode(),
     "diagnose FILE", 3, "summary-kernels-obj.summary.json: not a tracedoc.summary/1 summary: "
     "kernels: expected an array, found an object")
case("summary-steps-str.summary.json", json.dumps(dict(summ, steps="3")).encode(),
     "diagnose FILE", 3, "steps: expected an integer >= 0, found a string")
case("summary-inf.summary.json",
     json.dumps(dict(summ, syncs_per_step=1.5)).replace('1.5', '1e999').encode(),
     "diagnose --format json FILE", 3, "syncs_per_step: expected a finite number")
world = dict(summ, trace=dict(summ["trace"], world_size=1 << 62))
case("summary-world.summary.json", json.dumps(world).encode(), "diagnose FILE", 3,
     "claims a world of 4611686018427387904 ranks")
case("trace-world.json", trace(kernel(1, 10, 5), distributedInfo={"rank": 0, "world_size": 1 << 62}),
     "diagnose --job FILE", 3, "more than any job")
# a collective ending past 2^63 on two ranks (UBSan: signed overflow in the matching)
coll = dict(summ, collective_keys=["k"], collectives=[[1, 0, (1 << 63) - 1, (1 << 63) - 1, 0, 0]])
coll["trace"] = dict(summ["trace"], rank=1, world_size=2)
other = aux("aux-rank0.summary.json", json.dumps(dict(coll, trace=dict(coll["trace"], rank=0))).encode())
case("summary-coll-end.summary.json", json.dumps(coll).encode(), f"diagnose FILE {other}", 0, "-")

# --- snapshots: sentinels, sums past 64 bits, shapes that were quadratic ---------------------
def snap(devtraces, segments=()):
    return json.dumps({"segments": list(segments), "device_traces": devtraces}).encode()


def alloc(addr, size, site=None):
    fr = [{"filename": "s.py", "line": site, "name": "f"}] if site is not None else []
    return {"action": "alloc", "addr": addr, "size": size, "frames": fr}


case("snap-sentinels.json", snap([[alloc(0, 10), alloc((1 << 64) - 1, 100),
                                   alloc((1 << 64) - 2, 1000)]]),
     "memory --format json FILE", 0, '"peak_allocated_bytes": 1110')
big = (1 << 63) - 1
case("snap-int64.json", snap([[alloc(1, big), alloc(2, big)]],
                             [{"device": 0, "total_size": big, "blocks": []}] * 2),
     "memory --format json FILE", 0, f'"peak_allocated_bytes": {big}')
case("snap-devices-200k.json", snap([], [{"device": d, "total_size": 4096, "blocks": []}
                                         for d in range(200000)]),
     "memory --format json FILE", 0, '"id": 199999')
tr = [alloc(i * 4096, 4096, site=i) for i in range(8000)]
tr += [{"action": "oom", "addr": 0, "size": 1 << 30, "device_free": 0, "frames": []}] * 8000
case("snap-ooms-8k.json", snap([tr]), "memory FILE", 0, "out of memory")

# --- configs: catastrophic patterns, and 100k of them ---------------------------------------
cat = aux("aux-config-catastrophic.json", json.dumps({"patterns": {k: ["(a+)+$"] for k in (
    "sync_ops", "step_markers", "dataloader", "communication", "warmup", "ignore")}}).encode())
ev = [X("a" * 40 + f"{i}!", i * 10, 5) for i in range(5000)] + kernel(1, 10, 5)
case("names-aaa.json", trace(ev), f"diagnose --config {cat} FILE", 0, "left out for the rest")
many = aux("aux-config-100k.json", json.dumps({"patterns": {
    "sync_ops": [f"^op{i}x$" for i in range(100000)]}}).encode())
ev = [X(f"aten::op{i}", i * 10, 5) for i in range(2000)] + kernel(1, 10, 5)
case("names-2k.json", trace(ev), f"diagnose --config {many} FILE", 0, "-")
# 100k loops of two element reads with a wait between them (element_loop_min 2), each after an op
# of its own: each loop passed over all blocking units, each candidate over all loops taken
loops = aux("aux-config-loops.json", json.dumps({"rules": {"element_loop_min": 2}}).encode())
n = 100000
ev = kernel(1, 10, 5)
for i in range(n):
    t = 100 + 10 * i
    ev += [X(f"sep{i}", t, 2), X("aten::select", t + 3, 1),
           X("cudaDeviceSynchronize", t + 5, 1, cat="cuda_runtime"), X("aten::select", t + 7, 1)]
ev += kernel(2, 100 + 10 * n + 10, 5)
case("loops-100k.json", trace(ev), f"diagnose --config {loops} FILE", 0,
     f"{2 * n} iterations in {n} loops")

# --- names that would drive a terminal: C1 and bidi controls are shown escaped -----------------
evil = "aten::\u009b31m\u202eevil\u2066\u0085"
ev = [X(evil, 10, 500)] + kernel(1, 20, 400, name="k\u202e\u009d")
case("names-controls.json", trace(ev), "ops FILE", 0, "\\u202e")

# --- ops: 100k instants at one time inside one op, and 100k [memory] samples there: each
# sample counts for every one of them (as key_averages counts it), in linear time ----------
ev = [X("outer", 0, 1000)] + [X("aten::empty", 100, 0) for _ in range(100000)]
ev += [{"ph": "i", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 100,
        "args": {"Device Type": 0, "Bytes": 8}} for _ in range(100000)]
case("ops-instants-100k.json", trace(ev), "ops --format csv FILE", 0,
     "aten::empty,op,0.000000,0,0.000000,0,0,80000000000,80000000000,100000")

# --- snapshot pickles: nothing is run, bombs and cut files refused with their byte ----------
import pickle  # noqa: E402
case("pk-global.pickle", b'\x80\x02cos\nsystem\n(S"echo pwned"\ntR.', "memory FILE", 3,
     "byte 2: opcode GLOBAL (0x63) would import or call Python code: refused")
case("pk-stack-global.pickle", b"\x80\x04\x95\x12\x00\x00\x00\x00\x00\x00\x00\x8c\x02os"
     b"\x94\x8c\x06system\x94\x93\x94.", "memory FILE", 3, "byte 25: opcode STACK_GLOBAL")
case("pk-reduce.pickle", b"\x80\x02])R.", "memory FILE", 3, "byte 4: opcode REDUCE (0x52)")
case("pk-memo-bomb.pickle", b"\x80\x04(" + b"]\x940" * 5000000 + b"N.", "memory FILE", 3,
     "values kept at once: a memo bomb")
case("pk-memo-scalars.pickle", b"\x80\x04(" + b"K\x01\x940" * 5000000 + b"N.", "memory FILE",
     3, "memo entries kept: a memo bomb")
case("pk-nest-marks.pickle", b"\x80\x04" + b"(" * 2000000, "memory FILE", 3,
     "byte 1048578: more than 1048576 values on the stack: a nesting bomb")
case("pk-nest-tuples.pickle", b"\x80\x04)" + b"\x85" * 100000 + b".", "memory FILE", 3,
     "byte 514: values nest deeper than 512")
case("pk-nest-lists.pickle", b"\x80\x04" + b"]" * 2000000 + b"a" * 1999999 + b".",
     "memory FILE", 3, "a nesting bomb")
case("pk-long4-2g.pickle", b"\x80\x02\x8b" + struct.pack("<I", 1 << 31) + b".", "memory FILE", 3,
     "byte 2: LONG4 of 2147483648 bytes")
case("pk-long4-big.pickle", b"\x80\x02\x8b" + struct.pack("<I", (1 << 31) - 1) + b"\x00" * 64,
     "memory FILE", 3, "byte 2: LONG4 of 2147483647 bytes: more than the 4096")
case("pk-bytes8.pickle", b"\x80\x04\x8e" + struct.pack("<Q", 1 << 40) + b"abc", "memory FILE", 3,
     "byte 2: BINBYTES8 says 1099511627776 bytes follow from byte 11; the file ends 3 bytes later")
body = pickle.dumps({"segments": [{"device": 0, "total_size": 1 << 20, "blocks": []}],
                     "device_traces": [[{"action": "alloc", "addr": i, "size": 1}
                                        for i in range(2000)]]}, protocol=4)
case("pk-cut-frame.pickle", body[:len(body) // 2], "memory FILE", 3,
     "the pickle ends inside a frame that runs to byte")
case("pk-cut.pickle", pickle.dumps({"segments": []}, protocol=2)[:-1], "memory FILE", 3,
     "the pickle ends before its STOP")
case("pk-ints.pickle", pickle.dumps(list(range(100)), protocol=4), "memory FILE", 3,
     "not a memory snapshot")
case("pk-no-segments.pickle", pickle.dumps({"a": 1, "b": [1, 2]}, protocol=4), "memory FILE", 3,
     "not a memory snapshot")
case("pk-cycle.pickle", b"\x80\x04}\x94(\x8c\x01x\x94]\x94h\x02au.", "memory FILE", 3,
     "a value that holds itself")
case("pk-protocol9.pickle", b"\x80\x09N.", "memory FILE", 3, "pickle protocol 9")
ref = b"\x80\x04}\x94(\x8c\x01x\x94]\x94(" + b"K\x00" * 1000 + b"e"
for k in range(1, 8):
    ref += b"]\x94(" + (b"h" + bytes([k + 1])) * 1000 + b"e0"
case("pk-ref-bomb.pickle", ref + b"u.", "memory FILE", 3, "a value of more than 4096 items")
case("pk-as-json.json", body, "memory --format json FILE", 0, '"entries": 2000')

with open(os.path.join(out, "cases.tsv"), "w") as f:
    for c in cases:
        f.write("\t".join(str(x) for x in c) + "\n")
