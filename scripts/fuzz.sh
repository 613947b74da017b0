#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer target with clang (ASan + UBSan) and fuzzes the reader for a bounded
# time, seeded from fixtures/ and tests/fuzz/corpus. Crashes are written to build-fuzz/.
# usage: scripts/fuzz.sh [SECONDS]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2 --target fuzz_reader >/dev/null
work=build-fuzz/corpus
mkdir -p "$work"
find fixtures tests/fuzz/corpus -type f -size -256k ! -name '*.gz' ! -name '*.zst' -exec cp {} "$work/" \;
cd build-fuzz
exec tests/fuzz_reader -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
	-print_final_stats=1 corpus
