#!/usr/bin/env bash
# Runs the README's test command (go test ./...) N times (default 3) while a CPU hog keeps every
# core busy, and says how each run went: the proof that no test depends on an idle machine
# (issue 22). The hog is stress-ng when installed (apt-get install stress-ng), else one busy
# shell loop per core. Each run's output is kept under $KEEP (default a temp directory).
#
#   scripts/test-under-load.sh            # 3 runs, a hog per core
#   N=1 HOGS=6 scripts/test-under-load.sh # one run, six hogs on a 2-core machine
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-3}
cores=$(nproc)
HOGS=${HOGS:-$cores}
keep=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/test-under-load.XXXXXX")}
mkdir -p "$keep"

pids=()
stop_hogs() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_hogs EXIT
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$HOGS" --quiet &
  pids+=($!)
  hog="stress-ng --cpu $HOGS"
else
  for _ in $(seq 1 "$HOGS"); do
    (while :; do :; done) &
    pids+=($!)
  done
  hog="$HOGS busy shell loops"
fi
echo "hog: $hog on $cores cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"

failed=0
for i in $(seq 1 "$N"); do
  log=$keep/run$i.json
  t0=$(date +%s)
  set +e
  go test -count=1 -json ./... >"$log" 2>&1
  rc=$?
  set -e
  secs=$(($(date +%s) - t0))
  fails=$(grep -o '"Action":"fail","Package":"[^"]*","Test":"[^"]*"' "$log" | sed 's/.*"Package":"\([^"]*\)","Test":"\([^"]*\)"/\1 \2/' | sort -u || true)
  slowest=$(grep -o '"Action":"pass","Package":"[^"]*","Elapsed":[0-9.]*}' "$log" |
    sed 's/.*"Package":"github.com\/streambench\/streambench\/\{0,1\}\([^"]*\)","Elapsed":\([0-9.]*\)}/\2 \1/' | sort -rn | head -3 | tr '\n' ';' || true)
  echo "run $i/$N: exit $rc in ${secs}s (load average $(cut -d' ' -f1-3 /proc/loadavg)); slowest packages: $slowest"
  if [ "$rc" -ne 0 ]; then
    failed=$((failed + 1))
    echo "  failed tests:"
    echo "$fails" | sed 's/^/    /'
  fi
done
echo "$N runs under load, $failed failed; logs in $keep"
[ "$failed" -eq 0 ]
