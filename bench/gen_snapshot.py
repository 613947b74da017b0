#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes a caching-allocator snapshot pickle of ENTRIES trace entries with the structure of the
real ones (../shared/traces/snapshots): protocol 4, framed, every dict and list and new string
memoized, repeats by BINGET, batches of 1000; keys segments, device_traces, allocator_settings,
external_annotations; each alloc and free_requested with its own stack of FRAMES frames drawn
from a pool of frame dicts shared by reference, free_completed sharing its free_requested's
stack, live blocks sharing their alloc's stack. Written as it goes (the whole dict is never
in memory), the way Python's pickler writes it; pickle.load reads it back.
Prints the figures the reader must find: reserved bytes, the peak, entries.
usage: gen_snapshot.py OUT [ENTRIES] [FRAMES]"""
import random
import struct
import sys


class Writer:
    def __init__(self, f):
        self.f, self.buf, self.memo, self.n = f, bytearray(), {}, 0

    def op(self, b):
        self.buf += b
        if len(self.buf) >= 1 << 16:
            self.commit()

    def commit(self):
        if self.buf:
            self.f.write(b"\x95" + struct.pack("<Q", len(self.buf)) + self.buf)
            self.buf = bytearray()

    def memoize(self, key=None):
        self.op(b"\x94")
        if key is not None:
            self.memo[key] = self.n
        self.n += 1
        return self.n - 1

    def get(self, i):
        self.op(b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i))

    def str(self, s):
        k = ("s", s)
        if k in self.memo:
            return self.get(self.memo[k])
        b = s.encode()
        self.op((b"\x8c" + bytes([len(b)]) if len(b) < 256 else b"X" + struct.pack("<I", len(b))) + b)
        self.memoize(k)

    def int(self, v):
        if 0 <= v < 256:
            self.op(b"K" + bytes([v]))
        elif 0 <= v < 65536:
            self.op(b"M" + struct.pack("<H", v))
        elif -(1 << 31) <= v < (1 << 31):
            self.op(b"J" + struct.pack("<i", v))
        else:
            n = (v.bit_length() + 8) // 8
            self.op(b"\x8a" + bytes([n]) + v.to_bytes(n, "little", signed=True))

    def value(self, v):
        if isinstance(v, str):
            self.str(v)
        elif isinstance(v, bool):
            self.op(b"\x88" if v else b"\x89")
        elif isinstance(v, int):
            self.int(v)
        elif isinstance(v, dict):
            self.dict(v.items())
        elif isinstance(v, Ref):
            self.get(v.i)
        else:
            self.list(v)

    def dict(self, items):
        self.op(b"}")
        self.memoize()
        items = list(items)
        for i in range(0, len(items), 1000):
            part = items[i:i + 1000]
            if len(part) > 1:
                self.op(b"(")
            for k, v in part:
                self.str(k)
                self.value(v)
            self.op(b"u" if len(part) > 1 else b"s")

    def list(self, it, memo_key=None):
        """it: values, or callables writing one item each (a generator of any length)"""
        self.op(b"]")
        idx = self.memoize(memo_key)
        batch = []
        def flush():
            if len(batch) > 1:
                self.op(b"(")
            for w in batch:
                w() if callable(w) else self.value(w)
            if batch:
                self.op(b"e" if len(batch) > 1 else b"a")
            batch.clear()
        for x in it:
            batch.append(x)
            if len(batch) == 1000:
                flush()
        flush()
        return idx


class Ref:
    def __init__(self, i):
        self.i = i


def main():
    out = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000000
    nframes = int(sys.argv[3]) if len(sys.argv) > 3 else 32
    rnd = random.Random(42)
    pool = [{"name": f"fn_{i}(c10::ArrayRef<long>, at::Tensor const&)",
             "filename": f"/src/model/layer_{i % 50}.py" if i % 3 == 0 else "??",
             "line": i % 500} for i in range(700)]
    with open(out, "wb") as f:
        w = Writer(f)
        w.f.write(b"\x80\x04")
        frame_memo = {}

        def stack():  # a new list of frames; frame dicts written once, then referenced
            picks = [rnd.randrange(len(pool)) for _ in range(nframes)]

            def item(p):
                def write():
                    if p in frame_memo:
                        w.get(frame_memo[p])
                    else:
                        w.op(b"}")
                        frame_memo[p] = w.memoize()
                        w.op(b"(")
                        for k, v in pool[p].items():
                            w.str(k)
                            w.value(v)
                        w.op(b"u")
                return write
            return w.list([item(p) for p in picks])

        # plan: allocations of 512 B..64 MB at distinct addresses, freed after a while;
        # what is live at the end stays live as blocks of one segment per 2 GiB
        live, plan, addr = {}, [], 1 << 40
        while len(plan) < n:
            if live and (rnd.random() < 0.5 or len(live) > 4000):
                a = rnd.choice(list(live)) if len(live) < 64 else next(iter(live))
                plan.append(("free_requested", a, live[a]))
                if len(plan) < n:
                    plan.append(("free_completed", a, live.pop(a)))
            else:
                size = 512 << rnd.randrange(18)
                live[addr] = size
                plan.append(("alloc", addr, size))
                addr += size
        total = peak = 0
        for act, a, s in plan:
            total += s if act == "alloc" else -s if act == "free_completed" else 0
            peak = max(peak, total)
        reserved = (addr - (1 << 40) + (2 << 30) - 1) // (2 << 30) * (2 << 30)
        # the dict: segments first (their blocks: what is live at the end; no stacks, as the
        # blocks' stacks are written with the trace in real files when they share them)
        w.op(b"}")
        w.memoize()
        w.op(b"(")
        w.str("segments")
        segs = []
        for base in range(1 << 40, (1 << 40) + reserved, 2 << 30):
            blocks = [{"address": a, "size": s, "requested_size": s,
                       "state": "active_allocated", "frames": []}
                      for a, s in sorted(live.items()) if base <= a < base + (2 << 30)]
            segs.append({"device": 0, "address": base, "total_size": 2 << 30,
                         "allocated_size": sum(b["size"] for b in blocks),
                         "stream": 0, "segment_type": "large", "is_expandable": False,
                         "frames": [], "blocks": blocks})
        w.list(segs)
        w.str("device_traces")
        t = 1783874667632574

        def entries():
            last_req = {}
            for i, (act, a, s) in enumerate(plan):
                def write(i=i, act=act, a=a, s=s):
                    w.op(b"}")
                    w.memoize()
                    w.op(b"(")
                    for k, v in (("action", act), ("addr", a), ("size", s), ("stream", 0),
                                 ("time_us", t + i), ("compile_context", "N/A"),
                                 ("user_metadata", "")):
                        w.str(k)
                        w.value(v)
                    w.str("frames")
                    if act == "free_completed" and a in last_req:
                        w.get(last_req.pop(a))
                    else:
                        idx = stack()
                        if act == "free_requested":
                            last_req[a] = idx
                    w.op(b"u")
                yield write
        w.op(b"]")
        w.memoize()
        w.list(entries())
        w.op(b"a")
        w.str("allocator_settings")
        w.dict([("PYTORCH_CUDA_ALLOC_CONF", ""), ("max_split_size", -1),
                ("expandable_segments", False)])
        w.str("external_annotations")
        w.list([{"stage": "START", "name": "step", "device": 0, "time_us": t}])
        w.op(b"u.")
        w.commit()
    print(f"entries {n} reserved {reserved} peak {peak}")


main()
