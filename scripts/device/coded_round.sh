#!/usr/bin/env bash
# On the GPU machine: coded frames (profile 2) through the whole whd-rx process beside
# the same shapes uncoded. The x1 captures of long, long-mcs2, packets and
# packets-mcs12 (`whd-bench traffic --scale SCALE`, ci8: GPU and CPU rows, payload
# against the truth); then each pair concatenated to about 4 s of air (COPIES copies)
# and decoded by the GPU backend with the payload to /dev/shm, uncoded and coded runs
# taking turns, REPEATS each; and the CPU backend the same way on the x1 captures.
# Usage (device `carry: ["dist"]`): scripts/device/coded_round.sh dist [SCALE] [COPIES] [REPEATS]
# Writes $OUT/coded-round.md (and the x1 bench's markdown and JSON).
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
scale=${2:-0.25}
copies=${3:-64}
repeats=${4:-5}
out=${OUT:-out-coded}
mkdir -p "$out"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
src=/dev/shm/whd-shapes
work=/dev/shm/whd-coded
mkdir -p "$src" "$work"
md=$out/coded-round.md
log=$out/coded-round.log
: >"$log"
"$dist/bin/whd-bench" traffic --shapes long,long-mcs2,packets,packets-mcs12 --types ci8 --backends gpu,cpu --repeats 3 --scale "$scale" \
  --rx "$dist/bin/whd-rx" --dir "$src" --markdown "$out/traffic-coded-x1.md" --json "$out/traffic-coded-x1.json" >>"$log" 2>&1
stem() { if [[ $scale == 1 ]]; then echo "$src/$1-ci8"; else echo "$src/$1-s$scale-ci8"; fi; }
# one BACKEND CAPTURE TRUTH: whole-process seconds, then the report's fields, on one line.
one() {
  local t0 t1
  t0=$(date +%s.%N)
  "$dist/bin/whd-rx" "$2" --backend "$1" -o "$work/payload.bin" --report "$work/report.json" 2>>"$log"
  local rc=$?
  t1=$(date +%s.%N)
  local same=no
  cmp -s "$work/payload.bin" "$3" && same=yes
  python3 - "$t0" "$t1" "$rc" "$same" "$work/report.json" <<'PY'
import json, sys
t0, t1, rc, same, rep = sys.argv[1:6]
r = json.load(open(rep)) if rc == "0" else {"timing": {}}
t = r["timing"]
print(f"{float(t1) - float(t0):.4f} {rc} {same} {t.get('air_seconds', 0)} {t.get('data_symbols', 0)} {t.get('info_gbps') or 0} "
      f"{t.get('setup_seconds', 0)} {sum(f.get('rs_failed', 0) for f in r.get('frames', []))}")
PY
  rm -f "$work/payload.bin" "$work/report.json"
}
{
  echo "# Coded frames beside uncoded ones, whole whd-rx process ($(date -u +%FT%TZ))"
  echo
  echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo "Command: \`scripts/device/coded_round.sh dist $scale $copies $repeats\`. GPU: $copies copies of each x1 capture end to end (raw ci8 in"
  echo "/dev/shm), \`whd-rx CAPTURE --backend gpu -o /dev/shm/... --report FILE\`, uncoded and coded taking turns, median of $repeats."
  echo "CPU: the x1 captures (scale $scale), \`--backend cpu\` (all cores), likewise. Time: the whole process, timed from outside."
  echo
  echo "| backend | shape | air [s] | data symbols | whole process [s] (median) | x real time (air) | ns / data symbol | info Gb/s (air) | RS failed | payload = truth | coded / uncoded time |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|"
} >"$md"
for backend in gpu cpu; do
  for pair in "long long-mcs2" "packets packets-mcs12"; do
    read -r a b <<<"$pair"
    declare -A cap=() truth=() res=()
    for s in $a $b; do
      if [[ $backend == gpu ]]; then
        cap[$s]=$work/$s.ci8
        truth[$s]=$work/$s.truth
        rm -f "${cap[$s]}" "${truth[$s]}"
        for ((i = 0; i < copies; i++)); do
          cat "$(stem "$s").sigmf-data" >>"${cap[$s]}"
          cat "$(stem "$s").truth" >>"${truth[$s]}"
        done
      else
        cap[$s]=$(stem "$s").sigmf-meta
        truth[$s]=$(stem "$s").truth
      fi
    done
    for ((r = 0; r < repeats; r++)); do
      order=("$a" "$b")
      ((r % 2)) && order=("$b" "$a")
      for s in "${order[@]}"; do
        res[$s]+="$(one "$backend" "${cap[$s]}" "${truth[$s]}")"$'\n'
      done
    done
    python3 - "$backend" "$a" "$b" "${res[$a]}" "${res[$b]}" >>"$md" <<'PY'
import sys
backend, a, b, ra, rb = sys.argv[1:6]
def rows(text):
    return [l.split() for l in text.strip().splitlines()]
def median(v):
    v = sorted(v)
    return v[len(v) // 2]
meds = {}
for name, text in ((a, ra), (b, rb)):
    rs = rows(text)
    ok = all(x[1] == "0" for x in rs)
    t = median([float(x[0]) for x in rs])
    meds[name] = t
    x = rs[0]
    air, n, info, failed = float(x[3]), int(x[4]), float(x[5]), int(x[7])
    same = "yes" if all(y[2] == "yes" for y in rs) else "no"
    ratio = f"{t / meds[a]:.3f}" if name == b else ""
    if not ok:
        print(f"| {backend} | {name} | failed | | | | | | | | |")
        continue
    print(f"| {backend} | {name} | {air:.3f} | {n} | {t:.3f} | {air / t:.3f} | {t * 1e9 / n:.1f} | {info:.3f} | {failed} | {same} | {ratio} |")
PY
    rm -f "$work"/*.ci8 "$work"/*.truth
    unset cap truth res
  done
done
cat "$md"
