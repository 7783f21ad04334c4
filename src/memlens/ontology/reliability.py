"""Labeling reliability (App. C.4): agreement across label files, within-labeler repeat
agreement, and robustness to an alternative wording of the ontology."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

from memlens.errors import MemlensError
from memlens.ontology.agreement import cohen_kappa, fleiss_kappa, pairwise_agreement
from memlens.ontology.schema import UNLABELED, Ontology


def agreement_report(label_sets: dict[str, dict[str, str]]) -> dict:
    """Agreement of two or more labelers over the item ids they all labeled.

    ``label_sets`` maps a labeler name to ``{item id: label}``. An item that *every* labeler left
    ``unlabeled`` is no agreement (two failed runs would "agree" on everything): it is left out;
    ``unlabeled`` counts each labeler's unlabeled items (one that only some left unlabeled is a
    disagreement). Returns ``items`` (shared ids labeled by someone),
    ``pairs`` (agreement and Cohen's kappa per pair), ``mean_agreement`` and ``fleiss_kappa``.

    >>> report = agreement_report({"a": {"1": "x", "2": "y"}, "b": {"1": "x", "2": "x"}})
    >>> report["items"], report["pairs"][0]["agreement"]
    (2, 0.5)
    """
    if len(label_sets) < 2:
        raise MemlensError("agreement needs at least two label sets")
    names = list(label_sets)
    shared = set.intersection(*(set(labels) for labels in label_sets.values()))
    if not shared:
        raise MemlensError("the label files share no item ids")
    unlabeled = {name: sum(label_sets[name][item] == UNLABELED for item in shared)
                 for name in names}
    ids = sorted(item for item in shared
                 if any(label_sets[name][item] != UNLABELED for name in names))
    if not ids:
        raise MemlensError(f"no item was labeled by any labeler ({len(shared)} shared items, "
                           "all 'unlabeled'): agreement is undefined")
    columns = {name: [label_sets[name][item] for item in ids] for name in names}
    pairs = []
    for left, right in itertools.combinations(names, 2):
        pairs.append({"a": left, "b": right,
                      "agreement": pairwise_agreement(columns[left], columns[right]),
                      "cohen_kappa": _finite(cohen_kappa(columns[left], columns[right]))})
    ratings = [[columns[name][row] for name in names] for row in range(len(ids))]
    return {"items": len(ids), "unlabeled": unlabeled,
            "dropped": {name: len(label_sets[name]) - len(ids) for name in names},
            "pairs": pairs,
            "mean_agreement": sum(p["agreement"] for p in pairs) / len(pairs),
            "fleiss_kappa": _finite(fleiss_kappa(ratings, kind="labels"))}


def _finite(value: float) -> float | None:
    return None if math.isnan(value) else value


def _flat(labels: list[list[str]]) -> list[str]:
    return [label for response in labels for label in response]


def repeat_agreement(make_labeler: Callable[[int], object], responses: list[list[str]],
                     seeds: tuple[int, int] = (1, 2)) -> dict:
    """Within-labeler stability: label the same responses twice with two seeds.

    ``make_labeler(seed)`` builds the labeler for one run (for an LLM: temperature 1 and that
    seed, as in App. C.4). Returns ``agreement``, ``cohen_kappa`` and ``steps``.
    """
    first = _flat(make_labeler(seeds[0]).label(responses))
    second = _flat(make_labeler(seeds[1]).label(responses))
    return {"steps": len(first), "seeds": list(seeds),
            "agreement": pairwise_agreement(first, second),
            "cohen_kappa": _finite(cohen_kappa(first, second))}


def definition_robustness(make_labeler: Callable[[Ontology], object],
                          responses: list[list[str]], ontology: Ontology,
                          alternative: Ontology) -> dict:
    """Agreement between labels under ``ontology`` and under a reworded ``alternative`` with the
    same ids (App. C.3). Returns ``agreement``, ``cohen_kappa`` and ``steps``."""
    if alternative.symbol_ids != ontology.symbol_ids:
        raise MemlensError("the alternative ontology must have exactly the same symbol ids")
    original = _flat(make_labeler(ontology).label(responses))
    reworded = _flat(make_labeler(alternative).label(responses))
    return {"steps": len(original), "agreement": pairwise_agreement(original, reworded),
            "cohen_kappa": _finite(cohen_kappa(original, reworded))}


def format_report(report: dict) -> str:
    """Plain-text table of an ``agreement_report``."""
    left_out = ", ".join(f"{name} {count}" for name, count in
                         (report.get("unlabeled") or {}).items() if count)
    lines = [f"items compared: {report['items']}"
             + (f" (left out as 'unlabeled': {left_out})" if left_out else ""), "",
             f"{'labeler A':<28} {'labeler B':<28} {'agree %':>8} {'kappa':>7}"]
    for pair in report["pairs"]:
        kappa = "n/a" if pair["cohen_kappa"] is None else f"{pair['cohen_kappa']:.3f}"
        lines.append(f"{pair['a'][:28]:<28} {pair['b'][:28]:<28} "
                     f"{100 * pair['agreement']:>8.1f} {kappa:>7}")
    fleiss = report["fleiss_kappa"]
    lines += ["", f"mean pairwise agreement: {100 * report['mean_agreement']:.1f} %",
              f"Fleiss' kappa: {'n/a' if fleiss is None else f'{fleiss:.3f}'}"]
    return "\n".join(lines)
