#!/usr/bin/env bash
# Where whd-rx's set-up goes, step by step (its -v "set-up:" lines), on small and
# large captures taking turns: the long frames as whd-bench traffic makes them (a
# quarter second of air, SigMF, and the same samples as raw ci8), then 16 times over
# (long16.ci8, bursty16.ci8: about 4 s of air), first with only the small captures
# in /dev/shm and then with the large ones there as well. GPU backend, payload and
# report into /dev/shm. A row per run: the report's set-up and the steps' times.
# Usage (device, carry dist): bench/probes/setup_probe.sh dist [TURNS]
set -uo pipefail
dist=${1:-dist} turns=${2:-3}
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
d=${WHD_SETUP_DIR:-/dev/shm/whd-setup}
mkdir -p $d
tx=$dist/bin/whd-tx rx=$dist/bin/whd-rx
[[ -f $d/long-ci8.sigmf-meta ]] || $tx -o $d/long-ci8 -d ci8 --mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1
[[ -f $d/bursty-ci8.sigmf-meta ]] || $tx -o $d/bursty-ci8 -d ci8 --mod qam16 --frames 2000 --nd 200 --gap 200000 --snr-db 30 --seed 7 >/dev/null 2>&1
cp $d/long-ci8.sigmf-data $d/long.ci8
echo "$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(nproc) CPUs; $(date -u +%FT%TZ); $(free -g | awk '/Mem:/ {print $2 " GiB memory"}')"
one() { # phase capture
  local t0 t1 rc
  rm -f $d/out.bin $d/rep.json
  t0=$(date +%s.%N)
  $rx $d/$2 --backend "${WHD_SETUP_BACKEND:-gpu}" -v -o $d/out.bin --report $d/rep.json 2>$d/log.txt >/dev/null
  rc=$?
  t1=$(date +%s.%N)
  python3 - "$1" "$2" "$rc" "$t0" "$t1" $d <<'PY'
import json, os, re, sys
phase, cap, rc, t0, t1, d = sys.argv[1:]
steps = {}
for line in open(f"{d}/log.txt"):
    m = re.search(r"set-up: (.*?) (?:at|took) ([0-9.]+) s", line)
    if m:
        steps[m.group(1)] = float(m.group(2))
    m = re.search(r"set-up: ([0-9.]+) s from the process's start", line)
    if m:
        steps["exec"] = float(m.group(1))
with open(f"{d}/rep.json", "rb") as f:
    f.seek(max(0, os.path.getsize(f"{d}/rep.json") - (1 << 20)))
    tail = f.read().decode()
t = json.loads("{" + tail[tail.find('"header_failures"'):])["timing"] if rc == "0" else {}
keys = ["exec", "capture opened", "outputs opened", "CUDA context waited for", "the CUDA context", "receiver made", "the receiver's buffers"]
print(phase, cap, rc, round(float(t1) - float(t0), 3), round(t.get("setup_seconds", -1), 3), round(t.get("decode_seconds", -1), 3),
      " ".join(f"{steps.get(k, -1):.3f}" for k in keys))
PY
}
echo "columns: phase capture rc wall setup decode | exec-to-main, then after main(): capture opened, outputs opened, context waited for; context thread; receiver made; buffers"
for rep in $(seq "$turns"); do
  for cap in long-ci8.sigmf-meta long.ci8 bursty-ci8.sigmf-meta; do one small $cap; done
done
for big in long16 bursty16; do
  [[ -f $d/$big.ci8 ]] || for i in $(seq 16); do cat $d/${big%16}-ci8.sigmf-data; done >$d/$big.ci8
done
sync
for rep in $(seq "$turns"); do
  for cap in long-ci8.sigmf-meta long.ci8 long16.ci8 bursty-ci8.sigmf-meta bursty16.ci8; do one large $cap; done
done
