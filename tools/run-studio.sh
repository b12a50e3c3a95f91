#!/usr/bin/env bash
# Main command: set-up, build, then open the studio on the bundled sample model.
# Without a display it exports the sample with the CLI instead and says where the .onnx went.
# Extra arguments go to oxport-studio (or to `oxport export` when there is no display).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

"$repo/tools/setup.sh"

export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
echo "run-studio: configure (build/, Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null

sample=resources/samples/sample_cnn.pt
if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]]; then
  echo "run-studio: build oxport-studio (-j2)"
  cmake --build build -j2 --target oxport-studio
  echo "run-studio: build/app/oxport-studio $sample"
  exec build/app/oxport-studio "$sample" "$@"
fi

echo "run-studio: no display (DISPLAY and WAYLAND_DISPLAY are unset), so no studio window;"
echo "run-studio: exporting the sample with the command-line tool instead"
cmake --build build -j2 --target oxport
out=build/sample_cnn.onnx
rm -f "$out"
build/app/oxport export "$sample" -o "$out" --preset resources/samples/sample_cnn.preset.json "$@"
if [[ ! -s "$out" ]]; then
  echo "run-studio: error: oxport export succeeded but wrote no $out" >&2
  exit 1
fi
echo "run-studio: wrote $repo/$out ($(stat -c %s "$out") bytes)"
