#!/usr/bin/env bash
# Pack the built binaries, test binaries and their non-system shared libraries
# into dist/ (ignored by git), small enough to travel to the GPU machine
# (device `carry: ["dist"]`). Run there with: LD_LIBRARY_PATH=dist/lib dist/bin/...
# WHD_BUNDLE_BINS: the binaries to take, by name (e.g. "whd-rx whd-tx whd-bench"; default
# every app and test binary), to stay under the carry limit with the module and wheels.
# WHD_BUNDLE_PYTHON_BUILD: the build folder whose module whdrx goes in (default the
# main build's), e.g. one configured with -DWHD_PYTHON for the GPU machine's Python.
# WHD_BUNDLE_WHEELS: a folder of wheels copied to DIST/wheels (dask.distributed and its
# dependencies for a Python that lacks them; the rounds unpack them onto PYTHONPATH).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
dist=${1:-$WHD_ROOT/dist}
rm -rf "$dist"
mkdir -p "$dist/bin" "$dist/lib"
shopt -s nullglob
for exe in "$WHD_BUILD"/apps/*/whd-* "$WHD_BUILD"/tests/*/*_tests; do
  [[ -n ${WHD_BUNDLE_BINS:-} && " $WHD_BUNDLE_BINS " != *" $(basename "$exe") "* ]] && continue
  [[ -x $exe && -f $exe ]] && cp "$exe" "$dist/bin/"
done
for name in ${WHD_BUNDLE_BINS:-}; do
  [[ -x $dist/bin/$name ]] || { echo "bundle.sh: no $name in $WHD_BUILD (WHD_BUNDLE_BINS)" >&2; exit 1; }
done
# Libraries the device machine lacks: everything ldd resolves outside glibc and CUDA.
for exe in "$dist"/bin/*; do
  ldd "$exe" | awk '/=> \// {print $3}' | while read -r lib; do
    case $(basename "$lib") in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|libgcc_s.so*|libstdc++.so*|libcuda.so*|libcudart.so*|libcufft.so*) ;;
      *) cp -n "$lib" "$dist/lib/" ;;
    esac
  done
done
# The conformance captures: ../shared does not travel to the GPU machine
# (tests read them from $WHD_VECTORS_DIR there).
if [[ -d $WHD_ROOT/../shared/vectors ]]; then
  cp -r "$WHD_ROOT/../shared/vectors" "$dist/vectors"
fi
cp -r "$here/../scripts" "$dist/scripts"
# The commit it was built from, for the results (a changed tree says so).
{ git -C "$WHD_ROOT" rev-parse --short HEAD | tr -d '\n'; git -C "$WHD_ROOT" diff --quiet HEAD || echo -n "-dirty"; echo; } >"$dist/COMMIT"
# The Python tests (scripts/device/python_device_round.sh runs them there).
mkdir -p "$dist/tests"
cp -r "$here/../tests/python" "$dist/tests/python"
# The Python module whdrx (built for the interpreter in python/whdrx.env), when built.
py_build=${WHD_BUNDLE_PYTHON_BUILD:-$WHD_BUILD}
if compgen -G "$py_build/python/whdrx/_whdrx*.so" >/dev/null; then
  mkdir -p "$dist/python"
  cp -r "$py_build/python/whdrx" "$py_build/python/whdrx.env" "$dist/python/"
  rm -rf "$dist/python/whdrx/__pycache__"
elif [[ -n ${WHD_BUNDLE_PYTHON_BUILD:-} ]]; then
  echo "bundle.sh: no module in $py_build/python/whdrx (WHD_BUNDLE_PYTHON_BUILD)" >&2
  exit 1
fi
if [[ -n ${WHD_BUNDLE_WHEELS:-} ]]; then
  compgen -G "$WHD_BUNDLE_WHEELS/*.whl" >/dev/null || { echo "bundle.sh: no wheels in $WHD_BUNDLE_WHEELS" >&2; exit 1; }
  mkdir -p "$dist/wheels"
  cp "$WHD_BUNDLE_WHEELS"/*.whl "$dist/wheels/"
fi
du -sh "$dist"
