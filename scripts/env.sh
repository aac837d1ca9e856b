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

# whd_generator DIR: the generator arguments for a build folder. Ninja where installed
# (scripts/setup.sh installs it): on two cores it builds the tree in about 10 % less
# time than make. A folder already configured keeps the generator it has.
whd_generator() {
  if [[ ! -f $1/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
    echo "-G Ninja"
  fi
}

# whd_build [extra cmake args...]: configure (once) and build everything.
whd_build() {
  cmake -S "$WHD_ROOT" -B "$WHD_BUILD" $(whd_generator "$WHD_BUILD") -DCMAKE_BUILD_TYPE=Release -DWHD_WERROR=ON "$@" \
    >"$WHD_BUILD.configure.log" 2>&1 ||
    { cat "$WHD_BUILD.configure.log" >&2; return 1; }
  cmake --build "$WHD_BUILD" -j "$WHD_JOBS"
}
