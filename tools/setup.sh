#!/usr/bin/env bash
# Sets up a Debian 12 machine to build and test oxport. Safe to run again: it installs only
# what is missing and runs `apt-get update` only when it has something to install.
#   1. Debian packages (compiler, CMake/Ninja/ccache, libtorch, ONNX, protobuf, Qt 6, test
#      libraries, Python with torch/torchvision/onnx for fixtures, Xvfb, ImageMagick, clang for
#      the libFuzzer targets)
#   2. Node.js and npm, unless `node` and `npm` already work (they may come from elsewhere)
#   3. onnxruntime-node, pinned in package-lock.json: `npm ci --ignore-scripts` (its linux x64
#      CPU binaries ship in the package; the skipped postinstall would only download CUDA ones),
#      and the newest release beside it as onnxruntime-node-next (the tests run files in both)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
say() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

packages=(
  build-essential cmake ninja-build ccache
  libtorch-dev libonnx-dev libprotobuf-dev protobuf-compiler
  qt6-base-dev librapidcheck-dev libgtest-dev libgmock-dev nlohmann-json3-dev
  python3-torch python3-torchvision python3-onnx
  python3-dev pybind11-dev python3-pytest
  xvfb xauth imagemagick procps
  clang libclang-rt-14-dev
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  say "all ${#packages[@]} Debian packages present"
else
  command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: ${missing[*]}"
  sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || die "not root and no sudo; as root run: apt-get install ${missing[*]}"
    sudo=(sudo)
  fi
  say "installing ${#missing[@]} Debian package(s): ${missing[*]}"
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  say "installed ${missing[*]}"
fi

command -v node >/dev/null 2>&1 || die "node is still missing after installing nodejs"
command -v npm >/dev/null 2>&1 || die "npm is still missing after installing npm"
say "node $(node --version), npm $(npm --version)"

# onnxruntime-node: reinstall unless node_modules matches the lockfile and the package loads.
cd "$repo"
ort_ready() {
  [[ -f node_modules/.package-lock.json && node_modules/.package-lock.json -nt package-lock.json ]] || return 1
  node -e '
    const want = require("./package.json").dependencies["onnxruntime-node"];
    const have = require("./node_modules/onnxruntime-node/package.json").version;
    if (have !== want) process.exit(1);
    require("onnxruntime-node");' >/dev/null 2>&1 &&
    node -e 'require("onnxruntime-node-next");' >/dev/null 2>&1  # its own process: one ORT per process
}
if ort_ready; then
  say "node_modules up to date (onnxruntime-node $(node -p 'require("./node_modules/onnxruntime-node/package.json").version'))"
else
  say "npm ci --ignore-scripts"
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  ort_ready || die "onnxruntime-node does not load after npm ci; see the messages above"
  say "onnxruntime-node $(node -p 'require("./node_modules/onnxruntime-node/package.json").version') ready"
fi
