"""Mitigation of memory-induced drift (SPEC §3): GRPO rewards, reference trajectories,
SymPreference DPO data, TRL training entry points and evaluation.

Training and evaluation import TRL / transformers / lm-eval only when called.
"""

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
