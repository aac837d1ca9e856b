#!/usr/bin/env bash
# The Python tests (tests/python) against the module the build made, run by the
# interpreter it was built for (BUILD/python/whdrx.env, written by CMake: WHD_PYTHON,
# by default Debian's /usr/bin/python3). scripts/test.sh calls this after ctest.
# When the build skipped the module (no pybind11) this fails, naming the reason;
# outside CI, WHD_ALLOW_SKIP=1 makes it say so and exit 0 instead (never under
# CI=true or WHD_STRICT=1). Anything else that keeps the tests from running fails,
# and so does pytest collecting no test (its exit status 5).
# Extra arguments go to pytest.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/env.sh"
info=$WHD_BUILD/python/whdrx.env
if [[ ! -f $info ]]; then
  echo "pytest: $info not found: configure and build first (scripts/test.sh does)" >&2
  exit 1
fi
WHD_PYTHON_SKIPPED='' WHD_PYTHON=''
source "$info"
if [[ -n $WHD_PYTHON_SKIPPED ]]; then
  if [[ ${WHD_ALLOW_SKIP:-0} == 1 && ${CI:-} != true && ${WHD_STRICT:-0} != 1 ]]; then
    echo "pytest: Python tests SKIPPED (WHD_ALLOW_SKIP=1): the module whdrx was not built: $WHD_PYTHON_SKIPPED" >&2
    exit 0
  fi
  echo "pytest: FAILED: the module whdrx was not built, so its tests cannot run: $WHD_PYTHON_SKIPPED (scripts/setup.sh installs what it needs; outside CI, WHD_ALLOW_SKIP=1 skips them)" >&2
  exit 1
fi
if ! compgen -G "$WHD_BUILD/python/whdrx/_whdrx*.so" >/dev/null; then
  echo "pytest: the build was configured with the module whdrx but $WHD_BUILD/python/whdrx/_whdrx*.so is missing: build it (cmake --build $WHD_BUILD --target _whdrx)" >&2
  exit 1
fi
if ! "$WHD_PYTHON" -c "import pytest" 2>/dev/null; then
  echo "pytest: $WHD_PYTHON has no pytest: install the Debian package 'python3-pytest' (scripts/setup.sh)" >&2
  exit 1
fi
export PYTHONPATH="$WHD_BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
export WHD_RX="$WHD_BUILD/apps/whd-rx/whd-rx"
echo "pytest: tests/python with $WHD_PYTHON ($("$WHD_PYTHON" --version 2>&1)), module from $WHD_BUILD/python" >&2
rc=0
"$WHD_PYTHON" -m pytest "$WHD_ROOT/tests/python" "$@" || rc=$?
if ((rc == 5)); then
  echo "pytest: FAILED: no test was collected (pytest exit status 5): tests/python lost its tests or the arguments select none" >&2
  exit 1
fi
exit "$rc"
