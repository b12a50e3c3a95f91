#!/bin/sh
# The whole torchvision 0.14 zoo through oxport (tools/zoo_full.py): writes docs/ZOO.md.
# Hours on a small machine: runs one model at a time at low priority; rerunning resumes
# (results in /tmp/oxport-zoo-full/results.json; --redo to start over, --only a,b for some).
# Rerun it whenever a converter changes.
cd "$(dirname "$0")/.." || exit 2
[ -e node_modules ] || tools/setup.sh
exec nice -n 10 /usr/bin/python3 tools/zoo_full.py "$@"
