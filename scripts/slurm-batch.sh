#!/usr/bin/env bash
# Decode an archive of captures as a Slurm job array, for HPC sites without Dask:
# each array task runs the per-capture work of `python3 -m whdrx.batch` (the same
# function, decode_one) on one capture with `--one`, and a last job prints and
# compacts the summary. Outputs are those of whdrx.batch: OUT/NAME.payload,
# OUT/NAME.report.json, one line per capture in OUT/summary.jsonl (appended under a
# lock by the tasks); captures already done in OUT are skipped (WHD_FORCE=1 redoes).
#
# Submit (from a checkout with a build, on the login node):
#   scripts/slurm-batch.sh --submit OUT CAPTURE_OR_DIR...
#     lists the captures into OUT/captures.txt, then submits
#     sbatch --array=0-(N-1)[%WHD_SLURM_MAX] scripts/slurm-batch.sh OUT/captures.txt OUT
#     and a job after it (afterany) running python3 -m whdrx.batch --summary --out OUT.
# One task by hand (what each array task runs):
#   SLURM_ARRAY_TASK_ID=0 scripts/slurm-batch.sh OUT/captures.txt OUT
#
# Each task asks for one GPU and 16 cores (below); on CPU-only partitions pass
# sbatch options on the command line, which override these: WHD_SBATCH_ARGS="--gres=none
# --partition=cpu" with WHD_BACKEND=cpu. Environment: WHD_BACKEND (auto|cpu|gpu, default
# auto), WHD_FORCE, WHD_SLURM_MAX (tasks at once), WHD_SBATCH_ARGS, WHD_BUILD (the build
# folder, default ROOT/build), WHD_PYTHON (default: the one the build recorded in
# BUILD/python/whdrx.env, else python3). An installed whdrx (cmake --install
# BUILD --component python) is used when the build folder has none.
#
#SBATCH --job-name=whdrx-batch
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=16
#SBATCH --time=01:00:00
#SBATCH --output=whdrx-batch-%A_%a.out
set -euo pipefail

# Slurm runs a copy of this script from its spool folder: the checkout comes from
# WHD_ROOT, which --submit exports.
root=${WHD_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
build=${WHD_BUILD:-$root/build}
if [[ -f $build/python/whdrx.env ]]; then
  WHD_PYTHON_SKIPPED='' WHD_PYTHONPATH=''
  py_from_build=$(source "$build/python/whdrx.env" && echo "${WHD_PYTHON:-}")
  export PYTHONPATH="$build/python${PYTHONPATH:+:$PYTHONPATH}"
fi
py=${WHD_PYTHON:-${py_from_build:-python3}}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '/^set -euo/d; s/^# \{0,1\}//' >&2
  exit 2
}

if [[ ${1:-} == --submit ]]; then
  (($# >= 3)) || usage
  out=$2
  shift 2
  mkdir -p "$out"
  list=$out/captures.txt
  "$py" -c 'import sys; from whdrx.batch import find_captures; print("\n".join(find_captures(sys.argv[1:])))' "$@" >"$list"
  n=$(grep -c . "$list" || true)
  ((n > 0)) || { echo "slurm-batch: no capture found in $*" >&2; exit 1; }
  export WHD_ROOT=$root WHD_BUILD=$build
  # shellcheck disable=SC2086
  job=$(sbatch --parsable --export=ALL --array=0-$((n - 1))${WHD_SLURM_MAX:+%$WHD_SLURM_MAX} ${WHD_SBATCH_ARGS:-} \
    "$root/scripts/slurm-batch.sh" "$list" "$out")
  summary=$(sbatch --parsable --export=ALL --dependency=afterany:"${job%%;*}" --job-name=whdrx-summary \
    --gres=none --cpus-per-task=1 --output="$out/summary-%j.md" --wrap="'$py' -m whdrx.batch --summary --out '$out'")
  echo "slurm-batch: $n capture(s): array job $job, summary job $summary (table in $out/summary-$summary.md)"
  exit 0
fi

(($# == 2)) || usage
list=$1
out=$2
task=${SLURM_ARRAY_TASK_ID:?"slurm-batch: not an array task (SLURM_ARRAY_TASK_ID is unset); submit with --submit"}
capture=$(sed -n "$((task + 1))p" "$list")
[[ -n $capture ]] || { echo "slurm-batch: $list has no line $((task + 1))" >&2; exit 1; }
args=(--one "$capture" --list "$list" --out "$out" --backend "${WHD_BACKEND:-auto}" --threads "${SLURM_CPUS_PER_TASK:-0}")
[[ ${WHD_FORCE:-0} == 1 ]] && args+=(--force)
exec "$py" -m whdrx.batch "${args[@]}"
