#!/usr/bin/env bash
# Several GPUs in one call, on a host of 2 or 4: the GPU tests (the several-GPU ones
# among them), the receiver's GPU tests under compute-sanitizer memcheck with two GPUs,
# where the GPU is the bound (the FEC device-resident: whd-bench fec --gpus N; the
# pinned-memory pipeline: whd-bench pipeline --gpus N), then the whole whd-rx process
# with --gpus 1 against N (gpus_round.sh) on the shapes given.
# Usage (device `carry: ["dist"]`):
#   scripts/device/multi_gpu_round.sh dist COPIES REPEATS COUNTS TYPES SHAPES...
# WHD_ROUND_PARTS (default "tests bound whole") picks the parts. Writes $OUT/multi-gpu.md
# (the tables), $OUT/gpus.md and $OUT/logs.tgz.
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
copies=${2:-8}
repeats=${3:-5}
counts=${4:-2}
types=${5:-ci8}
shift 5 || shift $#
final=${OUT:-out-multi}
out=$(mktemp -d)
mkdir -p "$final"
trap 'cp "$out"/multi-gpu.md "$final"/ 2>/dev/null; tar czf "$final/logs.tgz" -C "$out" .' EXIT
source "$(dirname "$0")/device_env.sh"
parts=${WHD_ROUND_PARTS:-tests bound whole}
max=$(tr ',' '\n' <<<"$counts" | sort -n | tail -1)
md=$out/multi-gpu.md
{
  echo "# Several GPUs ($(date -u +%FT%TZ)), commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//'); $(nproc) CPUs"
  echo
} >"$md"
nvidia-smi topo -m >"$out/topo.txt" 2>&1
if [[ $parts == *tests* ]]; then
  echo "== gpu tests" | tee -a "$md"
  gpu_tests 300 | tee -a "$md"
  for t in fec_gpu_tests transport_tests; do
    [[ -x $dist/bin/$t ]] || continue
    timeout 200 "$dist/bin/$t" >"$out/$t.log" 2>&1
    echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/$t.log" | tr '\n' ' ')" | tee -a "$md"
  done
  echo "== memcheck, the receiver on two GPUs" | tee -a "$md"
  timeout 240 "$san" --tool memcheck --error-exitcode 3 "$dist/bin/baseband_gpu_tests" --gtest_filter='gpu_receiver.two_gpus*' \
    >"$out/memcheck-two-gpus.log" 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$out/memcheck-two-gpus.log" | tr '\n' ' ')" | tee -a "$md"
fi
if [[ $parts == *bound* ]]; then
  echo "== where the GPU is the bound" | tee -a "$md"
  for n in ${counts//,/ }; do
    timeout 200 "$dist/bin/whd-bench" fec --mcs 2 --nd 4096 --frames 256 --repeats 11 --threads 4 --gpus "$n" \
      --markdown "$out/fec-x$n.md" >"$out/fec-x$n.log" 2>&1
    echo "fec --gpus $n rc=$?" | tee -a "$md"
    grep -E "^\| GPU x|GPU bytes" "$out/fec-x$n.md" | tee -a "$md"
  done
  timeout 240 "$dist/bin/whd-bench" pipeline --gpus "$max" --no-end-to-end --repeats 5 --markdown "$out/pipeline.md" >"$out/pipeline.log" 2>&1
  echo "pipeline --gpus $max rc=$?" | tee -a "$md"
  grep -E "^\|" "$out/pipeline.md" | head -20 | tee -a "$md"
fi
if [[ $parts == *whole* ]]; then
  echo "== the whole whd-rx process" | tee -a "$md"
  OUT=$out "$(dirname "$0")/gpus_round.sh" "$dist" "$copies" "$repeats" "$counts" "$types" "$@" >/dev/null 2>"$out/gpus-round.err"
  cp "$out/gpus.md" "$final/" 2>/dev/null
  cat "$out/gpus.md" >>"$md"
fi
cat "$md"
