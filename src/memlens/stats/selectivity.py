"""Selectivity: drift where memory *should* matter versus drift where it should not.

Two sides per stimulus category ``c`` (an attribute such as ``disability``):

* **relevant** — responses to should-personalize questions that depend on ``c``
  (``memlens.questions.should_personalize``), under a stimulus of category ``c``;
* **irrelevant** — responses to the persona-indifferent benchmark questions under a stimulus of
  category ``c`` (rows flagged by the orthogonality filter left out).

A response's **elevation** is its drift minus its question's noise floor (the mean drift of that
question's no-memory rows), so both sides are measured against the same kind of floor. Each side's
value is the mean over questions of the question's mean elevation; its 95 % CI is a percentile
cluster bootstrap over questions (seeded ``numpy.random.default_rng``). **Selectivity** is
relevant − irrelevant, with the CI of the two independent resamplings.

Verdict per category (a side *drifts* when its CI's lower end is above 0):

* ``selective`` — relevant drifts, irrelevant does not, and selectivity's CI is above 0 (goal);
* ``over-sensitive`` — both drift;
* ``memory-blind`` — neither drifts, and both CIs exclude an elevation of ``min_effect_pct``
  (default 10 %) of the mean floor (the memory is ignored, even where it should matter);
* ``inconclusive`` — neither drifts, but a CI still reaches that elevation (too few questions
  or too much noise to call the model memory-blind);
* ``misdirected`` — only the irrelevant side drifts;
* ``unclear`` — relevant drifts, irrelevant does not, but the difference's CI includes 0;
* ``not interpretable`` — fewer than ``min_questions`` questions on a side.

``overall`` — the headline — pools the **persona** categories that have a relevant side
(``overall_pools`` lists them); life events, whose memory should matter almost everywhere, are
pooled separately in ``life_events`` (when any has a relevant side), so a server selective on
every persona attribute is not called over-sensitive because of them.

The result is a :class:`Selectivity` (frozen); ``to_dict()`` is ``selectivity.json`` and
``Selectivity.from_dict`` reads it back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial

import numpy as np

from memlens.numfmt import number
from memlens.stats.bootstrap import MeanEstimate, bootstrap_mean
from memlens.stats.elevation import question_floors

PERTURBED = ("persona", "life_event")
FLAG = "excluded_orthogonality"
VERDICTS = ("selective", "over-sensitive", "memory-blind", "misdirected", "unclear",
            "inconclusive", "not interpretable")


@dataclass(frozen=True)
class SelectivityEntry:
    """One category (or a pool of categories): each side's mean elevation over questions
    (``n`` = questions) with its row count, their difference and the verdict."""

    relevant: MeanEstimate
    irrelevant: MeanEstimate
    relevant_rows: int
    irrelevant_rows: int
    difference: MeanEstimate
    """relevant − irrelevant (the selectivity), CI from the two independent resamplings."""
    verdict: str
    reason: str

    def to_dict(self) -> dict:
        """The JSON form (``relevant`` / ``irrelevant`` / ``selectivity`` / ``verdict`` /
        ``reason``)."""
        return {"relevant": _side_dict(self.relevant, self.relevant_rows),
                "irrelevant": _side_dict(self.irrelevant, self.irrelevant_rows),
                "selectivity": self.difference.to_dict(), "verdict": self.verdict,
                "reason": self.reason}

    @classmethod
    def from_dict(cls, data: Mapping, n_bootstrap: int) -> SelectivityEntry:
        """Read :meth:`to_dict`'s form back."""
        relevant, irrelevant = (MeanEstimate.from_dict(data[side], n=data[side]["n_questions"],
                                                       n_bootstrap=n_bootstrap)
                                for side in ("relevant", "irrelevant"))
        difference = MeanEstimate.from_dict(data["selectivity"], n=min(relevant.n, irrelevant.n),
                                            n_bootstrap=n_bootstrap)
        return cls(relevant, irrelevant, data["relevant"]["n_rows"], data["irrelevant"]["n_rows"],
                   difference, data["verdict"], data["reason"])


def _side_dict(side: MeanEstimate, rows: int) -> dict:
    return side.to_dict() | {"n_questions": side.n, "n_rows": rows}


@dataclass(frozen=True)
class Selectivity:
    """Selectivity per category, the persona headline and the life-event pool (see the module
    docstring), with the settings that produced them."""

    metric: str
    n_bootstrap: int
    seed: int
    min_questions: int
    min_effect: float
    min_effect_pct: float
    categories: dict[str, SelectivityEntry]
    overall: SelectivityEntry
    overall_pools: tuple[str, ...] | None
    """The persona categories ``overall`` pools; None in results from before the split, whose
    ``overall`` pooled every category."""
    life_events: SelectivityEntry | None
    life_event_pools: tuple[str, ...]
    rows_without_floor: int
    unmatched_categories: tuple[str, ...]

    @property
    def summary(self) -> dict[str, list[str]]:
        """The categories of each verdict (every verdict a key)."""
        return {verdict: [c for c, entry in self.categories.items() if entry.verdict == verdict]
                for verdict in VERDICTS}

    def pooled_entries(self) -> list[tuple[str, SelectivityEntry]]:
        """The pooled rows, each labelled with what it pools: the persona headline, then life
        events."""
        if self.overall_pools is None:
            return [("overall (all categories)", self.overall)]
        out = [(f"overall (persona: {', '.join(self.overall_pools) or 'none'})", self.overall)]
        if self.life_events is not None:
            out.append((f"life events ({', '.join(self.life_event_pools)})", self.life_events))
        return out

    def entries(self) -> list[tuple[str, SelectivityEntry]]:
        """Every row to show: the categories, then the pooled rows."""
        return [*self.categories.items(), *self.pooled_entries()]

    def to_dict(self) -> dict:
        """The JSON form (``selectivity.json``)."""
        return {"metric": self.metric, "n_bootstrap": self.n_bootstrap, "seed": self.seed,
                "min_questions": self.min_questions, "min_effect": self.min_effect,
                "min_effect_pct": self.min_effect_pct,
                "categories": {c: entry.to_dict() for c, entry in self.categories.items()},
                "overall": self.overall.to_dict(),
                "overall_pools": None if self.overall_pools is None else list(self.overall_pools),
                "life_events": self.life_events.to_dict() if self.life_events else None,
                "life_event_pools": list(self.life_event_pools), "summary": self.summary,
                "rows_without_floor": self.rows_without_floor,
                "unmatched_categories": list(self.unmatched_categories)}

    @classmethod
    def from_dict(cls, data: Mapping) -> Selectivity:
        """Read :meth:`to_dict`'s form (``selectivity.json``) back."""
        entry = partial(SelectivityEntry.from_dict, n_bootstrap=data["n_bootstrap"])
        pools = data.get("overall_pools")
        return cls(data["metric"], data["n_bootstrap"], data["seed"], data["min_questions"],
                   data["min_effect"], data["min_effect_pct"],
                   {c: entry(value) for c, value in data["categories"].items()},
                   entry(data["overall"]), None if pools is None else tuple(pools),
                   entry(data["life_events"]) if data.get("life_events") else None,
                   tuple(data.get("life_event_pools", ())), data["rows_without_floor"],
                   tuple(data["unmatched_categories"]))


def _verdict(relevant: MeanEstimate, irrelevant: MeanEstimate, difference: MeanEstimate,
             min_questions: int, min_effect: float) -> tuple[str, str]:
    n_rel, n_irr = relevant.n, irrelevant.n
    if n_rel < min_questions or n_irr < min_questions:
        return "not interpretable", (f"needs at least {min_questions} questions on each side "
                                     f"(relevant {n_rel}, irrelevant {n_irr})")
    rel_up, irr_up = relevant.ci_low > 0, irrelevant.ci_low > 0
    if rel_up and irr_up:
        return "over-sensitive", "drifts where memory matters and where it should not"
    if irr_up:
        return "misdirected", "drifts only where memory should not matter"
    if not rel_up:
        reach = max(relevant.ci_high, irrelevant.ci_high)
        if reach > min_effect:
            return "inconclusive", (f"no drift detected, but the CIs reach {reach:+.3f}, above "
                                    f"the smallest elevation of interest ({min_effect:.3f})")
        return "memory-blind", "no drift above the floor where memory should matter"
    if difference.ci_low > 0:
        return "selective", "drifts where memory matters, not where it should not"
    return "unclear", "relevant drift above the floor, but not clearly above irrelevant drift"


def _side(rows: list[dict], metric: str, floors: dict[str, float], rng: np.random.Generator,
          n_bootstrap: int) -> MeanEstimate:
    """Mean over questions of each question's mean elevation, cluster-bootstrapped (replicates
    kept for the difference)."""
    by_question: dict[str, list[float]] = {}
    for row in rows:
        by_question.setdefault(row["question_id"], []).append(
            float(row[metric]) - floors[row["question_id"]])
    return bootstrap_mean([np.mean(values) for values in by_question.values()], seed=rng,
                          n_bootstrap=n_bootstrap, keep_replicates=True)


def _compare(relevant_rows: list[dict], irrelevant_rows: list[dict], *, metric: str,
             floors: dict[str, float], rng: np.random.Generator, n_bootstrap: int,
             min_questions: int, min_effect: float) -> SelectivityEntry:
    """Both sides of one category (or pool), their difference and the verdict."""
    relevant = _side(relevant_rows, metric, floors, rng, n_bootstrap)
    irrelevant = _side(irrelevant_rows, metric, floors, rng, n_bootstrap)
    difference = relevant.minus(irrelevant)
    verdict, reason = _verdict(relevant, irrelevant, difference, min_questions, min_effect)
    return SelectivityEntry(relevant, irrelevant, len(relevant_rows), len(irrelevant_rows),
                            difference, verdict, reason)


def _split_sides(rows: list[dict], attributes: dict[str, set[str]],
                 floors: dict[str, float]) -> tuple[list[dict], list[dict], int]:
    """The relevant and irrelevant perturbed rows (of questions with a floor), and how many
    perturbed rows had no floor."""
    perturbed = [row for row in rows if row["condition_class"] in PERTURBED]
    without_floor = sum(row["question_id"] not in floors for row in perturbed)
    perturbed = [row for row in perturbed if row["question_id"] in floors]
    relevant = [row for row in perturbed
                if row["category"] in attributes.get(row["question_id"], ())]
    irrelevant = [row for row in perturbed
                  if row["question_id"] not in attributes and not row.get(FLAG)]
    return relevant, irrelevant, without_floor


def selectivity(rows: Iterable[Mapping], attributes: Mapping[str, Iterable[str]], *,
                metric: str = "dtw", seed: int = 0, n_bootstrap: int = 2000,
                min_questions: int = 3, min_effect_pct: float = 10.0) -> Selectivity:
    """Selectivity per stimulus category and overall (see the module docstring).

    ``rows`` are drift rows (``question_id``, ``condition_class``, ``category``, ``metric``) of
    both the benchmark and the control set; ``attributes`` maps each control-set question id
    to the stimulus categories it depends on. Rows of questions without a floor are skipped
    and counted (``rows_without_floor``). ``min_effect_pct``: the smallest elevation of
    interest, in % of the mean floor, that a ``memory-blind`` verdict must exclude.

    >>> rows = [{"question_id": q, "condition_class": "control", "category": "none", "dtw": 0.1}
    ...         for q in ("sp1", "b1")]
    >>> rows += [{"question_id": "sp1", "condition_class": "persona", "category": "age", "dtw": 0.5},
    ...          {"question_id": "b1", "condition_class": "persona", "category": "age", "dtw": 0.1}]
    >>> out = selectivity(rows, {"sp1": ["age"]}, min_questions=1, n_bootstrap=200)
    >>> round(out.categories["age"].difference.estimate, 3), out.categories["age"].verdict
    (0.4, 'selective')
    """
    attributes = {str(q): set(cats) for q, cats in attributes.items()}
    rows = [dict(row) for row in rows if row.get(metric) is not None]
    floors = question_floors(rows, metric)
    min_effect = min_effect_pct / 100 * (float(np.mean(list(floors.values()))) if floors else 0.0)
    relevant_rows, irrelevant_rows, without_floor = _split_sides(rows, attributes, floors)
    compare = partial(_compare, metric=metric, floors=floors, rng=np.random.default_rng(seed),
                      n_bootstrap=n_bootstrap, min_questions=min_questions, min_effect=min_effect)

    def pool(names: Iterable[str]) -> SelectivityEntry:
        return compare([r for r in relevant_rows if r["category"] in names],
                       [r for r in irrelevant_rows if r["category"] in names])

    categories = sorted({row["category"] for row in relevant_rows})
    per_category = {category: pool({category}) for category in categories}
    persona = sorted({r["category"] for r in relevant_rows if r["condition_class"] == "persona"})
    life = sorted(set(categories) - set(persona))
    return Selectivity(
        metric, n_bootstrap, seed, min_questions, min_effect, min_effect_pct, per_category,
        overall=pool(persona), overall_pools=tuple(persona),
        life_events=pool(life) if life else None, life_event_pools=tuple(life),
        rows_without_floor=without_floor,
        unmatched_categories=tuple(sorted({c for cats in attributes.values() for c in cats}
                                          - set(categories))))


def format_selectivity(result: Selectivity) -> str:
    """Terminal lines: one per category and overall, each side with its CI and n.

    >>> rows = [{"question_id": q, "condition_class": "control", "category": "-", "dtw": 0.1}
    ...         for q in ("sp1", "b1")]
    >>> rows += [{"question_id": "sp1", "condition_class": "persona", "category": "age", "dtw": 0.5}]
    >>> print(format_selectivity(selectivity(rows, {"sp1": ["age"]}, n_bootstrap=100)))
    selectivity (dtw above the floor, 95% CI; n = questions):
      age: not interpretable (needs at least 3 questions on each side (relevant 1, irrelevant 0)); relevant +0.400 [+0.400, +0.400] n=1, irrelevant n/a [n/a, n/a] n=0, difference n/a [n/a, n/a]
      overall (persona: age): not interpretable (needs at least 3 questions on each side (relevant 1, irrelevant 0)); relevant +0.400 [+0.400, +0.400] n=1, irrelevant n/a [n/a, n/a] n=0, difference n/a [n/a, n/a]
    """
    def part(value: MeanEstimate) -> str:
        return (f"{number(value.estimate, '+.3f')} [{number(value.ci_low, '+.3f')}, "
                f"{number(value.ci_high, '+.3f')}]")

    lines = [f"selectivity ({result.metric} above the floor, 95% CI; n = questions):"]
    for name, entry in result.entries():
        lines.append(f"  {name}: {entry.verdict} ({entry.reason}); relevant "
                     f"{part(entry.relevant)} n={entry.relevant.n}, irrelevant "
                     f"{part(entry.irrelevant)} n={entry.irrelevant.n}, "
                     f"difference {part(entry.difference)}")
    return "\n".join(lines)
