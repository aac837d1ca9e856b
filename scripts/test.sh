#!/usr/bin/env bash
# The test command: install dependencies, build, run the whole suite. Every stage
# runs its tests or fails with a message; none passes having run nothing:
#   1. ctest (--no-tests=error; every test has a TIMEOUT, so a hang fails the test).
#      GPU tests skip, with their reason, on machines without a GPU.
#   2. the Python module's tests (scripts/pytest.sh);
#   3. the CPU suite again under ASan+UBSan (scripts/sanitize.sh, its own build);
#   4. each fuzz target for a short bounded time (scripts/fuzz.sh, clang with libFuzzer).
# A stage that cannot run (no module, no libFuzzer) fails. Outside CI, WHD_ALLOW_SKIP=1
# lets it be skipped instead, saying so; under CI=true or WHD_STRICT=1 it never is.
# WHD_FUZZ_SECONDS sets the time per fuzz target (default 20). Extra arguments go to
# the first ctest. Signals need no terminal: the suite runs the same in the
# background, under nohup or with no terminal at all. It ends by printing each
# stage's seconds; docs/decisions.md says what they come to on a two-core machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# May a stage that cannot run be skipped? Only when asked, and never in CI.
skip_allowed() {
  [[ ${WHD_ALLOW_SKIP:-0} == 1 && ${CI:-} != true && ${WHD_STRICT:-0} != 1 ]]
}
stage() { echo "test: ---- $1 ($(date +%T))" >&2; }
started=$SECONDS
stage_times=()
timed() { # timed NAME COMMAND...: run a stage, record its seconds
  local name=$1 t0=$SECONDS
  shift
  stage "$name"
  "$@"
  stage_times+=("$name $((SECONDS - t0)) s")
}

timed setup "$here/setup.sh"
source "$here/env.sh"
timed build whd_build
# --timeout: a default for any test without its own TIMEOUT (tests/CMakeLists.txt gives one to each).
run_ctest() { (cd "$WHD_BUILD" && ctest --no-tests=error --timeout 300 --output-on-failure -j "$WHD_JOBS" "$@"); }
timed ctest run_ctest "$@"
timed pytest "$here/pytest.sh"
timed sanitize "$here/sanitize.sh"

if command -v clang++ >/dev/null 2>&1 &&
  echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
  clang++ -x c++ -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
  timed fuzz "$here/fuzz.sh" "${WHD_FUZZ_SECONDS:-20}"
elif skip_allowed; then
  echo "test: fuzz targets SKIPPED (WHD_ALLOW_SKIP=1): clang++ with libFuzzer not found (Debian packages 'clang' and 'libclang-rt-dev', which scripts/setup.sh installs)" >&2
else
  echo "test: FAILED: clang++ with libFuzzer not found, so the fuzz targets cannot run: install the Debian packages 'clang' and 'libclang-rt-dev' (scripts/setup.sh does), or outside CI set WHD_ALLOW_SKIP=1 to skip them" >&2
  exit 1
fi
echo "test: passed in $((SECONDS - started)) s: $(IFS=,; echo "${stage_times[*]}" | sed 's/,/, /g')" >&2
