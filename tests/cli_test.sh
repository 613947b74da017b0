#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tracedoc command as a user runs it: golden outputs, exit codes, error messages, stdin,
# atomic -o. TD_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
# usage: cli_test.sh TRACEDOC_BINARY REPO_ROOT
set -u
bin=$1
cd "$2" || exit 2
golden=tests/golden
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# compare_golden NAME FILE: FILE's bytes must equal tests/golden/NAME
compare_golden() {
	if [ "${TD_UPDATE_GOLDEN:-}" = 1 ]; then
		cp "$2" "$golden/$1"
		ok
	elif cmp -s "$2" "$golden/$1"; then
		ok
	else
		bad "$1 differs from its golden:"
		diff -u "$golden/$1" "$2" | head -40
	fi
}

# expect_rc RC CMD...: the command exits with RC
expect_rc() {
	local want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" = "$want" ]; then ok; else bad "'$*' exited $rc, expected $want"; cat "$tmp/err"; fi
}

# golden outputs, text and json, and the same bytes twice
for fmt in text json; do
	for f in mini-kineto.json legacy-autograd.json odd/anomalies.json odd/truncated.json; do
		name=$(echo "$f" | tr / -).stats.$fmt
		"$bin" stats --format "$fmt" "fixtures/$f" >"$tmp/a" 2>"$tmp/a.err"
		"$bin" stats --format "$fmt" "fixtures/$f" >"$tmp/b" 2>/dev/null
		cat "$tmp/a.err" >>"$tmp/a"
		compare_golden "$name" "$tmp/a"
		if cmp -s "$tmp/a" "$tmp/b" || [ -s "$tmp/a.err" ]; then ok; else bad "$name not deterministic"; fi
	done
done

# diagnose: golden reports in every format, the same bytes twice, valid JSON, escaped Markdown
for f in mini-kineto.json legacy-autograd.json demo-train.json.gz $(cd fixtures && ls rules/*.json); do
	base=$(basename "$f" | sed 's/\.json.*//')
	for fmt in text md json; do
		"$bin" diagnose --format "$fmt" "fixtures/$f" >"$tmp/a" 2>"$tmp/a.err"
		"$bin" diagnose --format "$fmt" "fixtures/$f" >"$tmp/b" 2>/dev/null
		compare_golden "diagnose-$base.$fmt" "$tmp/a"
		if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "diagnose $f $fmt not deterministic"; fi
		if [ "$fmt" = json ]; then
			if json_verify -q <"$tmp/a"; then ok; else bad "diagnose $f json is not valid JSON"; fi
		fi
	done
done
"$bin" diagnose --format md fixtures/rules/nasty-names.json >"$tmp/md"
if grep -q '<script>\|[^\\]|with' "$tmp/md"; then bad "markdown lets a name through unescaped"; else ok; fi
expect_rc 2 "$bin" diagnose --format html fixtures/mini-kineto.json
expect_rc 2 "$bin" diagnose
expect_rc 3 "$bin" diagnose fixtures/bad/not-json.txt
echo "previous" >"$tmp/d.md"
expect_rc 3 "$bin" diagnose --format md -o "$tmp/d.md" fixtures/bad/stray-quote.json
if [ "$(cat "$tmp/d.md")" = previous ]; then ok; else bad "diagnose -o clobbered the old file"; fi

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
compare_golden errors.txt "$tmp/errors"
if grep -v '^rc=3 tracedoc: fixtures/bad/' "$tmp/errors" >/dev/null; then bad "an error did not exit 3"; else ok; fi
expect_rc 3 "$bin" stats fixtures/bad/no-such-file.json

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
