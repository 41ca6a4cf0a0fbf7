# Shared by the interop scripts (agui, aisdk, langgraph, ollama-responses, openai-responses,
# and portkey's lib.sh); source it from bash with set -euo pipefail. It makes $work (a
# temporary directory, removed at exit), $out ($OUT, else $work/results) and $pids (the caller
# appends every process it starts), and installs the exit trap: each process in $pids is ended
# (its process group when it leads one, as setsid makes it), on failure the last lines of every
# $work/*.log are printed, and with OUT set the logs are kept in $OUT/logs. It defines die.
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
