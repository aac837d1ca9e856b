#!/usr/bin/env bash
# Two whd-rx builds, alternating, on a capture of bursts: one 16-QAM frame of 4000
# data symbols after every 20 M samples of noise (ci8, 100 copies of one whd-tx
# capture, 4.46 GB in /dev/shm), GPU backend, payload and --truth checked; wall time
# of the whole process, and whether the two payloads are the same.
# Usage (device, carry dist): bench/probes/burst_ab.sh dist/bin/whd-rx dist/bin/whd-rx-other [repeats]
set -uo pipefail
a=$1 b=$2 repeats=${3:-3}
export LD_LIBRARY_PATH=$PWD/dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
w=/dev/shm/burst
mkdir -p $w
dist/bin/whd-tx -o $w/piece --raw -d ci8 -n 1 --nd 4000 -m qam16 --lead 20000000 --tail 0 --snr-db 20 --seed 3 2>/dev/null
for i in $(seq 100); do cat $w/piece.ci8; done >$w/big.ci8
for i in $(seq 100); do cat $w/piece.truth; done >$w/big.truth
echo "capture: $(stat -c %s $w/big.ci8) bytes; $(nvidia-smi -L | head -1); $(nproc) CPUs; $(date -Iseconds)"
for rep in $(seq "$repeats"); do
  for v in "$a" "$b"; do
    n=$(basename "$v")
    t0=$(date +%s.%N)
    "$v" $w/big.ci8 --backend gpu -q -o $w/out-$n.bin -r $w/rep-$n.json --truth $w/big.truth
    rc=$?
    t1=$(date +%s.%N)
    echo "$n rep $rep rc=$rc $(python3 -c "print(round($t1 - $t0, 3))") s" \
      "$(python3 -c "import json; r = json.load(open('$w/rep-$n.json')); print(len(r['frames']), 'frames', r['truth']['bit_errors'], 'bit errors')")"
  done
done
cmp $w/out-"$(basename "$a")".bin $w/out-"$(basename "$b")".bin && echo "payloads identical"
