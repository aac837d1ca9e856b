#!/usr/bin/env bash
# How fast whd-rx searches a capture without frames (noise only, ci8): the frame
# search alone bounds captures with long silences between bursts. Decodes one
# noise capture with 1 thread and with every thread (CPU backend: the search is
# the same on both backends), and with the GPU backend when one is present.
# Usage: scripts/device/search_speed.sh BIN_DIR WORK_DIR [SIZE_GB]
# Writes WORK_DIR/search.md (or under $OUT when set).
set -euo pipefail
bin=$1 work=$2 size_gb=${3:-4}
out=${OUT:-$work}
mkdir -p "$work" "$out"
if [[ ! -f $work/noise.ci8 ]]; then
  "$bin/whd-tx" -o "$work/noise" --raw -d ci8 -n 0 --snr-db 10 --lead 125000000 --seed 5 2>"$out/whd-tx.log"
fi
base_bytes=$(stat -c %s "$work/noise.ci8")
copies=$(python3 -c "import math; print(max(1, math.ceil($size_gb * 1e9 / $base_bytes)))")
rm -f "$work/big-noise.ci8"
for ((i = 0; i < copies; i++)); do cat "$work/noise.ci8" >>"$work/big-noise.ci8"; done
cat "$work/big-noise.ci8" >/dev/null # into the page cache
rows=()
run() {
  local name=$1
  shift
  local t0 t1
  t0=$(date +%s.%N)
  "$bin/whd-rx" "$work/big-noise.ci8" -q -r "$out/search-$name.json" "$@" || echo "whd-rx rc=$?"
  t1=$(date +%s.%N)
  rows+=("$name $(python3 -c "print($t1 - $t0)")")
}
run cpu-1-thread --backend cpu -j 1
run cpu-all-threads --backend cpu
if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  run gpu --backend gpu
fi
samples=$(($(stat -c %s "$work/big-noise.ci8") / 2))
{
  echo "# Frame search over noise (no frames), ci8 in page cache"
  echo
  echo "- date $(date -Iseconds), $(nproc) CPUs, GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo none)"
  echo "- command: \`scripts/device/search_speed.sh BIN WORK $size_gb\` ($samples samples, $copies copies of one whd-tx noise capture)"
  echo
  echo "| run | s (whole process) | MS/s searched | x real time (2538 MS/s) | frames found |"
  echo "|---|---:|---:|---:|---:|"
  for r in "${rows[@]}"; do
    set -- $r
    python3 -c "
import json; s=$2; n=$samples; f=len(json.load(open('$out/search-$1.json'))['frames'])
print(f'| $1 | {s:.2f} | {n/s/1e6:,.0f} | {n/s/2.538e9:.2f} | {f} |')"
  done
} >"$out/search.md"
cat "$out/search.md"
rm -f "$work/big-noise.ci8"
