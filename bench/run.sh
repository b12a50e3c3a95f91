#!/usr/bin/env bash
# One command for the benchmarks: builds oxport and the bench programs (build-bench/, Release,
# OXPORT_BUILD_BENCH=ON, no GUI), makes the models with /usr/bin/python3 (bench/out/models/, kept
# between runs), installs Graphviz if dot is missing, runs bench/bench.py and writes
# docs/BENCHMARKS.md. Extra arguments go to bench.py (e.g. --runs 7, --export-models resnet18).
#
# Environment: OXPORT_BENCH_BUILD (build dir; default build-bench), OXPORT_BENCH_BIG=0 skips the
# 1 GiB / 2.5 GiB models (they need ~4 GiB of disk and a few minutes).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OXPORT_BENCH_BUILD:-$root/build-bench}"
out="$root/bench/out"
py=/usr/bin/python3

if [[ -z "${OXPORT_BENCH_NO_BUILD:-}" ]]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOXPORT_WITH_GUI=OFF -DOXPORT_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" -j2 --target oxport oxport-bench-floor oxport-bench-layout
fi

if ! command -v dot >/dev/null; then
  echo "bench: installing graphviz (dot) for the layout comparison"
  if [[ $(id -u) -eq 0 ]]; then apt-get install -y --no-install-recommends graphviz
  else sudo apt-get install -y --no-install-recommends graphviz; fi
fi

big_args=()
make_big=()
if [[ "${OXPORT_BENCH_BIG:-1}" != 0 ]]; then
  big_args=(--big-models big_1gib,big_2_5gib --big-torch)
  make_big=(--big-gib 1 --big-gib 2.5)
fi
mkdir -p "$out/models"
echo "bench: making models in $out/models (skipped when present)"
(cd "$out" && "$py" "$root/bench/make_models.py" "$out/models" "${make_big[@]}")

exec "$py" "$root/bench/bench.py" --build "$build" --models "$out/models" --out "$out" \
  --export-models resnet18,resnet50,mobilenet_v2,transformer_encoder,vit_b_16@17,squeezenet1_1@17,efficientnet_b0@17,densenet121@17 \
  "${big_args[@]}" "$@"
