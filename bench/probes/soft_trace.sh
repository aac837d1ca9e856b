#!/usr/bin/env bash
# On the GPU machine: the GPU receiver's decoded differences from the CPU's, traced to their
# soft values. For each case (MCS, SNR dB, taps, frames of Nd 64) whd-tx makes a capture
# (cf32, CFO 300 kHz, random phase), whd-rx decodes it on both backends with the payload and
# the int8 soft values at the FEC's own scale (4), and soft_trace.py compares them frame by
# frame. Default cases: the BER curves' points where the backends' counts differed, and a
# low-SNR point each of MCS 0 and 1.
# Usage (device `carry: ["dist"]`): bench/probes/soft_trace.sh DIST [CASE ...], CASE = MCS:SNR:TAPS:FRAMES
# (WHD_TRACE_SEED: whd-tx's seed, default 11).
# Writes $OUT/soft-trace.md.
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
shift || true
cases=("$@")
((${#cases[@]})) || cases=(7:10.26:1:4000 2:9.47:4:3000 7:13.26:4:3000 0:-1.07:1:6000 1:2.95:1:4000)
out=${OUT:-out-trace}
mkdir -p "$out"
export LD_LIBRARY_PATH=$dist/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
here=$(cd "$(dirname "$0")" && pwd)
w=/dev/shm/whd-trace
mkdir -p "$w"
md=$out/soft-trace.md
{
  echo "# GPU against CPU, traced to the soft values ($(date -u +%FT%TZ))"
  echo
  echo "seed ${WHD_TRACE_SEED:-11}; $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $(nproc) CPUs; commit $(cat "$dist/COMMIT" 2>/dev/null)"
  echo
  echo "| MCS | SNR dB | taps | frames | information bits | frames whose soft values differ | soft values differing | largest step | frames whose bytes differ | bits differing | of those, soft values equal | RS failed cpu / gpu |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
} >"$md"
for c in "${cases[@]}"; do
  IFS=: read -r mcs snr taps frames <<<"$c"
  cap=$w/m$mcs-$snr-$taps
  "$dist/bin/whd-tx" -o "$cap" -d cf32_le -q --seed "${WHD_TRACE_SEED:-11}" --mcs "$mcs" --nd 64 --frames "$frames" --snr-db "$snr" --taps "$taps" --cfo-hz 300e3 --random-phase >"$out/tx-$mcs-$snr-$taps.log" 2>&1
  for b in cpu gpu; do
    "$dist/bin/whd-rx" "$cap" --backend $b -q -o "$w/p.$b" --llr "$w/l.$b" --report "$w/r.$b.json" >"$out/rx-$b-$mcs-$snr-$taps.log" 2>&1
  done
  j=$(python3 "$here/soft_trace.py" "$w/r.cpu.json" "$w/r.gpu.json" "$w/p.cpu" "$w/p.gpu" "$w/l.cpu" "$w/l.gpu")
  echo "$j" >"$out/trace-$mcs-$snr-$taps.json"
  rs=$(python3 -c "import json; a=json.load(open('$w/r.cpu.json')); b=json.load(open('$w/r.gpu.json')); print(sum(f.get('rs_failed',0) for f in a['frames']), '/', sum(f.get('rs_failed',0) for f in b['frames']))")
  python3 -c "
import json,sys; t=json.loads(sys.argv[1])
print('| $mcs | $snr | $taps | %d | %.3g | %d | %d | %d | %d | %d | %d | $rs |' % (t['frames_cpu'], t['info_bits'], t['soft_differs'], t['soft_values_differing'], t['largest_step'], t['bytes_differ'], t['bit_differences'], t['bytes_differ_soft_equal']))
if not t['frames_equal']: print('\nframes differ between the backends ($c)\n')
" "$j" >>"$md"
  rm -f "$cap"* "$w"/p.* "$w"/l.*
done
cat "$md"
