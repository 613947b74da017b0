#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs what tracedoc needs from Debian packages: to build and run it (no arguments), or
# also to run the whole test suite (--test). As root it runs apt-get; otherwise it prints the
# exact command to run. Safe to run again.
set -eu
# scdoc builds the man pages (cmake --install, the .deb)
pkgs="build-essential cmake pkg-config libyajl-dev libzstd-dev libpcre2-dev zlib1g-dev libisal-dev libsqlite3-dev scdoc"
case "${1:-}" in
--test)
	# cmocka for the unit tests, json_verify, zstd and gzip for the fixtures, python3 for the
	# independent computations, xmllint for the JUnit schema check, a one-node Slurm cluster
	# (slurm-wlm, munge) for the cluster path, headless chromium for the HTML report, clang
	# for the libFuzzer runs, man-db for the man pages as installed, python3-torch (CPU) for
	# the torch.profiler handler on a real model
	pkgs="$pkgs libcmocka-dev yajl-tools zstd gzip python3 libxml2-utils slurm-wlm munge chromium"
	pkgs="$pkgs clang man-db python3-torch"
	;;
"") ;;
*)
	echo "usage: scripts/setup.sh [--test]" >&2
	exit 2
	;;
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
	exit 0
fi
if [ "$(id -u)" = 0 ]; then
	echo "setup: installing$missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq --no-install-recommends $missing >&2
else
	echo "setup: missing packages:$missing" >&2
	echo "run:   sudo apt-get install -y$missing" >&2
	exit 1
fi
