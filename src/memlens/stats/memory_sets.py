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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

SINGLE = ("persona", "life_event")


def _means(rows: list[dict], metric: str, floors: dict[str, float]) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for row in rows:
        values.setdefault(row["question_id"], []).append(float(row[metric]))
    return {q: float(np.mean(v)) - floors[q] for q, v in values.items() if q in floors}


def _summaries(columns: dict[str, np.ndarray], rng, n_bootstrap: int) -> dict[str, dict]:
    """Mean and paired-bootstrap CI of each column (questions resampled jointly)."""
    n = len(next(iter(columns.values())))
    if n == 0:
        return {name: {"mean": None, "ci": [None, None]} for name in columns}
    index = rng.integers(0, n, size=(n_bootstrap, n))
    out = {}
    for name, values in columns.items():
        boot = values[index].mean(axis=1)
        low, high = np.percentile(boot, [2.5, 97.5])
        out[name] = {"mean": float(values.mean()), "ci": [float(low), float(high)]}
    return out


def compare_memory_sets(rows: Iterable[Mapping], *, metric: str = "dtw", seed: int = 0,
                        n_bootstrap: int = 2000, min_questions: int = 3) -> dict:
    """Fact alone vs among neutral facts, and attribute pairs (see the module docstring).

    >>> rows = [{"question_id": "q", "condition_class": "control", "category": "-", "dtw": 0.1},
    ...         {"question_id": "q", "condition_class": "persona", "category": "age", "dtw": 0.5},
    ...         {"question_id": "q", "condition_class": "neutral_set", "category": "neutral",
    ...          "dtw": 0.2},
    ...         {"question_id": "q", "condition_class": "persona_in_set", "category": "age",
    ...          "dtw": 0.3}]
    >>> entry = compare_memory_sets(rows, n_bootstrap=100, min_questions=1)["among_neutral"]["age"]
    >>> [round(entry[k]["mean"], 3) for k in ("alone", "among_neutral", "net", "difference")]
    [0.4, 0.2, 0.1, -0.3]
    """
    rows = [dict(row) for row in rows if row.get(metric) is not None]
    set_questions = {row["question_id"] for row in rows
                     if row["condition_class"] in ("neutral_set", "persona_in_set", "combination")}
    rows = [row for row in rows if row["question_id"] in set_questions]
    floor_rows: dict[str, list[float]] = {}
    for row in rows:
        if row["condition_class"] == "control":
            floor_rows.setdefault(row["question_id"], []).append(float(row[metric]))
    floors = {q: float(np.mean(v)) for q, v in floor_rows.items()}
    rng = np.random.default_rng(seed)

    def of(klass: str, category: str | None = None) -> dict[str, float]:
        chosen = [r for r in rows if (r["condition_class"] in klass if isinstance(klass, tuple)
                                      else r["condition_class"] == klass)
                  and (category is None or r["category"] == category)]
        return _means(chosen, metric, floors)

    neutral = of("neutral_set")
    among: dict[str, dict] = {}
    for category in sorted({r["category"] for r in rows if r["condition_class"] == "persona_in_set"}):
        alone, inside = of(SINGLE, category), of("persona_in_set", category)
        questions = sorted(set(alone) & set(inside) & set(neutral))
        columns = {"alone": np.array([alone[q] for q in questions]),
                   "among_neutral": np.array([inside[q] for q in questions]),
                   "net": np.array([inside[q] - neutral[q] for q in questions])}
        columns["difference"] = columns["net"] - columns["alone"]
        entry = _summaries(columns, rng, n_bootstrap) | {"n_questions": len(questions)}
        entry["verdict"] = _verdict(entry, min_questions, ("diluted", "amplified",
                                                           "no clear difference"))
        among[category] = entry
    combined: dict[str, dict] = {}
    for category in sorted({r["category"] for r in rows if r["condition_class"] == "combination"}):
        first, _, second = category.partition("+")
        pair, alone_a, alone_b = of("combination", category), of(SINGLE, first), of(SINGLE, second)
        questions = sorted(set(pair) & set(alone_a) & set(alone_b))
        a = np.array([alone_a[q] for q in questions])
        b = np.array([alone_b[q] for q in questions])
        stronger = a if len(a) and a.mean() >= b.mean() else b
        columns = {"combined": np.array([pair[q] for q in questions]), first: a, second: b}
        columns["difference"] = columns["combined"] - stronger
        entry = _summaries(columns, rng, n_bootstrap) | {
            "n_questions": len(questions),
            "stronger_alone": first if stronger is a else second}
        entry["verdict"] = _verdict(entry, min_questions, (
            "less than the stronger alone", "more than either alone", "like the stronger alone"))
        combined[category] = entry
    return {"metric": metric, "n_bootstrap": n_bootstrap, "seed": seed,
            "min_questions": min_questions, "neutral_set": _summaries(
                {"elevation": np.array(list(neutral.values()))}, rng, n_bootstrap)["elevation"]
            | {"n_questions": len(neutral)}, "among_neutral": among, "combined": combined}


def _verdict(entry: dict, min_questions: int, words: tuple[str, str, str]) -> str:
    if entry["n_questions"] < min_questions:
        return "not interpretable"
    low, high = entry["difference"]["ci"]
    return words[0] if high < 0 else words[1] if low > 0 else words[2]


def memory_set_tables(result: dict) -> tuple[list[dict], list[dict]]:
    """Printable rows: one per category (fact alone vs among neutral facts) and one per
    attribute pair, every number through ``memlens.numfmt.number`` with its CI and n."""
    from memlens.numfmt import number

    def value(entry: dict) -> str:
        low, high = entry["ci"]
        return f"{number(entry['mean'], '+.3f')} [{number(low, '+.3f')}, {number(high, '+.3f')}]"

    among = [{"category": category, "verdict": entry["verdict"], "n_questions": entry["n_questions"],
              "alone": value(entry["alone"]), "among_neutral": value(entry["among_neutral"]),
              "net_of_neutral_set": value(entry["net"]), "difference": value(entry["difference"])}
             for category, entry in result["among_neutral"].items()]
    pairs = []
    for category, entry in result["combined"].items():
        first, _, second = category.partition("+")
        pairs.append({"pair": category, "verdict": entry["verdict"],
                      "n_questions": entry["n_questions"], "combined": value(entry["combined"]),
                      f"alone ({first})": value(entry[first]),
                      f"alone ({second})": value(entry[second]),
                      "stronger_alone": entry["stronger_alone"],
                      "difference": value(entry["difference"])})
    return among, pairs


def format_memory_sets(result: dict) -> str:
    """Terminal lines of :func:`compare_memory_sets` (elevation above the floor, 95 % CI)."""
    among, pairs = memory_set_tables(result)
    lines = [f"memory sets ({result['metric']} above the floor, 95% CI; n = questions):"]
    lines += [f"  {r['category']}: {r['verdict']} (n={r['n_questions']}); alone {r['alone']}, "
              f"among neutral facts {r['among_neutral']}, net of the neutral facts "
              f"{r['net_of_neutral_set']}, difference {r['difference']}" for r in among]
    lines += [f"  {r['pair']}: {r['verdict']} (n={r['n_questions']}); together {r['combined']}, "
              f"difference vs {r['stronger_alone']} alone {r['difference']}" for r in pairs]
    return "\n".join(lines)
