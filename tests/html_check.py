#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What headless Chromium made of an HTML report: the screenshot is not blank, the DOM has the
timelines, the steps, the idle by cause and every finding's title, and no element a name
smuggled in. usage: html_check.py NAME SCREENSHOT.png DOM.html PAGE.html [REPORT.json]"""
import html.parser
import json
import os
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

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def main():
    name, png, dom, page = sys.argv[1:5]
    report = sys.argv[5] if len(sys.argv) > 5 and os.path.exists(sys.argv[5]) else None
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
