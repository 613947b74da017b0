# SPDX-License-Identifier: MIT
# Sourced by the shell suites: a scratch directory ($tmp, removed on exit), the pass/fail
# counters and the checks they share. Set `golden` first where it is not tests/golden.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
golden=${golden:-tests/golden}

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# compare_golden NAME FILE: FILE's bytes must equal $golden/NAME (TD_UPDATE_GOLDEN=1 rewrites it)
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

# expect_rc RC CMD...: the command exits with RC (its output in $tmp/out and $tmp/err)
expect_rc() {
	local want=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ "$rc" = "$want" ]; then ok; else bad "'$*' exited $rc, expected $want"; cat "$tmp/err"; fi
}
