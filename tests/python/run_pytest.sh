#!/bin/sh
# Runs pytest on the Python API's tests (label `python`).
#   run_pytest.sh PYTHON PACKAGE_DIR TEST_FILE [pytest arguments]
# PACKAGE_DIR is build/python (where the build puts the `oxport` package). pytest's exit code 5
# (no test collected: a filter or file that matches nothing) is a failure, not a pass; a Python
# without pytest skips (exit 77, CTest's SKIP_RETURN_CODE) and says what to install.
py=$1
pkg=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c "import pytest" 2>/dev/null; then
  echo "run_pytest.sh: $py has no pytest: apt-get install python3-pytest (tools/setup.sh does)"
  exit 77
fi
PYTHONPATH="$pkg:$here${PYTHONPATH:+:$PYTHONPATH}" "$py" -m pytest -q -p no:cacheprovider -W ignore::DeprecationWarning "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
  echo "run_pytest.sh: pytest collected no tests from: $*"
  exit 1
fi
exit "$rc"
