# Sourced by the scripts: puts nvcc on PATH and picks the build folder.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
WHD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
WHD_BUILD=${WHD_BUILD:-$WHD_ROOT/build}
WHD_JOBS=${WHD_JOBS:-$(nproc)}
export WHD_ROOT WHD_BUILD WHD_JOBS
# The Python module whdrx, from the build tree (BUILD/python/whdrx; built for the
# interpreter named in BUILD/python/whdrx.env, Debian's /usr/bin/python3 by default).
export PYTHONPATH="$WHD_BUILD/python${PYTHONPATH:+:$PYTHONPATH}"

# whd_build [extra cmake args...]: configure (once) and build everything.
whd_build() {
  cmake -S "$WHD_ROOT" -B "$WHD_BUILD" -DCMAKE_BUILD_TYPE=Release -DWHD_WERROR=ON "$@" >"$WHD_BUILD.configure.log" 2>&1 ||
    { cat "$WHD_BUILD.configure.log" >&2; return 1; }
  cmake --build "$WHD_BUILD" -j "$WHD_JOBS"
}
