#!/usr/bin/env bash
# Build the libFuzzer targets of tests/fuzz with clang (ASan+UBSan, CPU sources
# only: no CUDA) and run each for a bounded time, starting from the seed corpus in
# data/fuzz/. Exit status 1 when a target finds an input that breaks a property
# or crashes; the input is kept under $WHD_FUZZ_BUILD/artifacts/.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  default 25; TARGETs default to all: sigmf_meta capture_reader frame_decoder coded_decoder
# Environment: WHD_FUZZ_BUILD (default build-fuzz), WHD_FUZZ_CXX (default clang++),
#   WHD_JOBS (build jobs, and targets run at once).
# The targets run side by side, WHD_JOBS at a time: each is one process on one core, so
# each still gets SECONDS of a core, and the stage takes SECONDS x targets / WHD_JOBS.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
seconds=${1:-25}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(sigmf_meta capture_reader frame_decoder coded_decoder)
build=${WHD_FUZZ_BUILD:-$WHD_ROOT/build-fuzz}
cxx=${WHD_FUZZ_CXX:-clang++}

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz: $cxx not found: install the Debian packages 'clang' and 'libclang-rt-dev' (scripts/setup.sh does)" >&2
  exit 1
fi
cmake -S "$WHD_ROOT/tests/fuzz" -B "$build" $(whd_generator "$build") -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
  >"$build.configure.log" 2>&1 || { cat "$build.configure.log" >&2; exit 1; }
cmake --build "$build" -j "$WHD_JOBS"

# Per target: longest input, and the dictionary if any.
declare -A max_len=([sigmf_meta]=16384 [capture_reader]=4096 [frame_decoder]=24000 [coded_decoder]=16384)
declare -A named=()
for t in "${targets[@]}"; do
  [[ -n ${max_len[$t]:-} ]] || { echo "fuzz: unknown target '$t'" >&2; exit 2; }
  [[ -z ${named[$t]:-} ]] || { echo "fuzz: target '$t' named twice" >&2; exit 2; }
  named[$t]=1
done
mkdir -p "$build/artifacts"
declare -A pid=()
# An interrupted run takes its fuzzers with it (background jobs ignore SIGINT).
trap 'kill $(jobs -pr) 2>/dev/null || true' EXIT
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= WHD_JOBS)); do wait -n || true; done
  corpus="$build/corpus/$t" # what this machine's runs found; the seeds stay read-only
  mkdir -p "$corpus"
  opts=(-max_total_time="$seconds" -max_len="${max_len[$t]}" -timeout=20 -rss_limit_mb=2048
        -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-")
  [[ -f $WHD_ROOT/data/fuzz/$t.dict ]] && opts+=(-dict="$WHD_ROOT/data/fuzz/$t.dict")
  echo "fuzz: $t for ${seconds}s" >&2
  "$build/fuzz_$t" "${opts[@]}" "$corpus" "$WHD_ROOT/data/fuzz/$t" >"$build/$t.log" 2>&1 &
  pid[$t]=$!
done
failed=()
for t in "${targets[@]}"; do
  # wait PID gives the status of a process that wait -n reaped already (bash 5).
  if ! wait "${pid[$t]}"; then
    failed+=("$t")
    tail -n 40 "$build/$t.log" >&2
  fi
  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$build/$t.log" | sed "s/^/fuzz: $t: /" >&2 || true
done
if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]}; inputs in $build/artifacts/. Reproduce with $build/fuzz_TARGET INPUT," >&2
  echo "fuzz: fix, and keep the input as data/fuzz/TARGET/regress-NAME (fuzz_corpus_tests replays it)" >&2
  exit 1
fi
echo "fuzz: ${targets[*]}: no failure in ${seconds}s each" >&2
