#!/usr/bin/env bash
# The whole-process measure at 4 s of air: whd-rx --backend gpu on a capture of each traffic
# shape holding about 4 s of air (~20 GB of ci8, in memory as in the page cache,
# payload to /dev/shm), so that set-up is amortised as it is for a real recording.
# Each capture is COPIES copies, end to end, of the shape's capture that `whd-bench
# traffic` makes (made first if absent; its frames, gaps and noise as listed there):
# raw ci8, each copy starting with its lead of noise. Per shape: the median of
# REPEATS whole processes timed from outside, the report's split (set-up; decode =
# first samples handed over to payload written, the steady region), x real time by
# air time, ns per data symbol, and the payload against the copies' truth (cmp).
# Usage (device `carry: ["dist"]`): scripts/device/traffic_air_round.sh dist [COPIES] [REPEATS] [SHAPES...]
# Writes $OUT/traffic-air.md and traffic-x1.{md,json} (or ./out-air); the x1 captures
# stay in $WHD_SHAPES. WHD_PAYLOAD_WRITE (default auto) is whd-rx's --payload-write.
# WHD_REPORTS (default "file") lists where the report goes, a row each, the forms
# taking turns within each repeat: file = --report FILE (its frames written while
# the capture decodes), stdout = standard output redirected to that file (written
# after the run); each form goes first in every other repeat.
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
copies=${2:-16}
repeats=${3:-3}
shift 3 || shift $#
shapes=("$@")
((${#shapes[@]})) || shapes=(long packets tiny bursty)
final=${OUT:-out-air}
mkdir -p "$final"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
src=${WHD_SHAPES:-/dev/shm/whd-shapes}
work=/dev/shm/whd-air
mkdir -p "$src" "$work"
md=$final/traffic-air.md
log=$final/traffic-air.log
: >"$log"
list=$(IFS=,; echo "${shapes[*]}")
pw=${WHD_PAYLOAD_WRITE:-auto}
read -r -a reports <<<"${WHD_REPORTS:-file}"
# The x1 captures, and their own whole-process rows ($OUT/traffic-x1.md).
"$dist/bin/whd-bench" traffic --shapes "$list" --types ci8 --backends gpu --repeats "$repeats" --rx "$dist/bin/whd-rx" --dir "$src" \
  --markdown "$final/traffic-x1.md" --json "$final/traffic-x1.json" >>"$log" 2>&1
{
  echo "# Traffic shapes at about 4 s of air, whole whd-rx process, GPU backend ($(date -u +%FT%TZ))"
  echo
  echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo "Command: \`scripts/device/traffic_air_round.sh dist $copies $repeats ${shapes[*]}\`: $copies copies of each \`whd-bench traffic\` ci8 capture end to end"
  echo "(raw ci8 in /dev/shm), \`whd-rx CAPTURE --backend gpu -v -o /dev/shm/... --payload-write $pw --report FILE\` (report: file) or \`... >FILE\`"
  echo "(report: stdout), stage times in traffic-air.log; median of $repeats processes timed from outside, the report forms taking turns."
  echo
  echo "| shape | report | GB | air [s] | frames | data symbols | whole process [s] | x real time (air) | ns / data symbol | report: setup / decode [s] | decode region x real time (air) | payload = truth |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|"
} >"$md"
for shape in "${shapes[@]}"; do
  base=$src/$shape-ci8
  [[ -f $base.sigmf-data ]] || { echo "| $shape | | no capture | | | | | | | | | |" >>"$md"; continue; }
  cap=$work/$shape.ci8
  truth=$work/$shape.truth
  rm -f "$cap" "$truth"
  for ((i = 0; i < copies; i++)); do
    cat "$base.sigmf-data" >>"$cap"
    cat "$base.truth" >>"$truth"
  done
  declare -A times=()
  same=
  for ((r = 0; r < repeats; r++)); do
    order=("${reports[@]}")
    if ((r % 2)); then # each form goes first in every other repeat (the first run after the copy reads slower)
      order=()
      for ((k = ${#reports[@]} - 1; k >= 0; k--)); do order+=("${reports[k]}"); done
    fi
    for form in "${order[@]}"; do
      t0=$(date +%s.%N)
      if [[ $form == stdout ]]; then
        "$dist/bin/whd-rx" "$cap" --backend gpu -v -o "$work/payload.bin" --payload-write "$pw" >"$work/report.$form.$r.json" 2>>"$log"
      else
        "$dist/bin/whd-rx" "$cap" --backend gpu -v -o "$work/payload.bin" --payload-write "$pw" --report "$work/report.$form.$r.json" 2>>"$log"
      fi
      rc=$?
      t1=$(date +%s.%N)
      times[$form]+="$(python3 -c "print($t1 - $t0)") $r $rc"$'\n'
      if [[ -z $same ]]; then
        cmp -s "$work/payload.bin" "$truth" && same=yes || same="no ($(cmp "$work/payload.bin" "$truth" 2>&1 | head -c 120))"
      fi
      rm -f "$work/payload.bin"
    done
  done
  for form in "${reports[@]}"; do
    med=$(printf '%s' "${times[$form]}" | sort -n | sed -n "$(((repeats + 1) / 2))p")
    python3 - "$med" "$work" "$cap" "$shape" "$same" "$form" >>"$md" <<'PY'
import json, os, sys
med, work, cap, shape, same, form = sys.argv[1:7]
secs, r, rc = med.split()
secs = float(secs)
if rc != "0":
    print(f"| {shape} | {form} | failed (rc {rc}) | | | | | | | | | |")
    sys.exit()
rep = json.load(open(f"{work}/report.{form}.{r}.json"))
t = rep["timing"]
air = t["air_seconds"]
n = rep["timing"]["data_symbols"]
gb = os.path.getsize(cap) / 1e9
print(f"| {shape} | {form} | {gb:.1f} | {air:.3f} | {len(rep['frames'])} | {n} | {secs:.3f} | {air / secs:.2f} | {secs * 1e9 / n:.1f} | "
      f"{t['setup_seconds']:.3f} / {t['decode_seconds']:.3f} | {air / t['decode_seconds']:.2f} | {same} |")
PY
  done
  unset times
  rm -f "$cap" "$truth" "$work"/report.*.json
done
cat "$md"
