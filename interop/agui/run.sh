#!/usr/bin/env bash
# The AG-UI interop: a real AG-UI server from npm, @ag-ui/langgraph's LangGraphAgent (the
# adapter CopilotKit puts in front of LangGraph) served as AG-UI by server.mjs, in front of the
# LangGraph dev server running interop/langgraph/graph.mjs, whose model is the streambench mock;
# loaded with `streambench load --dialect ag-ui`, content rules on, then judged by routecheck;
# then a few streams captured from the server judged by both the checker and @ag-ui/client's
# verifyEvents (verify.mjs; TestCapturedStreams), and TestVerifyEventsAgrees (the recorded runtime streams, verifyEvents against the checker):
#
#   bash interop/agui/run.sh      # from anywhere in a clone; needs go, node and npm
#
# It installs the pinned packages with npm into cache directories (reused when present): this
# directory's (@ag-ui/client, @ag-ui/encoder, @ag-ui/langgraph) and interop/langgraph's (the
# dev server and the graph, the same cache interop/langgraph/run.sh uses). DURATION (default
# 10s) and CLIENTS (default 4) size the load. Exit 0 pass (or SKIP without node/npm), 1 fail.
# STREAMBENCH_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/streambench);
# OUT keeps the results and the captured streams there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/interop/lib.sh" # $work, $out, $pids, the exit trap, die, need_node, npm_modules, listen_url
need_node "the AG-UI interop installs and runs the server and @ag-ui/client with them"
CLIENTS=${CLIENTS:-4}
DURATION=${DURATION:-10s}

# interop/langgraph/run.sh keys its cache on package.json alone (it has no lock file).
agui_modules=$(npm_modules "$here" agui @ag-ui/langgraph/package.json)
langgraph_modules=$(npm_modules "$root/interop/langgraph" langgraph .bin/langgraphjs)
ln -sfn "$agui_modules" "$here/node_modules"

cd "$root"
app="$work/app" # the dev server writes its in-memory state under the graph's directory
mkdir -p "$app"
cp interop/langgraph/graph.mjs interop/langgraph/langgraph.json interop/langgraph/package.json "$app/"
ln -sfn "$langgraph_modules" "$app/node_modules"

start_mock_routecheck
start_langgraph_dev "$app" "$work/langgraph.log"
langgraph=$langgraph_url
LANGGRAPH_URL=$langgraph PORT=0 setsid node interop/agui/server.mjs >"$work/agui.log" 2>&1 &
pids+=($!)
server=$(listen_url "$work/agui.log" "$!" 'listening' 30)
echo "run.sh: mock $mock, LangGraph dev server $langgraph, AG-UI server $server/agui/agent"

# capture NAME: one stream of scenario NAME at seed 1, as the ag-ui dialect requests it, into
# $captured/NAME.frames (the recording format verify.mjs reads).
captured=${OUT:+$OUT/captured}
captured=${captured:-$work/captured}
mkdir -p "$captured"
capture() {
	local name=$1 file="$captured/$1.frames"
	printf '# interop/agui/server.mjs (@ag-ui/langgraph) in front of the LangGraph dev server and the streambench mock\n# scenario %s seed 1\n' "$name" >"$file"
	curl -fsS -N --max-time 120 -X POST "$server/agui/agent" -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
		-d "{\"threadId\":\"thread-capture-$name\",\"runId\":\"run-capture-$name\",\"state\":{},\"messages\":[{\"id\":\"msg-capture-$name\",\"role\":\"user\",\"content\":\"[[streambench scenario=$name seed=1 session=capture-$name]] go\"}],\"tools\":[],\"context\":[],\"forwardedProps\":{}}" |
		grep '^data: ' >>"$file" || die "capture $name: no stream from $server"
}
# The first run also waits for the adapter's schema request (server.mjs): before the load.
start=$SECONDS
capture plain-answer
echo "run.sh: first run (plain-answer) took $((SECONDS - start)) s"

# --runtime-metrics -: the server has no /metrics; the mock's gauges are checked (--mock).
echo "run.sh: load: $CLIENTS clients for $DURATION → $server/agui/agent (ag-ui)"
rc=0
"$work/streambench" load --dialect ag-ui --slug agent --target "$server" --mock "$mock" \
	--runtime-metrics - --leak-per-stream 1 --clients "$CLIENTS" --duration "$DURATION" \
	--out "$out" --run-id agui-langgraph --quiet >"$work/load.log" 2>&1 || rc=$?
grep -E '^(run |errors:|tokens:|violations:|leak check|LEAK|verdict|  - )' "$work/load.log" || true
[ -f "$out/agui-langgraph/summary.json" ] || die "the load wrote no results (exit $rc)"
verdict=0
# The adapter's known findings (docs/INTEROP.md "AG-UI"): RUN_FINISHED carries LangGraph's own
# run id, not the request's runId that RUN_STARTED echoed, and after RUN_ERROR the run goes on
# (R-agui-run); a failing tool's call is never streamed, only in the closing MESSAGES_SNAPSHOT
# (R-agui-content). Reported, not failing; any other rule fails the script.
known=(R-agui-run R-agui-content)
"$work/routecheck" --name agui-langgraph $(printf -- '--known %s ' "${known[@]}") "$out/agui-langgraph" || verdict=1

echo "run.sh: streams captured from the server, judged by the checker and by verifyEvents (TestCapturedStreams)"
for name in preamble-tool thinking-answer provider-error-midstream tool-error parallel-tools tool-chain unicode-answer; do
	capture "$name"
done
AGUI_KNOWN=$(IFS=,; echo "${known[*]}") AGUI_CAPTURED=$captured go test ./interop/agui/ -run TestCapturedStreams -count=1 -v 2>&1 | grep -E 'verify_test.go:[0-9]+: [a-z-]+\.frames:? +(streambench|verifyEvents)|^(ok|FAIL|---)' || verdict=1
echo "run.sh: verifyEvents against the checker on the recorded runtime streams (TestVerifyEventsAgrees)"
go test ./interop/agui/ -run TestVerifyEventsAgrees -count=1 || verdict=1
exit "$verdict"
