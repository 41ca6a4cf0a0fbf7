#!/usr/bin/env bash
# The AI SDK interop: a real AI SDK chat route (route.mjs: ai 7 + @ai-sdk/openai 4, streamText →
# UI message stream) whose model is the streambench mock, driven by the ai-sdk dialect.
#
#   interop/aisdk/run.sh            # from anywhere in a clone; needs go, node and npm
#
# It installs the pinned packages with npm into a cache directory (reused when present; npm's
# own download cache lives there too, so a clean cache is really clean), links them next to
# route.mjs, and runs the Go driver (aisdk_test.go), which starts the mock in process and the
# route with node, plays every embedded scenario through the route with the ai-sdk request and
# checker, and prints the content verdicts and the route's cancel latency.
# STREAMBENCH_CACHE overrides the cache root (default ${XDG_CACHE_HOME:-~/.cache}/streambench).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
for tool in go node npm; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed (needed: go, node >= 20, npm)" >&2; exit 2; }
done

# One cache directory per pinned dependency set: a change to package.json or the lock file
# installs afresh instead of reusing stale packages.
key="$(cat "$here/package.json" "$here/package-lock.json" | sha256sum | cut -c1-12)"
cache="${STREAMBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streambench}/aisdk-$key"
mkdir -p "$cache"
if [[ ! -f "$cache/node_modules/ai/package.json" ]]; then
	echo "run.sh: installing ai and @ai-sdk/openai into $cache"
	cp "$here/package.json" "$here/package-lock.json" "$cache/"
	# The packages declare node >= 22; they run on node 20 (checked), so the engine check only warns.
	start=$SECONDS
	(cd "$cache" && npm_config_cache="$cache/npm-cache" npm ci --no-audit --no-fund --loglevel=error)
	echo "run.sh: npm ci took $((SECONDS - start)) s"
else
	echo "run.sh: reusing $cache"
fi
ln -sfn "$cache/node_modules" "$here/node_modules"

cd "$root"
set +e
go test ./interop/aisdk/ -run 'TestAISDKRoute' -count=1 -v 2>&1 | grep -v -e '^=== '
exit "${PIPESTATUS[0]}"
