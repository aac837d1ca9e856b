#!/usr/bin/env bash
# On the GPU machine: coded frames (profile 2) through the whole whd-rx process beside
# the same shapes uncoded. The x1 captures of long, long-mcs2, packets and
# packets-mcs12 (`whd-bench traffic --scale SCALE`, ci8: GPU and CPU rows, payload
# against the truth); then each pair concatenated to about 4 s of air (COPIES copies)
# and decoded by the GPU backend with the payload to /dev/shm, uncoded and coded runs
# taking turns, REPEATS each; and the CPU backend the same way on the x1 captures.
# With SNR (dB) the x1 captures are made by whd-tx instead, as the shapes but on AWGN (no
# taps) at that SNR, where the decoder and RS are busy: the payload is then compared bit
# by bit with the truth. Each row gives the report's peak RSS and device memory.
# Usage (device `carry: ["dist"]`): scripts/device/coded_round.sh dist [SCALE] [COPIES] [REPEATS] [SNR]
# Writes $OUT/coded-round.md (coded-round-snrSNR.md with SNR; and the x1 bench's markdown
# and JSON).
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
scale=${2:-0.25}
copies=${3:-64}
repeats=${4:-5}
snr=${5:-}
out=${OUT:-out-coded}
mkdir -p "$out"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
src=/dev/shm/whd-shapes${snr:+-snr$snr}
work=/dev/shm/whd-coded
mkdir -p "$src" "$work"
md=$out/coded-round${snr:+-snr$snr}.md
log=$out/coded-round${snr:+-snr$snr}.log
: >"$log"
stem() { if [[ $scale == 1 ]]; then echo "$src/$1-ci8"; else echo "$src/$1-s$scale-ci8"; fi; }
if [[ -n $snr ]]; then
  # The shapes of `whd-bench traffic` (long: 16 x 65536 16-QAM; packets: 20000 x 52 QPSK
  # and 16-QAM in turn), on AWGN at $snr dB.
  n_long=$(python3 -c "print(max(1, round(16 * $scale)))")
  n_packets=$(python3 -c "print(max(1, round(20000 * $scale)))")
  tx() { "$dist/bin/whd-tx" -o "$(stem "$1")" -d ci8 -q --seed 7 --snr-db "$snr" --cfo-hz 300e3 --random-phase "${@:2}" >>"$log" 2>&1; }
  tx long --frames "$n_long" --nd 65536 --mod qam16
  tx long-mcs2 --frames "$n_long" --nd 65536 --mcs 2
  tx packets --frames "$n_packets" --nd 52 --mod qpsk,qam16
  tx packets-mcs12 --frames "$n_packets" --nd 52 --mcs 1,2
else
"$dist/bin/whd-bench" traffic --shapes long,long-mcs2,packets,packets-mcs12 --types ci8 --backends gpu,cpu --repeats 3 --scale "$scale" \
  --rx "$dist/bin/whd-rx" --dir "$src" --markdown "$out/traffic-coded-x1.md" --json "$out/traffic-coded-x1.json" >>"$log" 2>&1
fi
# one BACKEND CAPTURE TRUTH COUNT: whole-process seconds, then the report's fields, on one
# line; with COUNT 1 and a payload unlike the truth, its bits against the truth's.
one() {
  local t0 t1
  t0=$(date +%s.%N)
  "$dist/bin/whd-rx" "$2" --backend "$1" -o "$work/payload.bin" --report "$work/report.json" 2>>"$log"
  local rc=$?
  t1=$(date +%s.%N)
  local same=no
  cmp -s "$work/payload.bin" "$3" && same=yes
  python3 - "$t0" "$t1" "$rc" "$same" "$work/report.json" "$work/payload.bin" "$3" "$4" <<'PY'
import json, os, sys
t0, t1, rc, same, rep, payload, truth, count = sys.argv[1:9]
r = json.load(open(rep)) if rc == "0" else {"timing": {}}
t = r["timing"]
m = r.get("resources", {})
errors = 0 if same == "yes" else -1
if same == "no" and count == "1" and rc == "0":
    n = min(os.path.getsize(payload), os.path.getsize(truth))
    errors = 8 * abs(os.path.getsize(payload) - os.path.getsize(truth))
    with open(payload, "rb") as a, open(truth, "rb") as b:
        for _ in range(0, n, 1 << 26):
            x = a.read(1 << 26)
            y = b.read(len(x))
            errors += (int.from_bytes(x, "little") ^ int.from_bytes(y[:len(x)], "little")).bit_count()
print(f"{float(t1) - float(t0):.4f} {rc} {same} {t.get('air_seconds', 0)} {t.get('data_symbols', 0)} {t.get('info_gbps') or 0} "
      f"{t.get('setup_seconds', 0)} {sum(f.get('rs_failed', 0) for f in r.get('frames', []))} "
      f"{m.get('peak_rss_bytes', 0)} {m.get('device_used_bytes', 0)} {errors} {os.path.getsize(truth)}")
PY
  rm -f "$work/payload.bin" "$work/report.json"
}
{
  echo "# Coded frames beside uncoded ones, whole whd-rx process ($(date -u +%FT%TZ))"
  echo
  echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; commit $(cat "$dist/COMMIT" 2>/dev/null || echo '?')"
  echo "Command: \`scripts/device/coded_round.sh dist $scale $copies $repeats${snr:+ $snr}\`. GPU: $copies copies of each x1 capture end to end (raw ci8 in"
  echo "/dev/shm), \`whd-rx CAPTURE --backend gpu -o /dev/shm/... --report FILE\`, uncoded and coded taking turns, median of $repeats."
  echo "CPU: the x1 captures (scale $scale), \`--backend cpu\` (all cores), likewise. Time: the whole process, timed from outside."
  echo
  echo "| backend | shape | air [s] | data symbols | whole process [s] (median) | x real time (air) | ns / data symbol | info Gb/s (air) | RS failed | payload = truth | bit errors (first run) | peak RSS [MiB] | device memory [MiB] | coded / uncoded time |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"
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
        res[$s]+="$(one "$backend" "${cap[$s]}" "${truth[$s]}" $((r == 0)))"$'\n'
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
        print(f"| {backend} | {name} | failed | | | | | | | | | | | |")
        continue
    rss, dev, errors, truth_bytes = int(x[8]), int(x[9]), int(x[10]), int(x[11])
    ber = f"{errors} ({errors / (8 * truth_bytes):.2g})" if errors > 0 else str(errors) if errors == 0 else "?"
    print(f"| {backend} | {name} | {air:.3f} | {n} | {t:.3f} | {air / t:.3f} | {t * 1e9 / n:.1f} | {info:.3f} | {failed} | {same} | {ber} "
          f"| {rss / 2**20:.0f} | {dev / 2**20:.0f} | {ratio} |")
PY
    rm -f "$work"/*.ci8 "$work"/*.truth
    unset cap truth res
  done
done
cat "$md"
