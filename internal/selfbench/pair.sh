#!/usr/bin/env bash
# Runs each `bench` measurement with two streambench binaries, one right after the other, so each
# pair meets the same machine load; writes OUT/MEASUREMENT-{a,b}.{txt,json}.
#   internal/selfbench/pair.sh OLD_BINARY NEW_BINARY [OUT]   (OUT defaults to ./bench-pair)
set -u
a=${1:?usage: internal/selfbench/pair.sh OLD_BINARY NEW_BINARY [OUT]}
b=${2:?usage: internal/selfbench/pair.sh OLD_BINARY NEW_BINARY [OUT]}
out=${3:-bench-pair}
mkdir -p "$out"
# Every measurement of `bench all`.
for m in codec floor path pacing scale fidelity rate abuse; do
  for which in a b; do
    bin=$a; [ "$which" = b ] && bin=$b
    echo "=== $m $which ($bin) $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
    "$bin" bench "$m" --quiet --json "$out/$m-$which.json" > "$out/$m-$which.txt" 2>&1
    echo "exit $?"
  done
done
