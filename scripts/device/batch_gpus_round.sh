#!/usr/bin/env bash
# whdrx.batch on two GPUs against one, and the host's read ceiling, in one run: a
# folder of 8 raw ci8 captures of about 1 s of air each in /dev/shm (each COPIES
# copies, end to end, of the `whd-bench traffic` long capture, made first if absent),
# decoded by `python3 -m whdrx.batch DIR --out OUT --backend gpu` with
# CUDA_VISIBLE_DEVICES=0 (one worker) and =0,1 (one worker a GPU), the whole command
# timed from outside, the two taking turns (the first of each pair alternating);
# then the same files read without decoding, `cat FILE >/dev/null` by 1 reader and by
# 2 (and 8) at once, the files split between them, timed alike. Per row: the median
# of RUNS, GB/s and x real time by air over the whole command; for the batch also the
# decode span (first decode start to last decode end, from the progress lines'
# times: the cluster's start and stop left out) and each payload against the truth
# (cmp, first run of each count). The module and dask.distributed come from the
# bundle: DIST/python (built for the device's Python) and DIST/wheels, unpacked here
# onto PYTHONPATH (scripts/bundle.sh with WHD_BUNDLE_PYTHON_BUILD and WHD_BUNDLE_WHEELS).
# Usage (device `carry: ["dist"]`): scripts/device/batch_gpus_round.sh dist [RUNS]  (RUNS default 3)
# Writes $OUT/batch-gpus.md and batch-gpus.log (or ./out-batch-gpus).
# Environment (for a check without GPUs, or other sizes): WHD_BATCH_BACKEND (gpu; with
# cpu the counts are --workers instead of GPUs), WHD_BATCH_GPUS (2), WHD_BATCH_CAPTURES
# (8), WHD_BATCH_AIR (seconds of air a capture, 1.0), WHD_BATCH_SCALE (whd-bench
# traffic --scale of the base capture, 1), WHD_BATCH_READERS ("1 2 8"), WHD_SHAPES
# (where the base capture is kept, /dev/shm/whd-shapes), WHD_BATCH_WORK (the captures
# and outputs, removed at the end, /dev/shm/whd-batch), WHD_PYTHON (python3).
set -uo pipefail
export LC_ALL=C # $EPOCHREALTIME with a dot
dist=$(cd "${1:-dist}" && pwd)
runs=${2:-3}
final=${OUT:-out-batch-gpus}
mkdir -p "$final"
final=$(cd "$final" && pwd)
source "$(dirname "$0")/device_env.sh"
py=${WHD_PYTHON:-python3}
backend=${WHD_BATCH_BACKEND:-gpu}
n=${WHD_BATCH_GPUS:-2}
nof_caps=${WHD_BATCH_CAPTURES:-8}
air_target=${WHD_BATCH_AIR:-1.0}
scale=${WHD_BATCH_SCALE:-1}
read -r -a readers <<<"${WHD_BATCH_READERS:-1 2 8}"
src=${WHD_SHAPES:-/dev/shm/whd-shapes}
work=${WHD_BATCH_WORK:-/dev/shm/whd-batch}
md=$final/batch-gpus.md
log=$final/batch-gpus.log
: >"$log"
deps=''
trap 'rm -rf "$work" ${deps:+"$deps"}' EXIT
say() { echo "$*" | tee -a "$log" >&2; }

export PYTHONPATH="$dist/python${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G "$dist/wheels/*.whl" >/dev/null; then
  deps=$(mktemp -d)
  for w in "$dist"/wheels/*.whl; do "$py" -m zipfile -e "$w" "$deps"; done
  export PYTHONPATH="$PYTHONPATH:$deps"
fi
if ! "$py" -c "import whdrx, numpy, dask, distributed; print('whdrx', whdrx.__file__, 'numpy', numpy.__version__, 'distributed', distributed.__version__)" >>"$log" 2>&1; then
  say "batch_gpus_round: $py cannot import whdrx, numpy and dask.distributed (PYTHONPATH=$PYTHONPATH); see $log"
  exit 1
fi

# The base capture (one whd-rx run on it, no timing kept), then the folder of copies.
mkdir -p "$src"
base=$src/long-ci8
[[ $scale != 1 ]] && base=$src/long-s$scale-ci8
if [[ ! -f $base.sigmf-data ]]; then
  say "making $base (whd-bench traffic)"
  "$dist/bin/whd-bench" traffic --shapes long --types ci8 --backends "$backend" --repeats 1 --scale "$scale" \
    --rx "$dist/bin/whd-rx" --dir "$src" >>"$log" 2>&1
fi
[[ -f $base.sigmf-data && -f $base.truth ]] || { say "batch_gpus_round: no $base.sigmf-data/.truth (see $log)"; exit 1; }
# Air of one copy: samples (2 bytes each in ci8) over the meta's rate.
read -r base_air copies <<<"$("$py" - "$base" "$air_target" <<'PY'
import json, os, sys
base, target = sys.argv[1], float(sys.argv[2])
rate = json.load(open(base + ".sigmf-meta"))["global"]["core:sample_rate"]
air = os.path.getsize(base + ".sigmf-data") / 2 / rate
print(f"{air:.6f}", max(1, round(target / air)))
PY
)"
[[ -n ${copies:-} ]] || { say "batch_gpus_round: cannot read $base.sigmf-meta"; exit 1; }
rm -rf "$work"
caps=$work/captures
mkdir -p "$caps"
need=$(($(stat -c %s "$base.sigmf-data") * copies * nof_caps + $(stat -c %s "$base.truth") * copies * (nof_caps + 1)))
avail=$(df --output=avail -B1 "$work" | tail -1)
if ((need > avail)); then
  say "batch_gpus_round: $need bytes needed in $work, $avail free; lower WHD_BATCH_AIR or WHD_BATCH_CAPTURES"
  exit 1
fi
truth=$work/truth
for ((c = 0; c < copies; c++)); do cat "$base.truth"; done >"$truth"
for ((i = 0; i < nof_caps; i++)); do
  for ((c = 0; c < copies; c++)); do cat "$base.sigmf-data"; done >"$caps/cap$i.ci8" &
done
wait
bytes=$(du -cb "$caps"/*.ci8 | tail -1 | cut -f1)
air=$("$py" -c "print(f'{$base_air * $copies * $nof_caps:.6f}')")
say "$nof_caps captures of $copies x $(basename "$base") ($base_air s of air a copy): $bytes bytes, $air s of air"

# stamp: each line of the input with the time it came ($EPOCHREALTIME).
stamp() { while IFS= read -r l; do printf '%s %s\n' "$EPOCHREALTIME" "$l"; done; }
# batch G R: one whole whdrx.batch command on G GPUs (G workers with the cpu backend).
declare -A times=() spans=() same=() fails=()
batch() {
  local g=$1 r=$2 o=$work/out-$1 t0 t1 rc cmd
  cmd=("$py" -m whdrx.batch "$caps" --out "$o" --backend "$backend")
  if [[ $backend == cpu ]]; then
    cmd+=(--workers "$g")
  else
    cmd=(env CUDA_VISIBLE_DEVICES="$(seq -s, 0 $((g - 1)))" "${cmd[@]}")
  fi
  rm -rf "$o"
  # The end is taken when the command exits (the pipe may outlive it in a process of its own).
  t0=$EPOCHREALTIME
  { "${cmd[@]}" 2>&1 >"$o.table"; echo "$? $EPOCHREALTIME" >"$o.end"; } | stamp >"$o.progress"
  rc=1 t1=0
  read -r rc t1 <"$o.end"
  { echo "== run $r, $g: ${cmd[*]} (rc $rc)"; cat "$o.progress" "$o.table"; } >>"$log"
  if ((rc != 0)); then
    fails[$g]+="run $r rc $rc; "
    rm -rf "$o" "$o".*
    return
  fi
  times[$g]+="$("$py" -c "print($t1 - $t0)") "
  # First decode start (a line's time less its seconds) to the last line's time.
  spans[$g]+="$("$py" - "$o.progress" <<'PY'
import re, sys
ends = [(float(t), float(s)) for t, s in re.findall(r"^(\S+) \[\d+/\d+\] .*: ok, \d+ frame\(s\), (\S+) s$", open(sys.argv[1]).read(), re.M)]
print(max(t for t, _ in ends) - min(t - s for t, s in ends) if ends else "nan")
PY
) "
  if ((r == 0)); then
    local ok=0 f
    for f in "$caps"/*.ci8; do cmp -s "$o/$(basename "$f").payload" "$truth" && ok=$((ok + 1)); done
    same[$g]="$ok/$nof_caps"
  fi
  rm -rf "$o" "$o".*
}
# ceiling K: the captures read by K readers at once (cat to /dev/null), files dealt round.
declare -A reads=()
ceiling() {
  local k=$1 j t0 t1 files=("$caps"/*.ci8)
  t0=$EPOCHREALTIME
  for ((j = 0; j < k; j++)); do
    (for ((i = j; i < ${#files[@]}; i += k)); do cat "${files[i]}" >/dev/null; done) &
  done
  wait
  t1=$EPOCHREALTIME
  reads[$k]+="$("$py" -c "print($t1 - $t0)") "
}

for ((r = 0; r < runs; r++)); do
  order=(1 "$n")
  ((r % 2)) && order=("$n" 1)
  for g in "${order[@]}"; do
    say "run $r: whdrx.batch, $g $([[ $backend == cpu ]] && echo worker || echo GPU)(s)"
    batch "$g" "$r"
  done
  rorder=("${readers[@]}")
  if ((r % 2)); then
    rorder=()
    for ((k = ${#readers[@]} - 1; k >= 0; k--)); do rorder+=("${readers[k]}"); done
  fi
  for k in "${rorder[@]}"; do ceiling "$k"; done
done
say "reads: $(for k in "${readers[@]}"; do echo -n "$k: ${reads[$k]}; "; done)"

gpu_names=$(command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//' | paste -sd, || echo "no GPU")
unit=GPU
[[ $backend == cpu ]] && unit=worker
{
  echo "# whdrx.batch on $n ${unit}s against 1, and the host's read ceiling ($(date -u +%FT%TZ))"
  echo
  echo "$gpu_names; $(nproc) CPUs; $("$py" --version 2>&1); $(cat --version | head -1); commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo "Command: \`scripts/device/batch_gpus_round.sh dist $runs\`: $nof_caps raw ci8 captures in /dev/shm, each $copies copies of"
  echo "\`$(basename "$base")\` end to end ($base_air s of air a copy); \`python3 -m whdrx.batch DIR --out /dev/shm/... --backend $backend\`"
  [[ $backend == cpu ]] && echo "with \`--workers G\` (the cpu backend: workers stand for GPUs)" ||
    echo "with CUDA_VISIBLE_DEVICES=0 or 0,...,$((n - 1)) (one worker a GPU)"
  echo "against \`cat FILE >/dev/null\` by K readers at once (the files dealt round); medians of $runs, the counts taking turns."
  echo
} >"$md"
"$py" - "$n" "$unit" "$bytes" "$air" "${times[1]:-}" "${times[$n]:-}" "${spans[1]:-}" "${spans[$n]:-}" "${same[1]:-}" \
  "${same[$n]:-}" "${fails[1]:-}" "${fails[$n]:-}" "${readers[*]}" "$(for k in "${readers[@]}"; do echo -n "${reads[$k]:-}|"; done)" \
  >>"$md" <<'PY'
import math, statistics as st, sys
n, unit, nbytes, air, t1, tn, s1, sn, same1, samen, fail1, failn, readers, reads = sys.argv[1:15]
gb, air = int(nbytes) / 1e9, float(air)
vals = lambda s: [float(x) for x in s.split()]
med = lambda s: st.median(vals(s)) if s.split() else math.nan
runs = lambda s: ", ".join(f"{x:.2f}" for x in vals(s))
a, b = med(t1), med(tn)
reads = dict(zip(readers.split(), reads.split("|")))
ceil = {k: med(v) for k, v in reads.items()}
best = min(ceil.values()) if ceil else math.nan
print(f"| what | median [s] | runs [s] | GB/s ({gb:.1f} GB) | x real time ({air:.2f} s of air) | against 1 {unit} "
      f"| against the fastest read | decode span [s] (x real time) | payload = truth |")
print("|---|---:|---|---:|---:|---:|---:|---|---|")
for g, t, s, same, fail in (("1", t1, s1, same1, fail1), (n, tn, sn, samen, failn)):
    m, sp = med(t), med(s)
    note = f" (failed: {fail.strip('; ')})" if fail else ""
    vs = "" if g == "1" else f"**{a / m:.2f}x**"
    print(f"| whdrx.batch, {g} {unit}{'s' if g != '1' else ''}{note} | {m:.2f} | {runs(t)} | {gb / m:.2f} | {air / m:.2f} | {vs} "
          f"| {best / m:.2f} | {sp:.2f} ({air / sp:.2f}) | {same or 'n/a'} |")
for k, v in reads.items():
    m = med(v)
    print(f"| cat, {k} reader{'s' if k != '1' else ''} | {m:.2f} | {runs(v)} | {gb / m:.2f} | {air / m:.2f} | | {best / m:.2f} | | |")
print()
ok = a / b >= 1.6
print(f"{n} {unit}s against 1, whole command: **{a / b:.2f}x** (target 1.6x: {'met' if ok else 'not met'}); over the decode "
      f"span: {med(s1) / med(sn):.2f}x. Whole command of 1 / {n}: {gb / a:.2f} / {gb / b:.2f} GB/s against "
      + ", ".join(f"{gb / c:.2f} GB/s by {k} reader{'s' if k != '1' else ''}" for k, c in ceil.items()) + ".")
PY
cat "$md"
