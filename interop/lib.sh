# Shared by the interop scripts (agui, aisdk, langgraph, ollama-responses, openai-responses);
# source it from bash with set -euo pipefail. It makes $work (a temporary directory, removed
# at exit), $out ($OUT, else $work/results) and $pids (the caller appends every process it
# starts), and installs the exit trap: each process in $pids is ended (its process group when
# it leads one, as setsid makes it), on failure the last lines of every $work/*.log are
# printed, and with OUT set the logs are kept in $OUT/logs. It defines die.
work=$(mktemp -d)
out=${OUT:-$work/results}
pids=()
cleanup() {
	local rc=$?
	for pid in "${pids[@]}"; do kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true; done
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
