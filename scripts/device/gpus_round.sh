#!/usr/bin/env bash
# Several GPUs as users run them: the whole whd-rx process with --gpus 1 against
# --gpus N (one or more counts) on each traffic shape, with the payload written to
# /dev/shm and with none, the counts taking turns (1, N, ..., then rotated), so that
# all see the same page cache and the same host.
# Each capture is COPIES copies, end to end, of the shape's `whd-bench traffic` capture
# (made first if absent) as raw samples in /dev/shm; cf32 captures take a quarter of
# the copies (4x the bytes a sample). Per row: medians of REPEATS processes timed from
# outside, N against 1 (time of 1 / time of N), the set-up medians from the reports,
# and the payload against the copies' truth (once per count).
# Usage (device `carry: ["dist"]`): scripts/device/gpus_round.sh dist COPIES REPEATS COUNTS TYPES SHAPES...
#   COUNTS: comma-separated GPU counts to set against 1 (2 or 2,4).
#   TYPES: comma-separated, ci8 and/or cf32. Writes $OUT/gpus.md and gpus.log.
# WHD_BASE_DIST: a second bundle whose whd-rx runs as extra rows "(base)" (before/after).
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
copies=${2:-16}
repeats=${3:-5}
counts=${4:-2}
read -r -a ns <<<"${counts//,/ }"
types=${5:-ci8}
shift 5 || shift $#
shapes=("$@")
((${#shapes[@]})) || shapes=(long packets tiny bursty long-mcs2 packets-mcs12)
final=${OUT:-out-gpus}
mkdir -p "$final"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
src=${WHD_SHAPES:-/dev/shm/whd-shapes}
work=/dev/shm/whd-gpus
mkdir -p "$src" "$work"
md=$final/gpus.md
log=$final/gpus.log
: >>"$log"
list=$(IFS=,; echo "${shapes[*]}")
# whd-bench traffic names its captures by the sample type's full name (cf32_le).
stored_name() { [[ $1 == cf32 ]] && echo cf32_le || echo "$1"; }
# The x1 captures (one GPU run each, no timing kept: --repeats 1).
missing=()
for s in "${shapes[@]}"; do
  for t in ${types//,/ }; do [[ -f $src/$s-$(stored_name "$t").sigmf-data ]] || missing+=("$s"); done
done
if ((${#missing[@]})); then
  "$dist/bin/whd-bench" traffic --shapes "$list" --types "$types" --backends gpu --repeats 1 --rx "$dist/bin/whd-rx" --dir "$src" \
    >>"$log" 2>&1
fi
rxs=("$dist/bin/whd-rx")
[[ -n ${WHD_BASE_DIST:-} ]] && rxs+=("$(cd "$WHD_BASE_DIST" && pwd)/bin/whd-rx")
{
  echo "# --gpus 1 against --gpus ${counts}, the whole whd-rx process, GPU backend ($(date -u +%FT%TZ))"
  echo
  echo "$(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//'); $(nproc) CPUs; commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo "Command: \`scripts/device/gpus_round.sh dist $copies $repeats $counts $types ${shapes[*]}\`; \`whd-rx CAPTURE --backend gpu --gpus G"
  echo "[-o /dev/shm/...] --report FILE\`, medians of $repeats processes each, the counts taking turns."
  echo "Columns per count N: the median whole process [s], N against 1 (time of 1 / time of N), set-up median [s]."
  echo
  echo "| shape | type | payload | whd-rx | GB | air [s] | x real time (1 GPU) | 1 GPU [s] | set-up [s] | N: time, against 1, set-up | payload = truth |"
  echo "|---|---|---|---|---:|---:|---:|---:|---:|---|---|"
} >>"$md"
for type in ${types//,/ }; do
  c=$copies
  [[ $type == cf32 ]] && c=$(((copies + 3) / 4))
  for shape in "${shapes[@]}"; do
    base=$src/$shape-$(stored_name "$type")
    [[ -f $base.sigmf-data ]] || { echo "| $shape | $type | | | no capture | | | | | | | |" >>"$md"; continue; }
    cap=$work/$shape.$type
    truth=$work/$shape.truth
    rm -f "$cap" "$truth"
    for ((i = 0; i < c; i++)); do
      cat "$base.sigmf-data" >>"$cap"
      cat "$base.truth" >>"$truth"
    done
    for rx in "${rxs[@]}"; do
      label=new
      [[ $rx != "$dist/bin/whd-rx" ]] && label=base
      for payload in file none; do
        declare -A times=() setups=()
        same=
        all=(1 "${ns[@]}")
        for ((r = 0; r < repeats; r++)); do
          k=$((r % ${#all[@]}))
          order=("${all[@]:k}" "${all[@]:0:k}")
          for g in "${order[@]}"; do
            out_args=()
            [[ $payload == file ]] && out_args=(-o "$work/payload.bin")
            t0=$(date +%s.%N)
            "$rx" "$cap" --backend gpu --gpus "$g" "${out_args[@]}" --report "$work/report.json" 2>>"$log"
            rc=$?
            t1=$(date +%s.%N)
            if ((rc != 0)); then
              times[$g]+="999 "
              echo "$label $shape $type $payload gpus $g: rc $rc" >>"$log"
              continue
            fi
            times[$g]+="$(python3 -c "print($t1 - $t0)") "
            setups[$g]+="$(python3 -c "import json; print(json.load(open('$work/report.json'))['timing']['setup_seconds'])") "
            if [[ $payload == file && $r -lt ${#all[@]} && ! $same =~ (^| )$g: ]]; then
              cmp -s "$work/payload.bin" "$truth" && same+="$g:yes " || same+="$g:NO "
            fi
            rm -f "$work/payload.bin"
          done
        done
        air=$(python3 -c "import json; print(json.load(open('$work/report.json'))['timing']['air_seconds'])")
        args=()
        for g in "${all[@]}"; do args+=("$g" "${times[$g]:-}" "${setups[$g]:-}"); done
        python3 - "$shape" "$type" "$payload" "$label" "$cap" "$air" "${same:-n/a}" "${args[@]}" >>"$md" <<'PY'
import os, statistics as st, sys
shape, type_, payload, label, cap, air, same = sys.argv[1:8]
rest = sys.argv[8:]
med = lambda s: st.median(float(x) for x in s.split()) if s.split() else float("nan")
rows = [(rest[i], med(rest[i + 1]), med(rest[i + 2])) for i in range(0, len(rest), 3)]
air = float(air)
one = rows[0][1]
cells = "; ".join(f"{g}: {t:.3f}, **{one / t:.2f}x**, {s:.2f}" for g, t, s in rows[1:])
print(f"| {shape} | {type_} | {payload} | {label} | {os.path.getsize(cap) / 1e9:.1f} | {air:.3f} | {air / one:.2f} | {one:.3f} | "
      f"{rows[0][2]:.2f} | {cells} | {same.strip()} |")
PY
        unset times setups
      done
    done
    rm -f "$cap" "$truth" "$work/report.json"
  done
done
cat "$md"
