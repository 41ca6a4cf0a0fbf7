#!/usr/bin/env bash
# The Ollama Responses interop: Ollama's own implementation of OpenAI's Responses API
# (github.com/ollama/ollama v0.17.4, middleware.ResponsesMiddleware: what `ollama serve`
# answers POST /v1/responses with) in front of a scripted model on Ollama's native chat wire
# (main.go, a Go module of its own), loaded with `streambench load --dialect openai-responses`,
# content rules on:
#
#   bash interop/ollama-responses/run.sh      # from anywhere in a clone; needs go only
#
# interop/cmd/routecheck then requires every rule to pass but Ollama's known findings
# (docs/INTEROP.md, "Ollama's Responses API"), reported and not failing: R-responses-item,
# R-responses-text and R-responses-content (a preamble's message item never closed, the
# function_call item on its output_index; thinking as summary text without a summary part),
# and sessions truncated where the provider fails mid-stream (Ollama drops the error). Any
# other rule or error outcome fails. Last it captures one stream per scenario into
# $OUT/captured (protocol/openairesponses/testdata/ollama keeps such copies).
# Exit 0 pass, 1 fail. CLIENTS (default 10), DURATION (default 15s), OUT keeps the results.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
command -v go >/dev/null || { echo "run.sh: go is not installed" >&2; exit 2; }
CLIENTS=${CLIENTS:-10}
DURATION=${DURATION:-15s}

source "$root/interop/lib.sh" # $work, $out, $pids, the exit trap, die

echo "run.sh: building streambench, routecheck and the Ollama server (its module's first build downloads Ollama's dependencies)"
start=$SECONDS
(cd "$root" && go build -o "$work/streambench" ./cmd/streambench && go build -o "$work/routecheck" ./interop/cmd/routecheck)
(cd "$here" && go build -o "$work/ollama-responses" .)
echo "run.sh: built in $((SECONDS - start)) s"

"$work/ollama-responses" --addr 127.0.0.1:0 >"$work/server.log" 2>&1 &
pids+=($!)
server=$(listen_url "$work/server.log" "$!" 'listening on')

# --runtime-metrics -: the server has no Prometheus /metrics; no mock: no cancel latency.
echo "run.sh: load: $CLIENTS clients for $DURATION → $server/v1/responses (openai-responses)"
rc=0
"$work/streambench" load --dialect openai-responses --target "$server" --runtime-metrics - \
	--clients "$CLIENTS" --duration "$DURATION" --out "$out" --run-id ollama-responses --quiet >"$work/load.log" 2>&1 || rc=$?
grep -E '^(run |errors:|tokens:|violations:|verdict|streambench load:)' "$work/load.log" || true
[ -f "$out/ollama-responses/summary.json" ] || die "the load wrote no results (exit $rc)"
[ "$rc" -ne 0 ] || die "the load passed: Ollama's known findings were not reported"
verdict=0
"$work/routecheck" --name ollama-responses --no-mock --known R-responses-item --known R-responses-text \
	--known R-responses-content --known-outcome truncated "$out/ollama-responses" || verdict=1

captured=${OUT:+$OUT/captured}
captured=${captured:-$work/captured}
mkdir -p "$captured"
for name in plain-answer thinking-answer unicode-answer preamble-tool parallel-tools tool-chain tool-error provider-error-midstream; do
	file="$captured/$name.sse"
	printf ': scenario %s seed 1 (Ollama v0.17.4 middleware.ResponsesMiddleware before the scripted model, interop/ollama-responses)\n\n' "$name" >"$file"
	curl -fsS -N --max-time 60 -X POST "$server/v1/responses" -H 'Content-Type: application/json' \
		-d "{\"model\":\"streambench-mock\",\"stream\":true,\"input\":[{\"role\":\"user\",\"content\":\"[[streambench scenario=$name seed=1 session=capture-$name]] go\"}]}" \
		>>"$file" || die "capture $name: no stream from $server"
done
if [ -n "${OUT:-}" ]; then
	echo "run.sh: streams captured into $captured"
	echo "results: $out/ollama-responses"
fi
exit "$verdict"
