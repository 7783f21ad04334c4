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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

PERTURBED = ("persona", "life_event")
FLAG = "excluded_orthogonality"
VERDICTS = ("selective", "over-sensitive", "memory-blind", "misdirected", "unclear",
            "inconclusive", "not interpretable")


def _side(values: list[float], rows: int, rng, n_bootstrap: int) -> tuple[dict, np.ndarray]:
    array = np.asarray(values, dtype=float)
    if not len(array):
        return {"mean": None, "ci": [None, None], "n_questions": 0, "n_rows": rows}, \
            np.full(n_bootstrap, np.nan)
    boot = array[rng.integers(0, len(array), size=(n_bootstrap, len(array)))].mean(axis=1)
    low, high = np.percentile(boot, [2.5, 97.5])
    return {"mean": float(array.mean()), "ci": [float(low), float(high)],
            "n_questions": int(len(array)), "n_rows": rows}, boot


def _verdict(relevant: dict, irrelevant: dict, difference: dict,
             min_questions: int, min_effect: float) -> tuple[str, str]:
    n_rel, n_irr = relevant["n_questions"], irrelevant["n_questions"]
    if n_rel < min_questions or n_irr < min_questions:
        return "not interpretable", (f"needs at least {min_questions} questions on each side "
                                     f"(relevant {n_rel}, irrelevant {n_irr})")
    rel_up, irr_up = relevant["ci"][0] > 0, irrelevant["ci"][0] > 0
    if rel_up and irr_up:
        return "over-sensitive", "drifts where memory matters and where it should not"
    if irr_up:
        return "misdirected", "drifts only where memory should not matter"
    if not rel_up:
        reach = max(relevant["ci"][1], irrelevant["ci"][1])
        if reach > min_effect:
            return "inconclusive", (f"no drift detected, but the CIs reach {reach:+.3f}, above "
                                    f"the smallest elevation of interest ({min_effect:.3f})")
        return "memory-blind", "no drift above the floor where memory should matter"
    if difference["ci"][0] > 0:
        return "selective", "drifts where memory matters, not where it should not"
    return "unclear", "relevant drift above the floor, but not clearly above irrelevant drift"


def _per_question(rows: list[dict], metric: str, floors: dict[str, float]) -> dict[str, list]:
    by_question: dict[str, list[float]] = {}
    for row in rows:
        by_question.setdefault(row["question_id"], []).append(
            float(row[metric]) - floors[row["question_id"]])
    return by_question


def selectivity(rows: Iterable[Mapping], attributes: Mapping[str, Iterable[str]], *,
                metric: str = "dtw", seed: int = 0, n_bootstrap: int = 2000,
                min_questions: int = 3, min_effect_pct: float = 10.0) -> dict:
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
    >>> round(out["categories"]["age"]["selectivity"]["mean"], 3), out["categories"]["age"]["verdict"]
    (0.4, 'selective')
    """
    attributes = {str(q): set(cats) for q, cats in attributes.items()}
    rows = [dict(row) for row in rows if row.get(metric) is not None]
    floor_values: dict[str, list[float]] = {}
    for row in rows:
        if row["condition_class"] == "control":
            floor_values.setdefault(row["question_id"], []).append(float(row[metric]))
    floors = {q: float(np.mean(values)) for q, values in floor_values.items()}
    min_effect = min_effect_pct / 100 * (float(np.mean(list(floors.values()))) if floors else 0.0)
    perturbed = [row for row in rows if row["condition_class"] in PERTURBED]
    without_floor = sum(row["question_id"] not in floors for row in perturbed)
    perturbed = [row for row in perturbed if row["question_id"] in floors]
    relevant_rows = [row for row in perturbed if row["question_id"] in attributes
                     and row["category"] in attributes[row["question_id"]]]
    irrelevant_rows = [row for row in perturbed if row["question_id"] not in attributes
                       and not row.get(FLAG)]
    categories = sorted({row["category"] for row in relevant_rows})
    rng = np.random.default_rng(seed)

    def compare(rel: list[dict], irr: list[dict]) -> dict:
        relevant, rel_boot = _side(list(map(np.mean, _per_question(rel, metric, floors).values())),
                                   len(rel), rng, n_bootstrap)
        irrelevant, irr_boot = _side(list(map(np.mean,
                                              _per_question(irr, metric, floors).values())),
                                     len(irr), rng, n_bootstrap)
        if relevant["mean"] is None or irrelevant["mean"] is None:
            difference = {"mean": None, "ci": [None, None]}
        else:
            low, high = np.percentile(rel_boot - irr_boot, [2.5, 97.5])
            difference = {"mean": relevant["mean"] - irrelevant["mean"],
                          "ci": [float(low), float(high)]}
        verdict, reason = _verdict(relevant, irrelevant, difference, min_questions, min_effect)
        return {"relevant": relevant, "irrelevant": irrelevant, "selectivity": difference,
                "verdict": verdict, "reason": reason}

    per_category = {category: compare([r for r in relevant_rows if r["category"] == category],
                                      [r for r in irrelevant_rows if r["category"] == category])
                    for category in categories}
    persona = sorted({r["category"] for r in relevant_rows if r["condition_class"] == "persona"})
    life = sorted(set(categories) - set(persona))

    def pooled(names: list[str]) -> dict:
        return compare([r for r in relevant_rows if r["category"] in names],
                       [r for r in irrelevant_rows if r["category"] in names])

    overall = pooled(persona)
    life_events = pooled(life) if life else None
    summary = {verdict: [c for c, entry in per_category.items() if entry["verdict"] == verdict]
               for verdict in VERDICTS}
    return {"metric": metric, "n_bootstrap": n_bootstrap, "seed": seed,
            "min_questions": min_questions, "min_effect": min_effect,
            "min_effect_pct": min_effect_pct, "categories": per_category, "overall": overall,
            "overall_pools": persona, "life_events": life_events, "life_event_pools": life,
            "summary": summary, "rows_without_floor": without_floor,
            "unmatched_categories": sorted({c for cats in attributes.values() for c in cats}
                                           - set(categories))}


def pooled_entries(result: dict) -> list[tuple[str, dict]]:
    """The pooled rows, each labelled with what it pools: the persona headline, then life
    events (results from before the split pooled every category under ``overall``)."""
    if "overall_pools" not in result:
        return [("overall (all categories)", result["overall"])]
    out = [(f"overall (persona: {', '.join(result['overall_pools']) or 'none'})",
            result["overall"])]
    if result.get("life_events"):
        out.append((f"life events ({', '.join(result['life_event_pools'])})",
                    result["life_events"]))
    return out


def format_selectivity(result: dict) -> str:
    """Terminal lines: one per category and overall, each side with its CI and n.

    >>> rows = [{"question_id": q, "condition_class": "control", "category": "-", "dtw": 0.1}
    ...         for q in ("sp1", "b1")]
    >>> rows += [{"question_id": "sp1", "condition_class": "persona", "category": "age", "dtw": 0.5}]
    >>> print(format_selectivity(selectivity(rows, {"sp1": ["age"]}, n_bootstrap=100)))
    selectivity (dtw above the floor, 95% CI; n = questions):
      age: not interpretable (needs at least 3 questions on each side (relevant 1, irrelevant 0)); relevant +0.400 [+0.400, +0.400] n=1, irrelevant n/a [n/a, n/a] n=0, difference n/a [n/a, n/a]
      overall (persona: age): not interpretable (needs at least 3 questions on each side (relevant 1, irrelevant 0)); relevant +0.400 [+0.400, +0.400] n=1, irrelevant n/a [n/a, n/a] n=0, difference n/a [n/a, n/a]
    """
    from memlens.numfmt import number

    def part(entry: dict) -> str:
        low, high = entry["ci"]
        return f"{number(entry['mean'], '+.3f')} [{number(low, '+.3f')}, {number(high, '+.3f')}]"

    lines = [f"selectivity ({result['metric']} above the floor, 95% CI; n = questions):"]
    for name, entry in [*result["categories"].items(), *pooled_entries(result)]:
        lines.append(f"  {name}: {entry['verdict']} ({entry['reason']}); relevant "
                     f"{part(entry['relevant'])} n={entry['relevant']['n_questions']}, irrelevant "
                     f"{part(entry['irrelevant'])} n={entry['irrelevant']['n_questions']}, "
                     f"difference {part(entry['selectivity'])}")
    return "\n".join(lines)
