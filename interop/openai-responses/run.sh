#!/usr/bin/env bash
# The openai-responses interop, one command:
#
#   bash interop/openai-responses/run.sh     # from anywhere in a clone; needs go, node and npm
#
# 1. The official openai npm SDK (7.60.0, pinned in package.json and package-lock.json) consumes
#    the mock's POST /v1/responses streams: sdk.mjs plays SCENARIOS (text, reasoning, function
#    calls, tool loops over previous_response_id, scripted HTTP and mid-stream errors) with
#    client.responses.stream() and requires finalResponse()'s output_text, reasoning and
#    function_call items to be the ground truth of `streambench scenarios show NAME --json`, and
#    every scripted error to surface as an SDK error.
# 2. Each mock wire fault in FAULTS against both readers: sdk.mjs (does the SDK throw, return the
#    wrong thing, or return the right thing?) and `streambench load --dialect openai-responses`
#    (the fault's rule must be reported). What the SDK does is compared with what openai 7.60.0
#    was seen to do (sdk_sees below): a change either way fails, so the finding stays true.
# 3. The load generator through the Portkey gateway's /v1/responses (unless PORTKEY=0):
#    interop/portkey/gateway-wires.sh with WIRES=openai-responses, CLIENTS (default 10) and
#    DURATION (default 10s): direct and via the gateway against one mock, judged by
#    interop/cmd/hopcheck (no errors, no leaks, no violation but R-abort).
# Exit 0 pass (or SKIP without node/npm), 1 fail, 2 bad setup.
#
# SCENARIOS, SEED (default 3) and FAULTS choose what parts 1 and 2 play (defaults below).
# STREAMBENCH_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/streambench);
# OUT keeps the results and logs there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
source "$root/interop/lib.sh" # $work, $out, $pids, the exit trap, die, need_node, npm_modules, listen_url
need_node "the openai-responses interop installs and runs the openai SDK with them"
SCENARIOS=${SCENARIOS:-plain-answer thinking-answer unicode-answer preamble-tool parallel-tools tool-chain tool-error provider-429 provider-error-midstream provider-503-after-tool}
SEED=${SEED:-3}
FAULTS=${FAULTS:-text-differs drop-error responses-event-name responses-sequence responses-no-created responses-no-item-done responses-no-part responses-incomplete-item responses-done-text responses-no-usage responses-no-failed responses-no-done}
CLIENTS=${CLIENTS:-10}
DURATION=${DURATION:-10s}
PORTKEY=${PORTKEY:-1}

# sdk_sees FAULT: what openai 7.60.0 made of the fault over SCENARIOS, as observed
# (docs/INTEROP.md): throws (an OpenAIError on some stream), wrong (no error, but a result
# that is not the ground truth), fine (no error, the right result: only streambench sees it).
sdk_sees() {
	case $1 in
	responses-no-created | responses-no-part) echo throws ;;
	text-differs | drop-error | responses-no-usage) echo wrong ;;
	*) echo fine ;;
	esac
}
# checker_rule FAULT: the rule streambench's openai-responses checker must report, and the
# dialect option the fault needs (no [DONE] is tolerated unless requireDone).
checker_rule() {
	case $1 in
	text-differs) echo R-responses-content ;;
	drop-error | responses-no-failed) echo R-responses-error ;;
	responses-event-name) echo R-responses-event ;;
	responses-sequence) echo R-responses-sequence ;;
	responses-no-created) echo R-responses-lifecycle ;;
	responses-no-item-done | responses-no-part | responses-incomplete-item) echo R-responses-item ;;
	responses-done-text) echo R-responses-text ;;
	responses-no-usage) echo R-responses-usage ;;
	responses-no-done) echo "R-responses-lifecycle requireDone=true" ;;
	*) return 1 ;;
	esac
}
for fault in $FAULTS; do
	checker_rule "$fault" >/dev/null || { echo "run.sh: FAULTS: $fault has no expected rule here (known: see checker_rule)" >&2; exit 2; }
done

# openai 7 declares node >= 22; it runs on node 20 (checked), so the engine check only warns.
modules=$(npm_modules "$here" openai-responses openai/package.json)
ln -sfn "$modules" "$here/node_modules"

cd "$root"

echo "run.sh: building streambench"
go build -o "$work/streambench" ./cmd/streambench

# start_mock NAME [FLAG...]: a mock with no scripted delays (the SDK and the checker judge
# content and structure here, not timing); sets $mock and $mockpid.
start_mock() {
	local name=$1
	shift
	"$work/streambench" mock --addr 127.0.0.1:0 --time-scale 0 "$@" >"$work/$name.log" 2>&1 &
	mockpid=$!
	pids+=("$mockpid")
	for _ in $(seq 100); do
		if mock=$(grep -o -m1 'listening on http://[0-9.:]*' "$work/$name.log" 2>/dev/null); then
			mock=${mock#listening on }
			return 0
		fi
		kill -0 "$mockpid" 2>/dev/null || die "$name exited before listening: $(tail -n 5 "$work/$name.log")"
		sleep 0.1
	done
	die "$name did not listen within 10 s"
}
stop_mock() {
	kill "$mockpid" 2>/dev/null || true
	wait "$mockpid" 2>/dev/null || true
}

mkdir -p "$work/truth"
truth=()
for name in $SCENARIOS; do
	"$work/streambench" scenarios show "$name" --seed "$SEED" --json >"$work/truth/$name.json" ||
		die "streambench scenarios show $name --json failed (SCENARIOS names an unknown scenario?)"
	truth+=("$work/truth/$name.json")
done
sdk_version=$(node -p "require('$here/node_modules/openai/package.json').version")

echo "== 1. the openai SDK $sdk_version (client.responses.stream) against the mock's /v1/responses, seed $SEED"
start_mock mock-clean
MOCK_URL=$mock node "$here/sdk.mjs" "${truth[@]}" | tee "$work/sdk-clean.txt" || die "the openai SDK's results are not the ground truth (lines above)"
stop_mock

echo "== 2. mock wire faults: what the openai SDK makes of them, and what streambench's checker reports"
printf '%-26s %-7s %-28s %s\n' fault sdk "streambench checker" "the SDK's first line that is not ok"
failed=()
for fault in $FAULTS; do
	read -r rule option < <(checker_rule "$fault")
	start_mock "mock-$fault" --fault "$fault"
	MOCK_URL=$mock node "$here/sdk.mjs" "${truth[@]}" >"$work/sdk-$fault.txt" 2>&1 || true
	if grep -q '^sdk-error ' "$work/sdk-$fault.txt"; then
		seen=throws
	elif grep -q '^mismatch ' "$work/sdk-$fault.txt"; then
		seen=wrong
	elif [ "$(grep -c '^ok ' "$work/sdk-$fault.txt")" -eq "${#truth[@]}" ]; then
		seen=fine
	else
		die "sdk.mjs under $fault: unexpected output: $(tail -n 3 "$work/sdk-$fault.txt")"
	fi
	first=$(grep -m1 -v '^ok ' "$work/sdk-$fault.txt" | cut -c1-90 || true)
	# The checker: a short load of the openai-responses dialect straight at the faulty mock. A
	# session's scenario is a function of the mix's seed and its index, so these 40 are the
	# same every run (provider-error-midstream twice, for drop-error and responses-no-failed).
	"$work/streambench" load --dialect openai-responses ${option:+--option "$option"} --target "$mock" \
		--runtime-metrics - --no-leak-check --sessions 40 --clients "$CLIENTS" \
		--out "$out" --run-id "fault-$fault" --quiet >"$work/load-$fault.log" 2>&1 || true
	stop_mock
	[ -f "$out/fault-$fault/summary.json" ] || die "the load against $fault wrote no results: $(tail -n 5 "$work/load-$fault.log")"
	rules=$(node -e 'const s=require(process.argv[1]);console.log(Object.entries(s.violations??{}).map(([r,n])=>`${r}×${n}`).join(",")||"none")' \
		"$out/fault-$fault/summary.json")
	printf '%-26s %-7s %-28s %s\n' "$fault" "$seen" "$rules" "${first:-all ok}"
	want=$(sdk_sees "$fault")
	[ "$seen" = "$want" ] || { echo "  FAIL: openai $sdk_version $seen on $fault; it was seen to $want (update sdk_sees and docs/INTEROP.md if the SDK changed)" >&2; failed+=("$fault"); }
	[[ ",$rules" == *",$rule×"* ]] || { echo "  FAIL: streambench's checker did not report $rule on $fault" >&2; failed+=("$fault"); }
done
[ ${#failed[@]} -eq 0 ] || die "faults not as recorded: ${failed[*]}"
echo "run.sh: the SDK and the faults: $SECONDS s since the start"

if [ "$PORTKEY" = 0 ]; then
	echo "== 3. Portkey: skipped (PORTKEY=0)"
else
	echo "== 3. the load generator through the Portkey gateway's /v1/responses (interop/portkey/gateway-wires.sh)"
	WIRES=openai-responses CLIENTS=$CLIENTS DURATION=$DURATION OUT=${OUT:+$OUT/portkey} bash interop/portkey/gateway-wires.sh
fi
if [ -n "${OUT:-}" ]; then
	echo "results: $out"
fi
echo "== openai-responses interop PASS ($SECONDS s)"
