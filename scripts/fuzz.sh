#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with clang (ASan + UBSan) and fuzzes each for a bounded time:
# the trace reader (seeded from fixtures/ and tests/fuzz/corpus), the config reader
# (tests/fuzz/corpus-config), the saved-report and summary readers (tests/fuzz/corpus-report),
# a job built of fuzzed summaries (the same corpus) and the snapshot reader with the sniffer
# (tests/fuzz/corpus-snapshot), and the pickle reader alone (tests/fuzz/corpus-pickle).
# Crashes are written to build-fuzz/; a crash fails the script.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
if ! command -v clang >/dev/null; then
	echo "fuzz: clang not found (scripts/setup.sh --test installs it)" >&2
	exit 1
fi
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DTD_WITH_CUPTI=OFF >/dev/null
cmake --build build-fuzz -j2 --target fuzz_reader fuzz_config fuzz_report fuzz_summary \
	fuzz_snapshot fuzz_pickle >/dev/null
mkdir -p build-fuzz/corpus build-fuzz/corpus-config build-fuzz/corpus-report \
	build-fuzz/corpus-summary build-fuzz/corpus-snapshot build-fuzz/corpus-pickle
find fixtures tests/fuzz/corpus -type f -size -256k ! -name '*.gz' ! -name '*.zst' \
	-exec cp {} build-fuzz/corpus/ \;
cp tests/fuzz/corpus-config/* build-fuzz/corpus-config/
cp tests/fuzz/corpus-report/* build-fuzz/corpus-report/
cp tests/fuzz/corpus-report/* build-fuzz/corpus-summary/
cp tests/fuzz/corpus-snapshot/* fixtures/memory/*.json tests/fuzz/corpus-pickle/* \
	build-fuzz/corpus-snapshot/
cp tests/fuzz/corpus-pickle/* build-fuzz/corpus-pickle/
cd build-fuzz
for t in reader:corpus config:corpus-config report:corpus-report summary:corpus-summary \
	snapshot:corpus-snapshot pickle:corpus-pickle; do
	name=${t%%:*} dir=${t#*:}
	echo "fuzz: $name for $secs s" >&2
	tests/fuzz_$name -max_total_time="$secs" -max_len=16384 -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 "$dir"
done
