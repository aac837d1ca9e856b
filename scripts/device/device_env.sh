# Sourced by the device round scripts with $dist set (scripts/bundle.sh's folder on
# the GPU machine): its libraries, the conformance captures it carries, the CUDA
# tools on PATH, compute-sanitizer as $san, and gpu_tests.
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export WHD_VECTORS_DIR=$dist/vectors
export PATH=$PATH:/usr/local/cuda/bin
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)

# gpu_tests SECONDS: the GPU test binaries, each log to $out/NAME.log, a line each.
gpu_tests() {
  local t
  for t in baseband_gpu_tests fft_gpu_tests; do
    [[ -x $dist/bin/$t ]] || continue
    timeout "$1" "$dist/bin/$t" >"$out/$t.log" 2>&1
    echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$out/$t.log" | tr '\n' ' ')"
  done
}
