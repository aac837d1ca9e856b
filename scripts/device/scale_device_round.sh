#!/usr/bin/env bash
# One round on a GPU machine for faults and scale: the GPU tests (the fault tests
# among them), compute-sanitizer memcheck over them, then scale_round.sh with the
# GPU backend on a capture of tens of GB (sized to the free disk). Everything lands
# in $OUT/logs.tgz (the device returns few files); the scale table is printed last.
# Usage (device `carry: ["dist"]`): scripts/device/scale_device_round.sh dist tests|scale|sparse|all [SIZE_GB]
#   sparse: a capture larger than the disk, RAM and GPU memory (default 140 GB): a
#   sparse file with 12 copies spread over it (scale_round.sh, WHD_SCALE_SPARSE)
set -uo pipefail
dist=${1:-dist}
what=${2:-all}
want_gb=${3:-40}
out=${OUT:-out-scale}
logs=$(mktemp -d)
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WHD_VECTORS_DIR=$dist/vectors
export PATH=$PATH:/usr/local/cuda/bin
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p "$out"

nvidia-smi >"$logs/smi.txt" 2>&1
if [[ $what == tests || $what == all ]]; then
echo "== gpu tests"
timeout 300 "$dist/bin/baseband_gpu_tests" >"$logs/baseband_gpu_tests.log" 2>&1
echo "baseband_gpu_tests rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$logs/baseband_gpu_tests.log" | tr '\n' ' ')"
grep -E "gpu_faults|FAILED" "$logs/baseband_gpu_tests.log" | grep -E "OK|FAILED" | head -10
echo "== memcheck (baseband_gpu_tests)"
# The out-of-memory test provokes failing allocations on purpose: it runs apart,
# with API errors not counted (memory access errors still are).
oom=gpu_faults.short_device_memory_at_start_halves_the_batch_and_decodes_the_truth
timeout 300 "$san" --tool memcheck --error-exitcode 3 "$dist/bin/baseband_gpu_tests" --gtest_filter=-$oom >"$logs/sanitizer-memcheck.log" 2>&1
echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' "$logs/sanitizer-memcheck.log" | tr '\n' ' ')"
timeout 120 "$san" --tool memcheck --report-api-errors no --error-exitcode 3 "$dist/bin/baseband_gpu_tests" --gtest_filter=$oom >"$logs/sanitizer-memcheck-oom.log" 2>&1
echo "memcheck (out-of-memory test, API errors expected) rc=$? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' "$logs/sanitizer-memcheck-oom.log" | tr '\n' ' ')"
fi
if [[ $what != tests ]]; then

work=/var/tmp/whd-scale
rm -rf "$work" # a machine kept warm still holds the last round's capture: size from a clean disk
mkdir -p "$work"
df -h "$work" /dev/shm >"$logs/df.txt"
free_gb=$(df --output=avail -B1G "$work" | tail -1)
# The capture and its truth (1.15 x) must fit with room to spare (a sparse one holds 12 copies).
size_gb=$(python3 -c "print(max(1, min($want_gb, int(($free_gb - 4) / 1.2))))")
if [[ $what == sparse ]]; then
  size_gb=${3:-140}
  export WHD_SCALE_SPARSE=12 WHD_SCALE_REPEATS=1 WHD_SCALE_NO_FILE=0
fi
echo "== scale: ${size_gb} GB capture (${free_gb} GB free)"
WHD_PAYLOAD_DIR=/dev/shm OUT="$logs/scale" timeout 480 "$here/scale_round.sh" "$dist/bin" "$work" "$size_gb" gpu
echo "scale rc=$?"
cp "$logs/scale/scale.md" "$logs/scale/scale.json" "$out/" 2>/dev/null
fi
tar czf "$out/logs.tgz" -C "$logs" .
