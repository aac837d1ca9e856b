#!/usr/bin/env bash
# Where the time after the decode region goes: external wall against the report's own.
# Usage (device, carry dist): bench/probes/tail_probe.sh   (bursty as whd-bench traffic makes it, x1 and 16 times over)
set -u
dist=$PWD/dist; export LD_LIBRARY_PATH=$dist/lib  # run from the repo root on the device, carry dist
d=/dev/shm/tp; mkdir -p $d
$dist/bin/whd-tx -o $d/bursty-ci8 -d ci8 --mod qam16 --frames 2000 --nd 200 --gap 200000 --snr-db 30 --seed 7 >/dev/null 2>&1
for i in $(seq 16); do cat $d/bursty-ci8.sigmf-data; done > $d/bursty16.ci8
for cap in bursty-ci8.sigmf-meta bursty16.ci8; do
  for r in 1 2 3 4; do
    rm -f $d/out.bin $d/rep.json
    t0=$(date +%s.%N)
    $dist/bin/whd-rx $d/$cap --backend gpu -v -o $d/out.bin --report $d/rep.json 2>$d/err.txt
    t1=$(date +%s.%N)
    last=$(tail -1 $d/err.txt | sed 's/^\[\([^]]*\)\].*/\1/')
    python3 - "$cap" "$t0" "$t1" "$last" "$d/rep.json" <<'PY'
import json, sys, datetime
cap, t0, t1, last, rep = sys.argv[1:]
t = json.load(open(rep))["timing"]
lt = datetime.datetime.strptime(last, "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=datetime.timezone.utc).timestamp()
w = float(t1) - float(t0)
print(f"{cap}: external {w:.3f}  report wall {t['wall_seconds']:.3f} setup {t['setup_seconds']:.3f} decode {t['decode_seconds']:.3f}"
      f"  | wall-setup-decode {t['wall_seconds']-t['setup_seconds']-t['decode_seconds']:.3f}  external-report wall {w - t['wall_seconds']:.3f}"
      f"  last log line to exit {float(t1) - lt:.3f}")
PY
  done
  tail -4 $d/err.txt | cut -c1-160
done
