#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What-if pairs: bench/gen_trace writes the same workload with a bottleneck and with its fix,
and the saving tracedoc replays on the first must come within 10% of what the second measures
(the steady-state windows' difference per step, both as recorded), or within 2% of the step
where the saving is small beside it.

usage: whatif_pairs.py TRACEDOC GEN_TRACE"""
import json
import subprocess
import sys
import tempfile

# gen_trace's __next__ takes a fixed time: with workers, what receiving a batch costs, which
# a faster loop keeps paying (the loader's spans vary on their own: no gate); with
# --workers-us, a wait for batches made at the workers' pace, which a faster loop waits longer
# in (the replay holds the loop there and sizes the loop's fixes after the loader's). The pairs
# of other mechanisms load in the main process unless they are about the loader.
PAIRS = [
    # rule, the bottleneck, the fix, what it is
    ("dataloader", ["--loader-us", "2000"], ["--loader-us", "481"],
     "a 2 ms __next__ against a loader that keeps up (the batch's 4.8 MB at 10 GB/s)"),
    ("sync-stall", ["--items", "30", "--no-loss-item", "--single-loader"],
     ["--items", "30", "--items-fixed", "--no-loss-item", "--single-loader"],
     "30 per-element .item() per step against one launch each (the value kept on the GPU)"),
    ("sync-stall", ["--items", "30", "--no-loss-item"],
     ["--items", "30", "--items-fixed", "--no-loss-item"],
     "the same with DataLoader workers whose batches cost 2 ms each to receive, a cost that "
     "stays: the fix alone wins its whole time (sized alone)"),
    ("sync-stall", ["--items", "30", "--no-loss-item", "--workers-us", "6000",
                    "--loader-us", "100"],
     ["--items", "30", "--items-fixed", "--no-loss-item", "--workers-us", "6000",
      "--loader-us", "100"],
     "the same behind DataLoader workers that make a batch every 6 ms: the loop waits for them "
     "in most steps either way, so the fix alone wins little (sized after the loader's fix, "
     "compared alone)"),
    ("small-kernels", ["--ops", "0", "--launch-loop", "100", "--single-loader"],
     ["--ops", "0", "--launch-loop", "100", "--loop-fused",
      "--single-loader"],
     "a Python loop launching 100 kernels of 2 us per step on a drained GPU, against one launch "
     "of their fused kernel (the loop's own Python kept)"),
    ("transfer", ["--side-copies", "16", "--single-loader"],
     ["--side-copies", "16", "--side-pinned", "--single-loader"],
     "16 pageable, blocking 4 MB uploads per step on side streams against pinned, non-blocking "
     "ones at 10 GB/s, which queue on the copy engine"),
    ("transfer", ["--side-copies", "16", "--inline-copies", "--single-loader"],
     ["--side-copies", "16", "--side-pinned", "--consumer-wait", "--single-loader"],
     "the same uploads on the compute stream, behind its kernels, against pinned, non-blocking "
     "ones on side streams that the compute waits for before use (wait_stream)"),
    ("communication", ["--allreduce-mb", "100", "--single-loader"],
     ["--allreduce-mb", "100", "--buckets", "--single-loader"],
     "a 100 MB gradient all-reduce after the backward, exposed, against DDP's 25 MB buckets "
     "during it, each once its gradients are ready"),
    ("communication", ["--gather-mb", "64", "--single-loader"],
     ["--gather-mb", "64", "--prefetch", "--single-loader"],
     "FSDP's 4 parameter all-gathers of 16 MB per step, each issued as its layer starts and "
     "waiting for the compute, against each prefetched beside the layer before"),
    ("element-loop", ["--element-loop", "512", "--single-loader"],
     ["--element-loop", "512", "--element-fix", "vec", "--single-loader"],
     "a Python loop `total += t[i].cpu()` over 512 elements per step (a select, a copy into "
     "pageable memory that waits for the GPU, a CPU add) against t.sum().item(): no loop"),
    ("element-loop", ["--element-loop", "512", "--element-fix", "gpu", "--single-loader"],
     ["--element-loop", "512", "--element-fix", "vec", "--single-loader"],
     "the same loop kept on the GPU, `total += t[i]` (a select and a 2 us add kernel launched "
     "per element) against t.sum().item()"),
    ("allocator", ["--allocs", "3", "--single-loader"], ["--single-loader"],
     "3 cudaMalloc + cudaFree per step (cudaFree waits for the GPU) against none"),
]


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    tracedoc, gen = sys.argv[1], sys.argv[2]
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for rule, before, after, what in PAIRS:
            a, b = f"{tmp}/{rule}-a.json", f"{tmp}/{rule}-b.json"
            run(gen, "--steps", "8", *before, "-o", a)
            run(gen, "--steps", "8", *after, "-o", b)
            ra = json.loads(run(tracedoc, "replay", "--format", "json", a))
            rb = json.loads(run(tracedoc, "replay", "--format", "json", b))
            n = len(ra["steps"])
            assert n == len(rb["steps"]) and n > 0, (rule, n, len(rb["steps"]))
            measured = (ra["window_measured_ns"] - rb["window_measured_ns"]) / n
            d = json.loads(run(tracedoc, "diagnose", "--format", "json", a))
            f = [x for x in d["findings"] if x["rule"] == rule]
            if not f:
                print(f"FAIL: {rule}: no finding on the trace with the bottleneck")
                bad += 1
                continue
            assert f[0]["sizing"] == "replay", f[0]
            paced = "--workers-us" in before
            if paced != ("alone_ns" in f[0]) and rule != "dataloader":
                print(f"FAIL: {rule}: sized {'alone' if paced else 'after the loader'} on a "
                      f"loader {'paced by its workers' if paced else 'with a fixed cost'}: {what}")
                bad += 1
            if paced:  # whatif says so too, in text and JSON, and for a bound as well
                text = " ".join(run(tracedoc, "whatif", a).split())
                w = json.loads(run(tracedoc, "whatif", "--format", "json", a))
                # the generated GEMMs are ampere_sgemm (FP32) on an H100: precision's fix is
                # sized after the loader's as well
                after = [x["rule"] for x in w["fixes"] if x.get("after") == "dataloader" and
                         x["rule"] != "precision"]
                bound = [x["rule"] for x in w.get("not_replayed", [])
                         if x["sizing"] == "bound" and x.get("sized_after") == "dataloader"]
                if (after != [rule] or bound != ["gpu-idle"] or
                        "after the dataloader fix" not in text or
                        "gpu-idle" not in text.split("not replayed")[-1]):
                    print(f"FAIL: whatif on a paced loader: after {after}, bounds after {bound}:"
                          f" {text}")
                    bad += 1
            # a fix sized after another's (the loader's) is compared by what it wins alone
            replayed = sum(x.get("alone_ns", x["est_savings_ns"]) for x in f) / n
            ratio = replayed / measured if measured else float("inf")
            # within 10%, or - a saving small beside the step - within 2% of the step
            step = ra["window_measured_ns"] / n
            ok = abs(ratio - 1) <= 0.10 or abs(replayed - measured) <= 0.02 * step
            print(f"{'ok  ' if ok else 'FAIL'} {rule:14} measured {measured / 1e3:9.1f} us/step, "
                  f"replayed {replayed / 1e3:9.1f} us/step ({ratio:.3f}x): {what}")
            bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
