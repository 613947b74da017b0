# SPDX-License-Identifier: MIT
"""Interval helpers the Python tests share: computed from raw events, never from tracedoc."""


def union(iv):
    """the union of [start, end) intervals, as sorted disjoint [start, end] lists"""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
