#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The hostile corpus (tests/hostile/make.py writes it, with each case's outcome): every case
# must exit as documented, say what it must (with the position where there is one), and finish
# within 20 s and 2 GB of peak RSS. Then the outputs that must not clobber what they should
# not (-o onto /dev/null, a FIFO, a symlink; the mode of a new and of an existing file), and a
# gate whose stdout is closed early. Run plain and under ASan+UBSan by CTest.
# usage: hostile_test.sh TRACEDOC RSSRUN REPO_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
rss=$(realpath "$2")
cd "$3" || exit 2

# sanitizers make everything slower and bigger: the limits are for the plain build
limit_s=20 limit_kb=$((2 * 1024 * 1024))
if "$bin" --version 2>/dev/null | grep -q sanitize; then limit_s=120 limit_kb=$((8 * 1024 * 1024)); fi

python3 tests/hostile/make.py "$tmp/c" "$bin" || exit 2
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
	elif [ "$want" != - ] && ! grep -qF -- "$want" "$tmp/out" "$tmp/err"; then
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

echo "hostile tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
