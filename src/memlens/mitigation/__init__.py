"""Mitigation of memory-induced drift (SPEC §3): GRPO rewards, reference trajectories,
SymPreference DPO data, TRL training entry points and evaluation.

Training and evaluation import TRL / transformers / lm-eval only when called. The names below
are resolved on first use (PEP 562), so importing a submodule such as
``memlens.mitigation.config`` — which ``memlens --help`` does to build the training flags —
does not pull in the rewards and their numpy-backed metrics.
"""

from memlens.lazy import lazy_exports

_EXPORTS = {
    "DTWReward": "rewards",
    "FormatReward": "rewards",
    "SRIReward": "rewards",
    "StepLabeling": "labeling",
    "WeightedReward": "rewards",
    "completion_text": "labeling",
    "format_reward": "rewards",
    "paper_rewards": "rewards",
}
"""Public name -> the submodule defining it: resolved on first use, so importing the package
(or a light submodule of it) stays cheap."""

_DEPRECATED = {
    "KeywordLabeler": ("memlens.ontology.keyword_labeler", 'memlens.ontology.get_labeler("keyword")'),
}
"""Old name -> (where it is defined now, what to use instead): warns, removed in the next minor
release (docs/architecture.md "Public API and deprecation policy")."""

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, deprecated=_DEPRECATED)
__all__ = list(_EXPORTS)
