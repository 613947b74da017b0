#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Real before/after pairs for the what-if replay (#25): the same small training loop, profiled
with torch.profiler twice, once with a bottleneck and once with its fix, each in a process of
its own. tracedoc's replayed saving on the first trace is then compared with what the second
really measured (tests/real_pairs.py reads the traces this writes).

usage: pairs.py OUT_DIR [--device cuda] [--only NAME,...]
       pairs.py --variant NAME --side before|after --out FILE   (one run; what the above calls;
                 --plain: no torch.profiler, for `tracedoc record` to trace it instead;
                 --nvtx: each step in an NVTX range named "step", as tracedoc's advice says)

The pairs, each a mechanism the replay models:
  sync        30 per-element .item() a step and the loss read each step | kept on the GPU
  transfer    the batch uploaded from pageable memory, blocking | pinned, non_blocking
  dataloader  a Dataset with CPU work per sample, num_workers=0 | num_workers=8
  small       a Python loop of 200 tiny elementwise ops a step | the same math in 2 ops
  allocator   PYTORCH_NO_CUDA_MEMORY_CACHING=1 (cudaMalloc/cudaFree every tensor) | the cache
"""
import argparse
import os
import subprocess
import sys
import time

PAIRS = ["sync", "transfer", "dataloader", "small", "allocator"]
WAIT, WARMUP, ACTIVE = 3, 2, 10


class Work:
    """A dataset whose samples cost CPU time to make (decode and augment, as images do)."""

    def __init__(self, n, shape, cost_iters):
        self.n, self.shape, self.cost = n, shape, cost_iters

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        import torch
        g = torch.Generator().manual_seed(i)
        x = torch.rand(self.shape, generator=g)
        for _ in range(self.cost):  # the per-sample CPU work
            x = (x * 1.0001 + 0.0001).clamp_(0, 1)
        return x, i % 10


def net(torch, ch):
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(3, ch, 3, padding=1), nn.ReLU(), nn.Conv2d(ch, ch, 3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2), nn.Conv2d(ch, 2 * ch, 3, padding=1), nn.ReLU(),
        nn.Conv2d(2 * ch, 2 * ch, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(2 * ch, 10))


def run(variant, side, out, device, plain=False, nvtx=False):
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule
    torch.manual_seed(0)
    cuda = device == "cuda"
    batch, hw, ch = (64, 96, 64) if cuda else (4, 16, 8)
    model = net(torch, ch).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    lossf = torch.nn.CrossEntropyLoss()
    steps = WAIT + WARMUP + ACTIVE
    host_x = torch.rand(batch, 3, hw, hw)
    if variant == "transfer" and side == "after":
        host_x = host_x.pin_memory() if cuda else host_x
    host_y = torch.randint(0, 10, (batch,))
    dev_x, dev_y = host_x.to(device), host_y.to(device)
    loader = None
    if variant == "dataloader":
        ds = Work(batch * steps, (3, hw, hw), 10 if cuda else 2)
        loader = iter(torch.utils.data.DataLoader(
            ds, batch_size=batch, num_workers=0 if side == "before" else 8,
            pin_memory=cuda, persistent_workers=side == "after"))
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    acc = torch.zeros((), device=device)
    total = 0.0
    import contextlib
    with (contextlib.nullcontext() if plain else
          profile(activities=acts, schedule=schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE),
                  on_trace_ready=lambda p: p.export_chrome_trace(out))) as prof:
        for step in range(steps):
            if nvtx:
                torch.cuda.nvtx.range_push("step")
            if loader is not None:
                x, y = next(loader)
                x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            elif variant == "transfer":
                x = host_x.to(device, non_blocking=side == "after")
                y = dev_y
            else:
                x, y = dev_x, dev_y
            out_ = model(x)
            if variant == "small":
                z = out_.detach()[:, :4].contiguous()
                if side == "before":  # 200 launches of tiny kernels from Python
                    for _ in range(100):
                        z = z * 1.0001
                        z = z + 0.0001
                else:  # the same recurrence in closed form
                    a = 1.0001 ** 100
                    z = z * a + 0.0001 * (a - 1) / (1.0001 - 1)
                acc += z.sum()
            loss = lossf(out_, y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if variant == "sync" and side == "before":
                total += loss.item()
                for v in out_.detach()[0, :10].repeat(3):  # a per-element readout
                    total += v.item()
            else:
                acc += loss.detach()
            if nvtx:
                torch.cuda.nvtx.range_pop()
            if prof is not None:
                prof.step()
    if cuda:
        torch.cuda.synchronize()
    return total + float(acc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", nargs="?")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default=",".join(PAIRS))
    ap.add_argument("--variant")
    ap.add_argument("--side")
    ap.add_argument("--out")
    ap.add_argument("--plain", action="store_true")
    ap.add_argument("--nvtx", action="store_true")
    a = ap.parse_args()
    if a.variant:
        run(a.variant, a.side, a.out, a.device, a.plain, a.nvtx)
        return 0
    os.makedirs(a.out_dir, exist_ok=True)
    bad = 0
    for v in a.only.split(","):
        for side in ("before", "after"):
            env = dict(os.environ)
            if v == "allocator" and side == "before":
                env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
            f = os.path.join(a.out_dir, f"{v}-{side}.json")
            t0 = time.time()
            r = subprocess.run([sys.executable, __file__, "--variant", v, "--side", side,
                                "--out", f, "--device", a.device], env=env)
            print(f"{v}-{side}: rc {r.returncode}, {time.time() - t0:.1f} s, "
                  f"{os.path.getsize(f) if os.path.exists(f) else 0} bytes", flush=True)
            bad += r.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
