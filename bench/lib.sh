# SPDX-License-Identifier: MIT
# What the benchmark scripts share; sourced from the repository root, with rss set to the
# rssrun binary.

# best_of N CMD...: runs CMD N times under rssrun; sets best to the fastest run's seconds (the
# machine is shared, and the minimum is the figure least disturbed by other load) and maxkb
# to the largest peak RSS (the caller declares both local). Run in the caller's shell, so that
# set -e stops the script when a run fails.
best_of() {
	local n=$1 i line secs kb
	shift
	best=""
	maxkb=0
	for i in $(seq "$n"); do
		line=$("$rss" "$@" 2>&1 >/dev/null | grep '^rssrun:')
		secs=$(echo "$line" | sed 's/rssrun: \([0-9.]*\) s.*/\1/')
		kb=$(echo "$line" | sed 's/.*, \([0-9]*\) KB/\1/')
		if [ -z "$best" ] || awk -v a="$secs" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$secs
		fi
		if [ "$kb" -gt "$maxkb" ]; then
			maxkb=$kb
		fi
	done
}
