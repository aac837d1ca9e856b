#!/usr/bin/env bash
# One round of the FFT on a GPU machine: GPU tests, the benchmark with tuning, an
# Nsight Compute look at the chosen kernels and cuFFT's, then compute-sanitizer
# memcheck and racecheck on the small GPU tests. Logs go to $OUT (or ./out-fft).
# Usage (device `carry: ["dist-fft"]`): scripts/device/fft_device_round.sh dist-fft
set -uo pipefail
dist=${1:-dist-fft}
out=${OUT:-out-fft}
mkdir -p "$out"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WHD_FFT_TUNE_CACHE=$out/fft-tune.json
export PATH=$PATH:/usr/local/cuda/bin
ncu=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
small='fft512_gpu.every_variant*:fft512_gpu.pipelined*:fft512_gpu.int8*:fft512_device_function.*'

{ nvidia-smi; nvidia-smi -q -d CLOCK,PERFORMANCE; } >"$out/smi.txt" 2>&1
echo "== gpu tests"
timeout 180 "$dist/bin/fft_gpu_tests" >"$out/gpu_tests.log" 2>&1
echo "gpu tests rc=$?"; grep -E "accuracy|PASSED|FAILED|SKIPPED" "$out/gpu_tests.log" | head -20

echo "== benchmark"
timeout 240 "$dist/bin/whd-bench" fft --tune --cache "$out/fft-tune.json" --json "$out/fft.json" \
  --markdown "$out/fft.md" >"$out/bench.log" 2>&1
echo "bench rc=$?"

echo "== ncu"
if [[ -n $ncu ]]; then
  timeout 120 "$ncu" --clock-control none --kernel-name regex:fft --launch-count 4 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats \
    --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,dram__bytes_read.sum,dram__bytes_write.sum,smsp__inst_executed.sum \
    "$dist/bin/whd-bench" fft --batches 16 --repeats 1 --warmup 0 --cache "$out/fft-tune.json" >"$out/ncu.txt" 2>&1
  echo "ncu rc=$?"
else
  echo "no ncu" >"$out/ncu.txt"
fi

echo "== sanitizers"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  echo "-- $tool" >>"$out/sanitizer.log"
  timeout 150 "$san" --tool "$tool" --error-exitcode 3 "$dist/bin/fft_gpu_tests" --gtest_filter="$small" \
    >>"$out/sanitizer.log" 2>&1
  echo "$tool rc=$?" | tee -a "$out/sanitizer.log"
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$out/sanitizer.log"
echo "== table"
cat "$out/fft.md" 2>/dev/null | grep -E "^\| 2\^1[6-9]|^\| 2\^20|ceiling|ours|check" | head -60
