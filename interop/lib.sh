# Shared by the interop scripts (agui, aisdk, langgraph, ollama-responses, openai-responses,
# and portkey's lib.sh); source it from bash with set -euo pipefail. It makes $work (a
# temporary directory, removed at exit), $out ($OUT, else $work/results) and $pids (the caller
# appends every process it starts), and installs the exit trap: each process in $pids is ended
# (its process group when it leads one, as setsid makes it), on failure the last lines of every
# $work/*.log are printed, and with OUT set the logs are kept in $OUT/logs. It defines die,
# need_node, npm_modules, listen_url, start_mock_routecheck, embedded_tools and
# start_langgraph_dev.
work=$(mktemp -d)
out=${OUT:-$work/results}
pids=()
# signal_pids signals every process in $pids still alive (its process group when it leads one).
signal_pids() {
	local pid
	for pid in "${pids[@]}"; do
		kill -0 "$pid" 2>/dev/null || continue
		kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
	done
}
cleanup() {
	local rc=$? pid
	signal_pids
	# streambench stops gracefully on the first signal (a load drains for its --grace) and at
	# once on the second: an interrupted script does not wait for that.
	if [ "${#pids[@]}" -gt 0 ]; then
		sleep 0.5
		signal_pids
	fi
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
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
die() { echo "FAIL: $*" >&2; exit 1; }
# need_node WHY: SKIP (exit 0) without node and npm, WHY saying what they are for; exit 2
# without go.
need_node() {
	if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
		echo "SKIP: node/npm not found ($1)"
		exit 0
	fi
	command -v go >/dev/null || { echo "run.sh: go is not installed" >&2; exit 2; }
}

# npm_modules DIR NAME CHECK: npm ci (npm install without a lock file) of DIR's pinned packages
# into ${STREAMBENCH_CACHE:-${XDG_CACHE_HOME:-~/.cache}/streambench}/NAME-KEY, KEY the package
# files' hash (a change installs afresh), unless CHECK exists there; prints the node_modules path.
npm_modules() {
	local dir=$1 name=$2 check=$3 files=("$1/package.json")
	[ -f "$dir/package-lock.json" ] && files+=("$dir/package-lock.json")
	local cache="${STREAMBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streambench}/$name-$(cat "${files[@]}" | sha256sum | cut -c1-12)"
	if [[ ! -e "$cache/node_modules/$check" ]]; then
		echo "run.sh: installing $name's packages into $cache" >&2
		mkdir -p "$cache"
		cp "${files[@]}" "$cache/"
		local start=$SECONDS cmd=install
		[ -f "$dir/package-lock.json" ] && cmd=ci
		(cd "$cache" && npm_config_cache="$cache/npm-cache" npm "$cmd" --no-audit --no-fund --loglevel=error) >&2
		echo "run.sh: npm $cmd took $((SECONDS - start)) s" >&2
	else
		echo "run.sh: reusing $cache" >&2
	fi
	echo "$cache/node_modules"
}
# listen_url LOG PID PATTERN [SECONDS]: the URL a process printed once it listens (PATTERN
# then the URL), within SECONDS (default 10).
listen_url() {
	local log=$1 pid=$2 pattern=$3 seconds=${4:-10} url
	for _ in $(seq $((seconds * 10))); do
		if url=$(grep -o -m1 "$pattern http://[0-9.:]*" "$log" 2>/dev/null); then
			echo "${url##* }"
			return 0
		fi
		kill -0 "$pid" 2>/dev/null || die "$(basename "$log" .log) exited before listening: $(tail -n 5 "$log")"
		sleep 0.1
	done
	die "$(basename "$log" .log) did not listen within $seconds s"
}
# start_mock_routecheck: builds streambench and routecheck into $work (from the repository
# root) and starts a mock; sets $mock and $tools (embedded_tools).
start_mock_routecheck() {
	echo "run.sh: building streambench"
	go build -o "$work/streambench" ./cmd/streambench
	go build -o "$work/routecheck" ./interop/cmd/routecheck
	"$work/streambench" mock --addr 127.0.0.1:0 >"$work/mock.log" 2>&1 &
	pids+=($!)
	mock=$(listen_url "$work/mock.log" "$!" 'listening on')
	tools=$(embedded_tools)
}
# embedded_tools: the tool names the embedded scenarios call, comma-separated (a route or a
# graph must define every tool a scenario calls); needs $work/streambench.
embedded_tools() {
	local tools
	tools=$(for name in $("$work/streambench" scenarios list | awk 'NR > 1 {print $1}'); do
		"$work/streambench" scenarios show "$name" | awk '$1 == "tool" && $2 == "call" {print ($4 ~ /^\(/) ? $3 : $4}'
	done | sort -u | paste -sd, -)
	[ -n "$tools" ] || die "no tool names found in the embedded scenarios"
	echo "$tools"
}
# start_langgraph_dev APP LOG: the LangGraph dev server on the graph copied into APP
# (interop/langgraph's), its model the mock at $mock defining $tools, output in LOG; sets
# $langgraph_url once it answers /ok (within 60 s).
start_langgraph_dev() {
	local app=$1 log=$2 port
	port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
	(cd "$app" && MOCK_URL=$mock TOOLS=$tools LANGSMITH_TRACING=false LANGCHAIN_TRACING_V2=false \
		setsid node_modules/.bin/langgraphjs dev --port "$port" --host 127.0.0.1 --no-browser --config langgraph.json) >"$log" 2>&1 &
	pids+=($!)
	langgraph_url="http://127.0.0.1:$port"
	for _ in $(seq 600); do
		curl -fsS "$langgraph_url/ok" >/dev/null 2>&1 && break
		kill -0 "${pids[-1]}" 2>/dev/null || die "the dev server exited: $(tail -n 5 "$log")"
		sleep 0.1
	done
	curl -fsS "$langgraph_url/ok" >/dev/null 2>&1 || die "the dev server did not answer $langgraph_url/ok within 60 s"
}
