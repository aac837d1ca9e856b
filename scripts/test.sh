#!/usr/bin/env bash
# The test command: install dependencies, build, run the whole suite.
# GPU tests skip with their reason on machines without a GPU. Then the Python
# module's tests (scripts/pytest.sh; skipped, with the reason, when it was not built).
# Then the CPU suite again under ASan+UBSan (scripts/sanitize.sh, its own build),
# and each fuzz target for a short bounded time (scripts/fuzz.sh, when clang with
# libFuzzer is there). WHD_FUZZ_SECONDS sets the time per fuzz target (default 20).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup.sh"
source "$here/env.sh"
whd_build
cd "$WHD_BUILD"
ctest --output-on-failure -j "$WHD_JOBS" "$@"
# The Python module's tests (pytest, with the interpreter it was built for).
"$here/pytest.sh"

"$here/sanitize.sh"

if command -v clang++ >/dev/null 2>&1 &&
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  clang++ -x c++ -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
  "$here/fuzz.sh" "${WHD_FUZZ_SECONDS:-20}"
else
  echo "test: fuzz targets NOT run: clang++ with libFuzzer not found (Debian packages 'clang' and 'libclang-rt-dev')" >&2
fi
