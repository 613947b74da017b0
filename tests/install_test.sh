#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tracedoc as a user installs it: `cmake --install` into a prefix (the binary runs from there,
# `tracedoc record` finds the collector in PREFIX/lib/tracedoc, the man pages, completion and
# license are in place); the commands --help lists, aligned; each one's --help options in its
# man page and in the bash completion; the completion itself through bash's complete/compgen;
# then the .deb that
# `cpack` builds, installed with dpkg, used from /usr/bin, and removed (as root, when no
# tracedoc package is installed already). Each part skips with a message where its tool is
# missing.
# usage: install_test.sh TRACEDOC BUILD_DIR REPO_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
build=$(realpath "$2")
root=$(realpath "$3")
cd "$root" || exit 2
# the commands `tracedoc --help` lists: a name, then its description from one column for all
"$bin" --help | sed -n '/^commands:/,/^$/p' | sed '1d;$d' >"$tmp/cmds"
cmds=$(awk '{print $1}' "$tmp/cmds" | tr '\n' ' ')
case " $cmds " in *" diagnose "*" critical-path "*) ok ;; *) bad "--help lists: $cmds" ;; esac
if awk '{ n = length($1); if (n > w) w = n; match($0, /^ *[^ ]+ +/); c[NR] = RLENGTH }
	END { for (i = 1; i <= NR; i++) if (c[i] != c[1] || c[i] < w + 3) exit 1 }' "$tmp/cmds"; then ok
else bad "--help: the descriptions do not start in one column after the longest name:"
	cat "$tmp/cmds"; fi
# the options a command's --help names
help_opts() {
	"$bin" "$1" --help | grep -oE '(^|[][ (|,])(--[a-z][a-z0-9-]*|-[a-zA-Z])' | sed 's/^[][ (|,]//' |
		sort -u
}

# --- cmake --install into a prefix ----------------------------------------------------------
p=$tmp/prefix
if cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1; then ok
else bad "cmake --install failed"; tail -5 "$tmp/install.log"; fi
for f in bin/tracedoc share/bash-completion/completions/tracedoc share/doc/tracedoc/LICENSE \
	share/doc/tracedoc/tracedoc-skill.md; do
	if [ -e "$p/$f" ]; then ok; else bad "not installed: $f"; fi
done
if "$p/bin/tracedoc" --version | grep -qE '^commit +[0-9a-f]{7,}|^commit +unknown'; then ok
else bad "--version names no commit"; "$p/bin/tracedoc" --version; fi
if "$p/bin/tracedoc" --version | grep -qE '^gzip +(ISA-L|zlib)$' &&
	"$p/bin/tracedoc" --version | grep -qE '^scan +(avx2|sse|portable) '; then ok
else bad "--version names no features"; fi
if "$p/bin/tracedoc" diagnose fixtures/mini-kineto.json | grep -q '^trace '; then ok; else bad "installed diagnose"; fi
if "$p/bin/tracedoc" --version | grep -q '^collector CUPTI'; then
	if [ -e "$p/lib/tracedoc/libtracedoc_collector.so" ]; then ok; else bad "no collector in lib/tracedoc"; fi
	# found relative to the installed binary, not the build tree: `true` makes no CUDA call
	(cd "$tmp" && env -u TRACEDOC_COLLECTOR "$p/bin/tracedoc" record -o "$tmp/rec" -- true) \
		>"$tmp/out" 2>&1
	if grep -q 'no trace written' "$tmp/out"; then ok; else bad "installed record"; cat "$tmp/out"; fi
else
	echo "SKIPPED: the collector (this build has no CUPTI)"
fi

# --- man pages: one per command, every --help option in it ---------------------------------
if [ -e "$build/man/tracedoc.1.gz" ]; then
	if [ -e "$p/share/man/man1/tracedoc.1.gz" ]; then ok; else bad "man pages not installed"; fi
	for c in $cmds; do
		page=$build/man/tracedoc-$c.1.gz
		if [ ! -e "$page" ]; then bad "no man page tracedoc-$c(1)"; continue; fi
		zcat "$page" | sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$tmp/page"
		for o in $(help_opts "$c"); do
			if grep -qF -- "$o" "$tmp/page"; then ok; else bad "tracedoc-$c(1) does not name $o of --help"; fi
		done
		for s in NAME SYNOPSIS DESCRIPTION 'EXIT STATUS' EXAMPLES; do
			if grep -q "^\.SH $s" "$tmp/page"; then ok; else bad "tracedoc-$c(1) has no $s"; fi
		done
	done
	if command -v man >/dev/null; then
		if MANPATH=$p/share/man man -w tracedoc-gate >/dev/null 2>&1; then ok; else bad "man -w tracedoc-gate"; fi
		if MANPATH=$p/share/man MANWIDTH=100 man tracedoc-gate 2>/dev/null | grep -q 'nothing to judge'; then ok
		else bad "man tracedoc-gate does not render"; fi
	else
		echo "SKIPPED: man rendering (man-db not installed)"
	fi
else
	echo "SKIPPED: man pages (scdoc not found at build time: scripts/setup.sh installs it)"
fi

# --- bash completion ------------------------------------------------------------------------
complete_words() { # the completions of a command line whose last word is being typed
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
		_tracedoc; printf "%s\n" "${COMPREPLY[@]}"' _ "$root/scripts/completion/tracedoc" "$@"
}
if bash -c 'source scripts/completion/tracedoc && complete -p tracedoc' | grep -q -- '-F _tracedoc'; then ok
else bad "complete -p tracedoc"; fi
if [ "$(complete_words tracedoc di | sort | tr '\n' ' ')" = "diagnose diff " ]; then ok
else bad "commands: $(complete_words tracedoc di | tr '\n' ' ')"; fi
if [ "$(complete_words tracedoc ops --format '' | tr '\n' ' ')" = "text md json csv " ]; then ok
else bad "ops --format: $(complete_words tracedoc ops --format '' | tr '\n' ' ')"; fi
if [ "$(complete_words tracedoc diagnose --format '' | tr '\n' ' ')" = "text md json html " ]; then ok
else bad "diagnose --format"; fi
for c in $cmds; do
	all=" $(complete_words tracedoc "$c" - | tr '\n' ' ') "
	for o in $(help_opts "$c"); do
		case " $all " in *" $o "*) ok ;; *) bad "completion of $c lacks $o of --help" ;; esac
	done
done
mkdir -p "$tmp/files/runs" && touch "$tmp/files/a.json" "$tmp/files/b.json.zst" "$tmp/files/c.txt"
got=$(cd "$tmp/files" && complete_words tracedoc diagnose '' | sort | tr '\n' ' ')
if [ "$got" = "a.json b.json.zst runs " ]; then ok; else bad "file completion: $got"; fi

# --- the Debian package ---------------------------------------------------------------------
if ! command -v dpkg-deb >/dev/null || ! command -v cpack >/dev/null; then
	echo "SKIPPED: the .deb (dpkg-deb or cpack not found)"
elif [ "$(id -u)" != 0 ]; then
	echo "SKIPPED: installing the .deb (needs root)"
elif dpkg-query -W -f='${Status}' tracedoc 2>/dev/null | grep -q 'install ok installed'; then
	echo "SKIPPED: installing the .deb (a tracedoc package is installed already)"
else
	(cd "$tmp" && cpack -G DEB --config "$build/CPackConfig.cmake" >"$tmp/cpack.log" 2>&1)
	deb=$(ls "$tmp"/tracedoc_*_*.deb 2>/dev/null | head -1)
	if [ -n "$deb" ]; then ok; else bad "cpack made no .deb"; tail -5 "$tmp/cpack.log"; fi
	if [ -n "$deb" ]; then
		case $(basename "$deb") in tracedoc_[0-9]*.[0-9]*.[0-9]*_amd64.deb | tracedoc_*_arm64.deb) ok ;; *) bad "deb name $deb" ;; esac
		deps=$(dpkg-deb -f "$deb" Depends)
		for d in libyajl2 libzstd1 libpcre2-8-0 zlib1g; do
			case $deps in *$d*) ok ;; *) bad "Depends lacks $d: $deps" ;; esac
		done
		if "$bin" --version | grep -q '^gzip  *ISA-L'; then
			case $deps in *libisal2*) ok ;; *) bad "Depends lacks libisal2: $deps" ;; esac
		fi
		if dpkg -i "$deb" >"$tmp/dpkg.log" 2>&1; then ok; else bad "dpkg -i"; tail -5 "$tmp/dpkg.log"; fi
		if /usr/bin/tracedoc --version | grep -q '^tracedoc '; then ok; else bad "/usr/bin/tracedoc --version"; fi
		if /usr/bin/tracedoc diagnose fixtures/mini-kineto.json | grep -q '^trace '; then ok; else bad "installed diagnose"; fi
		if /usr/bin/tracedoc record --help | grep -q 'usage: tracedoc record'; then ok; else bad "installed record --help"; fi
		if [ -e "$build/man/tracedoc.1.gz" ] && command -v man >/dev/null; then
			if man -w tracedoc >/dev/null 2>&1; then ok; else bad "man -w tracedoc after dpkg -i"; fi
		fi
		if [ -e /usr/share/bash-completion/completions/tracedoc ]; then ok; else bad "completion not in the package"; fi
		if /usr/bin/python3 -c 'import tracedoc_torch' 2>/dev/null; then ok; else bad "import tracedoc_torch after dpkg -i"; fi
		if dpkg -r tracedoc >>"$tmp/dpkg.log" 2>&1 && [ ! -e /usr/bin/tracedoc ]; then ok
		else bad "dpkg -r tracedoc"; fi
	fi
fi

echo "install tests: $pass passed, $fail failed"
[ "$fail" = 0 ]
