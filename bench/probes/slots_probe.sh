#!/usr/bin/env bash
# Whether more chunks in flight (--streams) or larger chunks (--batch) shorten the whole
# whd-rx process on coded and uncoded traffic: the x1 captures of `whd-bench traffic`
# (long, long-mcs2, packets, packets-mcs12; ci8, 30 dB) COPIES times end to end in
# /dev/shm, each decoded with every option set of SETS (';'-separated whd-rx options, ''
# for the defaults), the sets taking turns, REPEATS runs each, payload to /dev/shm.
# A set whose first word is @PATH runs the whd-rx at PATH (another build) instead of dist's.
# Usage (device `carry: ["dist"]`): bench/probes/slots_probe.sh dist [SCALE] [COPIES] [REPEATS] [SETS]
# Prints a Markdown table: the median whole-process seconds per shape and set; with
# WHD_PROBE_STAGES=FILE, one more run per shape and set with -v, its stage times to FILE.
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
scale=${2:-0.25}
copies=${3:-64}
repeats=${4:-3}
IFS=";" read -r -a sets <<<"${5:-;--streams 8;--streams 12};" # (the ; kept: a last empty set is not dropped)
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
src=/dev/shm/whd-shapes
"$dist/bin/whd-bench" traffic --shapes long,long-mcs2,packets,packets-mcs12 --types ci8 --backends gpu --repeats 1 \
  --scale "$scale" --rx "$dist/bin/whd-rx" --dir "$src" >/dev/null 2>&1
header="| shape |"
rule="|---|"
for o in "${sets[@]}"; do
  header+=" ${o:-defaults} [s] |"
  rule+="---:|"
done
echo "$header"
echo "$rule"
for shape in long long-mcs2 packets packets-mcs12; do
  cap=/dev/shm/probe-$shape.ci8
  rm -f "$cap"
  truth=/dev/shm/probe-$shape.truth
  rm -f "$truth"
  for ((i = 0; i < copies; i++)); do
    cat "$src/$shape-s$scale-ci8.sigmf-data" >>"$cap"
    cat "$src/$shape-s$scale-ci8.truth" >>"$truth"
  done
  declare -A t=()
  for ((r = 0; r < repeats; r++)); do
    for ((j = 0; j < ${#sets[@]}; j++)); do
      k=$(((j + r) % ${#sets[@]}))
      read -r rx opts <<<"${sets[$k]}"
      if [[ $rx == @* ]]; then rx=${rx#@}; else rx=$dist/bin/whd-rx opts=${sets[$k]}; fi
      t0=$(date +%s.%N)
      # shellcheck disable=SC2086 # the set is a list of options
      "$rx" "$cap" --backend gpu -q -o /dev/shm/probe-payload.bin --report /dev/null $opts || echo "failed: $shape ${sets[$k]}" >&2
      t1=$(date +%s.%N)
      ((r > 0)) || cmp -s /dev/shm/probe-payload.bin "$truth" || echo "payload unlike the truth: $shape ${sets[$k]}" >&2
      t[$k]+="$(python3 -c "print($t1 - $t0)") "
    done
  done
  if [[ -n ${WHD_PROBE_STAGES:-} ]]; then
    for ((j = 0; j < ${#sets[@]}; j++)); do
      read -r rx opts <<<"${sets[$j]}"
      if [[ $rx == @* ]]; then rx=${rx#@}; else rx=$dist/bin/whd-rx opts=${sets[$j]}; fi
      echo "## $shape: ${sets[$j]:-defaults}" >>"$WHD_PROBE_STAGES"
      # shellcheck disable=SC2086
      "$rx" "$cap" --backend gpu -v -o /dev/shm/probe-payload.bin --report /dev/null $opts 2>&1 | grep -E "stage|frame\(s\)" >>"$WHD_PROBE_STAGES"
    done
  fi
  row="| $shape |"
  for ((j = 0; j < ${#sets[@]}; j++)); do
    row+=" $(python3 -c "import sys; v = sorted(map(float, sys.argv[1:])); print(f'{v[len(v) // 2]:.3f}')" ${t[$j]}) |"
  done
  echo "$row"
  unset t
  rm -f "$cap" "$truth" /dev/shm/probe-payload.bin
done
