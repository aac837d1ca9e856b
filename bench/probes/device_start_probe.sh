#!/usr/bin/env bash
# What a GPU that the process can see but does not use costs its start. whd-rx -v
# says how long its first GPU's context took on its thread ("the CUDA context took");
# with --gpus 1 the process sees one device, with --gpus 2 two (the second is started
# only when the first falls behind, which on CAPTURE it does not). REPEATS runs of each,
# taking turns, first on the host as it is, then while another process holds every
# device open (cuInit, then sleep), which is what the driver's persistence mode does.
# Also prints the devices' persistence mode. Needs python3 (ctypes) for the holder.
# Usage (device `carry: ["dist"]`): bench/probes/device_start_probe.sh dist CAPTURE [REPEATS]
# Prints a Markdown table: medians of the context's seconds and of the whole process.
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
cap=$2
repeats=${3:-5}
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "persistence mode: $(nvidia-smi --query-gpu=index,persistence_mode --format=csv,noheader | tr '\n' ' ')"
echo
echo "| devices held open by another process | --gpus | CUDA context [s] (median) | whole process [s] (median) |"
echo "|---|---:|---:|---:|"
measure() { # measure HELD: one row per --gpus
  local -A ctx=() whole=()
  local r g t0 t1 c
  for ((r = 0; r < repeats; r++)); do
    for g in $([[ $((r % 2)) == 0 ]] && echo 1 2 || echo 2 1); do
      t0=$(date +%s.%N)
      c=$("$dist/bin/whd-rx" "$cap" --backend gpu --gpus "$g" -v --report /dev/null 2>&1 |
        sed -n 's/.*the CUDA context took \([0-9.]*\) s.*/\1/p')
      t1=$(date +%s.%N)
      ctx[$g]+="${c:-nan} "
      whole[$g]+="$(python3 -c "print($t1 - $t0)") "
    done
  done
  for g in 1 2; do
    python3 - "$1" "$g" "${ctx[$g]}" "${whole[$g]}" <<'PY'
import statistics as st, sys
held, g, ctx, whole = sys.argv[1:5]
med = lambda s: st.median(float(x) for x in s.split())
print(f"| {held} | {g} | {med(ctx):.3f} | {med(whole):.3f} |")
PY
  done
}
measure no
python3 -c "
import ctypes, time
c = ctypes.CDLL('libcuda.so.1')
assert c.cuInit(0) == 0
n = ctypes.c_int()
c.cuDeviceGetCount(ctypes.byref(n))
time.sleep(600)" &
holder=$!
sleep 3
measure yes
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
exit 0
