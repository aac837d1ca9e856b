#!/usr/bin/env bash
# How the CPU backend's stages scale with its threads: whd-rx --backend cpu -v -j N
# on the tiny and packets captures as whd-bench traffic makes them (a quarter second
# of air each, ci8), N taking the values of WHD_CPU_THREADS (default "1 4 8 16"),
# payload and report into the capture's folder. A row per run: the whole process
# timed from outside and the stage times whd-rx -v lists (search and locate of the
# regions, the wait for the look-ahead, the walk, the decode, the payload written,
# frames handed over), so that what stops the threads from adding up shows.
# Usage (device, carry dist): bench/probes/cpu_stages.sh dist [CAPTURES...]
#   CAPTURES default: tiny packets (made with whd-tx into $WHD_CPU_DIR, default
#   /dev/shm/whd-cpu, if absent; another name there is taken as a SigMF capture).
set -uo pipefail
dist=${1:-dist}
shift || true
caps=("$@")
((${#caps[@]})) || caps=(tiny packets)
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
d=${WHD_CPU_DIR:-/dev/shm/whd-cpu}
mkdir -p "$d"
tx=$dist/bin/whd-tx rx=$dist/bin/whd-rx
[[ " ${caps[*]} " != *" tiny "* || -f $d/tiny.sigmf-meta ]] ||
  $tx -o "$d/tiny" -d ci8 --mod qam16 --frames 100000 --nd 4 --snr-db 30 --seed 7 >/dev/null 2>&1
[[ " ${caps[*]} " != *" packets "* || -f $d/packets.sigmf-meta ]] ||
  $tx -o "$d/packets" -d ci8 --mod qpsk,qam16 --frames 20000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1
echo "$(nproc) CPUs; $(date -u +%FT%TZ); $(cat "$dist/COMMIT" 2>/dev/null || echo 'commit unknown')"
for cap in "${caps[@]}"; do
  for n in ${WHD_CPU_THREADS:-1 4 8 16}; do
    rm -f "$d/out.bin" "$d/rep.json"
    t0=$(date +%s.%N)
    "$rx" "$d/$cap.sigmf-meta" --backend cpu -j "$n" -v -o "$d/out.bin" --report "$d/rep.json" 2>"$d/log.txt" >/dev/null
    rc=$?
    t1=$(date +%s.%N)
    python3 - "$cap" "$n" "$rc" "$t0" "$t1" "$d/log.txt" <<'PY'
import re, sys
cap, n, rc, t0, t1, log = sys.argv[1:]
stages = []
for line in open(log):
    m = re.search(r"stage (.+): ([0-9.]+) s$", line.rstrip())
    if m:
        stages.append(f"{m.group(1).split(' (')[0]} {float(m.group(2)):.3f}")
print(f"{cap} -j {n}: rc {rc}, whole {float(t1) - float(t0):.3f} s; " + "; ".join(stages))
PY
  done
done
