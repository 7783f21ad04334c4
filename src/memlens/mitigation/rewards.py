"""GRPO rewards in TRL's signature ``f(completions, **kwargs) -> list[float]`` (SPEC §3, App. I.2).

Every reward is a picklable callable class instance with a ``__name__`` (TRL logs rewards under
it). Completions are plain strings or conversational (``[{"role": "assistant", "content": …}]``).

* ``format_reward`` — r_fmt = 0.25·[``<step_`` in y] + 0.25·[``<answer>`` in y]
  + 0.5·[shortest non-empty tagged step ≥ 2 characters]; without a tagged step the last term is 0.
  Steps are the ``<step_N>`` blocks found by ``memlens.steps.split_steps`` (whitespace-trimmed);
  the length unit is characters (App. I.2, "minimum non-empty step length in characters").
* ``DTWReward(labeler)`` — r_dtw = −DTW(ô(y), o*(x)), o*(x) from a dataset column.
* ``SRIReward(labeler)`` — −SRI(ô(y), o*(x)).
* ``WeightedReward([(reward, weight), …])`` — a weighted sum, e.g. the paper's r_fmt + r_dtw.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memlens.errors import MemlensError
from memlens.metrics import dtw, sri
from memlens.mitigation.labeling import StepLabeling, completion_text
from memlens.steps import split_steps


class FormatReward:
    """The paper's format reward r_fmt (App. I.2, eq. 20), in [0, 1].

    >>> format_reward(["<think><step_1>Costs.</step_1></think><answer>A</answer>"])
    [1.0]
    >>> format_reward(["<step_1>a</step_1>", "<answer>x</answer>", "plain text"])
    [0.25, 0.25, 0.0]
    """

    __name__ = "format_reward"

    def score(self, text: str) -> float:
        """r_fmt of one completion's text."""
        split = split_steps(text)
        step_lengths = [len(step.text) for step in split.steps] if split.method == "tagged" else []
        reward = 0.25 * ("<step_" in text) + 0.25 * ("<answer>" in text)
        if step_lengths and min(step_lengths) >= 2:
            reward += 0.5
        return float(reward)

    def __call__(self, completions: Sequence[object], **kwargs) -> list[float]:
        return [self.score(completion_text(completion)) for completion in completions]


format_reward = FormatReward()
"""The ready-made format reward instance."""


def parse_reference(value: object, column: str, row: int) -> list[str]:
    """A reference trajectory from a dataset cell: a list of symbol ids or its JSON string.

    >>> parse_reference('["a", "b"]', "reference", 0)
    ['a', 'b']
    >>> parse_reference(("a",), "reference", 0)
    ['a']
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as error:
            raise MemlensError(f"reward: column '{column}' row {row}: not a JSON list of symbol "
                               f"ids ({error.msg})") from None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list | tuple) or not all(isinstance(s, str) for s in value):
        raise MemlensError(f"reward: column '{column}' row {row}: expected a list of symbol ids, "
                           f"got {value!r:.80}")
    return list(value)


class TrajectoryReward:
    """Base of the drift rewards: label the completion's steps, compare with the reference."""

    __name__ = "trajectory_reward"

    def __init__(self, labeler: str | StepLabeling | object = "embedded",
                 reference_column: str = "reference"):
        self.labeling = labeler if isinstance(labeler, StepLabeling) else StepLabeling(labeler)
        self.reference_column = reference_column

    def distance(self, trajectory: list[str], reference: list[str]) -> float:
        """Drift between a labeled trajectory and the reference (lower is better)."""
        raise NotImplementedError

    def references(self, count: int, kwargs: dict) -> list[list[str]]:
        """The reference trajectories of the batch, read from ``kwargs[reference_column]``."""
        if self.reference_column not in kwargs:
            available = sorted(k for k in kwargs if k not in ("prompts", "completion_ids"))
            raise MemlensError(f"reward {self.__name__}: the dataset has no column "
                               f"'{self.reference_column}' (columns passed: {available})")
        column = list(kwargs[self.reference_column])
        if len(column) != count:
            raise MemlensError(f"reward {self.__name__}: {len(column)} references for {count} "
                               f"completions in column '{self.reference_column}'")
        return [parse_reference(v, self.reference_column, i) for i, v in enumerate(column)]

    def __call__(self, completions: Sequence[object], **kwargs) -> list[float]:
        references = self.references(len(completions), kwargs)
        trajectories = self.labeling.trajectories(list(completions))
        return [-self.distance(t, r) for t, r in zip(trajectories, references, strict=True)]


class DTWReward(TrajectoryReward):
    """r_dtw = −DTW(ô(y), o*(x)) in [−1, 0] (normalised DTW, 0/1 cost; App. I.2 eq. 21).

    A completion without steps has an empty trajectory and gets −1.

    >>> reward = DTWReward("keyword")
    >>> reward(["<step_1>Split the bill: a fair share.</step_1>", "no steps here"],
    ...        reference=[["social.fairness_reciprocity"], '["practical.resources_cost"]'])
    [-0.0, -1.0]
    """

    __name__ = "dtw_reward"

    def distance(self, trajectory: list[str], reference: list[str]) -> float:
        return dtw(trajectory, reference)


class SRIReward(TrajectoryReward):
    """−SRI(ô(y), o*(x)) with ``alpha`` weighting order against distribution (App. F).

    >>> SRIReward("keyword", alpha=0.5)(["<step_1>Split it.</step_1><step_2>Budget.</step_2>"],
    ...                                 reference=[["practical.resources_cost",
    ...                                             "social.fairness_reciprocity"]])
    [-0.5]
    """

    __name__ = "sri_reward"

    def __init__(self, labeler: str | StepLabeling | object = "embedded",
                 reference_column: str = "reference", alpha: float = 0.5):
        super().__init__(labeler, reference_column)
        self.alpha = alpha

    def distance(self, trajectory: list[str], reference: list[str]) -> float:
        return sri(trajectory, reference, alpha=self.alpha)


class WeightedReward:
    """Σ weight · reward(completions), e.g. ``WeightedReward([(format_reward, 1), (dtw, 1)])``.

    >>> both = WeightedReward([(format_reward, 1.0), (format_reward, 0.5)])
    >>> both.__name__, both(["<step_1>ab</step_1>"])
    ('format_reward+0.5*format_reward', [1.125])
    """

    def __init__(self, parts: Sequence[tuple[object, float]]):
        if not parts:
            raise MemlensError("WeightedReward needs at least one (reward, weight) pair")
        self.parts = [(reward, float(weight)) for reward, weight in parts]
        self.__name__ = "+".join(name if weight == 1.0 else f"{weight:g}*{name}"
                                 for name, weight in ((getattr(r, "__name__", "reward"), w)
                                                      for r, w in self.parts))

    def __call__(self, completions: Sequence[object], **kwargs) -> list[float]:
        totals = [0.0] * len(completions)
        for reward, weight in self.parts:
            for index, value in enumerate(reward(completions, **kwargs)):
                totals[index] += weight * (value if value is not None else 0.0)
        return totals


def paper_rewards(variant: str, labeler: str | object = "embedded",
                  reference_column: str = "reference") -> list[object]:
    """The reward list of a Table 2 variant: ``dtw+fmt``, ``dtw+sri+fmt``, ``dtw``, ``dtw+sri``.

    TRL sums the rewards of the list (equal weights), so each stays logged on its own.

    >>> [r.__name__ for r in paper_rewards("dtw+sri+fmt", labeler="keyword")]
    ['format_reward', 'dtw_reward', 'sri_reward']
    """
    names = [part.strip() for part in variant.lower().split("+") if part.strip()]
    unknown = [name for name in names if name not in ("dtw", "sri", "fmt")]
    if unknown or not names:
        raise MemlensError(f"--rewards: unknown reward(s) {unknown or [variant]}; "
                           "use '+'-joined names from dtw, sri, fmt (e.g. 'dtw+fmt')")
    labeling = labeler if isinstance(labeler, StepLabeling) else StepLabeling(labeler)
    rewards: list[object] = [format_reward] if "fmt" in names else []
    if "dtw" in names:
        rewards.append(DTWReward(labeling, reference_column))
    if "sri" in names:
        rewards.append(SRIReward(labeling, reference_column))
    return rewards
