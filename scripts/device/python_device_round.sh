#!/usr/bin/env bash
# The Python module on a GPU machine: the whole pytest suite (its GPU tests,
# tests/python/test_gpu.py, run there), then python_overhead.sh with the GPU backend
# on a capture of packets and one of long frames (made with whd-tx into /dev/shm).
# The bundle must hold a module built for that machine's Python (DIST/python/whdrx),
# and, where its Python lacks them, dask.distributed and its dependencies as wheels
# in DIST/wheels (added by whoever bundles: PyPI is not reachable there), unpacked
# here onto PYTHONPATH.
# Usage (device `carry: ["dist"]`): scripts/device/python_device_round.sh dist [RUNS]  (RUNS 0: the tests only)
# Writes $OUT/python.md and $OUT/python-logs.tgz (or ./out-python).
set -uo pipefail
dist=$(cd "${1:-dist}" && pwd)
runs=${2:-5}
final=${OUT:-out-python}
out=$(mktemp -d)
mkdir -p "$final"
trap 'cp "$out"/python.md "$final"/ 2>/dev/null; tar czf "$final/python-logs.tgz" -C "$out" .' EXIT
source "$(dirname "$0")/device_env.sh"
py=${WHD_PYTHON:-python3}
export PYTHONPATH="$dist/python${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G "$dist/wheels/*.whl" >/dev/null; then
  deps=$(mktemp -d)
  for w in "$dist"/wheels/*.whl; do "$py" -m zipfile -e "$w" "$deps"; done
  export PYTHONPATH="$PYTHONPATH:$deps"
fi
# The tests' whd-rx and vectors: the bundle's (conftest reads WHD_BUILD/apps/whd-rx/whd-rx).
build=$(mktemp -d)
mkdir -p "$build/apps/whd-rx"
ln -s "$dist/bin/whd-rx" "$build/apps/whd-rx/whd-rx"
export WHD_BUILD=$build WHD_RX=$dist/bin/whd-rx
{ "$py" --version; "$py" -c "import numpy, distributed; print('numpy', numpy.__version__, 'distributed', distributed.__version__)"; } 2>&1 | tee "$out/python-env.txt"

echo "== pytest"
timeout 400 "$py" -m pytest "$dist/scripts/../tests/python" -rs -q -p no:cacheprovider >"$out/pytest.log" 2>&1
echo "pytest rc=$? $(tail -1 "$out/pytest.log")"
grep -E "^(FAILED|ERROR|SKIPPED)" "$out/pytest.log" | head -20

if ((runs == 0)); then
  rm -rf "$build"
  exit 0
fi
shm=/dev/shm/whd-python
mkdir -p "$shm"
"$dist/bin/whd-tx" -o "$shm/packets" -d ci8 --mod qpsk,qam16 --frames 2000 --nd 52 --taps 4 --cfo-hz 3e5 --random-phase \
  --snr-db 30 --seed 7 >/dev/null
"$dist/bin/whd-tx" -o "$shm/long" -d ci8 --mod qam16 --frames 16 --nd 28000 --taps 4 --cfo-hz 3e5 --snr-db 40 --seed 8 >/dev/null
{
  for cap in packets long; do
    echo "== overhead, $cap" >&2
    WHD_PYTHON=$py WHD_OVERHEAD_TMP=$shm/work-$cap timeout 300 "$dist/scripts/device/python_overhead.sh" "$dist" \
      "$shm/$cap.sigmf-meta" --backend gpu --runs "$runs"
    echo
  done
} >"$out/python.md" 2>"$out/overhead.log"
cat "$out/python.md"
rm -rf "$shm" "$build"
