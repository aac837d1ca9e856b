#!/usr/bin/env bash
# The CPU test suite (ctest label cpu) built with ASan+UBSan (-DWHD_SANITIZE=ON) in
# its own build folder: host C++ code only; nvcc-compiled objects are linked in
# uninstrumented. Extra arguments go to ctest.
# Environment: WHD_ASAN_BUILD (default build-asan), WHD_JOBS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
build=${WHD_ASAN_BUILD:-$WHD_ROOT/build-asan}
cmake -S "$WHD_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWHD_WERROR=ON -DWHD_SANITIZE=ON \
  -DWHD_BUILD_BENCH=OFF >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "$WHD_JOBS" --target whd_cpu_tests
# Sanitizer exit codes apart from the apps' own (1: bad input), so that a test that
# expects exit status 1 cannot mistake a sanitizer report for it. The CUDA runtime
# maps memory where ASan's shadow gap would be, hence protect_shadow_gap=0.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:protect_shadow_gap=0:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=87:print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest -L cpu --no-tests=error --timeout 300 --output-on-failure -j "$WHD_JOBS" "$@"
