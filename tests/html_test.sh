#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The pictures: the HTML report (goldens; one file with nothing to fetch; hostile names
# escaped; opened in headless Chromium - the screenshot is not blank, the DOM holds the
# timelines, the steps, the idle by cause and the finding titles, the roofline's points and roof
# against the report's peaks and the ops table, the console has no errors)
# and `tracedoc annotate` (every shared trace: read back with the original counts plus the added
# events, the original bytes kept, Perfetto's JSON rules held by what was added).
# The browser part is skipped, saying so, without chromium (scripts/setup.sh --test installs it).
# TD_UPDATE_GOLDEN=1 rewrites the goldens (review the diff).
# usage: html_test.sh TRACEDOC GEN_TRACE REPO_ROOT
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin=$(realpath "$1")
gen=$(realpath "$2")
cd "$3" || exit 2
skipped=0

# a trace whose names try to break out of HTML and SVG
python3 - "$tmp/hostile.json" <<'PY'
import json, sys
bad = "</script><img src=x onerror=alert(1)><svg onload=alert(2)>\"'&amp;</title></svg>"
ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000},
      {"ph": "X", "cat": "cpu_op", "name": "op " + bad, "pid": 1, "tid": 1, "ts": 10, "dur": 500}]
for k in range(3):
    c = 100 + k
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
               "ts": 20 + 100 * k, "dur": 5, "args": {"correlation": c}})
    ev.append({"ph": "X", "cat": "kernel", "name": "kernel " + bad, "pid": 0, "tid": 7,
               "ts": 30 + 100 * k, "dur": 40, "args": {"correlation": c, "device": 0, "stream": 7}})
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY

# 1. goldens, the same bytes twice
R=fixtures/rules
mkdir "$tmp/job" && "$gen" --ranks 4 --straggler 2 --delay 2 --steps 3 --ops 20 -o "$tmp/job" >/dev/null
for f in mini-kineto.json rules/dataloader.json rules/memory.json roofline/inductor.json; do
	name=diagnose-$(basename "$f" .json).html
	"$bin" diagnose --format html "fixtures/$f" >"$tmp/a"
	"$bin" diagnose --format html "fixtures/$f" >"$tmp/b"
	compare_golden "$name" "$tmp/a"
	if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "$name not deterministic"; fi
done
(cd "$tmp" && "$bin" diagnose --format html job) >"$tmp/job.html"
compare_golden job-late.html "$tmp/job.html"
"$bin" gate --format html --baseline $R/sync-nearmiss.json $R/sync.json >"$tmp/gate.html"
compare_golden gate-sync.html "$tmp/gate.html"

# 2. one file, nothing to fetch, every name escaped
"$bin" diagnose --format html "$tmp/hostile.json" >"$tmp/hostile.html"
for h in "$tmp"/*.html; do
	# a tag that loads or runs something, or a stylesheet that fetches (escaped text has no '<')
	if grep -Eqi '<(script|img|link|iframe|object|embed)\b|<[a-z][^>]*[[:space:]](src|href|on[a-z]+)=|@import|url\(' "$h"; then
		bad "$h loads or runs something:"
		grep -Eoi '<(script|img|link|iframe|object|embed)\b|<[a-z][^>]*[[:space:]](src|href|on[a-z]+)=.{0,20}|@import|url\(' "$h" | head -3
	else ok; fi
done
if grep -q '&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;' "$tmp/hostile.html" &&
	! grep -q 'onerror=alert(1)>' "$tmp/hostile.html"; then ok
else bad "hostile names are not escaped in the HTML"; fi

# 3. in a real browser
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
	echo "SKIPPED: the browser checks: chromium not found (scripts/setup.sh --test installs it)"
	skipped=1
else
	S=../shared/traces
	pages="hostile:$tmp/hostile.html job:$tmp/job.html inductor:$tmp/inductor.html"
	# the roofline chart without ../shared: Triton launches and an eager GEMM on an H100
	"$bin" diagnose --format html -o "$tmp/inductor.html" fixtures/roofline/inductor.json
	"$bin" diagnose --format json -o "$tmp/inductor.report.json" fixtures/roofline/inductor.json
	"$bin" ops --fold-runtime --format json fixtures/roofline/inductor.json >"$tmp/inductor.ops.json"
	if [ -d "$S" ]; then
		for t in resnet50-nw0.pt.trace v100-ns-rank0.pt.trace ddp-v100-rank1 b200-eager-decode; do
			"$bin" diagnose --format html -o "$tmp/$t.html" "$S/$t.json.gz"
			"$bin" diagnose --format json -o "$tmp/$t.report.json" "$S/$t.json.gz"
			"$bin" ops --fold-runtime --format json "$S/$t.json.gz" >"$tmp/$t.ops.json"
			pages="$pages $t:$tmp/$t.html"
		done
	else
		echo "SKIPPED: the browser checks on real traces ($S not found)"
	fi
	for p in $pages; do
		name=${p%%:*} page=${p#*:}
		flags="--headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars
			--user-data-dir=$tmp/chrome-$name --window-size=1000,1600"
		timeout 120 "$browser" $flags --enable-logging=stderr --v=0 --screenshot="$tmp/$name.png" \
			"file://$page" >"$tmp/$name.shot.log" 2>&1
		timeout 120 "$browser" $flags --dump-dom "file://$page" >"$tmp/$name.dom" 2>"$tmp/$name.dom.log"
		# console errors are logged as CONSOLE lines
		if grep -q 'CONSOLE' "$tmp/$name.shot.log" "$tmp/$name.dom.log"; then
			bad "$name: console output:"; grep CONSOLE "$tmp/$name".*log | head -3
		else ok; fi
		if python3 tests/html_check.py "$name" "$tmp/$name.png" "$tmp/$name.dom" "$page" \
			"${tmp}/$name.report.json" "${tmp}/$name.ops.json"; then ok; else bad "$name in the browser"; fi
		# the layout, measured by the browser: nothing sticks out of a finding's card, and
		# the page does not scroll sideways (wide tables scroll in their own box)
		{ cat "$page"; cat <<'EOF'
<script>addEventListener('load', () => {
  const bad = [];
  document.querySelectorAll('.finding').forEach(c => {
    const r = c.getBoundingClientRect();
    c.querySelectorAll('*').forEach(e => {
      if (e.getBoundingClientRect().right > r.right + 1) bad.push(e.tagName);
    });
  });
  const d = document.documentElement, p = document.createElement('pre');
  p.id = 'td-layout';
  p.textContent = 'cards ' + bad.length + ' page ' + (d.scrollWidth > d.clientWidth ? 'wide' : 'fits');
  document.body.appendChild(p);
});</script>
EOF
		} >"$tmp/$name.layout.html"
		timeout 120 "$browser" $flags --virtual-time-budget=3000 --dump-dom \
			"file://$tmp/$name.layout.html" >"$tmp/$name.layout.dom" 2>/dev/null
		if grep -q 'id="td-layout">cards 0 page fits<' "$tmp/$name.layout.dom"; then ok; else
			bad "$name: layout: $(grep -o 'id="td-layout">[^<]*' "$tmp/$name.layout.dom")"; fi
	done
fi

# 4. annotate: the trace unchanged plus the tracedoc process, read back by stats
if [ -d ../shared/traces ]; then
	for f in ../shared/traces/*.gz ../shared/traces/dlrm-8rank/worker0_*.json; do
		b=$(basename "$f"); b=${b%.gz}
		case $b in cpu-only*) ext=json.zst ;; *) ext=json ;; esac
		if "$bin" annotate "$f" -o "$tmp/ann.$ext" 2>"$tmp/ann.err"; then ok; else
			bad "annotate $b"; cat "$tmp/ann.err"; continue; fi
		if python3 tests/annotate_check.py "$bin" "$f" "$tmp/ann.$ext" "$tmp/ann.err"; then ok
		else bad "annotate $b: the output"; fi
	done
fi
for o in a.json.gz a.json.zst; do
	"$bin" annotate $R/dataloader.json -o "$tmp/$o" 2>"$tmp/ann.err" &&
		python3 tests/annotate_check.py "$bin" $R/dataloader.json "$tmp/$o" "$tmp/ann.err" && ok ||
		bad "annotate to $o"
done
if "$bin" annotate $R/dataloader.json -o "$tmp/x.txt" 2>"$tmp/err"; then bad "annotate -o x.txt"
elif grep -q 'must end in .json, .json.gz or .json.zst' "$tmp/err"; then ok; else bad "annotate suffix message"; fi
if "$bin" annotate - -o "$tmp/x.json" <$R/dataloader.json 2>"$tmp/err"; then bad "annotate from stdin"
elif grep -q 'not stdin' "$tmp/err"; then ok; else bad "annotate stdin message"; fi
if "$bin" annotate fixtures/odd/truncated.json -o "$tmp/x.json" 2>"$tmp/err"; then bad "annotate a partial trace"
elif grep -q 'a partial trace' "$tmp/err"; then ok; else bad "annotate partial message"; cat "$tmp/err"; fi

echo "html tests: $pass passed, $fail failed$([ $skipped = 1 ] && echo ', browser checks skipped')"
[ "$fail" = 0 ]
