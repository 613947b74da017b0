#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tracedoc command as a user runs it: golden outputs, exit codes, error messages, stdin,
# atomic -o. TD_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
# usage: cli_test.sh TRACEDOC_BINARY REPO_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$1
cd "$2" || exit 2

# golden outputs, text and json, and the same bytes twice: the second time read by the split
# reader (parser/split.c) cut into tiny blocks on three threads
for fmt in text json; do
	for f in mini-kineto.json legacy-autograd.json odd/anomalies.json odd/truncated.json; do
		name=$(echo "$f" | tr / -).stats.$fmt
		"$bin" stats -j 1 --format "$fmt" "fixtures/$f" >"$tmp/a" 2>"$tmp/a.err"
		TD_SPLIT_BLOCK=300 "$bin" stats -j 3 --format "$fmt" "fixtures/$f" >"$tmp/b" 2>/dev/null
		cat "$tmp/a.err" >>"$tmp/a"
		compare_golden "$name" "$tmp/a"
		if cmp -s "$tmp/a" "$tmp/b" || [ -s "$tmp/a.err" ]; then ok; else bad "$name not deterministic"; fi
	done
done

# diagnose: golden reports in every format, the same bytes twice (sequential, then split), valid
# JSON, escaped Markdown
for f in mini-kineto.json legacy-autograd.json demo-train.json.gz tb_plugin/all-categories.json \
	$(cd fixtures && ls rules/*.json); do
	base=$(basename "$f" | sed 's/\.json.*//')
	for fmt in text md json; do
		"$bin" diagnose -j 1 --format "$fmt" "fixtures/$f" >"$tmp/a" 2>"$tmp/a.err"
		TD_SPLIT_BLOCK=700 "$bin" diagnose -j 2 --format "$fmt" "fixtures/$f" >"$tmp/b" 2>/dev/null
		compare_golden "diagnose-$base.$fmt" "$tmp/a"
		if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "diagnose $f $fmt not deterministic"; fi
		if [ "$fmt" = json ]; then
			if json_verify -q <"$tmp/a"; then ok; else bad "diagnose $f json is not valid JSON"; fi
		fi
	done
done
# replay and whatif: goldens, the same bytes twice, valid JSON, usage errors
for f in replay/edges.json replay/threads.json rules/dataloader.json rules/sync.json \
	rules/transfer.json; do
	base=$(basename "$f" .json)
	for cmd in replay whatif; do
		for fmt in text json; do
			"$bin" "$cmd" -j 1 --format "$fmt" "fixtures/$f" >"$tmp/a" 2>&1
			TD_SPLIT_BLOCK=700 "$bin" "$cmd" -j 2 --format "$fmt" "fixtures/$f" >"$tmp/b" 2>&1
			compare_golden "$cmd-$base.$fmt" "$tmp/a"
			if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "$cmd $f $fmt not deterministic"; fi
			if [ "$fmt" = json ]; then
				if json_verify -q <"$tmp/a"; then ok; else bad "$cmd $f json is not valid JSON"; fi
			fi
		done
	done
done
# the README's example, as it prints (the loader's wait and a bound sized after its fix:
# whatif_pairs.py, on a loader paced by its workers)
"$bin" whatif fixtures/demo-train.json.gz >"$tmp/a" 2>&1
sed -n '/^\$ tracedoc whatif fixtures\/demo-train.json.gz$/,/^```$/p' README.md | sed '1d;$d' >"$tmp/b"
if [ -s "$tmp/b" ] && cmp -s "$tmp/a" "$tmp/b"; then
	ok
else
	bad "the README's whatif example is not what whatif prints: $(diff "$tmp/b" "$tmp/a" | head -20)"
fi
"$bin" whatif --format json fixtures/demo-train.json.gz >"$tmp/a" 2>&1
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
f = [(x["rule"], "after" in x) for x in d["fixes"]]
assert f == [("dataloader", False), ("sync-stall", False), ("precision", False),
            ("transfer", False)], f
n = [(x["rule"], x["sizing"]) for x in d["not_replayed"]]
assert n == [("gpu-idle", "idle")], n
assert d["together"]["saves_ns"] < sum(x["saves_ns"] for x in d["fixes"]), d["together"]' "$tmp/a"; then
	ok
else
	bad "whatif --format json on demo-train: fixes alone, together less than their sum"
fi
expect_rc 2 "$bin" whatif --fix dataloadr fixtures/rules/dataloader.json
if grep -q "did you mean 'dataloader'" "$tmp/err"; then ok; else bad "whatif --fix did not name the rule"; fi
expect_rc 2 "$bin" replay
expect_rc 2 "$bin" whatif fixtures/rules # a directory: a job's ranks
if grep -q "one trace at a time" "$tmp/err"; then ok; else bad "whatif on a directory did not say why"; fi
expect_rc 3 "$bin" replay fixtures/bad/not-json.txt
"$bin" diagnose --format md fixtures/rules/nasty-names.json >"$tmp/md"
# names are code spans; outside them nothing may open HTML or end a table cell
perl -pe 's/(`+)(.*?)\1//g' "$tmp/md" >"$tmp/md-outside"
if grep -q '<script>\|[^\\]|with' "$tmp/md-outside"; then bad "markdown lets a name through unescaped"; else ok; fi
if grep -q '`` *aten::op\\|with<pipes>&`ticks`' "$tmp/md"; then ok; else bad "a name is not a code span"; fi
expect_rc 2 "$bin" diagnose --format xml fixtures/mini-kineto.json
expect_rc 2 "$bin" diagnose
expect_rc 3 "$bin" diagnose fixtures/bad/not-json.txt
# --capture: a capture that is no trace is bad input, named; with a job it is a usage error
expect_rc 3 "$bin" ops fixtures/mini-kineto.json --capture fixtures/bad/not-json.txt
if grep -q "not-json.txt" "$tmp/err"; then ok; else bad "ops --capture did not name the file"; fi
expect_rc 2 "$bin" diagnose --capture fixtures/mini-kineto.json fixtures/mini-kineto.json \
	fixtures/mini-kineto.json
echo "previous" >"$tmp/d.md"
expect_rc 3 "$bin" diagnose --format md -o "$tmp/d.md" fixtures/bad/stray-quote.json
if [ "$(cat "$tmp/d.md")" = previous ]; then ok; else bad "diagnose -o clobbered the old file"; fi

# gate: exit codes, goldens (md, json, JUnit), determinism, budgets, partial input, configs
R=fixtures/rules
expect_rc 0 "$bin" gate --baseline $R/sync.json $R/sync.json
expect_rc 1 "$bin" gate --baseline $R/sync-nearmiss.json $R/sync.json
if grep -q '^sync_calls_per_step .*FAIL' "$tmp/out"; then ok; else bad "gate did not name the new syncs"; cat "$tmp/out"; fi
"$bin" diagnose --format json -o "$tmp/base.json" $R/sync-nearmiss.json
expect_rc 1 "$bin" gate --baseline "$tmp/base.json" $R/sync.json
"$bin" diagnose --format json -o "$tmp/self.json" $R/sync.json
expect_rc 0 "$bin" gate --baseline "$tmp/self.json" $R/sync.json
for fmt in text md json; do
	"$bin" gate --baseline $R/sync-nearmiss.json --format $fmt --junit "$tmp/j1.xml" $R/sync.json >"$tmp/g1" 2>/dev/null
	"$bin" gate --baseline $R/sync-nearmiss.json --format $fmt --junit "$tmp/j2.xml" $R/sync.json >"$tmp/g2" 2>/dev/null
	compare_golden "gate-sync.$fmt" "$tmp/g1"
	# JUnit carries the run's wall time (CI servers show it); everything else is the same bytes
	for j in j1 j2; do sed 's/ time="[0-9.]*"/ time="T"/g' "$tmp/$j.xml" >"$tmp/$j.norm"; done
	if cmp -s "$tmp/g1" "$tmp/g2" && cmp -s "$tmp/j1.norm" "$tmp/j2.norm"; then ok; else bad "gate $fmt not deterministic"; fi
done
compare_golden "gate-sync.junit.xml" "$tmp/j1.norm"
if python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/j1.xml"; then ok; else bad "JUnit XML is not well-formed"; fi
# the JUnit of a failing, a passing, a budget, a skipped and a partial gate validates
if command -v xmllint >/dev/null; then
	printf '{"gate": {"budgets": {"min_gpu_busy": 0.9, "max_syncs_per_step": 1}}}' >"$tmp/b2.json"
	"$bin" gate --baseline $R/sync.json --junit "$tmp/j3.xml" $R/sync.json >/dev/null 2>&1
	"$bin" gate --config "$tmp/b2.json" --junit "$tmp/j4.xml" $R/sync.json >/dev/null 2>&1
	"$bin" gate --config "$tmp/b2.json" --junit "$tmp/j5.xml" $R/warmup-step.json >/dev/null 2>&1
	"$bin" gate --baseline fixtures/mini-kineto.json --junit "$tmp/j6.xml" fixtures/odd/truncated.json \
		>/dev/null 2>&1
	for j in j1 j3 j4 j5 j6; do
		if xmllint --noout --schema tests/schemas/junit.xsd "$tmp/$j.xml" 2>"$tmp/xerr"; then ok
		else bad "$j.xml does not validate against the JUnit schema"; cat "$tmp/xerr"; fi
	done
	if grep -q 'errors="0"' "$tmp/j4.xml" && grep -q 'skipped="0"' "$tmp/j4.xml" &&
	   grep -q '<failure type="budget" message="GPU busy 76.2% is below the budget 90.0% (min_gpu_busy)">' "$tmp/j4.xml"
	then ok; else bad "JUnit budget failure"; cat "$tmp/j4.xml"; fi
else
	echo "SKIPPED: JUnit schema check (xmllint not found: scripts/setup.sh --test installs it)"
fi
# a budget failure is a sentence; a budget that needs steps is not judged on a trace without
printf '{"gate": {"budgets": {"max_step_time_us": 500, "max_syncs_per_step": 0}}}' >"$tmp/b3.json"
expect_rc 1 "$bin" gate --config "$tmp/b3.json" $R/sync.json
if grep -q 'FAIL:    the median step 1.0 ms is above the budget 500.0 us (max_step_time_us)' "$tmp/out"
then ok; else bad "budget sentence"; cat "$tmp/out"; fi
printf '[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"pid":0,"tid":7,"args":{"device":0}}]' >"$tmp/nosteps.json"
# ... and a gate whose every check was skipped judged nothing: it fails, saying so
expect_rc 1 "$bin" gate --config "$tmp/b3.json" "$tmp/nosteps.json"
if grep -q 'max_syncs_per_step is not judged: the trace has no steps' "$tmp/out" &&
	grep -q '^nothing to judge: every one of the 2 checks was skipped' "$tmp/out"; then ok
else bad "per-step budget on a trace without steps"; cat "$tmp/out"; fi
# a suppression covers its rule's gate metrics too; an unknown rule is a config error
printf '{"suppress": [{"rule": "sync-stall", "match": "", "reason": "known: ticket 7"}]}' >"$tmp/s2.json"
expect_rc 1 "$bin" gate --config "$tmp/s2.json" --baseline $R/sync-nearmiss.json $R/sync.json
if grep -q 'sync_calls_per_step is not judged: the config suppresses sync-stall: known: ticket 7' "$tmp/out"
then ok; else bad "suppressed metric still judged"; cat "$tmp/out"; fi
printf '{"suppress": [{"rule": "sync_stall", "reason": "x"}]}' >"$tmp/s3.json"
expect_rc 2 "$bin" gate --config "$tmp/s3.json" $R/sync.json
if grep -q 'suppress\[0\].rule: sync_stall: no such rule; did you mean sync-stall?' "$tmp/err"; then ok
else bad "unknown suppressed rule"; cat "$tmp/err"; fi
# a gzipped saved report is a baseline; a report given as CURRENT says where it goes
"$bin" diagnose --format json $R/sync.json | gzip >"$tmp/base.json.gz"
expect_rc 0 "$bin" gate --baseline "$tmp/base.json.gz" $R/sync.json
expect_rc 2 "$bin" gate "$tmp/base.json.gz"
if grep -q 'is a saved report, not a trace: give it as' "$tmp/err"; then ok; else bad "report as CURRENT"; fi
printf '{"gate": {"budgets": {"max_syncs_per_step": 0.5}}}' >"$tmp/budget.json"
expect_rc 1 "$bin" gate --config "$tmp/budget.json" $R/sync.json
expect_rc 0 "$bin" gate --config "$tmp/budget.json" $R/sync-nearmiss.json
# an MFU floor: demo-train's GEMMs (addmm with shapes, fp32 on an H100) are far below it; with
# --peaks making the fp32 roof 0.001 TFLOP/s they are above it; a bad --peaks file is exit 2
printf '{"gate": {"budgets": {"min_mfu": 0.01}}}' >"$tmp/mfu.json"
expect_rc 1 "$bin" gate --config "$tmp/mfu.json" fixtures/demo-train.json.gz
if grep -q 'MFU 0.0% is below the budget 1.0% (min_mfu)' "$tmp/out"; then ok
else bad "min_mfu budget message"; cat "$tmp/out"; fi
printf '{"tflops": {"fp32": 0.001}}' >"$tmp/peaks.json"
expect_rc 0 "$bin" gate --config "$tmp/mfu.json" --peaks "$tmp/peaks.json" fixtures/demo-train.json.gz
printf '{"tflops": {"int4": 1}}' >"$tmp/peaks-bad.json"
expect_rc 2 "$bin" ops --peaks "$tmp/peaks-bad.json" fixtures/demo-train.json.gz
if grep -q 'peaks-bad.json: tflops.int4: not a dtype' "$tmp/err"; then ok
else bad "--peaks error does not name the key"; cat "$tmp/err"; fi
expect_rc 2 "$bin" diagnose --peaks "$tmp/missing.json" fixtures/mini-kineto.json
expect_rc 1 "$bin" gate --baseline fixtures/mini-kineto.json fixtures/odd/truncated.json
if grep -q 'partial' "$tmp/err"; then ok; else bad "partial trace not named"; fi
expect_rc 3 "$bin" gate --baseline fixtures/bad/not-json.txt fixtures/mini-kineto.json
expect_rc 2 "$bin" gate
expect_rc 2 "$bin" gate --format xml fixtures/mini-kineto.json
printf '{"rules": {"bogus": 1}}' >"$tmp/c1.json"
expect_rc 2 "$bin" gate --config "$tmp/c1.json" fixtures/mini-kineto.json
if grep -q 'rules.bogus: unknown key' "$tmp/err"; then ok; else bad "config error does not name the key"; cat "$tmp/err"; fi
printf '{"patterns": {"dataloader": ["(unclosed"]}}' >"$tmp/c2.json"
expect_rc 2 "$bin" diagnose --config "$tmp/c2.json" fixtures/mini-kineto.json
if grep -q 'patterns.dataloader\[0\]: bad pattern .*at offset 9' "$tmp/err"; then ok; else bad "bad pattern message"; cat "$tmp/err"; fi
expect_rc 2 "$bin" diagnose --config "$tmp/missing.json" fixtures/mini-kineto.json
"$bin" config --print-defaults >"$tmp/defaults.json"
expect_rc 0 "$bin" config --check "$tmp/defaults.json"
if json_verify -q <"$tmp/defaults.json"; then ok; else bad "defaults are not JSON"; fi

# suppressions show in the report, with their reason, and leave the findings
printf '{"suppress": [{"rule": "transfer", "match": "pageable", "reason": "known: ticket 42"}]}' >"$tmp/s.json"
"$bin" diagnose --config "$tmp/s.json" $R/transfer.json >"$tmp/sup"
if grep -q 'suppressed by the config' "$tmp/sup" && grep -q 'known: ticket 42' "$tmp/sup" &&
   ! grep -q '^[0-9]*\. \[[a-z]*\] transfer .*pageable' "$tmp/sup"; then ok; else bad "suppression"; cat "$tmp/sup"; fi

# a pathological pattern stops at PCRE2's limit instead of hanging
printf '[{"ph":"X","cat":"kernel","name":"%s","ts":1,"dur":1,"pid":0,"tid":7}]' \
	"$(head -c 3000 /dev/zero | tr '\0' a)b" >"$tmp/long.json"
printf '{"patterns": {"ignore": ["(a+)+$"]}}' >"$tmp/evil.json"
expect_rc 0 timeout 60 "$bin" diagnose --config "$tmp/evil.json" "$tmp/long.json"
if grep -q 'match limit' "$tmp/err"; then ok; else bad "limit hit not reported"; fi

# the real traces: nw0 against nw4 fails on DataLoader and step time; the reverse passes
S=../shared/traces
if [ -d "$S" ]; then
	expect_rc 1 "$bin" gate --baseline $S/resnet50-nw4.pt.trace.json.gz $S/resnet50-nw0.pt.trace.json.gz
	if grep -q '^dataloader_ns_per_step .*FAIL' "$tmp/out" && grep -q '^step_time_median_ns .*FAIL' "$tmp/out"; then ok; else bad "gate nw0 vs nw4 names the wrong metrics"; fi
	# its Markdown adds what changed: the diff's top rows, the DataLoader first
	expect_rc 1 "$bin" gate --format md --baseline $S/resnet50-nw4.pt.trace.json.gz $S/resnet50-nw0.pt.trace.json.gz
	if grep -q 'What changed: the top rows of tracedoc diff' "$tmp/out" &&
		grep -A2 'most of the change:' "$tmp/out" | grep -q 'enumerate(DataLoader)'; then ok
	else bad "gate md without the diff's rows"; fi
	expect_rc 0 "$bin" gate --baseline $S/resnet50-nw0.pt.trace.json.gz $S/resnet50-nw4.pt.trace.json.gz
	expect_rc 0 "$bin" gate --baseline $S/resnet50-nw0.pt.trace.json.gz $S/resnet50-nw0.pt.trace.json.gz
	"$bin" diagnose --format json -o "$tmp/nw0.json" $S/resnet50-nw0.pt.trace.json.gz
	expect_rc 0 "$bin" gate --baseline "$tmp/nw0.json" $S/resnet50-nw0.pt.trace.json.gz
else
	echo "SKIPPED: real-trace gate checks ($S not found)"
fi

# stdin, compressed or not, reads like the file
for f in mini-kineto.json mini-kineto.json.gz mini-kineto.json.zst; do
	"$bin" stats --format json - <"fixtures/$f" | grep -v '"trace":' >"$tmp/stdin"
	"$bin" stats --format json fixtures/mini-kineto.json | grep -v '"trace":' | \
		sed 's/"compression": "none"/"compression": "'"$(case $f in *.gz) echo gzip;; *.zst) echo zstd;; *) echo none;; esac)"'"/' >"$tmp/file"
	if cmp -s "$tmp/stdin" "$tmp/file"; then ok; else bad "stdin $f differs"; diff "$tmp/file" "$tmp/stdin" | head; fi
done

# errors: exit 3 and a message naming file, line, column and byte
: >"$tmp/errors"
for f in fixtures/bad/*; do
	"$bin" stats "$f" >/dev/null 2>"$tmp/e"
	echo "rc=$? $(cat "$tmp/e")" >>"$tmp/errors"
done
# where zlib and ISA-L notice a corrupt deflate stream differs by a few bytes, and so do
# their words for it: the golden keeps the rest of the line
sed -i 's/\(corrupt gzip data near compressed byte\) [0-9]*: .*/\1 N: .../' "$tmp/errors"
compare_golden errors.txt "$tmp/errors"
if grep -v '^rc=3 tracedoc: fixtures/bad/' "$tmp/errors" >/dev/null; then bad "an error did not exit 3"; else ok; fi
expect_rc 3 "$bin" stats fixtures/bad/no-such-file.json

# CLI habits: --opt=value for every option, a missing value named, -- before operands,
# COMMAND --version
"$bin" diagnose --format=json --config="$tmp/defaults.json" --color=never --output="$tmp/eq.json" \
	fixtures/mini-kineto.json
"$bin" diagnose --format json -o "$tmp/sp.json" fixtures/mini-kineto.json
if cmp -s "$tmp/eq.json" "$tmp/sp.json"; then ok; else bad "--opt=value differs from --opt value"; fi
expect_rc 0 "$bin" gate --baseline=fixtures/mini-kineto.json --format=md --junit="$tmp/j.xml" \
	--config="$tmp/defaults.json" -o "$tmp/g.md" fixtures/mini-kineto.json
expect_rc 0 "$bin" stats --format=json --output="$tmp/s.json" fixtures/mini-kineto.json
expect_rc 2 "$bin" diagnose fixtures/mini-kineto.json --format
if grep -q 'diagnose: --format needs a value' "$tmp/err"; then ok; else bad "missing value"; cat "$tmp/err"; fi
expect_rc 2 "$bin" gate fixtures/mini-kineto.json --baseline
if grep -q 'gate: --baseline needs a value' "$tmp/err"; then ok; else bad "missing value"; cat "$tmp/err"; fi
expect_rc 2 "$bin" config --print-defaults=yes
if grep -q 'takes no value' "$tmp/err"; then ok; else bad "flag with a value"; cat "$tmp/err"; fi
cp fixtures/mini-kineto.json "$tmp/-dash.json"
case $bin in /*) abs=$bin ;; *) abs=$PWD/$bin ;; esac
(cd "$tmp" && "$abs" stats -- -dash.json >/dev/null 2>"$tmp/err"); rc=$?
if [ "$rc" = 0 ]; then ok; else bad "-- does not end the options ($rc)"; cat "$tmp/err"; fi
for c in diagnose gate stats config record summarize ops kernels memory diff annotate; do
	expect_rc 0 "$bin" $c --version
	if grep -q "^tracedoc $c [0-9]" "$tmp/out"; then ok; else bad "$c --version"; fi
done

# the progress line: with --progress, a line a second in a log (here: a slow pipe); never by
# default outside a terminal, never with --quiet
slow() { head -c 3000 fixtures/mini-kineto.json; sleep 1.2; tail -c +3001 fixtures/mini-kineto.json; }
slow | "$bin" stats --progress - >/dev/null 2>"$tmp/p1"
slow | "$bin" stats - >/dev/null 2>"$tmp/p2"
slow | "$bin" stats --progress --quiet - >/dev/null 2>"$tmp/p3"
if grep -q '^tracedoc: reading <stdin>: .* MB/s' "$tmp/p1" && [ ! -s "$tmp/p2" ] && [ ! -s "$tmp/p3" ]; then ok
else bad "progress line: $(cat "$tmp/p1" "$tmp/p2" "$tmp/p3")"; fi

# text fits 100 columns, help texts included, with no trailing blanks
: >"$tmp/texts"
for c in "" diagnose gate stats config record summarize ops kernels memory diff annotate; do
	"$bin" $c --help >>"$tmp/texts" 2>&1
done
cat "$golden"/*.text >>"$tmp/texts"
if [ -d ../shared/traces ]; then
	for f in ../shared/traces/*.gz; do
		for c in diagnose ops kernels memory; do "$bin" $c "$f" >>"$tmp/texts" 2>&1; done
		"$bin" ops --group-by stack "$f" >>"$tmp/texts" 2>&1
	done
fi
# characters, not bytes (a memory curve is drawn with block characters)
if python3 -c '
import sys
bad = 0
for n, line in enumerate(open(sys.argv[1], encoding="utf-8", errors="replace"), 1):
    line = line.rstrip("\n")
    if len(line) > 100 or line != line.rstrip():
        print("line %d: %d columns or trailing blanks: %s" % (n, len(line), line))
        bad = 1
sys.exit(bad)' "$tmp/texts"; then ok
else bad "text wider than 100 columns or with trailing blanks"; fi

# a rank without a world size is just a rank; Kineto's unsorted events are not an anomaly
printf '{"distributedInfo": {"rank": 0}, "traceEvents": [
 {"ph":"X","cat":"kernel","name":"k","ts":5,"dur":1,"pid":0,"tid":7,"args":{"device":0}},
 {"ph":"X","cat":"kernel","name":"k","ts":1,"dur":1,"pid":0,"tid":7,"args":{"device":0}}]}' >"$tmp/r0.json"
"$bin" diagnose "$tmp/r0.json" >"$tmp/r0.text"
if grep -q '^trace    2 events, rank 0$' "$tmp/r0.text"; then ok; else bad "rank without world size"; cat "$tmp/r0.text"; fi
"$bin" stats "$tmp/r0.json" >"$tmp/r0.stats"
if grep -q '^anomalies  none' "$tmp/r0.stats"; then ok; else bad "unsorted Kineto events shown"; cat "$tmp/r0.stats"; fi

# usage errors exit 2
expect_rc 2 "$bin"
expect_rc 2 "$bin" frobnicate
expect_rc 2 "$bin" stats
expect_rc 2 "$bin" stats --format xml fixtures/mini-kineto.json
expect_rc 2 "$bin" stats --bogus fixtures/mini-kineto.json
expect_rc 0 "$bin" --help
expect_rc 0 "$bin" stats --help

# -o writes atomically: a failed run leaves the old file alone and no temporary behind
echo "previous report" >"$tmp/report.json"
expect_rc 3 "$bin" stats --format json -o "$tmp/report.json" fixtures/bad/not-json.txt
if [ "$(cat "$tmp/report.json")" = "previous report" ]; then ok; else bad "-o clobbered the old file on error"; fi
expect_rc 0 "$bin" stats --format json -o "$tmp/report.json" fixtures/mini-kineto.json
if grep -q '"schema": "tracedoc.stats/1"' "$tmp/report.json"; then ok; else bad "-o did not write the report"; fi
if ls "$tmp" | grep -q tmp; then bad "temporary file left behind"; else ok; fi
expect_rc 4 "$bin" stats -o /nonexistent-dir/x.json fixtures/mini-kineto.json

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
