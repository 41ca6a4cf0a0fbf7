# Shared by the Portkey interop scripts (run.sh, gateway-wires.sh); source it from bash with
# set -euo pipefail, from the repository root. It sources interop/lib.sh ($work, $out, $pids,
# the cleanup trap, die), installs @portkey-ai/gateway@1.15.2 into a cache directory (reused),
# applies the overrideGlobalObjects fix, builds streambench and hopcheck into $work, and starts
# a mock ($mock) and the gateway ($gateway, pid $gwpid). It defines listening_url, start and
# fds for the caller. Environment: STREAMBENCH_CACHE, OUT (see the callers).
. interop/lib.sh

PORTKEY_VERSION=1.15.2

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

echo "== building streambench"
go build -o "$work/streambench" ./cmd/streambench
go build -o "$work/hopcheck" ./interop/cmd/hopcheck

# listening_url LOG PID: the http://host:port a streambench process printed once it listens.
listening_url() { listen_url "$1" "$2" 'listening on'; }

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


# load NAME TARGET [FLAG...]: a load of $CLIENTS clients for $DURATION against TARGET, judged
# against the mock, results in $out/NAME. --leak-grace 30s: through the gateway, the mock keeps
# playing the streams of aborted sessions (nobody cancels them) for up to ~15 s; the check
# passes as soon as the gauges are back, so a clean run does not wait.
load() {
  local name=$1 target=$2
  shift 2
  echo "== load $name: $CLIENTS clients for $DURATION → $target $*"
  # In the background and waited for, so a signal to this script stops it at once (bash runs
  # traps only between foreground commands) and the cleanup ends the load too.
  "$work/streambench" load --target "$target" --mock "$mock" "$@" \
    --clients "$CLIENTS" --duration "$DURATION" --leak-grace 30s --out "$out" --run-id "$name" --quiet >"$work/load-$name.log" 2>&1 &
  local lp=$! rc=0
  pids+=("$lp")
  wait "$lp" || rc=$? # the load exits 1 through the gateway (R-abort): hopcheck judges
  grep -E '^(run |errors:|violations:|leak check|LEAK|verdict|  - )' "$work/load-$name.log" || true
  [ -f "$out/$name/summary.json" ] || die "load $name wrote no results (exit $rc): $(tail -n 5 "$work/load-$name.log")"
}

fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
