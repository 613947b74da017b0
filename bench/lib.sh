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

# one run: "SECONDS KB" of CMD
once() {
	"$rss" "$@" 2>&1 >/dev/null | sed -n 's/^rssrun: \([0-9.]*\) s, \([0-9]*\) KB$/\1 \2/p'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# pair LABEL TARGET B_CMD -- A_CMD: A and B in turn, $runs times each after one warm-up; prints
# the medians, A's speed as a multiple of B's (B's time / A's time) against TARGET, A's peak RSS
# (the caller sets runs and bytes, the trace's size)
pair() {
	local label=$1 target=$2 i a b ta="" tb="" kb=0 x
	shift 2
	local bcmd=() acmd=()
	while [ "$1" != "--" ]; do bcmd+=("$1"); shift; done
	shift
	acmd=("$@")
	once "${bcmd[@]}" >/dev/null; once "${acmd[@]}" >/dev/null
	for i in $(seq "$runs"); do
		b=$(once "${bcmd[@]}"); a=$(once "${acmd[@]}")
		tb="$tb ${b% *}"; ta="$ta ${a% *}"
		[ "${a#* }" -gt "$kb" ] && kb=${a#* }
	done
	ta=$(echo $ta | tr ' ' '\n' | median); tb=$(echo $tb | tr ' ' '\n' | median)
	x=$(awk -v a="$ta" -v b="$tb" 'BEGIN { printf "%.2f", b / a }')
	awk -v l="$label" -v a="$ta" -v b="$tb" -v x="$x" -v t="$target" -v kb="$kb" -v by="$bytes" 'BEGIN {
		printf "%-52s %6.2f s vs %6.2f s  %5.2fx (target >= %gx) %s  %6.1f MB RSS\n",
		       l, a, b, x, t, (x >= t ? "PASS" : "MISS"), kb / 1024 }'
}
