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

CLIENTS=${CLIENTS:-40}
DURATION=${DURATION:-20s}
# The install, the fix, the build, the cleanup, the mock and the gateway.
. interop/portkey/lib.sh

# Both runtimes talk HTTP/1.1 to their provider (the gateway speaks nothing else), so the only
# difference between the two runs is the gateway hop. The gateway routes by header: provider
# openai, at the mock's /v1.
start runtime-direct "$work/streambench" runtime --addr 127.0.0.1:0 --provider "$mock" --provider-h2c=false
direct=$(listening_url "$work/runtime-direct.log" "${pids[-1]}")
start runtime-via "$work/streambench" runtime --addr 127.0.0.1:0 --provider "$gateway" --provider-h2c=false \
  --provider-header 'x-portkey-provider: openai' --provider-header "x-portkey-custom-host: $mock/v1"
via=$(listening_url "$work/runtime-via.log" "${pids[-1]}")
echo "== mock $mock, gateway $gateway (Portkey $PORTKEY_VERSION, pid $gwpid), runtime direct $direct, runtime via gateway $via"

# The default mix on the openai-all deployment (the gateway is set up for the openai wire).
# --leak-per-stream 2: over HTTP/1.1 the runtime's provider pool keeps an idle connection (two
# goroutines, one descriptor) per stream it carried at once, for 90 s.
gw_fds_before=$(fds "$gwpid")
load direct "$direct" --slug openai-all --leak-per-stream 2
load via "$via" --slug openai-all --leak-per-stream 2
echo "== gateway open descriptors: $gw_fds_before before the loads, $(fds "$gwpid") after (information; Portkey has no /metrics)"

echo "== outcome (direct = mock → runtime; via = mock → Portkey → runtime); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
"$work/hopcheck" --name portkey "$out/direct" "$out/via"
if [ -n "${OUT:-}" ]; then
  echo "results: $out/direct, $out/via; logs: $OUT/logs"
fi
