#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The job view as a user runs it, on jobs bench/gen_trace writes with a known answer: the
# straggler and how long the others wait for it (truth.txt), a compute imbalance, a healthy
# job; summaries that give the same report as the traces, to the byte; a rank that cannot be
# read, a partial one, a missing one, two files of one rank, ranks of two jobs; gate on a job.
# TD_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
# usage: job_test.sh TRACEDOC GEN_TRACE REPO_ROOT
set -u
bin=$(realpath "$1")
gen=$(realpath "$2")
root=$(realpath "$3")
golden=$root/tests/golden
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$tmp" || exit 2

expect_grep() { # PATTERN FILE WHAT
	if grep -q -- "$1" "$2"; then ok; else bad "$3: no '$1' in $2:"; head -30 "$2"; fi
}

# json_check FILE PYTHON: runs PYTHON with d = the parsed JSON; it raises on a wrong answer
json_check() {
	if python3 -c "import json,sys
d = json.load(open(sys.argv[1]))
truth = dict(l.split() for l in open(sys.argv[2])) if sys.argv[2:] and sys.argv[2] else {}
$2" "$1" "${3:-}"; then ok; else bad "check on $1 failed: $2"; fi
}

# 1. a straggler with host work before the all-reduce: rank 5, 3 ms of Python per step
mkdir late && "$gen" --ranks 8 --straggler 5 --delay 3 --steps 6 --ops 40 -o late || exit 2
expect_rc 0 "$bin" diagnose late --format json -o late.json
json_check late.json '
s = [f for f in d["findings"] if f["rule"] == "straggler"]
assert len(s) == 1, "one straggler finding"
f = s[0]
assert f["values"]["rank"] == int(truth["straggler"]), f["values"]
want = int(truth["wait_ns"])
assert abs(f["values"]["wait_ns"] - want) <= want / 100, (f["values"]["wait_ns"], want)
assert d["findings"][0]["rule"] == "straggler", "the top finding"
# the delay injected, per step: how much later into its step rank 5 launches the all-reduce
delay = f["values"]["late_launch_in_step_ns"] / int(truth["steps"])
assert abs(delay - int(truth["delay_ns"])) <= int(truth["delay_ns"]) / 100, delay
assert "launches these collectives 3.0 ms per step later" in " ".join(f["where"]), f["where"]
assert "log_metrics" in " ".join(f["where"]), f["where"]
assert not [x for x in d["findings"] if x["rule"] == "imbalance"], "no imbalance: same compute"
# the job wins the straggler time once: rank 5 GPU idle is not also a gpu-idle saving
g = [x for x in d["findings"] if x["rule"] == "gpu-idle"]
assert not g or g[0]["est_savings_ns"] < want / 10, g
' late/truth.txt
"$bin" diagnose late >late.txt
compare_golden job-late.text late.txt
"$bin" diagnose late --format md >late.md
compare_golden job-late.md late.md
# same bytes on one thread as on four
"$bin" diagnose late -j 1 >j1.txt && "$bin" diagnose late -j 4 >j4.txt
if cmp -s j1.txt j4.txt && cmp -s j1.txt late.txt; then ok; else bad "-j changes the report"; fi

# 2. summaries: summarize every rank, the job from them is the same report, to the byte
mkdir sums
for f in late/rank-*.json; do
	"$bin" summarize "$f" -o "sums/$(basename "$f" .json).summary.json" || bad "summarize $f"
done
for fmt in text md json; do
	"$bin" diagnose late --format $fmt >a.$fmt
	"$bin" diagnose sums --format $fmt >b.$fmt
	if cmp -s a.$fmt b.$fmt; then ok; else bad "summaries give another $fmt report"; diff a.$fmt b.$fmt | head; fi
done
# a quoted glob, and a mix of traces and summaries, are the same job
"$bin" diagnose 'late/rank-*.json' >c.text
"$bin" diagnose late/rank-[0-3].json sums/rank-[4-7].summary.json >d.text
if cmp -s a.text c.text && cmp -s a.text d.text; then ok; else bad "glob or mixed inputs differ"; fi
json_check sums/rank-5.summary.json '
assert d["schema"] == "tracedoc.summary/1"
assert d["trace"]["rank"] == 5 and d["trace"]["world_size"] == 8
assert len(d["collectives"]) == 6 and all(len(c) == 6 for c in d["collectives"])
assert d["context"] == {"vendor": "CUDA", "run": "unknown"}, d["context"]
assert {f["rule"]: f["sizing"] for f in d["findings"]}["dataloader"] == "replay", d["findings"]'
# the job is sized by each rank's replayed saving, not the idle it claims: 10.2 ms on every
# rank, where the loader holds the GPU 13.1 ms
json_check b.json '
s = [f for f in d["findings"] if f["rule"] == "dataloader"][0]
r = json.load(open("sums/rank-0.summary.json"))
own = [f for f in r["findings"] if f["rule"] == "dataloader"][0]
assert own["est_savings_ns"] < own["gpu_idle_ns"], own
assert s["est_savings_ns"] == own["est_savings_ns"] and s["sizing"] == "replay", s'

# 2b. the ranks meet in their collectives: a fix wins the job what the rank that then holds the
# step gains. Rank 5 arrives last at every collective; said to save far more on rank 0 (the
# others wait 13.5 ms for rank 5), sync-stall still wins the job only rank 5's own 7.5 ms -
# replayed across the collectives from each rank's shifts, and, from summaries without them
# (older ones), weighed by the ranks' waits; taken off rank 5, it wins the job nothing and
# becomes a note.
mkdir held old
cp sums/*.summary.json held/
python3 -c 'import json, sys
p = sys.argv[1]
d = json.load(open(p))
f = [f for f in d["findings"] if f["rule"] == "sync-stall"][0]
assert len(f["collective_shifts_ns"]) == len(d["collectives"]), f
s = f["collective_shifts_ns"]
assert all(x is not None and x <= 0 for x in s) and s[-1] < 0, s
f["est_savings_ns"] = 40000000
json.dump(d, open(p, "w"))' held/rank-0.summary.json || bad "rank 0's sync-stall has no shifts"
for f in held/*.summary.json; do
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    f.pop("collective_shifts_ns", None)
json.dump(d, open(sys.argv[2], "w"))' "$f" "old/$(basename "$f")"
done
"$bin" diagnose held --format json >held.json
"$bin" diagnose old --format json >old.json
json_check held.json '
f = [f for f in d["findings"] if f["rule"] == "sync-stall"][0]
r5 = [x for x in json.load(open("sums/rank-5.summary.json"))["findings"] if x["rule"] == "sync-stall"][0]
assert f["est_savings_ns"] == r5["est_savings_ns"], (f["est_savings_ns"], r5["est_savings_ns"])
w = " ".join(f["where"])
assert "replayed across the ranks\x27 collectives" in w, w
assert "rank 5, which saves ~7.5 ms itself, then arrives last at 6 of the 6" in w, w
assert "rank 0: " in w and "saves ~40.0 ms" in w, w'
json_check old.json '
f = [f for f in d["findings"] if f["rule"] == "sync-stall"][0]
r5 = [x for x in json.load(open("sums/rank-5.summary.json"))["findings"] if x["rule"] == "sync-stall"][0]
assert f["est_savings_ns"] == r5["est_savings_ns"], (f["est_savings_ns"], r5["est_savings_ns"])
w = " ".join(f["where"])
assert "rank 5 then holds their step" in w and "waits least for the others" in w, w'
for dir in held old; do
	python3 -c 'import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["findings"] = [f for f in d["findings"] if f["rule"] != "sync-stall"]
json.dump(d, open(p, "w"))' $dir/rank-5.summary.json
	"$bin" diagnose $dir --format json >$dir-2.json
	json_check $dir-2.json '
f = [f for f in d["findings"] if f["rule"] == "sync-stall"][0]
assert f["est_savings_ns"] == 0 and f["severity"] == "info", f
w = " ".join(f["where"])
assert "the job wins nothing from it now: rank 5, which does not have it" in w, w'
done
# 2c. a bound the ranks can replay together (gpu-idle's: the host's work in its gaps removed)
# carries shifts; one that frees the collectives (communication's) does not: the ranks' replay
# keeps a collective's own time as measured. The job's finding says how its bound was replayed.
json_check sums/rank-5.summary.json '
g = [f for f in d["findings"] if f["rule"] == "gpu-idle"][0]
assert g["sizing"] == "bound" and len(g["collective_shifts_ns"]) == len(d["collectives"]), g
assert min(x for x in g["collective_shifts_ns"] if x is not None) < 0, g
c = [f for f in d["findings"] if f["rule"] == "communication"][0]
assert c["sizing"] == "bound" and "collective_shifts_ns" not in c, c'
json_check b.json '
g = [f for f in d["findings"] if f["rule"] == "gpu-idle"][0]
assert g["sizing"] == "bound", g'
expect_grep "at most: replayed with its cause removed" a.md "the job's gpu-idle bound named"
# a summary's shifts are one per collective, integers or null: named when they are not
python3 -c 'import json, sys
p = sys.argv[1]
d = json.load(open(p))
f = [f for f in d["findings"] if f["rule"] == "sync-stall"][0]
f["collective_shifts_ns"] = f["collective_shifts_ns"][1:]
json.dump(d, open(p, "w"))' held/rank-2.summary.json
expect_rc 3 "$bin" diagnose held
expect_grep 'rank-2.summary.json: not a tracedoc.summary/1 summary' err "short shifts' file"
expect_grep 'findings\[[0-9]*\].collective_shifts_ns: expected an integer or null per collective' err "short shifts named"
cp sums/rank-2.summary.json held/
# the straggler is sized by what the job wins were it on time: the next rank then holds the
# collectives. Rank 2 made to arrive 1 ms after rank 5 would have (its collectives 1 ms
# longer than rank 5's): the others still wait 2.2 ms a collective for rank 5, but rank 5 on
# time wins the job 1 ms at each of the 6.
mkdir next
cp sums/*.summary.json next/
python3 -c 'import json, sys
r5 = json.load(open(sys.argv[1]))
p = sys.argv[2]
d = json.load(open(p))
for c, c5 in zip(d["collectives"], r5["collectives"]):
    c[3] = c5[3] + 1000000
json.dump(d, open(p, "w"))' sums/rank-5.summary.json next/rank-2.summary.json
"$bin" diagnose next --format json >next.json
json_check next.json '
f = [f for f in d["findings"] if f["rule"] == "straggler"][0]
assert f["values"]["rank"] == 5, f["values"]
assert f["values"]["wait_ns"] > 6 * 2000000, f["values"]
assert f["est_savings_ns"] == 6 * 1000000 and f["sizing"] == "bound", f
w = " ".join(f["where"])
assert "were rank 5 on time" in w and "rank 2 then arrives last at 6 of the 6" in w, w'
# shifts and durations at the limits of an integer: the job is still reported (saturating
# sums; the suite runs under UBSan too)
mkdir huge
cp sums/*.summary.json huge/
for f in huge/*.summary.json; do
	python3 -c 'import json, sys
p, i = sys.argv[1], int(sys.argv[1][-14])
d = json.load(open(p))
for f in d["findings"]:
    if "collective_shifts_ns" in f:
        f["collective_shifts_ns"] = [[2**63 - 1, 1 - 2**63, None, 0][(i + k) % 4]
                                     for k in range(len(f["collective_shifts_ns"]))]
for c in d["collectives"]:
    c[3] = 2**63 - 1 if i % 3 == 0 else c[3]
    c[4] = 2**63 - 1 if i % 3 == 1 else c[4]
json.dump(d, open(p, "w"))' "$f"
done
expect_rc 0 "$bin" diagnose huge
# a summary's sizing is one of three words, named when it is not
python3 -c 'import json, sys
p = sys.argv[1]
d = json.load(open(p))
d["findings"][0]["sizing"] = "guessed"
json.dump(d, open(p, "w"))' held/rank-3.summary.json
expect_rc 3 "$bin" diagnose held
expect_grep 'rank-3.summary.json: not a tracedoc.summary/1 summary: findings\[0\]' err "a bad sizing's file"
expect_grep 'in "sizing", found a string' err "a bad sizing named"

# 3. compute imbalance: rank 2 computes 40% more; the host launches on time
mkdir slow && "$gen" --ranks 8 --straggler 2 --imbalance 40 --steps 6 --ops 40 -o slow || exit 2
"$bin" diagnose slow --format json >slow.json
json_check slow.json '
f = [f for f in d["findings"] if f["rule"] == "straggler"][0]
assert f["values"]["rank"] == 2
want = int(truth["wait_ns"])
assert abs(f["values"]["wait_ns"] - want) <= want / 100, (f["values"]["wait_ns"], want)
w = " ".join(f["where"])
assert "launches these collectives on time" in w and "computes" in w, w
assert "sgemm" in w, w
# the run is unknown (no backward in these generated ranks): neither a sampler nor requests
assert "split the work evenly" in f["fix"] and "DistributedSampler" not in f["fix"], f["fix"]
assert "nvidia-smi -q" in f["fix"] and "rocm-smi" not in f["fix"], f["fix"]' slow/truth.txt
# the job's context is its ranks': the same job said to be ROCm inference (in the summaries
# the ranks give) is told rocm-smi and to balance its requests, not DistributedSampler
mkdir slowsums
for f in slow/rank-*.json; do
	"$bin" summarize "$f" -o "slowsums/$(basename "$f" .json).summary.json" || bad "summarize $f"
done
python3 -c 'import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    d["context"] = {"vendor": "ROCm", "run": "inference"}
    json.dump(d, open(p, "w"))' slowsums/*.summary.json
"$bin" diagnose slowsums --format json >slowsums.json
json_check slowsums.json '
f = [f for f in d["findings"] if f["rule"] == "straggler"][0]
assert "rocm-smi" in f["fix"] and "nvidia-smi" not in f["fix"], f["fix"]
assert "requests" in f["fix"] and "DistributedSampler" not in f["fix"], f["fix"]'
# ... and said to be CUDA training, its sampler shards evenly
python3 -c 'import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    d["context"] = {"vendor": "CUDA", "run": "training"}
    json.dump(d, open(p, "w"))' slowsums/*.summary.json
"$bin" diagnose slowsums --format json >slowtrain.json
json_check slowtrain.json '
f = [f for f in d["findings"] if f["rule"] == "straggler"][0]
assert "DistributedSampler(..., drop_last=True)" in f["fix"], f["fix"]
assert "nvidia-smi -q" in f["fix"] and "requests" not in f["fix"], f["fix"]'

# 4. a healthy job: the same work everywhere, no straggler, no imbalance
mkdir even && "$gen" --ranks 4 --steps 4 --ops 40 -o even || exit 2
"$bin" diagnose even --format json >even.json
json_check even.json '
rules = [f["rule"] for f in d["findings"]]
assert "straggler" not in rules and "imbalance" not in rules, rules
assert d["collectives"]["matched"] == 4, d["collectives"]'

# 5. ranks from file names when the traces do not say (no distributedInfo)
mkdir named
for r in 0 1 2 3; do
	sed 's/"distributedInfo": {[^}]*},//' "late/rank-$r.json" >"named/worker_$((3 - r)).json"
done
"$bin" diagnose named --format json >named.json
json_check named.json '
src = {r["rank"]: r["rank_from"] for r in d["ranks"]}
assert src == {0: "file name", 1: "file name", 2: "file name", 3: "file name"}, src
paths = {r["rank"]: r["path"] for r in d["ranks"]}
assert paths[0].endswith("worker_0.json"), paths'

# 6. a rank that cannot be read: the others are reported, exit 3, its name on stderr
mkdir broken && cp late/rank-*.json broken/ && echo '{"traceEvents": [{"ph": "X", oops' >broken/rank-3.json
expect_rc 3 "$bin" diagnose broken
expect_grep "broken/rank-3.json" err "unreadable rank named"
expect_grep "1 of 8 rank files could not be read" err "count of unreadable ranks"
expect_grep "not read:" out "the report says which rank is missing"
expect_grep "straggler" out "the rest still diagnosed"

# 7. a partial rank (the file ends early) is left out of the matching, and said so
mkdir part && cp late/rank-*.json part/ && head -c 20000 late/rank-6.json >part/rank-6.json
expect_rc 0 "$bin" diagnose part
expect_grep "partial: rank 6" out "partial rank named"
expect_grep "Rank 5 holds up the job" out "straggler still found without rank 6"
expect_rc 1 "$bin" gate part
expect_grep "rank 6: the trace ends early" out "gate fails a partial job"

# 8. a missing rank: world size 8, seven files
mkdir gap && cp late/rank-*.json gap/ && rm gap/rank-4.json
expect_rc 0 "$bin" diagnose gap
expect_grep "missing: rank 4 of the 8" out "missing rank named"

# 9. two files of one rank, and ranks of two jobs: not one job (exit 2), both files named
mkdir dup && cp late/rank-*.json dup/ && cp late/rank-2.json dup/rank-2-again.json
expect_rc 2 "$bin" diagnose dup
expect_grep "dup/rank-2-again.json and dup/rank-2.json are both rank 2" err "duplicate rank"
mkdir mixed && cp late/rank-0.json late/rank-1.json mixed/ && cp even/rank-2.json mixed/
expect_rc 2 "$bin" diagnose mixed
expect_grep "world has 4 ranks, but" err "world sizes that differ"

# 10. gate on jobs: the straggler job against the healthy one fails on the wait it adds
"$bin" diagnose even --format json -o even-report.json
expect_rc 1 "$bin" gate --baseline even-report.json late
expect_grep "straggler_wait_ns_per_step is .* where the baseline had none" out "gate names the straggler wait"
expect_rc 0 "$bin" gate --baseline late.json sums
expect_rc 3 "$bin" gate broken

# 11. summarize refuses what is not a trace, with the file named
expect_rc 3 "$bin" summarize "$root/fixtures/bad/not-json.txt"
expect_grep "not-json.txt" err "summarize names the bad file"
echo '{"schema": "tracedoc.summary/1", "trace": 5}' >sums/zz-bad.summary.json
expect_rc 3 "$bin" diagnose sums
expect_grep "zz-bad.summary.json" err "bad summary named"

echo "job tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
