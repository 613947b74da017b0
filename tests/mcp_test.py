#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`tracedoc mcp` driven by a scripted client over a pipe, as an agent would: initialize (and
its version negotiation), notifications/initialized, tools/list (only the tools whose command
this build has: check and critical-path come with their commands), tools/call of diagnose,
whatif, ops, kernels, evidence on fixtures and on a real shared trace (skipped when
../shared is absent); each tool's JSON checked against the command run on its own, kernels
and evidence against a count made here over the raw trace. Then what must not break the
server: a path outside the roots and a symlink leading out (refused), a malformed line
(-32700), an unknown method (-32601), bad params (-32602), bad input (isError), a line over
the limit, output over --max-output (cut, with a note); EOF ends it with status 0. Last the
Python `mcp` client, when it is importable (else that part is skipped with a message).
usage: mcp_test.py TRACEDOC REPO_ROOT"""
import gzip
import json
import os
import select
import subprocess
import sys
import tempfile
from decimal import Decimal

# real paths: the server answers with the paths resolved
BIN, ROOT = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
FIX = os.path.join(ROOT, "fixtures")
SHARED = os.path.realpath(os.path.join(sys.argv[2], "..", "shared", "traces"))
DEMO = os.path.join(FIX, "demo-train.json.gz")
passed, failed = 0, 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL " + what)


class Server:
    def __init__(self, *args, cwd=ROOT):
        self.p = subprocess.Popen([BIN, "mcp", *args], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd)
        self.next_id = 0

    def send_raw(self, data):
        self.p.stdin.write(data)
        self.p.stdin.flush()

    def send(self, obj):
        self.send_raw(json.dumps(obj).encode() + b"\n")

    def recv(self, timeout=300):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            raise RuntimeError("no answer in %d s" % timeout)
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError("the server closed stdout; stderr: %s" % self.p.stderr.read())
        check(line.endswith(b"\n") and line.count(b"\n") == 1, "a message is one line")
        return json.loads(line)

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        r = self.recv()
        check(r.get("id") == self.next_id and r.get("jsonrpc") == "2.0",
              "%s: the answer carries the request's id" % method)
        return r

    def call(self, name, **args):
        return self.request("tools/call", {"name": name, "arguments": args})

    def initialize(self, version="2025-06-18"):
        r = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                        "clientInfo": {"name": "mcp_test", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self):
        self.p.stdin.close()
        try:
            rc = self.p.wait(120)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = None
        rest = self.p.stdout.read()
        err = self.p.stderr.read()
        check(b"runtime error" not in err and b"Sanitizer" not in err,
              "no sanitizer report: %s" % err[-2000:])
        self.p.stdout.close()
        self.p.stderr.close()
        return rc, rest, err


def cli_json(*args):
    out = subprocess.run([BIN, *args, "--format", "json", "--quiet"], capture_output=True,
                         check=True)
    return json.loads(out.stdout)


def commands():
    """the commands `tracedoc --help` lists: this build's table"""
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True).stdout
    names, on = set(), False
    for line in out.splitlines():
        if line.startswith("commands:"):
            on = True
        elif on and line.startswith("  ") and line.strip():
            names.add(line.split()[0])
        elif on and not line.strip() and names:
            break
    return names


def error_code(r):
    return r.get("error", {}).get("code")


def structured(r):
    return r.get("result", {}).get("structuredContent")


def texts(r):
    return [c.get("text", "") for c in r.get("result", {}).get("content", [])
            if c.get("type") == "text"]


def raw_events(path):
    with (gzip.open if path.endswith(".gz") else open)(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=Decimal)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def ns(v):
    return int(Decimal(str(v)) * 1000)


def kernels_by_hand(path):
    """calls per GPU op name over the whole trace, counted from the raw events"""
    calls = {}
    for e in raw_events(path):
        if isinstance(e, dict) and e.get("ph") == "X" and \
                str(e.get("cat", "")).lower() in ("kernel", "gpu_memcpy", "gpu_memset"):
            calls[e["name"]] = calls.get(e["name"], 0) + 1
    return calls


def evidence_by_hand(path, at, w):
    """the complete events (ph X) overlapping [at - w, at + w]: (name, ts_ns, dur_ns)"""
    got = set()
    for e in raw_events(path):
        if not isinstance(e, dict) or e.get("ph") != "X" or "dur" not in e:
            continue
        ts, dur = ns(e["ts"]), ns(e["dur"])
        if ts <= at + w and ts + dur >= at - w:
            got.add((e["name"], ts, dur))
    return got


def test_protocol(srv, cmds):
    r = srv.initialize()
    res = r.get("result", {})
    check(res.get("protocolVersion") == "2025-06-18", "initialize: protocol 2025-06-18")
    check("tools" in res.get("capabilities", {}), "initialize: the tools capability")
    check(res.get("serverInfo", {}).get("name") == "tracedoc", "initialize: serverInfo")
    check(srv.request("ping").get("result") == {}, "ping answers {}")

    r = srv.request("tools/list")
    tools = {t["name"]: t for t in r.get("result", {}).get("tools", [])}
    want = {"diagnose", "whatif", "ops", "kernels", "memory", "diff", "check",
            "critical-path"} & cmds
    check(set(tools) == want | {"evidence"},
          "tools/list: the tools of this build's commands, and evidence: %s" % sorted(tools))
    for t in tools.values():
        s = t.get("inputSchema", {})
        check(s.get("type") == "object" and set(s.get("required", [])) <= set(s["properties"]),
              "tools/list: %s's inputSchema" % t["name"])
    for name in ("check", "critical-path"):
        r = srv.call(name, trace="demo-train.json.gz")
        if name in cmds:
            check("result" in r and not r["result"].get("isError"),
                  "%s runs where the build has it: %s" % (name, str(r)[:300]))
        else:
            check(error_code(r) == -32602 and "no %s command" % name in r["error"]["message"],
                  "%s without its command: a JSON-RPC error" % name)


def test_tools(srv):
    # diagnose: the report, as the command prints it on its own; a summary line per finding
    r = srv.call("diagnose", trace="demo-train.json.gz")
    doc = structured(r)
    ref = cli_json("diagnose", DEMO)
    check(doc == ref, "diagnose's structuredContent is the command's JSON report")
    t = texts(r)
    check(len(t) == 2 and json.loads(t[1]) == ref, "diagnose: the JSON as text too")
    check(ref["findings"] and ref["findings"][0]["title"][:100] in t[0],
          "diagnose: the summary names the first finding")
    check(r["result"].get("isError") is False, "diagnose: isError false")
    r = srv.call("diagnose", trace=DEMO, format="text")
    check(structured(r) is None and texts(r) and texts(r)[-1].startswith("tracedoc diagnose " + DEMO),
          "diagnose format text: the report a person reads")

    # whatif: a list of fixes, sized by replay
    r = srv.call("whatif", trace="demo-train.json.gz", fix=["dataloader"])
    doc = structured(r) or {}
    check(doc == cli_json("whatif", DEMO, "--fix", "dataloader"),
          "whatif --fix: the command's JSON")
    check([f["rule"] for f in doc.get("fixes", [])] == ["dataloader"], "whatif: only the fix asked")
    saves = doc["fixes"][0]["saves_ns"] if doc.get("fixes") else 0
    check(1e6 <= saves < 1e9 and "(saves_ns %.1f ms)" % (saves / 1e6) in texts(r)[0],
          "whatif: the summary sizes the fix (%s)" % texts(r)[:1])

    # ops: top N
    r = srv.call("ops", trace="demo-train.json.gz", top=3, sort="calls")
    doc = structured(r) or {}
    check(len(doc.get("rows", [])) == 3, "ops top 3: three rows")
    calls = [row["calls"] for row in doc.get("rows", [])]
    check(calls == sorted(calls, reverse=True), "ops sort calls: in order")
    check(doc == cli_json("ops", DEMO, "--top", "3", "--sort", "calls"), "ops: the command's JSON")

    # kernels over the whole trace: calls per name counted here from the raw events
    r = srv.call("kernels", trace="mini-kineto.json", window="all")
    rows = (structured(r) or {}).get("rows", [])
    check({row["name"]: row["calls"] for row in rows} ==
          kernels_by_hand(os.path.join(FIX, "mini-kineto.json")),
          "kernels window all: calls per name as counted from the raw trace")

    # evidence: the events around a kernel's start, against the raw events
    kern = next(e for e in raw_events(DEMO) if e.get("cat") == "kernel" and e.get("ph") == "X")
    at, w = ns(kern["ts"]) + 1000, 40000
    r = srv.call("evidence", trace="demo-train.json.gz", ts_ns=at, window_ns=w, limit=5000)
    doc = structured(r) or {}
    got = {(e["name"], e["ts_ns"], e["dur_ns"]) for tr in doc.get("tracks", [])
           for e in tr["events"] if e["kind"] not in ("instant", "counter", "memory")}
    want = evidence_by_hand(DEMO, at, w)
    check(want and got == want, "evidence: the events overlapping the window, as found in the "
          "raw trace (%d here, %d by hand)" % (len(got), len(want)))
    check(doc.get("events_matched") == doc.get("events_shown") and not doc.get("truncated"),
          "evidence: nothing cut under the limit")
    r = srv.call("evidence", trace="demo-train.json.gz", ts_ns=at, window_ns=w, limit=2)
    doc = structured(r) or {}
    shown = [e for tr in doc.get("tracks", []) for e in tr["events"]]
    check(len(shown) == 2 and doc.get("truncated") is True and doc.get("events_matched", 0) > 2,
          "evidence limit 2: two shown, the rest counted")
    check(all(e["ts_ns"] <= at <= e["ts_ns"] + e["dur_ns"] for e in shown),
          "evidence: the nearest first (events that hold the time)")

    # memory on a trace recorded with profile_memory
    r = srv.call("memory", file="demo-train.json.gz")
    check((structured(r) or {}).get("schema") == "tracedoc.memory/1", "memory: its JSON")

    # diff: two traces, the rows of the change
    base, cur = (os.path.join(FIX, "real-pairs", "dataloader-%s.json.zst" % w)
                 for w in ("before", "after"))
    r = srv.call("diff", base="real-pairs/dataloader-before.json.zst",
                 current="real-pairs/dataloader-after.json.zst", top=5)
    doc = structured(r) or {}
    check(doc.get("schema") == "tracedoc.diff/1" and
          doc == cli_json("diff", base, cur, "--top", "5"), "diff: the command's JSON")

    # a real trace, when ../shared is there
    real = os.path.join(SHARED, "a100-event-sync.json.gz")
    if os.path.exists(real):
        srv2 = Server("--root", SHARED)
        srv2.initialize()
        r = srv2.call("diagnose", trace="a100-event-sync.json.gz")
        check(structured(r) == cli_json("diagnose", real), "diagnose on a real trace")
        ranks = os.path.join(SHARED, "dlrm-8rank")
        if os.path.isdir(ranks):
            r = srv2.call("diagnose", trace="dlrm-8rank")
            doc = structured(r) or {}
            check(doc.get("schema") == "tracedoc.job/1" and doc == cli_json("diagnose", ranks),
                  "diagnose on a directory of a job's ranks: the job's report")
        rc, _, _ = srv2.close()
        check(rc == 0, "the second server exits 0")
    else:
        print("SKIPPED: the real trace (../shared/traces absent)")


def test_refusals(srv, tmp):
    outside = os.path.join(ROOT, "README.md")
    r = srv.call("diagnose", trace=outside)
    check(error_code(r) == -32602 and outside in r["error"]["message"] and
          FIX in r["error"]["message"], "a path outside the roots: refused, naming path and roots")
    link = os.path.join(tmp, "escape.json")
    os.symlink(outside, link)
    r = srv.call("diagnose", trace=link)
    check(error_code(r) == -32602 and "outside" in r["error"]["message"],
          "a symlink leading out of a root: refused")
    job = os.path.join(tmp, "job")
    os.mkdir(job)
    os.symlink(outside, os.path.join(job, "rank0.json"))
    r = srv.call("diagnose", trace=job)
    check(error_code(r) == -32602 and "rank0.json" in r["error"]["message"],
          "a job's directory with an entry leading out: refused, naming the entry")
    check(error_code(srv.call("whatif", trace=tmp)) == -32602,
          "a directory where only a trace is taken: refused")
    r = srv.call("diagnose", trace="../README.md")
    check(error_code(r) == -32602, "a relative path climbing out: refused")
    r = srv.call("diagnose", trace="no-such.json")
    check(error_code(r) == -32602 and "no-such.json" in r["error"]["message"],
          "a missing file: a JSON-RPC error naming it")

    srv.send_raw(b'{"jsonrpc": "2.0", "id": 1, "method": \n')
    r = srv.recv()
    check(error_code(r) == -32700 and r.get("id") is None, "a malformed line: -32700, id null")
    check(srv.request("ping").get("result") == {}, "the server goes on after a malformed line")
    srv.send_raw(b"[" * 100000 + b"\n")
    r = srv.recv()
    check(error_code(r) == -32700 and "deeper" in r["error"]["message"],
          "a line nested 100000 deep: -32700, no stack overflow")
    srv.send_raw(b'{"jsonrpc":"2.0","id":3,"method":"p\xffng"}\n')
    check(error_code(srv.recv()) == -32700, "invalid UTF-8: -32700")
    srv.send_raw(b'{"jsonrpc":"2.0","id":3,"method":"ping"}\x00{}\n')
    check(error_code(srv.recv()) == -32700, "a NUL byte in a line: -32700")
    check(error_code(srv.request("resources/list")) == -32601, "an unknown method: -32601")
    srv.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}})
    srv.send({"jsonrpc": "1.0", "id": 99, "method": "ping"})
    r = srv.recv()
    check(error_code(r) == -32600 and r.get("id") == 99, "jsonrpc 1.0: -32600")
    srv.send([{"jsonrpc": "2.0", "id": 5, "method": "ping"}])
    check(error_code(srv.recv()) == -32600, "a batch: -32600 (2025-06-18 has none)")

    check(error_code(srv.call("ops", trace="demo-train.json.gz", top="three")) == -32602,
          "bad params: top not an integer")
    check(error_code(srv.call("ops", trace="demo-train.json.gz", colour=1)) == -32602,
          "bad params: an argument the tool lacks")
    check(error_code(srv.call("ops")) == -32602, "bad params: no trace")
    r = srv.call("ops", trace="demo-train.json.gz", format="html")
    check(error_code(r) == -32602 and "json, text, md, csv" in r["error"]["message"],
          "bad params: a format the tool lacks, the formats named")
    check(error_code(srv.call("no-such-tool")) == -32602, "an unknown tool: -32602")
    r = srv.call("ops", trace="demo-train.json.gz", sort="zzz")
    check(error_code(r) == -32602 and "not a column" in r["error"]["message"],
          "the command's usage error (exit 2): -32602 with its message")
    check(error_code(srv.call("evidence", trace="demo-train.json.gz")) == -32602,
          "evidence needs ts_ns")
    check(error_code(srv.request("tools/call", {"name": "ops", "arguments": [1]})) == -32602,
          "arguments not an object")

    bad = os.path.join("bad", sorted(os.listdir(os.path.join(FIX, "bad")))[0])
    r = srv.call("diagnose", trace=bad)
    check(r.get("result", {}).get("isError") is True and texts(r) and
          os.path.basename(bad) in texts(r)[0], "bad input (exit 3): isError with the message")

    srv.send_raw(b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"' +
                 b"a" * (5 << 20) + b'"}}\n')
    r = srv.recv()
    check(error_code(r) == -32600 and "over" in r["error"]["message"], "a line over the limit")
    check(srv.request("ping").get("result") == {}, "the server goes on after a huge line")


def test_bounded():
    srv = Server("--root", FIX, "--max-output", "2048")
    srv.initialize()
    r = srv.call("ops", trace="demo-train.json.gz")
    t = texts(r)
    check(structured(r) is None and t and "[truncated:" in t[-1] and len(t[-1]) < 2048 + 400,
          "output over --max-output: cut with a note, no structuredContent")
    rc, _, _ = srv.close()
    check(rc == 0, "EOF: exit 0")


def test_versions():
    srv = Server("--root", FIX)
    r = srv.initialize("2099-01-01")
    check(r["result"]["protocolVersion"] == "2025-06-18", "a later version asked: the latest")
    srv.close()
    srv = Server("--root", FIX)
    r = srv.initialize("2025-03-26")
    check(r["result"]["protocolVersion"] == "2025-03-26", "an earlier version it speaks: that one")
    r = srv.call("kernels", trace="mini-kineto.json")
    check(structured(r) is None and "tracedoc.kernels/1" in texts(r)[-1],
          "2025-03-26: no structuredContent, the JSON as text")
    srv.close()
    srv = Server(cwd=FIX)  # no --root: the current directory
    srv.initialize()
    r = srv.call("kernels", trace="mini-kineto.json")
    check((structured(r) or {}).get("schema") == "tracedoc.kernels/1",
          "no --root: a file in the current directory")
    check(error_code(srv.call("kernels", trace="../README.md")) == -32602,
          "no --root: a file above the current directory refused")
    srv.close()
    srv = Server("--root", os.path.join(FIX, "no-such-dir"))
    rc, _, err = srv.close()
    check(rc == 2 and b"no-such-dir" in err, "a root that does not exist: exit 2, named")


def test_python_client():
    try:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.shared.exceptions import McpError
        import anyio
    except ImportError:
        print("SKIPPED: the Python mcp client (pip install mcp) is not importable")
        return

    async def run():
        params = StdioServerParameters(command=BIN, args=["mcp", "--root", FIX], cwd=ROOT)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                names = {t.name for t in (await session.list_tools()).tools}
                check({"diagnose", "evidence"} <= names, "mcp client: list_tools")
                res = await session.call_tool("diagnose", {"trace": "demo-train.json.gz"})
                doc = getattr(res, "structuredContent", None)  # mcp 1.10 and later
                if doc is None:  # an older client: the JSON after the summary
                    doc = json.loads(res.content[-1].text)
                check(not res.isError and doc == cli_json("diagnose", DEMO),
                      "mcp client: call_tool diagnose")
                try:  # a JSON-RPC error: the client raises it
                    res = await session.call_tool("diagnose", {"trace": "/etc/passwd"})
                    check(res.isError, "mcp client: a path outside the root fails")
                except McpError as e:
                    check("outside" in str(e), "mcp client: a path outside the root fails")

    anyio.run(run)


def main():
    cmds = commands()
    check("mcp" in cmds, "mcp is in the command table")
    with tempfile.TemporaryDirectory() as tmp:
        srv = Server("--root", FIX, "--root", tmp)
        test_protocol(srv, cmds)
        test_tools(srv)
        test_refusals(srv, tmp)
        rc, rest, err = srv.close()
        check(rc == 0 and rest == b"", "EOF: exit 0, nothing more on stdout (%s)" % err[-300:])
    test_bounded()
    test_versions()
    test_python_client()
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
