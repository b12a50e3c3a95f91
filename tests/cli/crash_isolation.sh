#!/bin/sh
# The `oxport` command runs its work in a child process (runCliIsolated): whatever kills that
# child is reported as an error, the earlier output file survives and no temporary file is left.
# usage: crash_isolation.sh OXPORT MODEL WORKDIR SIGNAL TARGET
#   SIGNAL  the signal to send (SEGV, KILL, INT)
#   TARGET  child: send it to the working child (as a libtorch crash or the OOM killer would);
#           parent: send it to the `oxport` process (as Ctrl+C or `timeout` would)
set -u
ox=$1 model=$2 w=$3 sig=$4 target=$5
out="$w/isolation_$sig.onnx"
report="$w/isolation_$sig.json"
mkdir -p "$w"
rm -f "$report" "$w"/.isolation_"$sig".onnx.tmp-*
echo "EARLIER OUTPUT" > "$out"
# A big example input keeps the child busy for a while (the sample has adaptive pooling); the
# example run on meta tensors would not compute it, so this test asks for the real run.
OXPORT_META_RUN=0 "$ox" export "$model" -o "$out" --arg 16x3x448x448 --report "$report" 2> "$w/isolation_$sig.err" &
parent=$!
child=""
i=0
while [ -z "$child" ] && [ $i -lt 1000 ]; do
  child=$(pgrep -P "$parent" | head -n 1)
  [ -z "$child" ] && sleep 0.01
  i=$((i + 1))
done
[ -n "$child" ] || { echo "FAIL: no child process appeared"; exit 1; }
sleep 0.3
if [ "$target" = child ]; then kill -s "$sig" "$child"; else kill -s "$sig" "$parent"; fi
wait "$parent"
rc=$?
echo "rc=$rc"
cat "$w/isolation_$sig.err"
[ "$(cat "$out")" = "EARLIER OUTPUT" ] && echo "earlier output intact" || echo "FAIL: earlier output changed"
ls "$w" | grep -q "^\.isolation_$sig\.onnx\.tmp-" && echo "FAIL: temporary file left" || echo "no temporary file"
grep -o '"status": "[a-z]*"' "$report" || echo "FAIL: no report"
