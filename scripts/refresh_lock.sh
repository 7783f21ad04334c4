#!/usr/bin/env bash
# Rewrites requirements/lock.txt (and requirements/mempalace-lock.txt) from today's releases:
# a brand-new scratch virtualenv, an unlocked install, the full test suite, then pip freeze.
# The lock is written only when the tests pass. Review the diff and commit it.
set -euo pipefail
cd "$(dirname "$0")/.."
scratch="$(mktemp -d -t memlens-lock-XXXXXX)"
python3 -m venv "$scratch/venv"
# shellcheck disable=SC1091
source "$scratch/venv/bin/activate"
MEMLENS_UNLOCKED=1 bash scripts/install.sh test
python -m pytest
{ sed -n '1,3p' requirements/lock.txt; python -m pip freeze --exclude-editable | grep -v '^memlens'; } \
  > "$scratch/lock.txt"
mp="$(python -c 'from memlens.tooldrift.mempalace_adapter import python_path; print(python_path())')"
purelib="$("$mp" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
{ sed -n '1,2p' requirements/mempalace-lock.txt; "$mp" -m pip freeze --path "$purelib"; } \
  > "$scratch/mempalace-lock.txt"
mv "$scratch/lock.txt" requirements/lock.txt
mv "$scratch/mempalace-lock.txt" requirements/mempalace-lock.txt
rm -rf "$scratch"
git --no-pager diff --stat -- requirements/
