#!/usr/bin/env bash
# The traffic shapes users record (long, packets, tiny, bursty; ci8 and cf32), decoded
# as users run whd-rx: the whole process per backend, timed from outside, beside the
# plain liquid-dsp chain over the located frames; GPU = CPU; the GPU on cf32 once per
# link form ($WHD_LINKS, default f32,half,int8). $WHD_TYPES (default ci8,cf32) picks the
# sample types, so that each fits a device call. `whd-bench traffic --help` says what
# each shape and region is. The captures are made into $WHD_SHAPES (default
# /dev/shm/whd-shapes: in memory, as in the page cache) and reused.
# Usage: scripts/device/traffic_round.sh DIST [REPEATS] [SHAPES...]   (DIST from scripts/bundle.sh)
# Writes $OUT/traffic.md and $OUT/traffic.json (or ./out-traffic).
set -euo pipefail
dist=${1:-dist}
repeats=${2:-3}
shift 2 || shift $#
shapes=("$@")
((${#shapes[@]})) || shapes=(long packets tiny bursty)
final=${OUT:-out-traffic}
mkdir -p "$final"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
list=$(IFS=,; echo "${shapes[*]}")
"$dist/bin/whd-bench" traffic --shapes "$list" --types "${WHD_TYPES:-ci8,cf32}" --repeats "$repeats" --links "${WHD_LINKS:-f32,half,int8}" --rx "$dist/bin/whd-rx" \
  --dir "${WHD_SHAPES:-/dev/shm/whd-shapes}" --json "$final/traffic.json" --markdown "$final/traffic.md"
