#!/usr/bin/env bash
# Does memlens still pass its tests with TODAY's releases? Installs without requirements/lock.txt
# into a brand-new scratch virtualenv and runs the test suite there, so upstream breakage is seen
# before users see it. Nothing on this machine or in the lock changes.
#   bash scripts/check_latest.sh            # exit code = pytest's
#   KEEP=1 bash scripts/check_latest.sh     # keep the scratch venv (its path is printed)
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$(mktemp -d -t memlens-latest-XXXXXX)"
python3 -m venv "$scratch/venv"
# shellcheck disable=SC1091
source "$scratch/venv/bin/activate"
echo "scratch venv: $scratch/venv"
MEMLENS_UNLOCKED=1 bash scripts/install.sh test
python -m pip freeze --exclude-editable > "$scratch/latest-freeze.txt"
echo "--- releases that differ from requirements/lock.txt:"
diff <(grep -v '^#' requirements/lock.txt | sort) <(sort "$scratch/latest-freeze.txt") | grep '^[<>]' || echo "(none)"
status=0
python -m pytest || status=$?
[ "${KEEP:-0}" = "1" ] || rm -rf "$scratch"
exit "$status"
