#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What headless Chromium made of an HTML report: the screenshot is not blank, the DOM has the
timelines, the steps, the idle by cause and every finding's title, and no element a name
smuggled in; with the report's JSON and `tracedoc ops --fold-runtime --format json` (the
report's Top ops), the roofline chart: there
exactly when the device's peaks are known and some op has both FLOPs and bytes, a point per such
op row placed at its intensity and TFLOP/s, and the roof drawn at the report's peaks.
usage: html_check.py NAME SCREENSHOT.png DOM.html PAGE.html [REPORT.json [OPS.json]]"""
import html.parser
import json
import math
import os
import re
import struct
import sys
import zlib


def png_colours(path):
    """Distinct colours, and the share of pixels that are not white, of an 8-bit RGB(A) PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, ink = bytearray(stride), set(), 0
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for x in range(0, stride, bpp * 4):  # every fourth pixel
            px = bytes(line[x:x + 3])
            colours.add(px)
            ink += px != b"\xff\xff\xff"
        prev = line
    return len(colours), ink / (h * w / 4)


class Dom(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.text, self.attrs = [], [], []
        self.points = []  # the roofline's: [attrs, title]
        self.in_point = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.append((tag, dict(attrs)))
        if tag == "circle" and dict(attrs).get("class") == "op":
            self.points.append([dict(attrs), ""])
            self.in_point = True

    def handle_endtag(self, tag):
        if tag == "circle":
            self.in_point = False

    def handle_data(self, data):
        self.text.append(data)
        if self.in_point:
            self.points[-1][1] += data


def check_roofline(d, r, ops, problems):
    """The chart against the report's peaks and the ops table's rows, read back from pixels
    through the axes the SVG states (data-plot, data-x-decades, data-y-decades)."""
    tbps = r["context"].get("peak_tbps", 0)
    tflops = r["context"].get("peak_tflops", {})
    rows = {x["name"]: x for x in ops["rows"]
            if x.get("achieved_tflops", 0) > 0 and x.get("intensity", 0) > 0}
    charts = [a for t, a in d.attrs if t == "svg" and a.get("class") == "roofline"]
    dtype = (r["summary"].get("mfu") or {}).get("dtype") or "fp32"
    peak = tflops.get(dtype, 0)
    if not peak and dtype in ("bf16", "fp16"):
        peak = tflops.get("fp16" if dtype == "bf16" else "bf16", 0)
    if not peak:
        peak = tflops.get("fp32", 0)
    want = tbps > 0 and peak > 0 and bool(rows)
    if len(charts) != int(want):
        problems.append(f"{len(charts)} roofline charts, want {int(want)} (peak_tbps {tbps}, "
                        f"{len(rows)} ops with FLOPs and bytes)")
        return
    if not want:
        return
    px, py, pw, ph = map(float, charts[0]["data-plot"].split())
    x0, x1 = map(int, charts[0]["data-x-decades"].split())
    y0, y1 = map(int, charts[0]["data-y-decades"].split())
    lx = lambda x: x0 + (float(x) - px) / pw * (x1 - x0)
    ly = lambda y: y0 + (py + ph - float(y)) / ph * (y1 - y0)
    if len(d.points) != len(rows):
        problems.append(f"roofline: {len(d.points)} points for {len(rows)} ops with a cost")
    for a, title in d.points:
        m = re.match(r"(.*): \d+ calls?, ", title, re.S)
        name = m.group(1) if m else title
        x = rows.get(name)
        if not x:
            problems.append(f"roofline: a point for no op row: {title[:60]}")
            continue
        for got, v, lo, hi in ((lx(a["cx"]), x["intensity"], x0, x1),
                               (ly(a["cy"]), x["achieved_tflops"], y0, y1)):
            w = min(max(math.log10(v), lo), hi)  # clamped to the plot
            if abs(got - w) > 0.005 and abs(10 ** got - v) > 1e-6:  # the JSON's 6 decimals
                problems.append(f"roofline: {name} at 10^{got:.3f}, its row says {v}")
    roof = [a for t, a in d.attrs if t == "polyline" and a.get("class") == "roof"]
    if len(roof) != 1:
        problems.append(f"roofline: {len(roof)} roofs")
        return
    a = roof[0]
    if a["data-dtype"] != dtype or abs(float(a["data-peak-tflops"]) / peak - 1) > 1e-4 or \
            abs(float(a["data-peak-tbps"]) / tbps - 1) > 1e-4:
        problems.append(f"roofline: roof {a['data-dtype']} {a['data-peak-tflops']} TFLOP/s "
                        f"{a['data-peak-tbps']} TB/s, the report says {dtype} {peak}, {tbps}")
    pts = [(lx(x), ly(y)) for x, y in (p.split(",") for p in a["points"].split())]
    if len(pts) != 3:
        problems.append(f"roofline: the roof has {len(pts)} points, not 3")
        return
    lt, lp = math.log10(tbps), math.log10(peak)
    # the memory slope: TFLOP/s = TB/s x intensity, up to the ridge; then flat at the peak
    for i, (gx, gy) in enumerate(pts):
        want_y = lp if i else gx + lt
        if abs(gy - want_y) > 0.005:
            problems.append(f"roofline: roof point {i} at 10^{gy:.3f} TFLOP/s, want 10^{want_y:.3f}")
    if abs(pts[1][0] - (lp - lt)) > 0.005 or abs(pts[2][0] - x1) > 0.005:
        problems.append(f"roofline: the ridge at 10^{pts[1][0]:.3f} FLOP/B, want 10^{lp - lt:.3f}")


def main():
    name, png, dom, page = sys.argv[1:5]
    report = sys.argv[5] if len(sys.argv) > 5 and os.path.exists(sys.argv[5]) else None
    ops = sys.argv[6] if len(sys.argv) > 6 and os.path.exists(sys.argv[6]) else None
    problems = []
    colours, ink = png_colours(png)
    if colours < 4 or ink < 0.02:
        problems.append(f"screenshot looks blank: {colours} colours, {ink:.1%} ink")
    d = Dom()
    d.feed(open(dom, encoding="utf-8", errors="replace").read())
    text = "".join(d.text)
    for bad in ("script", "img", "iframe", "object", "embed", "link"):
        if bad in d.tags:
            problems.append(f"a <{bad}> element in the DOM")
    if any(k.startswith("on") for _, a in d.attrs for k in a):
        problems.append("an event handler attribute in the DOM")
    if "tracedoc" not in text:
        problems.append("no tracedoc heading")
    if report:
        r = json.load(open(report))
        for f in r["findings"]:
            if f["title"] not in text:
                problems.append(f"finding title missing: {f['title'][:60]}")
        svgs = [a for t, a in d.attrs if t == "svg" and a.get("class") == "timeline"]
        if len(svgs) != len(r["devices"]):
            problems.append(f"{len(svgs)} timelines for {len(r['devices'])} devices")
        if ops:
            check_roofline(d, r, json.load(open(ops)), problems)
    if name == "hostile" and "</script><img src=x onerror=alert(1)>" not in text:
        problems.append("the hostile name is not shown as text")
    if name.startswith("resnet50-nw0"):
        steps = [t for t in d.text if t.startswith("step ")]
        dl = [a for t, a in d.attrs if t == "rect" and a.get("class") == "cause-dataloader"]
        if len(set(steps)) != 6:
            problems.append(f"steps shown: {sorted(set(steps))}")
        if not dl or any(a.get("fill") != "#D55E00" for a in dl):
            problems.append("DataLoader gaps are not in the DataLoader colour")
    if name == "job" and "(straggler)" not in text:
        problems.append("the straggler is not marked")
    for p in problems:
        print(f"  {name}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
