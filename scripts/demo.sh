#!/usr/bin/env bash
# The run command: install dependencies, build, make a sample capture with
# whd-tx (four frames: coded at MCS 2 and 1 and uncoded, 16-QAM and QPSK, 28 dB SNR,
# 700 kHz CFO, a 4-tap channel, ci8) and decode it with whd-rx, printing the JSON
# report (the payload compared with the truth). The GPU backend runs
# where a GPU is present, the CPU backend (liquid-dsp) elsewhere.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup.sh"
source "$here/env.sh"
whd_build >/dev/null
out=${WHD_DEMO_DIR:-$WHD_ROOT/out/demo}
mkdir -p "$out"
"$WHD_BUILD/apps/whd-tx/whd-tx" -o "$out/sample" -d ci8 --mcs 2,none,1,none --mod qam16,qpsk --frames 4 --nd 200 \
  --snr-db 28 --cfo-hz 700e3 --taps 4 --random-phase --seed 2026 -q
echo "whd-tx: wrote $out/sample.sigmf-data (+ .sigmf-meta, .truth, .frames.json)" >&2
"$WHD_BUILD/apps/whd-rx/whd-rx" "$out/sample.sigmf-meta" -o "$out/sample.payload" \
  --truth "$out/sample.truth" --report - "$@"
