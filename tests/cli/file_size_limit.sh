#!/usr/bin/env bash
# A full disk as a file-size limit: `oxport export` under `ulimit -f` (what a quota or a full
# small disk does to one write) must fail with a clear message, leave no temporary file and keep
# an earlier output of the same name byte for byte. Without SIGXFSZ ignored (app/cli_main.cpp)
# the kernel would kill the process mid-write instead.
# usage: file_size_limit.sh OXPORT MODEL PRESET WORKDIR [isolated|in-process]
#   isolated    the default: the job runs in the supervised child (runCliIsolated)
#   in-process  OXPORT_ISOLATE=0: one process, nobody left to clean up after a kill
set -u
ox=$1 model=$2 preset=$3 w=$4 mode=${5:-isolated}
mkdir -p "$w"
out="$w/limited_$mode.onnx"
rm -f "$w"/.limited_"$mode".onnx.tmp-*
printf 'EARLIER OUTPUT\n' > "$out"
cp "$out" "$w/expected_$mode"
[ "$mode" = in-process ] && export OXPORT_ISOLATE=0
# The sample model is ~23 KiB; 8 KiB (bash counts 1024-byte blocks) stops the write part way.
# stderr goes to a pipe, which the limit does not cover.
err=$( (ulimit -f 8; exec "$ox" export "$model" --preset "$preset" -o "$out") 2>&1 >/dev/null)
rc=$?
echo "rc=$rc"
printf '%s\n' "$err"
cmp -s "$out" "$w/expected_$mode" && echo "earlier output intact" || echo "FAIL: earlier output changed"
ls -A "$w" | grep -q "^\.limited_$mode\.onnx\.tmp-" && echo "FAIL: temporary file left" || echo "no temporary file"
# With the limit lifted the same command writes the model (the failure was the limit, nothing else).
"$ox" export "$model" --preset "$preset" -o "$out" >/dev/null 2>&1 && [ -s "$out" ] \
  && ! cmp -s "$out" "$w/expected_$mode" && echo "export without the limit: ok"
