#!/usr/bin/env bash
# The CPU test suite (ctest label cpu) built with ASan+UBSan (-DWHD_SANITIZE=ON) in
# its own build folder: host C++ code only. Extra arguments go to ctest.
# Environment: WHD_ASAN_BUILD (default build-asan), WHD_BUILD, WHD_JOBS.
#
# What keeps this stage short (docs/decisions.md, "What the test suite costs"):
# - nvcc's objects are linked in uninstrumented, so rather than compile the .cu files
#   a second time this build links those of the normal build (WHD_BUILD), which is
#   brought up to date first (cmake/reuse_cuda_objects.cmake);
# - -Og -g1 rather than RelWithDebInfo's -O2 -g, the tests' own code included
#   (WHD_TEST_CXX_OPTIMIZE empty): the instrumented compile takes a third of the
#   time, the tests run about 1.3x longer, and line tables are all that the
#   sanitizers' reports need;
# - only the targets of the cpu-labelled tests are built (whd_cpu_tests).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
build=${WHD_ASAN_BUILD:-$WHD_ROOT/build-asan}

# The normal build's objects of what the CPU tests link (a no-op after scripts/test.sh's build).
if [[ -f $WHD_BUILD/CMakeCache.txt ]]; then
  cmake --build "$WHD_BUILD" -j "$WHD_JOBS" --target whd_cpu_tests
else
  whd_build
fi
cmake -S "$WHD_ROOT" -B "$build" $(whd_generator "$build") -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-Og -g1 -DNDEBUG" -DWHD_TEST_CXX_OPTIMIZE= -DWHD_WERROR=ON -DWHD_SANITIZE=ON \
  -DWHD_BUILD_BENCH=OFF -DWHD_CUDA_OBJECTS_FROM="$(cd "$WHD_BUILD" && pwd)" >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; exit 1; }
grep '^-- CUDA objects' "$build.configure.log" | sed 's/^-- /sanitize: /' >&2 || true
cmake --build "$build" -j "$WHD_JOBS" --target whd_cpu_tests
# Sanitizer exit codes apart from the apps' own (1: bad input), so that a test that
# expects exit status 1 cannot mistake a sanitizer report for it. The CUDA runtime
# maps memory where ASan's shadow gap would be, hence protect_shadow_gap=0.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:protect_shadow_gap=0:detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-exitcode=87:print_stacktrace=1:halt_on_error=1}
cd "$build"
ctest -L cpu --no-tests=error --timeout 300 --output-on-failure -j "$WHD_JOBS" "$@"
