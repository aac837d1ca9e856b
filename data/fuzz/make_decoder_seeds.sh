#!/usr/bin/env bash
# Seeds of the frame_decoder fuzz target: small captures made by whd-tx, each
# prefixed with the target's two bytes (sample format: 0 ci8, 1 ci16, 2 cf32;
# symbols per batch - 1). Run from the repository root after a build:
#   data/fuzz/make_decoder_seeds.sh build/apps/whd-tx/whd-tx
set -euo pipefail
tx=${1:?usage: make_decoder_seeds.sh PATH/TO/whd-tx}
out=data/fuzz/frame_decoder
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# seed NAME FORMAT_BYTE BATCH_BYTE EXT whd-tx options...
seed() {
  local name=$1 fmt=$2 batch=$3 ext=$4
  shift 4
  "$tx" -q --raw -o "$tmp/$name" --snr-db 30 --cfo-hz 1e6 --random-phase "$@"
  python3 -c 'import sys; sys.stdout.buffer.write(bytes([int(sys.argv[1]), int(sys.argv[2])]) + open(sys.argv[3], "rb").read())' \
    "$fmt" "$batch" "$tmp/$name.$ext" >"$out/seed-$name"
}

seed qpsk-ci8 0 0 ci8 --datatype ci8 --mod qpsk --frames 1 --nd 1 --lead 100 --tail 100 --seed 11
seed qam16-ci16 1 1 ci16 --datatype ci16_le --mod qam16 --frames 1 --nd 2 --lead 64 --tail 0 --seed 12
seed qpsk-cf32 2 0 cf32 --datatype cf32_le --mod qpsk --frames 1 --nd 1 --lead 50 --tail 20 --seed 13
seed corrupt-ci8 0 2 ci8 --datatype ci8 --frames 1 --nd 3 --lead 10 --tail 10 --corrupt-header 0 --seed 14
seed cut-ci8 0 1 ci8 --datatype ci8 --mod qam16 --frames 1 --nd 5 --lead 30 --tail 0 --cut 700 --seed 15
seed back-to-back-ci8 0 3 ci8 --datatype ci8 --mod qpsk,qam16 --frames 2 --nd 1 --lead 0 --gap 0 --tail 0 --seed 16

# The cf32 seed again with NaN and infinities in its data symbol's window.
python3 - "$out/seed-qpsk-cf32" "$out/seed-nan-cf32" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
first = 2 + 8 * (50 + 3 * 576 + 64 + 100)  # lead, 3 symbols, guard, 100 samples into the window
for k, v in enumerate([float("nan"), float("inf"), -float("inf")]):
    struct.pack_into("<f", b, first + 8 * k * 50, v)
open(sys.argv[2], "wb").write(b)
PY
