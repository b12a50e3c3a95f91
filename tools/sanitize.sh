#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer (a CTest configuration of its
# own): configures build-asan/ with OXPORT_SANITIZE=ON, builds everything (core, CLI, studio,
# tests) instrumented and runs ctest there. Our code is instrumented; libtorch, ONNX, protobuf and
# Qt are not (ASan still sees their heap through its malloc). Not part of tools/test.sh: the
# instrumented build and run take far longer than CI's 90 minutes allow on two cores (see the
# report of the last run in docs/ROBUSTNESS.md).
#
#   tools/sanitize.sh                    configure, build all, run every label but the excluded ones
#   tools/sanitize.sh -R Preset          extra arguments go to ctest
#   OXPORT_SANITIZE_ZOO=1 tools/sanitize.sh
#                                        include the zoo (torchvision models, transformers: hours)
#   OXPORT_SANITIZE_LABELS='unit|property' tools/sanitize.sh
#                                        only those labels, and only their test programs are built
#   OXPORT_SANITIZE_GUI=0 tools/sanitize.sh
#                                        no studio (no Qt needed; the ui label then has no tests)
#
# Labels left out by default, and why:
#   zoo      the big torchvision/transformer models: hours when instrumented (OXPORT_SANITIZE_ZOO=1)
#   package  tests the .deb made from this build: an instrumented package needs libasan8/libubsan1,
#            which the Depends line rightly lacks, so package_depends would fail by design
#   fuzz     fuzz_short builds its own clang tree (build/fuzz-build) with -fsanitize=fuzzer,address
#            already; it does not test this build
#
# Run-time settings (override by exporting them first):
#   ASAN_OPTIONS  detect_leaks=0: libtorch keeps global allocations alive until exit, and LSan
#                 would report them; everything else stays on (use-after-free, overflows ...)
#   UBSAN_OPTIONS print_stacktrace=1, halt_on_error=1 (the build also uses -fno-sanitize-recover)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${OXPORT_ASAN_BUILD:-$repo/build-asan}"
say() { printf 'sanitize: %s\n' "$*"; }

export CCACHE_BASEDIR="$repo" CCACHE_NOHASHDIR=1
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=0:check_initialization_order=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The mutation run is slower under ASan; give it the same number of mutants in more time.
export OXPORT_MUTATION_SECONDS="${OXPORT_MUTATION_SECONDS:-40}"

gui=ON
[[ "${OXPORT_SANITIZE_GUI:-1}" == 0 ]] && gui=OFF
say "configure $build (OXPORT_SANITIZE=ON, OXPORT_WITH_GUI=$gui)"
# -O1, as the sanitizers' documentation advises: the instrumented core compiles about twice as
# fast as at -O3, and the stack traces stay readable.
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" \
  -DOXPORT_SANITIZE=ON -DOXPORT_WITH_GUI=$gui >/dev/null

select=()
if [[ -n "${OXPORT_SANITIZE_LABELS:-}" ]]; then
  labels=$OXPORT_SANITIZE_LABELS
  select=(-L "$labels")
  targets=$(ninja -C "$build" -t targets all | grep -oE "^tests/($labels)/test_[A-Za-z0-9_]+(:| )" \
              | sed 's/[: ]$//' | sort -u)
  [[ -n "$targets" ]] || { echo "sanitize: no test targets found for labels $labels" >&2; exit 1; }
else
  excluded="package|fuzz"
  [[ "${OXPORT_SANITIZE_ZOO:-0}" == 1 ]] || excluded="zoo|$excluded"
  select=(-LE "^($excluded)\$")
  targets=all
fi
say "build (-j2): $(echo $targets | tr '\n' ' ')"
start=$(date +%s)
cmake --build "$build" -j2 --target $targets
say "built in $(( $(date +%s) - start )) s"
say "ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
say "ctest ${select[*]} $*"
exec ctest --test-dir "$build" --output-on-failure -j2 --no-tests=error "${select[@]}" "$@"
