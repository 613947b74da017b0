#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch's own key_averages() over a saved Kineto trace.json: the events are turned into
torch.autograd.profiler_util.FunctionEvent objects as torch.autograd.profiler._parse_kineto_results
builds them from a live profiler (filtered names, kernels attached to the op whose correlation
id is their External id, memory samples counted from an event's start to its end, both included),
then PyTorch's EventList nests them (_populate_cpu_children) and averages them (key_averages).
A [memory] sample counts for the events of any thread around it (MemRecordsAcc.in_interval).

usage: torch_reference.py TRACE  -> JSON list of rows on stdout (times in ns)"""
import bisect
import gzip
import json
import sys
from decimal import Decimal

from torch.autograd import DeviceType
from torch.autograd.profiler_util import EventList, FunctionEvent

FILTERED = {"[memory]", "[OutOfMemory]", "profiler::_record_function_enter",
            "profiler::_record_function_enter_new", "profiler::_record_function_exit",
            "aten::is_leaf", "aten::output_nr", "aten::_version"}
CPU_CATS = {"cpu_op", "user_annotation", "cuda_runtime", "cuda_driver", "Operator", "Runtime"}
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "Kernel", "Memcpy", "Memset"}


def ns(v):
    return int((Decimal(str(v)) * 1000).to_integral_value())


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f, parse_float=Decimal)
    return d["traceEvents"] if isinstance(d, dict) else d


def step_name(name):
    return "ProfilerStep*" if name.startswith("ProfilerStep#") else name


def rows(path):
    """key_averages() of the trace at path, as a list of rows"""
    evs = load(path)
    mem = []  # [(ts, bytes, device type)], any thread's
    for e in evs:
        if e.get("ph") == "i" and e.get("name") == "[memory]":
            a = e.get("args", {})
            mem.append((ns(e["ts"]), int(a.get("Bytes", 0)), int(a.get("Device Type", 0))))
    mem.sort()
    starts = [m[0] for m in mem]
    fes, by_corr, kernels = [], {}, []
    for e in evs:
        if e.get("ph") != "X" or "dur" not in e or e.get("name") in FILTERED:
            continue
        cat = e.get("cat")
        a = e.get("args", {}) or {}
        s = ns(e["ts"])
        end = s + ns(e["dur"])
        if cat in CPU_CATS and "correlation" in a and cat not in ("cpu_op", "Operator"):
            corr_cpu = a["correlation"]
        else:
            corr_cpu = None
        if cat in CPU_CATS:
            cpu = cuda = 0
            k = (str(e.get("pid")), str(e.get("tid")))
            lo = bisect.bisect_left(starts, s)
            hi = bisect.bisect_right(starts, end)
            for ts, b, dt in mem[lo:hi]:
                if dt in (0,):  # CPU (MKLDNN/IDEEP are not written by Kineto)
                    cpu += b
                else:
                    cuda += b
            fe = FunctionEvent(id=len(fes), name=step_name(e["name"]), thread=k,
                               start_us=s, end_us=end, cpu_memory_usage=cpu, stack=[], input_shapes=[],
                               cuda_memory_usage=cuda, device_type=DeviceType.CPU)
            fe.is_op = cat in ("cpu_op", "user_annotation", "Operator")
            fes.append(fe)
            if corr_cpu is not None:
                by_corr.setdefault(corr_cpu, fe)
        elif cat in GPU_CATS:
            fe = FunctionEvent(id=len(fes), name=e["name"], thread=0, start_us=s, end_us=end, stack=[], input_shapes=[],
                               device_type=DeviceType.CUDA)
            fes.append(fe)
            kernels.append((a.get("correlation"), fe))
    # a kernel belongs to the op its launch is in: live, its linked correlation id says so;
    # in the file, the runtime call with its correlation id, and the op around that call
    fes.sort(key=lambda x: [x.time_range.start, -x.time_range.end])
    EventList(fes)._populate_cpu_children()
    for corr, fe in kernels:
        op = by_corr.get(corr)
        while op is not None and not op.is_op:
            op = op.cpu_parent
        if op is not None:
            op.append_kernel(fe.name, 0, fe.time_range.end - fe.time_range.start)
    for fe in fes:
        fe.cpu_children, fe.cpu_parent = [], None
    el = EventList(fes, use_cuda=True, profile_memory=True)
    el._build_tree()
    out = []
    for r in el.key_averages():
        out.append({"name": r.key, "calls": r.count,
                     "device": "cuda" if r.device_type == DeviceType.CUDA else "cpu",
                     "self_cpu_ns": r.self_cpu_time_total, "cpu_total_ns": r.cpu_time_total,
                     "self_cuda_ns": r.self_cuda_time_total, "cuda_total_ns": r.cuda_time_total,
                     "cpu_mem_bytes": r.cpu_memory_usage,
                     "self_cpu_mem_bytes": r.self_cpu_memory_usage,
                     "cuda_mem_bytes": r.cuda_memory_usage,
                     "self_cuda_mem_bytes": r.self_cuda_memory_usage})
    return out


def main():
    json.dump(rows(sys.argv[1]), sys.stdout)


if __name__ == "__main__":
    main()
