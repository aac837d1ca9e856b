#!/usr/bin/env bash
# The test command: install dependencies, build, run the whole suite.
# GPU tests skip with their reason on machines without a GPU.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/setup.sh"
source "$here/env.sh"
whd_build
cd "$WHD_BUILD"
ctest --output-on-failure -j "$WHD_JOBS" "$@"
