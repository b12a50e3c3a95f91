#!/usr/bin/env bash
# oxport-studio ignores SIGXFSZ (app/studio_main.cpp): an export past the file-size limit then
# fails with EFBIG ("File too large") in the export panel instead of the kernel closing the
# studio. Started on the offscreen platform with a scratch HOME; the disposition is read from
# /proc/PID/status (SigIgn, bit 24 = signal 25), then the studio is ended.
# usage: studio_sigxfsz.sh OXPORT-STUDIO MODEL
set -u
studio=$1 model=$2
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
HOME="$home" XDG_CONFIG_HOME="$home/.config" QT_QPA_PLATFORM=offscreen "$studio" --no-session "$model" \
  >"$home/log" 2>&1 &
pid=$!
# Poll for up to 10 s (main() sets it first thing; loading libtorch and Qt comes before that).
mask="" ignored=0
for _ in $(seq 1 100); do
  mask=$(awk '/^SigIgn:/ {print $2}' "/proc/$pid/status" 2>/dev/null)
  [ -n "$mask" ] && (( (0x$mask >> 24) & 1 )) && { ignored=1; break; }
  sleep 0.1
done
kill "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
[ -n "$mask" ] || { echo "FAIL: oxport-studio did not start"; cat "$home/log"; exit 1; }
if ((ignored)); then
  echo "SIGXFSZ ignored (SigIgn $mask)"
else
  echo "FAIL: SIGXFSZ is not ignored (SigIgn $mask)"
  exit 1
fi
