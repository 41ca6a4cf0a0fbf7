#!/usr/bin/env bash
# The LangGraph interop: the real LangGraph dev server (npm @langchain/langgraph-cli, in
# memory, offline) serving a small ReAct graph (graph.mjs: createReactAgent over
# @langchain/openai's ChatOpenAI) whose model is the streambench mock, loaded with
# `streambench load --dialect langgraph`, content rules on:
#
#   bash interop/langgraph/run.sh      # from anywhere in a clone; needs go, node and npm
#
# It installs the pinned packages with npm into a cache directory (reused when present), links
# them next to graph.mjs, starts the mock and `langgraphjs dev` (TOOLS: every tool the embedded
# scenarios call), and runs the load for DURATION (default 20s) with CLIENTS (default 10)
# clients; interop/cmd/routecheck then requires every rule to pass, R-abort included (the
# dialect sends on_disconnect cancel, so the server must cancel the run's model call when the
# client leaves). Exit 0 pass (or SKIP without node/npm), 1 fail. STREAMBENCH_CACHE overrides
# the cache root (default ${XDG_CACHE_HOME:-~/.cache}/streambench); OUT keeps the results.
#
# The runs go to the thread route, /threads/{thread}/runs/stream (a thread per session, created
# with the run). PATH_TEMPLATE=/runs/stream loads the stateless route instead, which fails
# R-abort on @langchain/langgraph-api 1.5.1: its stream join cancels a disconnected run only
# when it was given a thread id, and the stateless route passes none, so the model call runs
# to its end after the client left (and the mock's open streams grow: the leak check too).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/interop/lib.sh" # $work, $out, $pids, the exit trap, die, need_node, npm_modules, listen_url
need_node "the LangGraph interop installs and runs the dev server with them"
CLIENTS=${CLIENTS:-10}
thread_route='/threads/{thread}/runs/stream'
PATH_TEMPLATE=${PATH_TEMPLATE:-$thread_route}
DURATION=${DURATION:-20s}

modules=$(npm_modules "$here" langgraph .bin/langgraphjs)

cd "$root"
# The dev server writes its in-memory state under the graph's directory: run it from a copy.
app="$work/app"
mkdir -p "$app"
cp "$here/graph.mjs" "$here/langgraph.json" "$here/package.json" "$app/"
ln -sfn "$modules" "$app/node_modules"

start_mock_routecheck
start_langgraph_dev "$app" "$work/server.log"
server=$langgraph_url
echo "run.sh: mock $mock, LangGraph dev server $server (tools $tools)"

# --runtime-metrics -: the dev server has no Prometheus /metrics; the mock's gauges are checked.
echo "run.sh: load: $CLIENTS clients for $DURATION → $server$PATH_TEMPLATE (langgraph, assistant agent)"
rc=0
"$work/streambench" load --dialect langgraph --slug agent --option "path=$PATH_TEMPLATE" --target "$server" --mock "$mock" \
	--runtime-metrics - --leak-per-stream 1 --clients "$CLIENTS" --duration "$DURATION" \
	--out "$out" --run-id langgraph-dev --quiet >"$work/load.log" 2>&1 || rc=$?
grep -E '^(run |errors:|tokens:|violations:|leak check|LEAK|verdict|  - )' "$work/load.log" || true
[ -f "$out/langgraph-dev/summary.json" ] || die "the load wrote no results (exit $rc)"
"$work/routecheck" --name langgraph-dev "$out/langgraph-dev"
if [ -n "${OUT:-}" ]; then
	echo "results: $out/langgraph-dev"
fi

# capture NAME: one stream of scenario NAME at seed 1, as the langgraph dialect requests it (the
# thread route, on_disconnect cancel), into $captured/NAME.sse: the SSE as the server sent it,
# after a first comment line naming the scenario. protocol/langgraph's tests judge the copies
# kept in its testdata (TestRecordedDevServerStreams).
captured=${OUT:+$OUT/captured}
captured=${captured:-$work/captured}
mkdir -p "$captured"
capture() {
	local name=$1 file="$captured/$1.sse" thread
	thread=$(printf '%08x-0000-4000-8000-%012x' "$RANDOM$RANDOM" "$SECONDS$RANDOM")
	printf ': scenario %s seed 1 (the LangGraph dev server, @langchain/langgraph-api, in front of the streambench mock)\n\n' "$name" >"$file"
	curl -fsS -N --max-time 120 -X POST "$server/threads/$thread/runs/stream" -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
		-d "{\"assistant_id\":\"agent\",\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"[[streambench scenario=$name seed=1 session=capture-$name]] go\"}]},\"stream_mode\":[\"messages-tuple\",\"values\",\"updates\"],\"on_disconnect\":\"cancel\",\"if_not_exists\":\"create\",\"multitask_strategy\":\"reject\"}" \
		>>"$file" || die "capture $name: no stream from $server"
}
if [ -n "${OUT:-}" ]; then
	echo "run.sh: streams captured from the server into $captured"
fi
for name in plain-answer preamble-tool thinking-answer provider-error-midstream tool-error parallel-tools tool-chain unicode-answer; do
	capture "$name"
done
