#!/usr/bin/env bash
# The load generator speaking each provider wire to the Portkey gateway, one command:
#   bash interop/portkey/gateway-wires.sh
#
# Same install, fix, mock and gateway as run.sh (lib.sh), no runtime: the load generator is the
# gateway's client. For each wire it plays the default scenario set twice against one mock:
#   direct: mock → load generator (--dialect openai-chat | anthropic-messages; the yardstick)
#   via:    mock → Portkey gateway → load generator (routed by x-portkey-provider: openai |
#           anthropic and x-portkey-custom-host: MOCK/v1)
# then checks (interop/cmd/hopcheck --metric ttft): no errors, no leaks, no violation but
# R-abort (and, on the anthropic wire, R-anthropic-error: Portkey re-wraps an HTTP error body in
# OpenAI's shape, a known finding that must still show), R-abort on the aborts through the
# gateway and no cancel reaching the mock through it, and prints the gateway's added TTFT at
# p50 and p99. Exit 0 pass (or SKIP without node/npm), 1 fail.
#
# Environment: WIRES (default "openai-chat anthropic-messages"; openai-responses, routed as
# openai, is the Responses wire: interop/openai-responses/run.sh runs it), CLIENTS (default 40),
# DURATION (default 20s), WARMUP (default 3s: sessions started then are checked, not measured;
# the freshly started gateway's first requests are slow), OUT, STREAMBENCH_CACHE (as run.sh).
set -euo pipefail
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "SKIP: node/npm not found (the Portkey interop test installs and runs the gateway with them)"
  exit 0
fi
cd "$(dirname "$0")/../.."

WIRES=${WIRES:-openai-chat anthropic-messages}
CLIENTS=${CLIENTS:-40}
DURATION=${DURATION:-20s}
WARMUP=${WARMUP:-3s}
# The install, the fix, the build, the cleanup, the mock and the gateway.
. interop/portkey/lib.sh
echo "== mock $mock, gateway $gateway (Portkey $PORTKEY_VERSION, pid $gwpid)"

failed=()
for wire in $WIRES; do
  case $wire in
  openai-chat | openai-responses) provider=openai known=() ;;
  # Portkey passes /v1/messages and its event stream through byte for byte, but answers a
  # provider's HTTP error with {"error":{"message":"anthropic error: …",…},"provider":…}
  # instead of Anthropic's {"type":"error","error":{…}}: R-anthropic-error on each scripted
  # HTTP error (provider-429, provider-503-after-tool).
  anthropic-messages) provider=anthropic known=(--known R-anthropic-error) ;;
  *) die "WIRES: unknown wire $wire (expected openai-chat, anthropic-messages or openai-responses)" ;;
  esac
  # The gateway has no /metrics (--runtime-metrics -); the mock's gauges are checked (--mock).
  # --leak-per-stream 1 through the gateway: its upstream pool keeps an idle keep-alive
  # connection to the mock (one goroutine and one descriptor there) per stream it carried at
  # once, and still held them 30 s after the load (measured: +24 of each after 40 clients).
  load "$wire-direct" "$mock" --dialect "$wire" --runtime-metrics - --warmup "$WARMUP"
  load "$wire-via" "$gateway" --dialect "$wire" --runtime-metrics - --warmup "$WARMUP" --leak-per-stream 1 \
    --header "x-portkey-provider: $provider" --header "x-portkey-custom-host: $mock/v1"
  echo "== outcome $wire (direct = mock → load; via = mock → Portkey → load); load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
  "$work/hopcheck" --name "portkey($wire)" --metric ttft "${known[@]}" "$out/$wire-direct" "$out/$wire-via" || failed+=("$wire")
done
if [ -n "${OUT:-}" ]; then
  echo "results: $out; logs: $OUT/logs"
fi
[ ${#failed[@]} -eq 0 ] || die "wires failed: ${failed[*]}"
echo "== all wires PASS: $WIRES"
