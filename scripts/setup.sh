#!/usr/bin/env bash
# Install what whd-rx needs to build and test on Debian (12+). Idempotent, quiet
# when everything is already there. The CUDA toolkit (nvcc) is expected at
# /usr/local/cuda or on PATH; it is not an apt package on every Debian.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-program-options-dev libspdlog-dev nlohmann-json3-dev libgtest-dev
  libliquid-dev libfftw3-dev libfec-dev
  python3 python3-numpy python3-matplotlib
  python3-dev pybind11-dev python3-distributed python3-pytest python3-pip  # the module whdrx and its tests
  clang libclang-rt-dev  # the fuzz targets (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo_cmd=()
[[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# sigmf is not packaged by Debian: from PyPI, for the interpreter the module is built
# for (WHD_PYTHON, as in apps/python/CMakeLists.txt). Debian 12 marks its Python as
# externally managed, hence --break-system-packages (older pips lack the flag).
py=${WHD_PYTHON:-/usr/bin/python3}
if ! "$py" -c "import sigmf" >/dev/null 2>&1; then
  echo "setup: installing sigmf (PyPI) for $py" >&2
  "${sudo_cmd[@]}" "$py" -m pip install --quiet --break-system-packages sigmf 2>/dev/null ||
    "${sudo_cmd[@]}" "$py" -m pip install --quiet sigmf
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: nvcc not found. Install the CUDA Toolkit (12.0 or newer) so that /usr/local/cuda/bin/nvcc exists." >&2
  exit 1
fi
