#!/usr/bin/env bash
# libFuzzer runs over the parsers of untrusted input (tests/fuzz): the preset parser, the tensor
# spec parser and the TorchScript archive check. Builds them with clang in their own build folder
# (-DOXPORT_BUILD_FUZZERS=ON; the main GCC build is untouched), then fuzzes each target for
# SECONDS and prints the executions. Corpora grow in BUILD/corpus/<target> between runs; a crash
# leaves its input in BUILD/artifacts/ and makes the script fail.
#
#   tools/fuzz.sh                       60 s per target, build-fuzz/
#   tools/fuzz.sh --seconds 600 preset  one target, longer
#   tools/fuzz.sh --build DIR           another build folder (the CTest fuzz_short uses build/fuzz-build)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds=60
build="$repo/build-fuzz"
targets=()
while (($#)); do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    -h|--help) sed -n '2,12p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=(preset tensor_spec archive)
say() { printf 'fuzz: %s\n' "$*"; }
command -v clang++ >/dev/null || { echo "fuzz: clang++ is missing; run tools/setup.sh" >&2; exit 1; }

export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  say "configure $build (clang++, OXPORT_BUILD_FUZZERS=ON)"
  mkdir -p "$build"
  cmake -S "$repo" -B "$build" "${gen[@]}" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DOXPORT_BUILD_FUZZERS=ON -DOXPORT_WITH_GUI=OFF -DOXPORT_USE_PCH=OFF >"$build/fuzz-configure.log" 2>&1 \
    || { cat "$build/fuzz-configure.log"; exit 1; }
fi
say "build ${targets[*]}"
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >"$build/fuzz-build.log" 2>&1 \
  || { tail -50 "$build/fuzz-build.log"; exit 1; }

mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  extra=()
  case "$t" in
    preset)
      cp -n "$repo"/tests/fuzz/seeds/preset/* "$repo"/resources/samples/*.json "$corpus/"
      extra=(-dict="$repo/tests/fuzz/preset.dict" -max_len=4096) ;;
    tensor_spec)
      cp -n "$repo"/tests/fuzz/seeds/tensor_spec/* "$corpus/"
      extra=(-dict="$repo/tests/fuzz/tensor_spec.dict" -max_len=256) ;;
    archive)
      cp -n "$repo/resources/samples/sample_cnn.pt" "$corpus/"
      printf 'PK\005\006\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0' >"$corpus/empty.zip"
      extra=(-max_len=65536) ;;
  esac
  log="$build/fuzz_$t.log"
  if ! ASAN_OPTIONS="${ASAN_OPTIONS:-}" "$build/tests/fuzz/fuzz_$t" "$corpus" "${extra[@]}" \
      -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$t-" >"$log" 2>&1; then
    tail -60 "$log"
    say "FAIL: fuzz_$t found a problem; the input is in $build/artifacts/"
    exit 1
  fi
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 || true)
  say "fuzz_$t: $execs executions in ${seconds} s, $cov, corpus $(ls "$corpus" | wc -l) inputs, no crash"
done
