"""The task parameters of ``memlens/reasoning_drift`` -> a memlens ``AuditConfig``.

The parameters are ``AuditConfig``'s own keys (``-T n_questions=4``, ``-T mode=system``…) plus
``preset`` and ``config`` (a YAML / JSON file), resolved exactly as ``memlens audit`` resolves
its flags: preset < config file < parameters (``memlens.audit.config.load_config``). The
audited model is inspect's (``--model``), so ``model`` and the speed-only keys are refused.
"""

from __future__ import annotations

from typing import Any

from memlens.audit.config import load_config
from memlens.errors import MemlensError

NOT_TASK_PARAMETERS = {
    "model": "the audited model is inspect's --model",
    "concurrency": "inspect's --max-connections bounds the calls",
    "timeout_s": "inspect's --timeout bounds a call",
    "attempts": "inspect's --max-retries bounds the attempts",
    "orthogonality_rater": "run the orthogonality filter with memlens audit, not inspect",
}
"""AuditConfig keys a task parameter may not set, and why."""

DEFAULT_PRESET = "quick"
"""``inspect eval memlens/reasoning_drift`` with no ``-T``: the quick design (16 questions × 16
conditions = 256 calls of ≤ 160 tokens), the same as ``memlens audit --preset quick``."""


def task_config(preset: str | None = DEFAULT_PRESET, config: str | None = None,
                **parameters: Any):
    """The ``AuditConfig`` of a task: ``preset`` (``quick``, ``standard``, ``paper`` or
    ``none``), then the ``config`` file, then every parameter that is not None.

    >>> task_config(n_questions=2, mode="system").mode, task_config(n_questions=2).n_questions
    ('system', 2)
    >>> task_config(model="openai:x")
    Traceback (most recent call last):
    ...
    memlens.errors.MemlensError: task parameter 'model' cannot be set: the audited model is inspect's --model
    """

    for key in parameters:
        if key in NOT_TASK_PARAMETERS:
            raise MemlensError(f"task parameter {key!r} cannot be set: {NOT_TASK_PARAMETERS[key]}")
    if preset in ("none", ""):
        preset = None
    return load_config(config, parameters, preset=preset)
