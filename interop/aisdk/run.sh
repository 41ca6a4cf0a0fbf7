#!/usr/bin/env bash
# The AI SDK interop: a real AI SDK chat route (route.mjs: ai 7 + @ai-sdk/openai 4, streamText →
# UI message stream) whose model is the streambench mock, driven by the load generator:
#
#   bash interop/aisdk/run.sh       # from anywhere in a clone; needs go, node and npm
#
# It installs the pinned packages with npm into a cache directory (reused when present; npm's
# own download cache lives there too, so a clean cache is really clean), links them next to
# route.mjs, starts the mock and the route (TOOLS: every tool the embedded scenarios call), and
# runs `streambench load --dialect ai-sdk --option noReasoning=true` against the route with
# --mock, for DURATION (default 20s) with CLIENTS (default 20) clients. interop/cmd/routecheck
# then requires every rule to pass (R-abort included: the route wires the request's close to
# abortSignal) and prints the route's cancel latency p50/p99 from the mock's session records.
# Exit 0 pass (or SKIP without node/npm), 1 fail.
#
# AISDK_GO_DRIVER=1 also runs the Go driver (aisdk_test.go: each scenario once, the abort
# scenarios one at a time for the idle cancel latency; AISDK_RECORD_DIR records the frames
# protocol/aisdk replays). STREAMBENCH_CACHE overrides the cache root (default
# ${XDG_CACHE_HOME:-~/.cache}/streambench); OUT keeps the results there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/interop/lib.sh" # $work, $out, $pids, the exit trap, die, need_node, npm_modules, listen_url
need_node "the AI SDK interop installs and runs the route with them"
CLIENTS=${CLIENTS:-20}
DURATION=${DURATION:-20s}

# The packages declare node >= 22; they run on node 20 (checked), so the engine check only warns.
modules=$(npm_modules "$here" aisdk ai/package.json)
ln -sfn "$modules" "$here/node_modules"

cd "$root"

start_mock_routecheck
MOCK_URL=$mock PORT=0 TOOLS=$tools node "$here/route.mjs" >"$work/route.log" 2>&1 &
pids+=($!)
route=$(listen_url "$work/route.log" "$!" 'listening')
echo "run.sh: mock $mock, route $route (tools $tools)"

# --option noReasoning=true: @ai-sdk/openai's chat model drops the mock's reasoning_content.
# --runtime-metrics -: the route has no /metrics; the mock's gauges are checked (--mock).
# --leak-per-stream 1: node's fetch (undici) keeps an idle keep-alive connection to the mock
# (one goroutine and one descriptor there) per provider stream it carried at once, for ~4 s.
echo "run.sh: load: $CLIENTS clients for $DURATION → $route (ai-sdk)"
"$work/streambench" load --dialect ai-sdk --option noReasoning=true --target "$route" --mock "$mock" \
	--runtime-metrics - --leak-per-stream 1 --clients "$CLIENTS" --duration "$DURATION" \
	--out "$out" --run-id aisdk-route --quiet >"$work/load.log" 2>&1 &
lp=$!
pids+=("$lp")
rc=0
wait "$lp" || rc=$?
grep -E '^(run |errors:|tokens:|violations:|leak check|LEAK|verdict|  - )' "$work/load.log" || true
[ -f "$out/aisdk-route/summary.json" ] || die "the load wrote no results (exit $rc)"
echo "run.sh: outcome; load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown) on $(nproc 2>/dev/null || echo '?') CPUs"
"$work/routecheck" --name ai-sdk-route "$out/aisdk-route"
if [ -n "${OUT:-}" ]; then
	echo "results: $out/aisdk-route"
fi

if [ -n "${AISDK_GO_DRIVER:-}" ]; then
	echo "run.sh: the Go driver (aisdk_test.go)"
	set +e
	go test ./interop/aisdk/ -run 'TestAISDKRoute' -count=1 -v 2>&1 | grep -v -e '^=== '
	exit "${PIPESTATUS[0]}"
fi
