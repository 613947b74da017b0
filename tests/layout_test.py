#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The house's floors (docs/layout.md), checked on the source and the build:
- no file includes a header of a floor above its own (common <- parser <- config, fixes,
  replay <- analysis <- sizing <- rules <- job, tables <- diagnose);
- no circle between files: file A depends on B when A's object uses a symbol B's object
  defines (nm over the build's objects); every strongly connected component is one file;
- no source file over 800 lines.
usage: layout_test.py SOURCE_DIR BUILD_DIR"""
import collections
import glob
import os
import re
import subprocess
import sys

SRC, BUILD = sys.argv[1], sys.argv[2]
FLOOR = {"common": 0, "parser": 1, "config": 2, "fixes": 2, "replay": 2, "analysis": 3,
         "sizing": 4, "rules": 5, "job": 6, "tables": 6, "diagnose": 7}
bad = []


def includes():
    n = 0
    for path in glob.glob(os.path.join(SRC, "*", "*.[ch]")):
        d = os.path.basename(os.path.dirname(path))
        if d not in FLOOR:
            continue
        for m in re.finditer(r'#include "(\w+)/', open(path, encoding="utf-8").read()):
            t = m.group(1)
            n += 1
            if t in FLOOR and t != d and FLOOR[t] >= FLOOR[d]:
                bad.append(f"{os.path.relpath(path, SRC)} includes {t}/, a floor not below it")
    return n


def circles():
    defs, uses, files = {}, collections.defaultdict(set), set()
    for o in glob.glob(os.path.join(BUILD, "**", "*.c.o"), recursive=True):
        if ".dir/" not in o:
            continue
        f = o.split(".dir/", 1)[1][:-2]
        if f.split("/")[0] not in FLOOR and f.split("/")[0] != "collector":
            continue
        if not os.path.exists(os.path.join(SRC, f)):
            continue  # an object left by a source since moved
        files.add(f)
        out = subprocess.run(["nm", o], capture_output=True, text=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBR":
                defs[p[2]] = f
            elif len(p) == 2 and p[0] == "U":
                uses[f].add(p[1])
    g = {f: {defs[s] for s in uses[f] if s in defs and defs[s] != f} for f in files}
    index, low, stack, on, count = {}, {}, [], set(), [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = count[0]
        count[0] += 1
        stack.append(v)
        on.add(v)
        for w in g[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                bad.append("a circle of files: " + ", ".join(sorted(comp)))

    for v in sorted(files):
        if v not in index:
            visit(v)
    return len(files)


def lengths():
    n = 0
    for path in glob.glob(os.path.join(SRC, "**", "*.[ch]"), recursive=True) + \
            glob.glob(os.path.join(SRC, "**", "*.py"), recursive=True) + \
            glob.glob(os.path.join(SRC, "**", "*.sh"), recursive=True):
        rel = os.path.relpath(path, SRC)
        if rel.startswith("build") or "/build" in rel:
            continue
        n += 1
        lines = sum(1 for _ in open(path, encoding="utf-8", errors="replace"))
        if lines > 800:
            bad.append(f"{rel}: {lines} lines (at most 800: split it by what its parts do)")
    return n


def main():
    ni, nf, nl = includes(), circles(), lengths()
    if nf == 0:
        print("SKIPPED: no object files in the build folder")
        return 77
    for b in bad:
        print("FAIL " + b)
    print(f"layout: {ni} includes, {nf} objects, {nl} files read")
    print(f"{ni + nf + nl - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
