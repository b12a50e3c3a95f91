#!/usr/bin/env bash
# The unit, property and robustness tests under AddressSanitizer + UndefinedBehaviorSanitizer:
# configures build-asan/ with OXPORT_SANITIZE=ON (GUI off), builds the test programs of those
# labels and runs them. Our code is instrumented; libtorch, ONNX and protobuf are not (ASan still
# sees their heap through its malloc). Not part of tools/test.sh: the instrumented build of the
# core takes long on two cores (see the report of the last run in docs/ROBUSTNESS.md).
#
#   tools/sanitize.sh                 configure, build, ctest -L 'unit|property|robustness'
#   tools/sanitize.sh -R Preset       extra arguments go to ctest
#   OXPORT_SANITIZE_LABELS='unit|property' tools/sanitize.sh
#                                     only those labels (only their programs are built: unit and
#                                     property need no libtorch code and build in a few minutes)
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

say "configure $build (OXPORT_SANITIZE=ON, GUI off)"
cmake -S "$repo" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOXPORT_SANITIZE=ON -DOXPORT_WITH_GUI=OFF >/dev/null
labels="${OXPORT_SANITIZE_LABELS:-unit|property|robustness}"
targets=$(ninja -C "$build" -t targets all | grep -oE "^tests/($labels)/test_[A-Za-z0-9_]+(:| )" \
            | sed 's/[: ]$//' | sort -u)
[[ -n "$targets" ]] || { echo "sanitize: no test targets found" >&2; exit 1; }
say "build (-j2): $(echo $targets | tr '\n' ' ')"
start=$(date +%s)
cmake --build "$build" -j2 --target $targets
say "built in $(( $(date +%s) - start )) s"
say "ASAN_OPTIONS=$ASAN_OPTIONS UBSAN_OPTIONS=$UBSAN_OPTIONS"
exec ctest --test-dir "$build" --output-on-failure -j2 --no-tests=error -L "$labels" "$@"
