#!/usr/bin/env bash
# Two whd-rx builds, taking turns, the whole process on the captures users wait on
# most for set-up: long frames (16 x 65 536, 16-QAM) as ci8 and as cf32 and tiny
# frames (100 000 x 4) as ci8, each as whd-bench traffic makes them (a quarter second
# of air), and the ci8 long frames 16 times end to end (about 4 s of air, raw ci8).
# GPU backend, payload and report into /dev/shm. Per run: wall time from outside and
# the report's set-up and decode; then the medians per build and capture, and whether
# the two builds' payloads and frames are the same. WHD_AB_CAPS names other captures
# among those (tiny16.ci8: the tiny frames 16 times, 1.6 million frames in 3 s of air;
# packets-ci8.sigmf-meta, 20 000 x 52 as whd-bench traffic makes them, and packets16.ci8;
# bursty-ci8.sigmf-meta, 2 000 x 200 with 200 000 samples between frames, and bursty16.ci8).
# WHD_AB_FRESH names the builds (A, B or AB) whose payload and report files are removed
# before each of their runs, outside the timed region, so that they write new files
# (otherwise every run overwrites the files of the run before: opening them truncates,
# and the kernel frees their pages first); the removals' own time is printed apart.
# WHD_AB_BACKEND picks the backend (gpu unless set; cpu to time the CPU backend).
# Usage (device, carry dist): bench/probes/rx_ab.sh dist RX_A RX_B [REPEATS]
set -uo pipefail
dist=${1:-dist} a=$2 b=$3 repeats=${4:-5}
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
d=/dev/shm/whd-ab
mkdir -p $d
tx=$dist/bin/whd-tx
[[ -f $d/long-ci8.sigmf-meta ]] || $tx -o $d/long-ci8 -d ci8 --mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
[[ -f $d/long-cf32.sigmf-meta ]] || $tx -o $d/long-cf32 -d cf32_le --mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
[[ -f $d/tiny-ci8.sigmf-meta ]] || $tx -o $d/tiny-ci8 -d ci8 --mod qam16 --frames 100000 --nd 4 --snr-db 30 --seed 7 >/dev/null 2>&1 &
caps=${WHD_AB_CAPS:-long-ci8.sigmf-meta long-cf32.sigmf-meta tiny-ci8.sigmf-meta long16.ci8}
[[ " $caps " != *" packets"* || -f $d/packets-ci8.sigmf-meta ]] ||
  $tx -o $d/packets-ci8 -d ci8 --mod qpsk,qam16 --frames 20000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
[[ " $caps " != *" bursty"* || -f $d/bursty-ci8.sigmf-meta ]] ||
  $tx -o $d/bursty-ci8 -d ci8 --mod qam16 --frames 2000 --nd 200 --gap 200000 --snr-db 30 --seed 7 >/dev/null 2>&1 &
wait
for big in long16 tiny16 packets16 bursty16; do
  [[ " $caps " == *" $big.ci8 "* && ! -f $d/$big.ci8 ]] || continue
  for i in $(seq 16); do cat $d/${big%16}-ci8.sigmf-data; done >$d/$big.ci8
done
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; $(date -u +%FT%TZ)"
echo "A = $a, B = $b; $repeats turns each; backend ${WHD_AB_BACKEND:-gpu}"
runs=$d/runs.txt
: >$runs
: >$d/removed.txt
for rep in $(seq "$repeats"); do
  for cap in $caps; do
    order="A B"
    ((rep % 2)) || order="B A" # each build goes first in every other turn
    for v in $order; do
      rx=$a
      [[ $v == B ]] && rx=$b
      if [[ ${WHD_AB_FRESH:-} == *$v* ]]; then
        r0=$(date +%s.%N)
        rm -f $d/out-$v.bin $d/rep-$v.json
        r1=$(date +%s.%N)
        echo "removed $v $cap $(python3 -c "print(round($r1 - $r0, 4))")" >>$d/removed.txt
      fi
      t0=$(date +%s.%N)
      "$rx" $d/$cap --backend "${WHD_AB_BACKEND:-gpu}" -q -o $d/out-$v.bin --report $d/rep-$v.json
      rc=$?
      t1=$(date +%s.%N)
      python3 - "$v" "$cap" "$rc" "$t0" "$t1" "$d" >>$runs <<'PY'
import json, os, sys
v, cap, rc, t0, t1, d = sys.argv[1:]


def timing(path):
    # The report ends with the members after the frames, timing last: read from the
    # header failures on rather than parse a report of a million frames (seconds a run).
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - (1 << 20)))
        tail = f.read().decode()
    at = tail.find('"header_failures"')
    try:
        return json.loads("{" + tail[at:])["timing"] if at >= 0 else json.load(open(path))["timing"]
    except json.JSONDecodeError:
        return json.load(open(path))["timing"]


t = timing(f"{d}/rep-{v}.json") if rc == "0" else {}
print(v, cap, rc, round(float(t1) - float(t0), 4), round(t.get("setup_seconds", -1), 4), round(t.get("decode_seconds", -1), 4), t.get("air_seconds", 0),
      t.get("data_symbols", 0))
PY
    done
    cmp -s $d/out-A.bin $d/out-B.bin && same=yes || same=NO
    # The frames (and header failures), a line each with its start, as written.
    cmp -s <(grep -F '"start":' $d/rep-A.json) <(grep -F '"start":' $d/rep-B.json) && fr=yes || fr=NO
    echo "same $cap payload $same frames $fr" >>$runs
  done
done
grep "^same" $runs | sort | uniq -c
[[ -s $d/removed.txt ]] && awk '{print "outputs of the run before removed, untimed:", $2, $3, $4, "s"}' $d/removed.txt
python3 - "$runs" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if not l.startswith("same")]
print("| capture | build | runs | failed | whole process [s] (median, min..max) | set-up [s] | decode [s] | x real time (air), whole | ns / data symbol, whole |")
print("|---|---|---:|---:|---|---:|---:|---:|---:|")
for cap in dict.fromkeys(r[1] for r in rows):
    for v in "AB":
        rs = [r for r in rows if r[0] == v and r[1] == cap]
        ok = [r for r in rs if r[2] == "0"]
        if not ok:
            print(f"| {cap} | {v} | {len(rs)} | {len(rs)} | | | | | |")
            continue
        w = [float(r[3]) for r in ok]
        med = statistics.median(w)
        print(f"| {cap} | {v} | {len(rs)} | {len(rs) - len(ok)} | {med:.3f} ({min(w):.3f}..{max(w):.3f}) | "
              f"{statistics.median(float(r[4]) for r in ok):.3f} | {statistics.median(float(r[5]) for r in ok):.3f} | {float(ok[0][6]) / med:.3f} | "
              f"{med * 1e9 / max(int(ok[0][7]), 1):.1f} |")
PY
