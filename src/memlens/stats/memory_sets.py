"""Memory-set statistics: the sensitive fact alone versus among neutral facts, and two
attributes together versus each alone — paired over the same questions.

A response's **elevation** is its drift minus its question's noise floor (mean drift of the
question's no-memory rows). Per question and attribute category ``c``:

* ``alone`` — mean elevation of the single-stimulus rows of ``c``;
* ``among_neutral`` — mean elevation of the ``persona_in_set`` rows of ``c`` (the fact among
  neutral facts); ``net`` subtracts the question's ``neutral_set`` elevation (what the neutral
  profile alone adds), so it is the sensitive line's own effect inside the profile;
* ``difference`` = ``net`` − ``alone``.

Each value is the mean over the questions that have every part, with a 95 % percentile cluster
bootstrap CI (questions resampled jointly, so the difference is paired; seeded). Verdicts:
``diluted`` (difference CI below 0), ``amplified`` (above 0), ``no clear difference``, or
``not interpretable`` (fewer than ``min_questions`` questions).

Combinations ``a+b``: the pair's elevation against the stronger of the two alone (the
category with the larger mean alone elevation), paired: ``more than either alone``, ``less than
the stronger alone`` or ``like the stronger alone``.

The result is a :class:`MemorySets` (frozen); ``to_dict()`` is ``memory_sets.json`` and
``MemorySets.from_dict`` reads it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from memlens.numfmt import number
from memlens.stats.bootstrap import MeanEstimate, bootstrap_mean, draw_cluster_indices
from memlens.stats.elevation import question_floors

SINGLE = ("persona", "life_event")
SET_CLASSES = ("neutral_set", "persona_in_set", "combination")
AMONG_NEUTRAL_VERDICTS = ("diluted", "amplified", "no clear difference")
COMBINATION_VERDICTS = ("less than the stronger alone", "more than either alone",
                        "like the stronger alone")
"""Verdicts when the difference's CI is below 0, above 0, or includes it."""


@dataclass(frozen=True)
class AmongNeutral:
    """One category: the fact alone, among neutral facts, net of the neutral facts, and
    ``difference`` = net − alone (all over the same questions; ``n`` = questions)."""

    alone: MeanEstimate
    among_neutral: MeanEstimate
    net: MeanEstimate
    difference: MeanEstimate
    verdict: str

    @property
    def n_questions(self) -> int:
        """The questions that have every part."""
        return self.difference.n

    def to_dict(self) -> dict:
        """The JSON form (each part ``{"mean", "ci"}``, then ``n_questions`` and ``verdict``)."""
        return {"alone": self.alone.to_dict(), "among_neutral": self.among_neutral.to_dict(),
                "net": self.net.to_dict(), "difference": self.difference.to_dict(),
                "n_questions": self.n_questions, "verdict": self.verdict}

    @classmethod
    def from_dict(cls, data: Mapping, n_bootstrap: int) -> AmongNeutral:
        """Read :meth:`to_dict`'s form back."""
        part = _reader(data["n_questions"], n_bootstrap)
        return cls(part(data["alone"]), part(data["among_neutral"]), part(data["net"]),
                   part(data["difference"]), data["verdict"])


@dataclass(frozen=True)
class Combination:
    """One attribute pair ``first+second``: together, each alone, and ``difference`` =
    together − the stronger alone (``stronger_alone`` names it), over the same questions."""

    first: str
    second: str
    combined: MeanEstimate
    first_alone: MeanEstimate
    second_alone: MeanEstimate
    difference: MeanEstimate
    stronger_alone: str
    verdict: str

    @property
    def n_questions(self) -> int:
        """The questions that have the pair and both attributes alone."""
        return self.difference.n

    def to_dict(self) -> dict:
        """The JSON form: ``combined``, the two attributes by name, ``difference``,
        ``n_questions``, ``stronger_alone``, ``verdict``."""
        return {"combined": self.combined.to_dict()} | {self.first: self.first_alone.to_dict()} \
            | {self.second: self.second_alone.to_dict(), "difference": self.difference.to_dict(),
               "n_questions": self.n_questions, "stronger_alone": self.stronger_alone,
               "verdict": self.verdict}

    @classmethod
    def from_dict(cls, pair: str, data: Mapping, n_bootstrap: int) -> Combination:
        """Read :meth:`to_dict`'s form of ``pair`` (``first+second``) back."""
        first, _, second = pair.partition("+")
        part = _reader(data["n_questions"], n_bootstrap)
        return cls(first, second, part(data["combined"]), part(data[first]), part(data[second]),
                   part(data["difference"]), data["stronger_alone"], data["verdict"])


def _reader(n: int, n_bootstrap: int):
    return lambda data: MeanEstimate.from_dict(data, n=n, n_bootstrap=n_bootstrap)


@dataclass(frozen=True)
class MemorySets:
    """Fact alone vs among neutral facts per category, attribute pairs, what the neutral facts
    alone add, and the settings that produced them."""

    metric: str
    n_bootstrap: int
    seed: int
    min_questions: int
    neutral_set: MeanEstimate
    among_neutral: dict[str, AmongNeutral]
    combined: dict[str, Combination]

    def to_dict(self) -> dict:
        """The JSON form (``memory_sets.json``)."""
        return {"metric": self.metric, "n_bootstrap": self.n_bootstrap, "seed": self.seed,
                "min_questions": self.min_questions,
                "neutral_set": self.neutral_set.to_dict() | {"n_questions": self.neutral_set.n},
                "among_neutral": {c: entry.to_dict() for c, entry in self.among_neutral.items()},
                "combined": {pair: entry.to_dict() for pair, entry in self.combined.items()}}

    @classmethod
    def from_dict(cls, data: Mapping) -> MemorySets:
        """Read :meth:`to_dict`'s form (``memory_sets.json``) back."""
        n_bootstrap = data["n_bootstrap"]
        neutral = data["neutral_set"]
        return cls(data["metric"], n_bootstrap, data["seed"], data["min_questions"],
                   _reader(neutral["n_questions"], n_bootstrap)(neutral),
                   {c: AmongNeutral.from_dict(entry, n_bootstrap)
                    for c, entry in data["among_neutral"].items()},
                   {pair: Combination.from_dict(pair, entry, n_bootstrap)
                    for pair, entry in data["combined"].items()})


class _Elevations:
    """Mean elevation per question of chosen rows (drift minus the question's floor)."""

    def __init__(self, rows: list[dict], metric: str) -> None:
        self.rows, self.metric = rows, metric
        self.floors = question_floors(rows, metric)

    def of(self, classes: str | tuple[str, ...], category: str | None = None) -> dict[str, float]:
        """``{question: mean elevation}`` of the rows of ``classes`` (and ``category``)."""
        classes = (classes,) if isinstance(classes, str) else classes
        values: dict[str, list[float]] = {}
        for row in self.rows:
            if row["condition_class"] in classes and category in (None, row["category"]):
                values.setdefault(row["question_id"], []).append(float(row[self.metric]))
        return {q: float(np.mean(v)) - self.floors[q] for q, v in values.items()
                if q in self.floors}

    def categories(self, klass: str) -> list[str]:
        """The categories of ``klass`` rows, sorted."""
        return sorted({row["category"] for row in self.rows if row["condition_class"] == klass})


def _paired(columns: dict[str, np.ndarray], rng: np.random.Generator,
            n_bootstrap: int) -> dict[str, MeanEstimate]:
    """Mean and paired-bootstrap CI of each column (questions resampled jointly)."""
    n = len(next(iter(columns.values())))
    draws = draw_cluster_indices(n, n_bootstrap, rng) if n else None
    return {name: bootstrap_mean(values, n_bootstrap=n_bootstrap, draws=draws)
            for name, values in columns.items()}


def _verdict(difference: MeanEstimate, min_questions: int, words: tuple[str, str, str]) -> str:
    if difference.n < min_questions:
        return "not interpretable"
    return (words[0] if difference.ci_high < 0 else words[1] if difference.ci_low > 0
            else words[2])


def _among_neutral(elevations: _Elevations, category: str, neutral: dict[str, float],
                   rng: np.random.Generator, n_bootstrap: int,
                   min_questions: int) -> AmongNeutral:
    alone, inside = elevations.of(SINGLE, category), elevations.of("persona_in_set", category)
    questions = sorted(set(alone) & set(inside) & set(neutral))
    columns = {"alone": np.array([alone[q] for q in questions]),
               "among_neutral": np.array([inside[q] for q in questions]),
               "net": np.array([inside[q] - neutral[q] for q in questions])}
    columns["difference"] = columns["net"] - columns["alone"]
    parts = _paired(columns, rng, n_bootstrap)
    return AmongNeutral(**parts, verdict=_verdict(parts["difference"], min_questions,
                                                  AMONG_NEUTRAL_VERDICTS))


def _combination(elevations: _Elevations, pair: str, rng: np.random.Generator,
                 n_bootstrap: int, min_questions: int) -> Combination:
    first, _, second = pair.partition("+")
    together = elevations.of("combination", pair)
    alone_a, alone_b = elevations.of(SINGLE, first), elevations.of(SINGLE, second)
    questions = sorted(set(together) & set(alone_a) & set(alone_b))
    a = np.array([alone_a[q] for q in questions])
    b = np.array([alone_b[q] for q in questions])
    first_stronger = bool(len(a) and a.mean() >= b.mean())
    combined = np.array([together[q] for q in questions])
    parts = _paired({"combined": combined, "a": a, "b": b,
                     "difference": combined - (a if first_stronger else b)}, rng, n_bootstrap)
    return Combination(first, second, parts["combined"], parts["a"], parts["b"],
                       parts["difference"], first if first_stronger else second,
                       _verdict(parts["difference"], min_questions, COMBINATION_VERDICTS))


def compare_memory_sets(rows: Iterable[Mapping], *, metric: str = "dtw", seed: int = 0,
                        n_bootstrap: int = 2000, min_questions: int = 3) -> MemorySets:
    """Fact alone vs among neutral facts, and attribute pairs (see the module docstring).

    >>> rows = [{"question_id": "q", "condition_class": "control", "category": "-", "dtw": 0.1},
    ...         {"question_id": "q", "condition_class": "persona", "category": "age", "dtw": 0.5},
    ...         {"question_id": "q", "condition_class": "neutral_set", "category": "neutral",
    ...          "dtw": 0.2},
    ...         {"question_id": "q", "condition_class": "persona_in_set", "category": "age",
    ...          "dtw": 0.3}]
    >>> entry = compare_memory_sets(rows, n_bootstrap=100, min_questions=1).among_neutral["age"]
    >>> [round(p.estimate, 3) for p in (entry.alone, entry.among_neutral, entry.net, entry.difference)]
    [0.4, 0.2, 0.1, -0.3]
    """
    rows = [dict(row) for row in rows if row.get(metric) is not None]
    set_questions = {row["question_id"] for row in rows if row["condition_class"] in SET_CLASSES}
    elevations = _Elevations([row for row in rows if row["question_id"] in set_questions], metric)
    rng = np.random.default_rng(seed)
    neutral = elevations.of("neutral_set")
    among = {category: _among_neutral(elevations, category, neutral, rng, n_bootstrap,
                                      min_questions)
             for category in elevations.categories("persona_in_set")}
    combined = {pair: _combination(elevations, pair, rng, n_bootstrap, min_questions)
                for pair in elevations.categories("combination")}
    neutral_set = _paired({"elevation": np.array(list(neutral.values()))}, rng,
                          n_bootstrap)["elevation"]
    return MemorySets(metric, n_bootstrap, seed, min_questions, neutral_set, among, combined)


def memory_set_tables(result: MemorySets) -> tuple[list[dict], list[dict]]:
    """Printable rows: one per category (fact alone vs among neutral facts) and one per
    attribute pair, every number through ``memlens.numfmt.number`` with its CI and n."""

    def value(part: MeanEstimate) -> str:
        return (f"{number(part.estimate, '+.3f')} [{number(part.ci_low, '+.3f')}, "
                f"{number(part.ci_high, '+.3f')}]")

    among = [{"category": category, "verdict": entry.verdict, "n_questions": entry.n_questions,
              "alone": value(entry.alone), "among_neutral": value(entry.among_neutral),
              "net_of_neutral_set": value(entry.net), "difference": value(entry.difference)}
             for category, entry in result.among_neutral.items()]
    pairs = [{"pair": pair, "verdict": entry.verdict, "n_questions": entry.n_questions,
              "combined": value(entry.combined)}
             | {f"alone ({entry.first})": value(entry.first_alone)}
             | {f"alone ({entry.second})": value(entry.second_alone),
                "stronger_alone": entry.stronger_alone, "difference": value(entry.difference)}
             for pair, entry in result.combined.items()]
    return among, pairs


def format_memory_sets(result: MemorySets) -> str:
    """Terminal lines of :func:`compare_memory_sets` (elevation above the floor, 95 % CI)."""
    among, pairs = memory_set_tables(result)
    lines = [f"memory sets ({result.metric} above the floor, 95% CI; n = questions):"]
    lines += [f"  {r['category']}: {r['verdict']} (n={r['n_questions']}); alone {r['alone']}, "
              f"among neutral facts {r['among_neutral']}, net of the neutral facts "
              f"{r['net_of_neutral_set']}, difference {r['difference']}" for r in among]
    lines += [f"  {r['pair']}: {r['verdict']} (n={r['n_questions']}); together {r['combined']}, "
              f"difference vs {r['stronger_alone']} alone {r['difference']}" for r in pairs]
    return "\n".join(lines)
