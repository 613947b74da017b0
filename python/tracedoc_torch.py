# SPDX-License-Identifier: MIT
"""tracedoc for torch.profiler: a trace handler that exports each trace compressed, runs
`tracedoc diagnose` on it and prints the top findings, one line each.

    import torch
    from tracedoc_torch import tracedoc_handler

    with torch.profiler.profile(
            schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
            on_trace_ready=tracedoc_handler("traces", md="tracedoc.md")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Each trace lands in DIR as WORKER.STEP.pt.trace.json.gz (tracedoc reads it as it is, and so do
Perfetto and the TensorBoard plugin). Nothing but the standard library and torch is needed;
`tracedoc` is found on PATH (or $TRACEDOC, or tracedoc=...), and its absence is an error when
the handler is made, before any step is profiled, not a silent no-op at the end.
"""
import gzip
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

__all__ = ["tracedoc_handler", "TracedocHandler", "TracedocError"]


class TracedocError(RuntimeError):
    """tracedoc could not be run, or could not read the trace it was given."""


def _find_tracedoc(path):
    cand = path or os.environ.get("TRACEDOC") or "tracedoc"
    found = shutil.which(cand) if os.sep not in cand else (cand if os.access(cand, os.X_OK)
                                                             else None)
    if not found:
        raise TracedocError(
            f"tracedoc not found ({cand!r}): install it (apt install ./tracedoc_*.deb, or "
            "cmake --install build) or pass tracedoc='/path/to/tracedoc' or set $TRACEDOC")
    return found


def _ms(ns):
    return f"{ns / 1e6:.1f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} us"


class TracedocHandler:
    """The callable torch.profiler calls with the profiler when a trace is ready.

    dir_name     where the traces go (made if missing)
    worker_name  the file's first part (default: host_pid, as tensorboard_trace_handler)
    md           a path for the Markdown report of each trace ({step} is the step number), or
                 None; for a pull-request comment or $GITHUB_STEP_SUMMARY
    top          findings printed, one line each
    config       a tracedoc config file (thresholds, patterns, suppressions)
    tracedoc     the tracedoc binary (default: $TRACEDOC, else tracedoc on PATH)
    out          where the lines go (default: sys.stderr)

    After each call: .last_trace (the file), .last_report (tracedoc.report/1 as a dict).
    """

    def __init__(self, dir_name, worker_name=None, md=None, top=3, config=None, tracedoc=None,
                 out=None):
        self.tracedoc = _find_tracedoc(tracedoc)
        self.dir_name = dir_name
        self.worker_name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        self.md = md
        self.top = top
        self.config = config
        self.out = out
        self.last_trace = None
        self.last_report = None

    def _run(self, args):
        cmd = [self.tracedoc] + args
        if self.config:
            cmd[2:2] = ["--config", self.config]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if r.returncode != 0:
            raise TracedocError(f"{' '.join(cmd)} exited {r.returncode}: "
                                f"{r.stderr.decode(errors='replace').strip()}")
        return r.stdout

    def __call__(self, prof):
        os.makedirs(self.dir_name, exist_ok=True)
        step = getattr(prof, "step_num", 0)
        path = os.path.join(self.dir_name, f"{self.worker_name}.{step}.pt.trace.json.gz")
        # exported plain, then compressed here: the same on every torch version
        fd, tmp = tempfile.mkstemp(suffix=".json", dir=self.dir_name)
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
            with open(tmp, "rb") as src, gzip.open(path + ".tmp", "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst)
            os.replace(path + ".tmp", path)
        finally:
            for p in (tmp, path + ".tmp"):
                if os.path.exists(p):
                    os.unlink(p)
        self.last_trace = path
        report = json.loads(self._run(["diagnose", "--format", "json", path]))
        self.last_report = report
        out = self.out or sys.stderr
        findings = report.get("findings", [])
        if not findings:
            print(f"tracedoc: {path}: no findings", file=out)
        for f in findings[:self.top]:
            saves = f.get("est_savings_ns", 0)
            more = f" (saves ~{_ms(saves)})" if saves else ""
            print(f"tracedoc: [{f['severity']}] {f['rule']}: {f['title']}{more}", file=out)
        if self.md:
            md = self.md.format(step=step)
            self._run(["diagnose", "--format", "md", "-o", md, path])
        return report


def tracedoc_handler(dir_name, **kwargs):
    """on_trace_ready=tracedoc_handler(DIR, ...): see TracedocHandler."""
    return TracedocHandler(dir_name, **kwargs)
