"""Mitigation of memory-induced drift (SPEC §3): GRPO rewards, reference trajectories,
SymPreference DPO data, TRL training entry points and evaluation.

Training and evaluation import TRL / transformers / lm-eval only when called. The names below
are resolved on first use (PEP 562), so importing a submodule such as
``memlens.mitigation.config`` — which ``memlens --help`` does to build the training flags —
does not pull in the rewards and their numpy-backed metrics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memlens.mitigation.keyword_labeler import KeywordLabeler
    from memlens.mitigation.labeling import StepLabeling, completion_text
    from memlens.mitigation.rewards import (
        DTWReward,
        FormatReward,
        SRIReward,
        WeightedReward,
        format_reward,
        paper_rewards,
    )

_EXPORTS = {
    "DTWReward": "rewards",
    "FormatReward": "rewards",
    "KeywordLabeler": "keyword_labeler",
    "SRIReward": "rewards",
    "StepLabeling": "labeling",
    "WeightedReward": "rewards",
    "completion_text": "labeling",
    "format_reward": "rewards",
    "paper_rewards": "rewards",
}

__all__ = [
    "DTWReward",
    "FormatReward",
    "KeywordLabeler",
    "SRIReward",
    "StepLabeling",
    "WeightedReward",
    "completion_text",
    "format_reward",
    "paper_rewards",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
