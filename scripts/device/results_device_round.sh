#!/usr/bin/env bash
# One round of the committed results on a GPU machine: the whd-bench smoke tests
# (GPU rows included), then ber, cpu and compare at full size. Results and one
# log go to $OUT (or ./out-results); a short summary is printed last.
# Usage (device `carry: ["dist-b7"]`): scripts/device/results_device_round.sh dist-b7
set -uo pipefail
dist=${1:-dist}
out=${OUT:-out-results}
work=${TMPDIR:-/tmp}/whd-results
mkdir -p "$out" "$work"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
bin=$dist/bin
log=$out/round.log
here=$(cd "$(dirname "$0")" && pwd)
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv; nproc; } >>"$log" 2>&1

step() { # step NAME TIMEOUT COMMAND...: run, log, print the status
  local name=$1 t=$2; shift 2
  echo "== $name: $*" >>"$log"
  local t0=$SECONDS
  timeout "$t" "$@" >>"$log" 2>&1
  local rc=$?
  echo "$name rc=$rc ($((SECONDS - t0)) s)" | tee -a "$log"
}

for k in cpu ber compare; do
  step "smoke-$k" 45 python3 "$here/../../tests/apps/check_whd_bench.py" "$k" --bench "$bin/whd-bench" --tx "$bin/whd-tx" --workdir "$work/smoke-$k"
done
step ber 240 "$bin/whd-bench" ber --ebn0-qpsk 4:11:0.5 --ebn0-qam16 8:15.5:0.5 --errors 400 --max-bits 40000000 --frames 32 \
  --json "$out/ber.json" --markdown "$out/ber.md"
step cpu 90 "$bin/whd-bench" cpu --symbols 65536 --repeats 5 --json "$out/cpu.json" --markdown "$out/cpu.md"
step capture 60 "$bin/whd-tx" -o "$work/compare" -d ci8 --mod qam16 --frames 8 --nd 16384 --snr-db 30 --cfo-hz 3e5 --taps 4 \
  --random-phase --seed 11 -q
step compare 90 "$bin/whd-bench" compare "$work/compare.sigmf-meta" --repeats 5 --json "$out/compare.json" --markdown "$out/compare.md"

grep -E "FAIL|all checks passed" "$log" | sort | uniq -c
grep -E "^\| (cpu|gpu) .*dB \(|^\| (qpsk|qam16) \| (half|int8)" "$out/ber.md" 2>/dev/null
grep -E "^\| (whd|plain)|thread\(s\)" "$out/cpu.md" 2>/dev/null
grep -E "^\| (cpu|gpu|plain)" "$out/compare.md" 2>/dev/null
