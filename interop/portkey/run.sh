#!/usr/bin/env bash
# The standing Portkey interop test, one command: bash interop/portkey/run.sh
#
# Installs @portkey-ai/gateway@1.15.2 from npm into a cache directory (reused when present),
# applies the one-option fix its stock bundle needs, builds streambench, and plays the same
# workload twice against one mock:
#   direct: mock → reference runtime → load generator                 (the yardstick)
#   via:    mock → Portkey gateway → reference runtime → load generator
# then checks (interop/cmd/hopcheck): no errors, no leaks, no violation but R-abort, R-abort on
# every abort whose provider stream was open and no cancel reaching the mock through the
# gateway (it never cancels its upstream request when its client leaves), and prints the
# gateway's TTFC overhead at p50 and p99. Exit 0 pass (or SKIP without node/npm), 1 fail.
#
# Environment: CLIENTS (default 40), DURATION (default 20s), OUT (keep results there; default a
# temporary directory, removed), STREAMBENCH_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/streambench).
set -euo pipefail
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node/npm not found (the Portkey interop test installs and runs the gateway with them)"
  exit 0
fi
cd "$(dirname "$0")/../.."

PORTKEY_VERSION=1.15.2
CLIENTS=${CLIENTS:-40}
DURATION=${DURATION:-20s}

die() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- the gateway, installed once per version --------------------------------------------------
cache=${STREAMBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streambench}/portkey-$PORTKEY_VERSION
bundle=$cache/node_modules/@portkey-ai/gateway/build/start-server.js
if [ ! -f "$bundle" ]; then
  echo "== installing @portkey-ai/gateway@$PORTKEY_VERSION into $cache"
  mkdir -p "$(dirname "$cache")"
  staging=$(mktemp -d "$cache.partial.XXXXXX")
  # --ignore-scripts: its postinstall (patch-package) has no patches to apply in the published
  # package; the install is then the same whatever npm's script policy.
  if ! npm install --prefix "$staging" --no-audit --no-fund --ignore-scripts --loglevel=error \
      "@portkey-ai/gateway@$PORTKEY_VERSION" >"$staging.log" 2>&1; then
    cat "$staging.log" >&2
    rm -rf "$staging" "$staging.log"
    die "npm install @portkey-ai/gateway@$PORTKEY_VERSION failed (output above)"
  fi
  rm -f "$staging.log"
  rm -rf "$cache"
  mv "$staging" "$cache" # only a complete install is ever reused
fi
installed=$(node -p "require('$cache/node_modules/@portkey-ai/gateway/package.json').version")
[ "$installed" = "$PORTKEY_VERSION" ] || die "$cache holds @portkey-ai/gateway $installed, not $PORTKEY_VERSION: remove it and run again"

# The fix: the stock 1.15.2 bundle fails every streamed response with 500 / "TypeError:
# immutable"; overrideGlobalObjects: false on its serve({...}) call fixes it (see the script).
node interop/portkey/patch-gateway.cjs "$bundle" || die "could not apply the overrideGlobalObjects fix to $bundle"

# --- streambench -------------------------------------------------------------------------------
work=$(mktemp -d)
out=${OUT:-$work/results}
pids=()
cleanup() {
  local rc=$?
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  # streambench stops gracefully on the first signal (a load drains for its --grace) and at
  # once on the second: an interrupted test should not wait for that.
  sleep 0.5
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if [ "$rc" -ne 0 ]; then
    for log in "$work"/*.log; do
      [ -s "$log" ] && { echo "--- $(basename "$log") (last 20 lines)" >&2; tail -n 20 "$log" >&2; }
    done
  fi
  if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT/logs" && cp "$work"/*.log "$OUT/logs/" 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "== building streambench"
go build -o "$work/streambench" ./cmd/streambench
go build -o "$work/hopcheck" ./interop/cmd/hopcheck

# listening_url LOG PID: the http://host:port a streambench process printed once it listens.
listening_url() {
  local log=$1 pid=$2
  for _ in $(seq 100); do
    if url=$(grep -o -m1 'listening on http://[0-9.:]*' "$log" 2>/dev/null); then
      echo "${url#listening on }"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || die "$(basename "$log" .log) exited before listening: $(tail -n 5 "$log")"
    sleep 0.1
  done
  die "$(basename "$log" .log) did not listen within 10 s"
}

start() { # start NAME COMMAND...: runs COMMAND with its output in $work/NAME.log
  local name=$1
  shift
  "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
}

start mock "$work/streambench" mock --addr 127.0.0.1:0
mock=$(listening_url "$work/mock.log" "${pids[-1]}")

# The gateway takes a port number, not :0: ask the kernel for a free one, and try again if it
# is taken before the gateway binds it. (It listens on every interface, as stock; only this
# script's loopback traffic reaches it.)
gateway=""
for attempt in 1 2 3; do
  port=$(node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
  start gateway node "$bundle" "--port=$port" --headless
  gwpid=${pids[-1]}
  for _ in $(seq 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      gateway=http://127.0.0.1:$port
      break
    fi
    kill -0 "$gwpid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$gateway" ] && break
  kill "$gwpid" 2>/dev/null || true
  echo "gateway did not come up on port $port (attempt $attempt): $(tail -n 3 "$work/gateway.log")" >&2
done
[ -n "$gateway" ] || die "the Portkey gateway did not start"

# Both runtimes talk HTTP/1.1 to their provider (the gateway speaks nothing else), so the only
# difference between the two runs is the gateway hop. The gateway routes by header: provider
# openai, at the mock's /v1.
start runtime-direct "$work/streambench" runtime --addr 127.0.0.1:0 --provider "$mock" --provider-h2c=false
direct=$(listening_url "$work/runtime-direct.log" "${pids[-1]}")
start runtime-via "$work/streambench" runtime --addr 127.0.0.1:0 --provider "$gateway" --provider-h2c=false \
  --provider-header 'x-portkey-provider: openai' --provider-header "x-portkey-custom-host: $mock/v1"
via=$(listening_url "$work/runtime-via.log" "${pids[-1]}")
echo "== mock $mock, gateway $gateway (Portkey $PORTKEY_VERSION, pid $gwpid), runtime direct $direct, runtime via gateway $via"

# load NAME TARGET: the default mix on the openai-all deployment (the gateway is set up for the
# openai wire). --leak-grace 30s: through the gateway, the mock keeps playing the streams of
# aborted sessions (nobody cancels them) for up to ~15 s; the check passes as soon as the
# gauges are back, so a clean run does not wait. --leak-per-stream 2: over HTTP/1.1 the
# runtime's provider pool keeps an idle connection (two goroutines, one descriptor) per stream
# it carried at once, for 90 s.
load() {
  local name=$1 target=$2
  echo "== load $name: $CLIENTS clients for $DURATION → $target"
  # In the background and waited for, so a signal to this script stops it at once (bash runs
  # traps only between foreground commands) and the cleanup ends the load too.
  "$work/streambench" load --target "$target" --slug openai-all --mock "$mock" \
    --clients "$CLIENTS" --duration "$DURATION" --leak-grace 30s --leak-per-stream 2 --out "$out" --run-id "$name" --quiet >"$work/load-$name.log" 2>&1 &
  local lp=$! rc=0
  pids+=("$lp")
  wait "$lp" || rc=$? # the load exits 1 through the gateway (R-abort): hopcheck judges
  grep -E '^(run |errors:|violations:|leak check|LEAK|verdict|  - )' "$work/load-$name.log" || true
  [ -f "$out/$name/summary.json" ] || die "load $name wrote no results (exit $rc): $(tail -n 5 "$work/load-$name.log")"
}

fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
gw_fds_before=$(fds "$gwpid")
load direct "$direct"
load via "$via"
echo "== gateway open descriptors: $gw_fds_before before the loads, $(fds "$gwpid") after (information; Portkey has no /metrics)"

echo "== outcome (direct = mock → runtime; via = mock → Portkey → runtime); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
"$work/hopcheck" --name portkey "$out/direct" "$out/via"
if [ -n "${OUT:-}" ]; then
  echo "results: $out/direct, $out/via; logs: $OUT/logs"
fi
