#!/usr/bin/env bash
# The whole test suite: set-up, configure, build, then every CTest test (what .ci/run calls).
# Extra arguments go to ctest, e.g. `tools/test.sh -L unit` or `tools/test.sh -R Npy`.
#
# Without a display, Qt tests run on the offscreen platform; tests labelled `display` (those
# that need a real X server) make the run go under xvfb-run instead.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

"$repo/tools/setup.sh"

export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
echo "test: configure (build/, Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "test: build (-j2)"
cmake --build build -j2

ctest_cmd=(ctest --test-dir build --output-on-failure -j2 --no-tests=error
           --timeout "${OXPORT_TEST_TIMEOUT:-900}" "$@")

if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  if ctest --test-dir build -N -L display "$@" 2>/dev/null | grep -q '^Total Tests: [1-9]'; then
    command -v xvfb-run >/dev/null 2>&1 || { echo "test: tests need a display but xvfb-run is missing; run tools/setup.sh" >&2; exit 1; }
    echo "test: no display; running the tests under xvfb-run"
    exec xvfb-run -a -s "-screen 0 1600x1000x24" "${ctest_cmd[@]}"
  fi
  export QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}"
  echo "test: no display; Qt runs on QT_QPA_PLATFORM=$QT_QPA_PLATFORM"
fi
exec "${ctest_cmd[@]}"
