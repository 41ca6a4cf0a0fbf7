#!/usr/bin/env bash
# Renders a saved run's report.html in headless Chromium, 1400 px wide, to PNGs: the first
# screen (what a reader sees without scrolling) and the whole page. The check issue 26 asks
# for: the verdict, the headline figures and the first plot fit on the first screen.
#
#   scripts/screenshot-report.sh RUN_DIR [OUT_DIR]    # OUT_DIR defaults to RUN_DIR
#   HEIGHT=1000 scripts/screenshot-report.sh results/ci
#
# Writes OUT_DIR/report-first-screen.png (1400×HEIGHT, default 900) and
# OUT_DIR/report-full.png (1400×FULL_HEIGHT, default 6000). Needs chromium
# (apt-get install chromium) or google-chrome on PATH, or CHROME=/path/to/it.
set -euo pipefail

run=${1:?usage: scripts/screenshot-report.sh RUN_DIR [OUT_DIR]}
out=${2:-$run}
width=1400
height=${HEIGHT:-900}
full=${FULL_HEIGHT:-6000}

if [[ ! -f "$run/report.html" ]]; then
  echo "$run/report.html not found: render the run first (streambench report $run)" >&2
  exit 1
fi
chrome=${CHROME:-}
if [[ -z "$chrome" ]]; then
  for c in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$c" >/dev/null; then chrome=$c; break; fi
  done
fi
if [[ -z "$chrome" ]]; then
  echo "no Chromium found: apt-get install chromium, or set CHROME" >&2
  exit 1
fi
mkdir -p "$out"
page="file://$(cd "$run" && pwd)/report.html"
profile=$(mktemp -d "${TMPDIR:-/tmp}/screenshot-report.XXXXXX")
trap 'rm -rf "$profile"' EXIT

shot() { # shot FILE HEIGHT
  "$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
    --force-device-scale-factor=1 --window-size="$width,$2" --screenshot="$1" "$page" >/dev/null 2>&1
  echo "$1 (${width}×$2)"
}
shot "$(cd "$out" && pwd)/report-first-screen.png" "$height"
shot "$(cd "$out" && pwd)/report-full.png" "$full"
