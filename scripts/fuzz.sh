#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with clang (ASan + UBSan) and fuzzes each for a bounded time:
# the trace reader (seeded from fixtures/ and tests/fuzz/corpus), the config reader
# (tests/fuzz/corpus-config), the saved-report and summary readers (tests/fuzz/corpus-report),
# a job built of fuzzed summaries (the same corpus), the snapshot reader with the sniffer
# (tests/fuzz/corpus-snapshot), the pickle reader alone (tests/fuzz/corpus-pickle), the Nsight
# Systems SQLite reader (tests/fuzz/corpus-nsys, inputs up to 64 KB: a database is pages of 512
# bytes or more) and the MCP server's messages (tests/fuzz/corpus-mcp). Crashes are written to
# build-fuzz/; a crash fails the script.
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET]
set -eu
cd "$(dirname "$0")/.."
secs=${1:-60}
if ! command -v clang >/dev/null; then
	echo "fuzz: clang not found (scripts/setup.sh --test installs it)" >&2
	exit 1
fi
# name:corpus (a directory under build-fuzz, seeded below)
targets="reader:corpus config:corpus-config report:corpus-report summary:corpus-summary
	snapshot:corpus-snapshot pickle:corpus-pickle nsys:corpus-nsys mcp:corpus-mcp"
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DTD_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DTD_WITH_CUPTI=OFF >/dev/null
names=
for t in $targets; do
	names="$names fuzz_${t%%:*}"
	mkdir -p "build-fuzz/${t#*:}"
done
# shellcheck disable=SC2086 # one target name a word
cmake --build build-fuzz -j2 --target $names >/dev/null
find fixtures tests/fuzz/corpus -type f -size -256k ! -name '*.gz' ! -name '*.zst' \
	-exec cp {} build-fuzz/corpus/ \;
cp tests/fuzz/corpus-config/* build-fuzz/corpus-config/
cp tests/fuzz/corpus-report/* build-fuzz/corpus-report/
cp tests/fuzz/corpus-report/* build-fuzz/corpus-summary/
cp tests/fuzz/corpus-snapshot/* fixtures/memory/*.json tests/fuzz/corpus-pickle/* \
	build-fuzz/corpus-snapshot/
cp tests/fuzz/corpus-pickle/* build-fuzz/corpus-pickle/
cp tests/fuzz/corpus-nsys/* build-fuzz/corpus-nsys/
cp tests/fuzz/corpus-mcp/* build-fuzz/corpus-mcp/
cd build-fuzz
for t in $targets; do
	name=${t%%:*} dir=${t#*:}
	len=16384
	[ "$name" = nsys ] && len=65536
	echo "fuzz: $name for $secs s" >&2
	tests/fuzz_$name -max_total_time="$secs" -max_len="$len" -rss_limit_mb=2048 -timeout=10 \
		-print_final_stats=1 "$dir"
done
