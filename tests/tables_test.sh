#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ops, kernels, memory and diff as a user runs them: goldens in every format, the values of
# hand-made fixtures (fixtures/rules/make.py and fixtures/memory/make.py say how they were
# worked out), options and their errors, same bytes twice. The row-by-row comparison with an
# independent computation on the shared traces is in real_traces.py.
# TD_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
# usage: tables_test.sh TRACEDOC REPO_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
cd "$2" || exit 2

# check FILE PYTHON: d is the parsed JSON; PYTHON raises on a wrong value
check() {
	if python3 -c "import json, sys
d = json.load(open(sys.argv[1]))
GiB = 1 << 30
$2" "$1"; then ok; else bad "check on $1: $2"; fi
}

# golden: NAME COMMAND...: each format, the same bytes twice
golden_all() {
	local name=$1 fmt
	shift
	for fmt in text md json csv; do
		"$bin" "$@" --format $fmt >"$tmp/a" 2>&1
		if grep -q "^tracedoc .*--format must be" "$tmp/a"; then continue; fi
		"$bin" "$@" --format $fmt >"$tmp/b" 2>&1
		compare_golden "$name.$fmt" "$tmp/a"
		if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "$name $fmt not deterministic"; fi
		if [ $fmt = json ]; then
			if python3 -m json.tool "$tmp/a" >/dev/null; then ok; else bad "$name json invalid"; fi
		fi
	done
}

R=fixtures/rules
golden_all ops-dataloader ops $R/dataloader.json
golden_all ops-demo-shape ops fixtures/demo-train.json.gz --group-by shape --top 8
golden_all kernels-dataloader kernels $R/dataloader.json
golden_all kernels-mini kernels fixtures/mini-kineto.json --window all
golden_all memory-rules memory $R/memory.json
golden_all memory-snapshot memory fixtures/memory/snapshot.json
golden_all memory-legacy memory fixtures/memory/legacy-bytes.json
golden_all diff-softmax diff $R/diff-base.json $R/diff-current.json

# ops on the DataLoader fixture: 4 steps of 1000 us; each step's aten::linear (10 us) launches
# a 560 us kernel; __next__ takes 400 us
"$bin" ops $R/dataloader.json --format json >"$tmp/ops.json"
check "$tmp/ops.json" '
rows = {r["name"]: r for r in d["rows"]}
assert d["schema"] == "tracedoc.ops/1" and d["window"] == "steps", d["window"]
lin = rows["aten::linear"]
# its cudaLaunchKernel (5 us) is a row of its own, as in key_averages, out of its self time
assert (lin["kind"], lin["calls"], lin["self_cpu_ns"], lin["cpu_total_ns"]) == ("op", 4, 20000, 40000), lin
rt = rows["cudaLaunchKernel"]
assert (rt["kind"], rt["calls"], rt["self_cpu_ns"], rt["self_cuda_ns"]) == ("runtime", 4, 20000, 0), rt
k = rows["gemm_kernel"]
assert (k["kind"], k["calls"], k["cpu_total_ns"], k["self_cuda_ns"], k["cuda_total_ns"]) == ("gpu", 4, 0, 4 * 560000, 4 * 560000), k
assert "cpu_mem_bytes" not in lin and "flops" not in lin, lin  # no [memory] samples, no shapes
assert (lin["self_cuda_ns"], lin["cuda_total_ns"], lin["cuda_avg_ns"]) == (4 * 560000,) * 2 + (560000,), lin
assert abs(lin["self_cuda_pct"] - 1.0) < 1e-9
ps = rows["ProfilerStep*"]
assert ps["calls"] == 4 and ps["cpu_total_ns"] == 4000000, ps
# the step minus its children: __next__ (400 us) and aten::linear (10 us)
assert ps["self_cpu_ns"] == 4 * (1000 - 400 - 10) * 1000, ps
assert ps["cuda_total_ns"] == 4 * 560000 and ps["self_cuda_ns"] == 0, ps
dl = rows["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"]
assert dl["self_cpu_ns"] == 4 * 400000
assert abs(sum(r["self_cpu_pct"] for r in d["rows"]) - 1) < 1e-5
assert [r["name"] for r in d["rows"]][0] in ("ProfilerStep*", "aten::linear")'
# --sort and key_averages names, --top
"$bin" ops $R/dataloader.json --format json --sort self_cpu_time_total --top 1 >"$tmp/o1.json"
check "$tmp/o1.json" '
assert len(d["rows"]) == 1 and d["rows_total"] == 5, d
assert d["rows"][0]["name"] == "ProfilerStep*"'
# --fold-runtime: tracedoc's folded table, runtime time kept in the op, no runtime or GPU rows
"$bin" ops $R/dataloader.json --format json --fold-runtime >"$tmp/of.json"
check "$tmp/of.json" '
rows = {r["name"]: r for r in d["rows"]}
assert d["rows_total"] == 3 and d["runtime_calls"] == "folded", d
assert rows["aten::linear"]["self_cpu_ns"] == 40000 and "kind" not in rows["aten::linear"]'
"$bin" ops $R/dataloader.json --format csv >"$tmp/ops.csv"
if head -1 "$tmp/ops.csv" | grep -q '^name,kind,self_cpu_pct,self_cpu_ns,' &&
	python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); assert {x['name'] for x in r} >= {'aten::linear'}" "$tmp/ops.csv"; then ok
else bad "ops csv"; fi
expect_rc 2 "$bin" ops $R/dataloader.json --sort nonsense
if grep -q "not a column; one of: name, kind, self_cpu_pct" "$tmp/err"; then ok; else bad "--sort error names the columns"; fi
expect_rc 2 "$bin" ops $R/dataloader.json --group-by color
expect_rc 2 "$bin" ops $R/dataloader.json --window later
expect_rc 2 "$bin" ops $R/dataloader.json --top 0
expect_rc 3 "$bin" ops fixtures/bad/not-json.txt
expect_rc 2 "$bin" ops
# shapes: record_shapes' Input Dims as the group
"$bin" ops fixtures/demo-train.json.gz --group-by shape --format json >"$tmp/shape.json"
check "$tmp/shape.json" '
s = {(r["name"], r["shape"]) for r in d["rows"]}
assert ("aten::addmm", "[[64, 4096], [64, 4096], [4096]]") in s, sorted(s)[:5]
assert d["group_by"] == "shape"'

# kernels: the fixture's one kernel name; the op that launched it
"$bin" kernels $R/dataloader.json --format json >"$tmp/k.json"
check "$tmp/k.json" '
r = d["rows"][0]
assert d["schema"] == "tracedoc.kernels/1" and len(d["rows"]) == 1
assert (r["name"], r["category"], r["calls"], r["total_ns"]) == ("gemm_kernel", "compute", 4, 2240000), r
assert (r["min_ns"], r["max_ns"], r["top_op"], r["top_op_calls"]) == (560000, 560000, "aten::linear", 4), r
assert abs(r["busy_pct"] - 1.0) < 1e-9'
"$bin" kernels fixtures/demo-train.json.gz --format json >"$tmp/k2.json"
check "$tmp/k2.json" '
cats = {r["category"] for r in d["rows"]}
assert {"compute", "memcpy HtoD", "memcpy DtoH"} <= cats, cats'

# memory from [memory] samples: the rule fixture's peaks and step boundaries
"$bin" memory $R/memory.json --format json >"$tmp/m.json"
check "$tmp/m.json" '
g = d["devices"][0]
assert d["schema"] == "tracedoc.memory/1" and d["source"] == "trace"
assert (g["id"], g["capacity_bytes"], g["peak_reserved_bytes"]) == (0, 80 * 10**9, 76 * 10**9)
assert g["peak_allocated_bytes"] == 60 * 10**9 + 3 * (256 << 20) + 12 * 10**9, g
assert g["headroom_bytes"] == 4 * 10**9 and g["peak_op"] == "aten::linear" and g["peak_step"] == 4
assert [s["allocated_at_start_bytes"] for s in g["steps"]] == [60 * 10**9 + k * (256 << 20) for k in range(4)]
assert g["allocated_after_last_step_bytes"] == 60 * 10**9 + 4 * (256 << 20)
assert len(g["timeline"]) == 120 and max(p[1] for p in g["timeline"]) == g["peak_allocated_bytes"]
assert sorted(f["title"].split(":")[0][:20] for f in d["findings"]) == ["Allocated memory on ", "GPU 0 reserves 76.00"]'
"$bin" memory fixtures/memory/legacy-bytes.json --format json >"$tmp/ml.json"
check "$tmp/ml.json" '
g = d["devices"][0]
assert g["allocated_summed_from_bytes"] and g["peak_allocated_bytes"] == 150 * 10**6
assert g["peak_op"] == "aten::mm" and g["last_allocated_bytes"] == 50 * 10**6'
"$bin" memory $R/dataloader.json >"$tmp/none.txt"
if grep -q "profile_memory=True" "$tmp/none.txt"; then ok; else bad "memory without samples says how to record them"; fi

# memory from a caching-allocator snapshot (fixtures/memory/make.py has the replay by hand)
"$bin" memory fixtures/memory/snapshot.json --format json >"$tmp/s.json"
check "$tmp/s.json" '
g = d["devices"][0]
assert d["source"] == "snapshot" and d["history"]
assert (g["reserved_bytes"], g["allocated_bytes"], g["entries"]) == (8 * GiB, 3 * GiB, 9), g
assert g["allocated_at_trace_start_bytes"] == GiB + GiB // 2
assert (g["peak_allocated_bytes"], g["peak_entry"]) == (7 * GiB, 6), g
assert [(s["site"], s["bytes"]) for s in g["peak_sites"]] == [("train.py(60): big", 4 * GiB),
    ("train.py(42): step", 2 * GiB), ("train.py(10): model_init", GiB)], g["peak_sites"]
o = g["ooms"][0]
assert (o["entry"], o["requested_bytes"], o["device_free_bytes"], o["allocated_bytes"]) == (8, 6 * GiB, GiB, 3 * GiB), o
assert o["site"] == "train.py(70): huge" and [s["site"] for s in o["live_sites"]] == ["train.py(42): step", "train.py(10): model_init"]
# 8 GiB reserved then (no segment mapped or released after it), 5 GiB of it unallocated and
# 1 GiB free on the device: 6 GiB, the request, but the largest free block (7000) is 512 MiB
assert (o["reserved_bytes"], o["reserved_unallocated_bytes"]) == (8 * GiB, 5 * GiB), o
assert o["largest_free_block_bytes"] == GiB // 2 and o["cause"] == "fragmentation", o
assert "expandable_segments:True" in o["explanation"], o'
gzip -c fixtures/memory/snapshot.json >"$tmp/snap.json.gz"
"$bin" memory "$tmp/snap.json.gz" --format json >"$tmp/sgz.json"
if python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); a.pop('path'); b.pop('path'); assert a == b" "$tmp/s.json" "$tmp/sgz.json"; then ok
else bad "a gzipped snapshot reads the same"; fi
printf '{"segments": [{"device": 0, "total_size": 10, "blocks": [' >"$tmp/cut.json"
expect_rc 3 "$bin" memory "$tmp/cut.json"
if grep -q "cut.json:1:.*the JSON ends early" "$tmp/err"; then ok; else bad "a cut snapshot: file, line, why"; cat "$tmp/err"; fi

# diff: CURRENT's softmax kernel takes 500 us instead of 100: steps 400 us longer, and that
# kernel is why
"$bin" diff $R/diff-base.json $R/diff-current.json --format json >"$tmp/d.json"
check "$tmp/d.json" '
assert d["schema"] == "tracedoc.diff/1" and d["base"]["steps"] == 3 == d["current"]["steps"]
assert d["step_change_ns"] == 400000, d["step_change_ns"]
why = [d["rows"][i] for i in d["why"]]
assert len(why) == 1 and (why[0]["kind"], why[0]["name"]) == ("gpu", "softmax_kernel"), why
assert (why[0]["base_ns"], why[0]["current_ns"], why[0]["change_ns"]) == (100000, 500000, 400000)
assert d["why_change_ns"] == 400000
assert d["base"]["gpu_busy_ns_per_step"] == 600000 and d["current"]["gpu_busy_ns_per_step"] == 1000000
g = {r["name"]: r for r in d["rows"]}
assert g["gemm_kernel"]["change_ns"] == 0 and g["gemm_kernel"]["base_calls"] == 3'
expect_rc 2 "$bin" diff $R/dataloader.json
expect_rc 3 "$bin" diff $R/dataloader.json fixtures/bad/not-json.txt

echo "table tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
