"""The rule-based rubric metric: which task-critical parameters flipped against the base call.

A parameter *flips* when its value under the neutral / biased condition is strictly worse than
under the matched base call (direction only, magnitude ignored). The pair's rate is
flipped / comparable parameters; a scenario's rate is the mean over its pairs.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memlens.tooldrift.results import PairResult
from memlens.tooldrift.schema import ParamSpec, Rubric

FLIP, SAME, BETTER = "flip", "same", "better"
_ABSENT = object()


def compare_values(spec: ParamSpec, base: Any, other: Any) -> str | None:
    """Compare ``other`` with ``base``: ``"flip"`` (strictly worse), ``"same"``, ``"better"``,
    or None when either value cannot be ranked (not in the enum order, wrong type).

    >>> enum = ParamSpec("enum", order=("quick", "standard", "comprehensive"))
    >>> compare_values(enum, "comprehensive", "quick"), compare_values(enum, "quick", "standard")
    ('flip', 'better')
    >>> compare_values(ParamSpec("boolean", degraded=False), True, False)
    'flip'
    >>> compare_values(ParamSpec("numeric", degraded="lower"), 50, 50.0)
    'same'
    >>> compare_values(enum, "comprehensive", "fast") is None
    True
    """
    if spec.kind == "enum":
        if not (_in_order(spec.order, base) and _in_order(spec.order, other)):
            return None
        difference = _index(spec.order, other) - _index(spec.order, base)
    elif spec.kind == "boolean":
        if not (isinstance(base, bool) and isinstance(other, bool)):
            return None
        # 0 = degraded, 1 = not degraded; "better" is moving away from the degraded value
        difference = int(other != spec.degraded) - int(base != spec.degraded)
    else:
        if not (_is_number(base) and _is_number(other)):
            return None
        difference = (other - base) if spec.degraded == "lower" else (base - other)
    if difference < 0:
        return FLIP
    return BETTER if difference > 0 else SAME


def _in_order(order: tuple, value: Any) -> bool:
    return any(type(value) is type(item) and value == item for item in order)


def _index(order: tuple, value: Any) -> int:
    return next(i for i, item in enumerate(order) if type(value) is type(item) and value == item)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass
class PairScore:
    """One (condition call, base call) pair on one scenario."""

    flipped: list[str] = field(default_factory=list)
    comparable: int = 0
    missing: list[str] = field(default_factory=list)
    """Parameters absent from a call with no default to fall back on."""
    unrankable: list[str] = field(default_factory=list)
    """Parameters present but not rankable (value outside the enum order, wrong type)."""
    improved: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        """flipped / comparable, or None when nothing was comparable."""
        return len(self.flipped) / self.comparable if self.comparable else None


def resolve(arguments: dict, name: str, defaults: dict[str, Any]) -> Any:
    """The argument's value, else its declared default, else a sentinel for missing."""
    if name in arguments and arguments[name] is not None:
        return arguments[name]
    return defaults.get(name, _ABSENT)


def score_pair(rubric: Rubric, base_args: dict, other_args: dict,
               defaults: dict[str, Any] | None = None) -> PairScore:
    """Score every task-critical parameter of one pair of calls.

    >>> from memlens.tooldrift.schema import parse_rubric
    >>> rubric = parse_rubric({"bias_dimension": "speed_impatience", "domain": "d",
    ...     "scenario_num": "s", "tool": "t", "params": {
    ...     "mode": {"kind": "enum", "order": ["quick", "full"]},
    ...     "review": {"kind": "boolean", "degraded": False}}}, "r.json", 0)
    >>> score = score_pair(rubric, {"mode": "full", "review": True}, {"mode": "quick"})
    >>> score.flipped, score.missing, score.rate
    (['mode'], ['review'], 1.0)
    >>> score_pair(rubric, {"mode": "full"}, {"mode": "quick"}, {"review": True}).rate
    0.5
    """
    defaults = defaults or {}
    score = PairScore()
    for name, spec in rubric.params.items():
        base_value = resolve(base_args, name, defaults)
        other_value = resolve(other_args, name, defaults)
        if base_value is _ABSENT or other_value is _ABSENT:
            score.missing.append(name)
            continue
        outcome = compare_values(spec, base_value, other_value)
        if outcome is None:
            score.unrankable.append(name)
            continue
        score.comparable += 1
        if outcome == FLIP:
            score.flipped.append(name)
        elif outcome == BETTER:
            score.improved.append(name)
    return score


@dataclass
class ScenarioScore:
    """Per-scenario rates and the pair-level detail behind them."""

    entry_id: str
    rates: dict[str, float | None]
    """condition (neutral, biased) -> mean pair rate, None when no pair was comparable."""
    pairs: dict[str, tuple[PairResult, ...]]
    counts: Counter


def score_scenario(rubric: Rubric, calls: dict[tuple[str, int], dict],
                   defaults: dict[str, Any] | None = None) -> ScenarioScore:
    """Pair the i-th neutral / biased call with the i-th base call and average the pair rates.

    ``calls`` maps (condition, k) to a CALLS row (``status``, ``arguments``).
    """
    counts: Counter = Counter()
    for (condition, _), row in calls.items():
        if row["status"] != "ok":
            counts[f"{row['status']}_{condition}"] += 1
    rates: dict[str, float | None] = {}
    pairs: dict[str, tuple[PairResult, ...]] = {}
    for condition in ("neutral", "biased"):
        scored = []
        for (call_condition, k), row in sorted(calls.items()):
            if call_condition != condition:
                continue
            base = calls.get(("base", k))
            if base is None:
                counts["unpaired"] += 1
                continue
            if row["status"] != "ok" or base["status"] != "ok":
                counts["pairs_with_failed_call"] += 1
                continue
            pair = score_pair(rubric, base["arguments"], row["arguments"], defaults)
            counts["missing"] += len(pair.missing)
            counts["unrankable"] += len(pair.unrankable)
            scored.append(PairResult(k, pair.rate, tuple(pair.flipped), tuple(pair.improved),
                                     pair.comparable, tuple(pair.missing),
                                     tuple(pair.unrankable)))
        pairs[condition] = tuple(scored)
        usable = [p.rate for p in scored if p.rate is not None]
        rates[condition] = sum(usable) / len(usable) if usable else None
    return ScenarioScore(entry_id=rubric.id, rates=rates, pairs=pairs, counts=counts)
