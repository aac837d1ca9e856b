#!/usr/bin/env bash
# How the GPU receiver's chunks in flight (--streams) and chunk size (--batch) move
# the whole process and its stages on ci8 shapes, with -v stage times. WHD_PROBE_CAPS
# names the captures (default: long-ci8 packets-ci8); tiny16 is the tiny frames
# (100 000 x 4) 16 times over, 1.6 million frames in 3 s of air, raw ci8;
# WHD_PROBE_ARGS the option sets, separated by ';'.
# Usage (device, carry dist): bench/probes/chunk_probe.sh dist
dist=${1:-dist}
export LD_LIBRARY_PATH=$dist/lib
d=/dev/shm/whd-shapes; mkdir -p $d
caps=${WHD_PROBE_CAPS:-long-ci8 packets-ci8}
IFS=';' read -r -a sets <<<"${WHD_PROBE_ARGS:---streams 4;--streams 8;--streams 8 --batch 8192;--streams 12 --batch 4096}"
tx=$dist/bin/whd-tx
[[ -f $d/long-ci8.sigmf-meta ]] || $tx -o $d/long-ci8 -d ci8 --mod qam16 --frames 16 --nd 65536 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
[[ -f $d/packets-ci8.sigmf-meta ]] || $tx -o $d/packets-ci8 -d ci8 --mod qpsk,qam16 --frames 20000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase --snr-db 30 --seed 7 >/dev/null 2>&1 &
[[ -f $d/tiny-ci8.sigmf-meta ]] || $tx -o $d/tiny-ci8 -d ci8 --mod qam16 --frames 100000 --nd 4 --snr-db 30 --seed 7 >/dev/null 2>&1 &
wait
[[ " $caps " == *" tiny16 "* && ! -f $d/tiny16.ci8 ]] && for i in $(seq 16); do cat $d/tiny-ci8.sigmf-data; done >$d/tiny16.ci8
for s in $caps; do
  cap=$d/$s.sigmf-meta
  [[ -f $cap ]] || cap=$d/$s.ci8
  for args in "${sets[@]}"; do
    /usr/bin/time -f "%e" -o /tmp/t $dist/bin/whd-rx $cap --backend gpu -v $args -o /dev/shm/p.bin --report /dev/shm/r.json 2>/tmp/log
    echo "$s $args wall $(cat /tmp/t) $(python3 -c "import json;t=json.load(open('/dev/shm/r.json'))['timing'];print('setup',round(t['setup_seconds'],3),'decode',round(t['decode_seconds'],3),'x_air_decode',round(t['air_seconds']/t['decode_seconds'],2),'x_air_whole',round(t['air_seconds']/float(open('/tmp/t').read()),2))")"
    grep -E "stage" /tmp/log | sed 's/.*\] stage //' | tr '\n' ';'; echo
  done
done
