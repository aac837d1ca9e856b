#!/usr/bin/env bash
# One round of the receive chain on a GPU machine: GPU tests, compute-sanitizer
# memcheck and racecheck, whd-rx --backend gpu on every conformance capture, and
# whd-bench pipeline. Logs go to $OUT (or ./out-rx); a short table is printed last.
# Usage (device `carry: ["dist"]`): scripts/device/rx_device_round.sh dist [pipeline options...]
set -uo pipefail
dist=${1:-dist}
shift || true
final=${OUT:-out-rx}
# The device returns at most 8 files: logs go to a folder that is packed into
# $OUT/logs.tgz at the end, beside pipeline.md and pipeline.json.
out=$(mktemp -d)
mkdir -p "$final"
trap 'cp "$out"/pipeline.md "$out"/pipeline.json "$final"/ 2>/dev/null; tar czf "$final/logs.tgz" -C "$out" .' EXIT
source "$(dirname "$0")/device_env.sh"

{ nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE; } >"$out/smi.txt" 2>&1
echo "== gpu tests"
gpu_tests 240
echo "== sanitizers (baseband_gpu_tests)"
# The out-of-memory test provokes failing allocations on purpose: memcheck would
# count them as API errors, so it runs apart (scripts/device/scale_device_round.sh).
oom=gpu_faults.short_device_memory_at_start_halves_the_batch_and_decodes_the_truth
for tool in memcheck racecheck; do
  timeout 240 "$san" --tool "$tool" --error-exitcode 3 "$dist/bin/baseband_gpu_tests" --gtest_filter=-$oom >"$out/sanitizer-$tool.log" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitizer-$tool.log" | tr '\n' ' ')"
done
echo "== whd-rx --backend gpu on the conformance captures"
for meta in "$dist"/vectors/*.sigmf-meta; do
  name=$(basename "$meta" .sigmf-meta)
  "$dist/bin/whd-rx" "$meta" --backend gpu -q --truth "$dist/vectors/$name.truth" --report "$out/rx-$name.json" -o /dev/null
  echo "$name rc=$? $(python3 -c "import json;r=json.load(open('$out/rx-$name.json'));print(len(r['frames']),'frames',len(r['header_failures']),'header failures',r['truth']['bit_errors'],'bit errors')")"
done
if [[ ${WHD_NCU:-0} == 1 ]]; then
  echo "== ncu: the fused kernel and the cuFFT chain's kernels, device-resident"
  ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  timeout 240 "$ncu" --clock-control none --kernel-name regex:'decode_kernel|unpack_kernel|demap_kernel|regular_fft' --launch-skip 0 --launch-count 4 \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    "$dist/bin/whd-bench" pipeline --capture /tmp/whd-ncu --frames 1 --nd 65536 --repeats 1 --no-end-to-end >"$out/ncu-fused.txt" 2>&1
  echo "ncu rc=$?"
  grep -E "decode_kernel|unpack_kernel|demap_kernel|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy|Theoretical Occupancy|Duration|Executed Ipc|Issue Slots" "$out/ncu-fused.txt" | head -60
fi
echo "== whd-bench pipeline"
timeout 540 "$dist/bin/whd-bench" pipeline --json "$out/pipeline.json" --markdown "$out/pipeline.md" "$@" >"$out/pipeline.log" 2>&1
echo "pipeline rc=$?"
tail -5 "$out/pipeline.log"
cat "$out/pipeline.md" 2>/dev/null
