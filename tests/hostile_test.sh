#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hostile corpus (tests/hostile/make.py writes it, with each case's outcome): every case
# must exit as documented, say what it must (with the position where there is one; lines
# wrapped at 100 columns are joined first), and finish
# within 20 s and 2 GB of peak RSS. Then the outputs that must not clobber what they should
# not (-o onto /dev/null, a FIFO, a symlink; the mode of a new and of an existing file), and a
# gate whose stdout is closed early. Run plain and under ASan+UBSan by CTest.
# Then round three: FIFOs and standard input read once as what the option says, names and file
# names that would drive a terminal, and the Slurm scripts run as their tasks run them.
# usage: hostile_test.sh TRACEDOC RSSRUN REPO_ROOT GEN_TRACE
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
rss=$(realpath "$2")
gen=$(realpath "$4")
cd "$3" || exit 2

# sanitizers make everything slower and bigger: the limits are for the plain build
limit_s=20 limit_kb=$((2 * 1024 * 1024))
if "$bin" --version 2>/dev/null | grep -q sanitize; then limit_s=120 limit_kb=$((8 * 1024 * 1024)); fi

python3 tests/hostile/make.py "$tmp/c" "$bin" || exit 2
# a million steps of one launch each (bench/gen_trace --bare, 450 MB; 100k under sanitizers): the
# passes that grow with the steps; and a fifth of them as JSON, its per-step replay and critical
# path (350 MB of report at a million)
nsteps=1000000
[ "$limit_s" = 20 ] || nsteps=100000
"$gen" --bare --steps "$nsteps" -o "$tmp/c/steps-1m.json" || exit 2
"$gen" --bare --steps $((nsteps / 5)) -o "$tmp/c/steps-json.json" || exit 2
printf 'steps-1m.json\tdiagnose FILE\t0\t%s steps\n' "$nsteps" >>"$tmp/c/cases.tsv"
printf 'steps-json.json\tdiagnose --format json -o /dev/null FILE\t0\t-\n' >>"$tmp/c/cases.tsv"
while IFS=$'\t' read -r name cmd want_rc want; do
	args=${cmd//FILE/$tmp/c/$name}
	# shellcheck disable=SC2086
	timeout $((limit_s * 3)) "$rss" "$bin" $args >"$tmp/out" 2>"$tmp/err"
	rc=$?
	line=$(grep '^rssrun:' "$tmp/err")
	secs=$(echo "$line" | sed 's/rssrun: \([0-9.]*\) s.*/\1/')
	kb=$(echo "$line" | sed 's/.*, \([0-9]*\) KB/\1/')
	if [ "$rc" != "$want_rc" ]; then
		bad "$name: exit $rc, expected $want_rc"; head -5 "$tmp/err"
	elif [ "$want" != - ] && ! cat "$tmp/out" "$tmp/err" | tr -s ' \n' '  ' | grep -qF -- "$want"; then
		bad "$name: no '$want' in the output:"; head -5 "$tmp/err" "$tmp/out"
	elif [ -z "$secs" ] || awk -v s="$secs" -v l="$limit_s" 'BEGIN { exit !(s > l) }'; then
		bad "$name: ${secs:-?} s, over $limit_s s"
	elif [ "${kb:-0}" -gt "$limit_kb" ]; then
		bad "$name: $kb KB peak RSS, over $limit_kb KB"
	else
		ok
		printf '  ok %-28s exit %s %6s s %8s KB\n' "$name" "$rc" "$secs" "$kb"
	fi
	rm -f "$tmp/c/$name" # the large ones are done with
done <"$tmp/c/cases.tsv"

# -o onto things that are not regular files: written in place, never replaced
R=fixtures/rules/dataloader.json
if [ -w /dev/null ] && "$bin" stats "$R" -o /dev/null && [ -c /dev/null ]; then ok
else bad "-o /dev/null is no longer a character device"; fi
mkfifo "$tmp/fifo"
(cat "$tmp/fifo" >"$tmp/from-fifo") &
"$bin" stats "$R" -o "$tmp/fifo"
wait
if [ -p "$tmp/fifo" ] && grep -q "events" "$tmp/from-fifo"; then ok; else bad "-o FIFO"; fi
echo old >"$tmp/target.txt"
ln -s target.txt "$tmp/link.txt"
"$bin" stats "$R" -o "$tmp/link.txt"
if [ -L "$tmp/link.txt" ] && grep -q events "$tmp/target.txt"; then ok; else bad "-o through a symlink"; fi
# modes: a new file as open(2) with the umask gives, an existing one keeps its own
(umask 022 && "$bin" stats "$R" -o "$tmp/new.txt")
if [ "$(stat -c %a "$tmp/new.txt")" = 644 ]; then ok; else bad "new file mode $(stat -c %a "$tmp/new.txt")"; fi
echo x >"$tmp/old.txt" && chmod 640 "$tmp/old.txt"
"$bin" stats "$R" -o "$tmp/old.txt"
if [ "$(stat -c %a "$tmp/old.txt")" = 640 ]; then ok; else bad "existing file mode $(stat -c %a "$tmp/old.txt")"; fi
# a failed run leaves the earlier output whole
"$bin" stats fixtures/bad/not-json.txt -o "$tmp/old.txt" 2>/dev/null
if grep -q events "$tmp/old.txt"; then ok; else bad "a failed run clobbered -o"; fi

# gate writing JUnit while its stdout is closed early: the file is whole, the verdict kept
"$bin" gate --baseline fixtures/rules/sync-nearmiss.json fixtures/rules/sync.json --junit "$tmp/j.xml" | head -1 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" = 1 ] && grep -q '</testsuites>' "$tmp/j.xml"; then ok; else bad "gate | head: exit $rc, JUnit $(wc -c <"$tmp/j.xml" 2>/dev/null) bytes"; fi

# --- round three ---------------------------------------------------------------------------
S=fixtures/rules/sync.json
"$bin" diagnose --format json "$S" >"$tmp/base.json"
"$bin" summarize "$S" -o "$tmp/sync.summary.json"
# a FIFO is opened once: its head is not lost to a sniff, its document read as what it is
mkfifo "$tmp/p1"
(cat "$S" >"$tmp/p1") &
timeout 20 "$bin" diagnose "$tmp/p1" >"$tmp/out" 2>"$tmp/err"
rc=$?
wait
if [ $rc = 0 ] && grep -q '^trace .*events' "$tmp/out"; then ok; else bad "diagnose FIFO: exit $rc"; head -3 "$tmp/err"; fi
(cat "$tmp/base.json" >"$tmp/p1") &
timeout 20 "$bin" gate --baseline "$tmp/p1" "$S" >"$tmp/out" 2>&1
rc=$?
wait
if [ $rc = 0 ]; then ok; else bad "gate --baseline FIFO: exit $rc"; head -3 "$tmp/out"; fi
# a FIFO among a job's rank files is refused by name, not waited on
mkdir "$tmp/job" && cp "$tmp/sync.summary.json" "$tmp/job/rank0.summary.json"
mkfifo "$tmp/job/rank1.json"
timeout 20 "$bin" diagnose "$tmp/job" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 3 ] && grep -q 'rank1.json: not a regular file (a FIFO)' "$tmp/err"; then ok
else bad "a FIFO in a job directory: exit $rc"; head -3 "$tmp/err"; fi
timeout 20 "$bin" diagnose "$tmp/job/*" >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc = 3 ] && grep -q 'not a regular file' "$tmp/err"; then ok; else bad "a FIFO in a job glob: exit $rc"; fi
# standard input is read as what the option says it is
"$bin" gate --baseline - "$S" <"$tmp/base.json" >"$tmp/out" 2>&1
if [ $? = 0 ] && grep -q '^tracedoc gate: PASS' "$tmp/out"; then ok; else bad "gate --baseline -"; head -3 "$tmp/out"; fi
gzip -c "$tmp/base.json" | "$bin" gate --baseline - "$S" >/dev/null 2>&1
if [ $? = 0 ]; then ok; else bad "gate --baseline - (gzip)"; fi
printf '{"gate": {"budgets": {"max_syncs_per_step": 0}}}' | "$bin" gate --config - "$S" >"$tmp/out" 2>&1
if [ $? = 1 ] && grep -q 'max_syncs_per_step' "$tmp/out"; then ok; else bad "gate --config -"; head -3 "$tmp/out"; fi
"$bin" diagnose - <"$tmp/sync.summary.json" >"$tmp/out" 2>&1
if [ $? = 0 ] && grep -q 'a job of 1 rank' "$tmp/out"; then ok; else bad "diagnose - (a summary)"; head -3 "$tmp/out"; fi
"$bin" memory --format json - <fixtures/memory/snapshot.json >"$tmp/out" 2>&1
if [ $? = 0 ] && grep -q '"source": "snapshot"' "$tmp/out"; then ok; else bad "memory - (a snapshot)"; head -3 "$tmp/out"; fi
"$bin" diagnose - <"$tmp/base.json" >"$tmp/out" 2>&1
if [ $? = 3 ] && grep -q "a saved report is gate's --baseline" "$tmp/out"; then ok; else bad "diagnose - (a report)"; fi
# nothing a name or a file name carries reaches the terminal raw: C0, C1 and bidi controls
python3 - "$tmp/evil.json" <<'PY'
import json, sys
names = ["aten::\x1b[31mred\u009b2J\u202eevil\u2066\u0085", "k\u202d\u009c\u009d\x07"]
ev = [{"ph": "X", "cat": "cpu_op", "name": names[0], "pid": 1, "tid": 1, "ts": 10, "dur": 900},
      {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 20,
       "dur": 5, "args": {"correlation": 1}},
      {"ph": "X", "cat": "kernel", "name": names[1], "pid": 0, "tid": 7, "ts": 100, "dur": 700,
       "args": {"device": 0, "stream": 7, "correlation": 1}}]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
raw=$'\x1b|\x07|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]'
for c in "diagnose" "diagnose --format md" "ops" "ops --format md" "kernels" "kernels --format md" "stats" "memory" "annotate -o /dev/null"; do
	# shellcheck disable=SC2086
	"$bin" $c "$tmp/evil.json" >"$tmp/out" 2>"$tmp/err"
	if LC_ALL=C grep -qaE "$raw" "$tmp/out" "$tmp/err"; then
		bad "$c: a control character reached the terminal raw"; LC_ALL=C grep -aE "$raw" "$tmp/out" | od -c | head -5
	else ok; fi
done
if "$bin" ops "$tmp/evil.json" | grep -qF '\u202e'; then ok; else bad "ops: a bidi control is not shown as \\u202e"; fi
"$bin" diagnose "$tmp/no"$'\x1b[2J\x07'".json" >/dev/null 2>"$tmp/err"
if LC_ALL=C grep -qaE "$raw" "$tmp/err"; then bad "a file name's ESC reached stderr raw"; elif grep -qF 'no\x1b[2J\x07.json' "$tmp/err"; then ok
else bad "a file name with ESC is not shown escaped"; cat "$tmp/err"; fi
# a JSON error in a config or baseline quotes the bytes at the error, escaped, not the file's
# first bytes raw
printf '{"rules": {"small_kernel_us": 10},\n "patterns": {"ignore": ["x"]},\n "gate": \033[31m}' >"$tmp/esc.json"
"$bin" config --check "$tmp/esc.json" >/dev/null 2>"$tmp/err"
if LC_ALL=C grep -qaE "$raw" "$tmp/err"; then bad "a config's ESC reached stderr raw"
elif grep -qF 'line 3, column 10 (byte 76)' "$tmp/err" && grep -qF '"gate":  >>> \x1b[31m}' "$tmp/err"; then ok
else bad "the config error does not quote the text at the error"; cat "$tmp/err"; fi
cp "$tmp/esc.json" "$tmp/esc-report.json" && sed -i '1s/^{/{"schema": "tracedoc.report\/1", /' "$tmp/esc-report.json"
"$bin" gate --baseline "$tmp/esc-report.json" "$S" >/dev/null 2>"$tmp/err"
if [ $? = 3 ] && ! LC_ALL=C grep -qaE "$raw" "$tmp/err" && grep -qF ' >>> \x1b[31m}' "$tmp/err"; then ok
else bad "a baseline's JSON error"; cat "$tmp/err"; fi
# the Slurm scripts, run as a task runs them: any bytes in a name, collisions refused, a
# reduce missing ranks fails unless asked
mkdir -p "$tmp/sl/ranks"
"$gen" --ranks 3 --steps 2 --ops 5 -o "$tmp/sl/ranks" >/dev/null && rm -f "$tmp/sl/ranks/truth.txt"
mv "$tmp/sl/ranks/rank-1.json" "$tmp/sl/ranks/rank-1"$'\n'"x.json"
export TRACEDOC=$bin
(cd "$tmp/sl" && bash "$OLDPWD/scripts/slurm/summarize.sbatch" ranks sums >/dev/null 2>"$tmp/err")
if [ $? = 0 ] && [ -f "$tmp/sl/sums/rank-1"$'\n'"x.summary.json" ] && [ "$(ls -q "$tmp/sl/sums" | wc -l)" = 3 ]
then ok; else bad "summarize.sbatch: a name with a newline"; ls -A "$tmp/sl/sums"; cat "$tmp/err"; fi
(cd "$tmp/sl" && bash "$OLDPWD/scripts/slurm/reduce.sbatch" sums rep >/dev/null 2>"$tmp/err")
if [ $? = 0 ] && grep -q 'a job of 3 ranks' "$tmp/sl/rep.txt"; then ok; else bad "reduce.sbatch of 3 ranks"; cat "$tmp/err"; fi
rm "$tmp/sl/sums/rank-2.summary.json"
(cd "$tmp/sl" && bash "$OLDPWD/scripts/slurm/reduce.sbatch" sums rep >/dev/null 2>"$tmp/err")
if [ $? = 3 ] && grep -q 'no summary rank-2.summary.json' "$tmp/err"; then ok; else bad "reduce.sbatch missing a rank exits 0"; cat "$tmp/err"; fi
(cd "$tmp/sl" && TRACEDOC_ALLOW_MISSING=1 bash "$OLDPWD/scripts/slurm/reduce.sbatch" sums rep >/dev/null 2>&1)
if [ $? = 0 ]; then ok; else bad "reduce.sbatch TRACEDOC_ALLOW_MISSING=1"; fi
gzip -c "$tmp/sl/ranks/rank-0.json" >"$tmp/sl/ranks/rank-0.json.gz"
(cd "$tmp/sl" && bash "$OLDPWD/scripts/slurm/summarize.sbatch" ranks sums2 >/dev/null 2>"$tmp/err")
if [ $? = 3 ] && grep -q 'rank-0.json and rank-0.json.gz would both be summarized' "$tmp/err" &&
	[ ! -e "$tmp/sl/sums2/rank-0.summary.json" ]; then ok; else bad "summarize.sbatch: a collision"; cat "$tmp/err"; fi

echo "hostile tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
