#!/usr/bin/env bash
# crashloop.sh: run many small `streambench run --fault no-reset` runs back to back and stop at
# the first crash, keeping its log (issue #28: one run in 12 died with "fatal error: found bad
# pointer in Go heap").
#
#   scripts/crashloop.sh            # 200 runs
#   N=10 scripts/crashloop.sh       # 10 runs
#   RACE=1 N=5 scripts/crashloop.sh # the binary built with -race
#
# Environment:
#   N         runs (default 200)
#   RACE=1    build with -race (GORACE defaults to halt_on_error=1: the first race ends the run)
#   BIN       a streambench binary to use instead of building one
#   CLIENTS   --clients (default 20)
#   DURATION  --duration (default 3s)
#   GRACE     --grace (default 5s)
#   TIMEOUT   seconds before a run counts as hung (default 120)
#   KEEP      directory for the logs of crashed runs (default: a new one under /tmp)
#   Extra arguments are passed to every `streambench run`.
#
# A run that exits 0 or 1 is fine (1 is the verdict: --fault no-reset makes violations, so 1 is
# expected). A crash is any other exit code (2: a Go fatal error or unrecovered panic; 66: the
# race detector; 124: hung past TIMEOUT; 128+N: killed by signal N), or output containing
# "fatal error", "panic:", "found bad pointer" or "DATA RACE" whatever the exit code. The loop
# stops at the first crash and keeps its log; the script exits 1 if there was one.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${N:-200}
CLIENTS=${CLIENTS:-20}
DURATION=${DURATION:-3s}
GRACE=${GRACE:-5s}
TIMEOUT=${TIMEOUT:-120}
export GOTRACEBACK=${GOTRACEBACK:-all} # every goroutine's stack in a crash's log

work=$(mktemp -d "${TMPDIR:-/tmp}/crashloop.XXXXXX")
trap 'rm -rf "$work"' EXIT
keep=${KEEP:-$(mktemp -d "${TMPDIR:-/tmp}/crashloop-logs.XXXXXX")}
mkdir -p "$keep"

bin=${BIN:-}
if [ -z "$bin" ]; then
  bin=$work/streambench
  build=(go build -o "$bin")
  if [ "${RACE:-}" = 1 ]; then
    build+=(-race)
    export GORACE=${GORACE:-halt_on_error=1}
  fi
  echo "building: ${build[*]} ./cmd/streambench"
  "${build[@]}" ./cmd/streambench
fi

crashes=0 verdict1=0 pass0=0 runs=0
start=$(date +%s.%N)
for i in $(seq 1 "$N"); do
  log=$work/i$i.log
  t0=$(date +%s.%N)
  set +e
  timeout --kill-after=10 "$TIMEOUT" "$bin" run --fault no-reset --clients "$CLIENTS" \
    --duration "$DURATION" --grace "$GRACE" --out "$work/out" --run-id "i$i" --quiet "$@" >"$log" 2>&1
  rc=$?
  set -e
  runs=$i
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  rm -rf "$work/out/i$i"
  crash=""
  case $rc in
    0) pass0=$((pass0 + 1)) ;;
    1) verdict1=$((verdict1 + 1)) ;;
    124 | 137) crash="hung past ${TIMEOUT}s (exit $rc)" ;;
    *) crash="exit $rc" ;;
  esac
  pat=$(grep -o -E 'fatal error|panic:|found bad pointer|DATA RACE' "$log" | head -n1 || true)
  if [ -n "$pat" ]; then
    crash="${crash:+$crash, }output has \"$pat\""
  fi
  printf 'run %d/%d: exit %d in %.1fs%s\n' "$i" "$N" "$rc" "$secs" "${crash:+  CRASH: $crash}"
  if [ -n "$crash" ]; then
    crashes=$((crashes + 1))
    cp "$log" "$keep/i$i.log"
    echo "crash log kept: $keep/i$i.log"
    break
  fi
done
total=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
printf '%d runs, %d crashes (exit 1, the expected verdict: %d; exit 0: %d); %.1fs in all, %.1fs per run\n' \
  "$runs" "$crashes" "$verdict1" "$pass0" "$total" "$(awk -v t="$total" -v n="$runs" 'BEGIN { print t / n }')"
if [ "$crashes" -gt 0 ]; then
  exit 1
fi
rmdir "$keep" 2>/dev/null || true
