"""From CALLS rows and rubrics to ``tooldrift.json``: rates overall, per dimension, per domain."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.tooldrift.interpret import InterpretRule, verdict
from memlens.tooldrift.schema import Rubric
from memlens.tooldrift.scoring import ScenarioScore, score_scenario
from memlens.tooldrift.stats import attribution, paired_test, proportion, scenario_bootstrap


def _mean(values: list[float | None]) -> float | None:
    usable = [v for v in values if v is not None]
    return sum(usable) / len(usable) if usable else None


def no_call_rate(rows: list[dict]) -> dict:
    """Share of a group's calls where the model made no tool call, overall and per condition."""
    by_condition = {condition: proportion(sum(1 for r in rows if r["condition"] == condition
                                              and r["status"] == "no_call"),
                                          sum(1 for r in rows if r["condition"] == condition))
                    for condition in ("base", "neutral", "biased")}
    return {**proportion(sum(1 for r in rows if r["status"] == "no_call"), len(rows)),
            "by_condition": by_condition}


def retrieval_rates(queries: list[dict]) -> dict | None:
    """Per condition (neutral, biased): how many queries retrieved any memory and a biased one.

    None when the memory was injected verbatim (Setting 1) or is unknown."""
    if not queries or all(q.get("retrieved_any") is None for q in queries):
        return None
    rates = {}
    for condition in ("neutral", "biased"):
        members = [q for q in queries if q["condition"] == condition]
        rates[condition] = {
            "queries": len(members),
            "any": proportion(sum(1 for q in members if q["retrieved_any"]), len(members)),
            "biased": proportion(sum(1 for q in members if q["retrieved_biased"]), len(members)),
            "prompt_equals_base": sum(1 for q in members if q["same_as_base"]),
        }
    return rates


def group_summary(scores: list[ScenarioScore], *, seed: int, n_bootstrap: int,
                  rows: list[dict] | None = None, queries: list[dict] | None = None,
                  rule: InterpretRule | None = None) -> dict:
    """r_neutral, r_biased, Δ = r_biased − r_neutral, their scenario-bootstrap CIs and the paired
    test, the no-call rate, the retrieval rates and whether Δ is interpretable, for one group of
    scenarios (``rows``: its CALLS rows; ``queries``: its memory records, see ``summarize``)."""
    neutral = np.array([np.nan if s.rates["neutral"] is None else s.rates["neutral"] for s in scores])
    biased = np.array([np.nan if s.rates["biased"] is None else s.rates["biased"] for s in scores])
    r_neutral = _mean([s.rates["neutral"] for s in scores])
    r_biased = _mean([s.rates["biased"] for s in scores])
    test = paired_test(biased, neutral)
    return {
        "n_scenarios": len(scores),
        "r_neutral": r_neutral,
        "r_biased": r_biased,
        "delta": None if r_neutral is None or r_biased is None else r_biased - r_neutral,
        "ci": scenario_bootstrap(biased, neutral, seed=seed, n_bootstrap=n_bootstrap),
        "paired_test": test,
        "interpretation": verdict(test["n"], queries, rule or InterpretRule()),
        "no_call": no_call_rate(rows or []),
        "retrieval": retrieval_rates(queries or []),
    }


def _group_calls(rows: list[dict]) -> dict[str, dict[tuple[str, int], dict]]:
    grouped: dict[str, dict[tuple[str, int], dict]] = defaultdict(dict)
    for row in rows:
        grouped[row["entry_id"]][(row["condition"], row["k"])] = row
    return grouped


def _counts(rows: list[dict], scores: list[ScenarioScore], unscored: list[str]) -> dict:
    by_status: dict[str, Counter] = {"no_call": Counter(), "invalid": Counter()}
    for row in rows:
        if row["status"] in by_status:
            by_status[row["status"]][row["condition"]] += 1
    totals: Counter = Counter()
    for score in scores:
        totals.update(score.counts)
    return {
        "calls": len(rows),
        "no_call": {**dict(by_status["no_call"]), "total": sum(by_status["no_call"].values())},
        "invalid": {**dict(by_status["invalid"]), "total": sum(by_status["invalid"].values())},
        "schema_violations": sum(1 for row in rows if row.get("violations")),
        "missing_parameters": totals["missing"],
        "unrankable_parameters": totals["unrankable"],
        "pairs_with_failed_call": totals["pairs_with_failed_call"],
        "unpaired_calls": totals["unpaired"],
        "scenarios_without_rate": {c: sum(1 for s in scores if s.rates[c] is None)
                                   for c in ("neutral", "biased")},
        "unscored_entries": sorted(unscored),
    }


def summarize(rows: list[dict], rubrics: dict[str, Rubric],
              defaults: dict[str, dict[str, Any]] | None = None, *, seed: int = 0,
              n_bootstrap: int = 10_000, queries: list[dict] | None = None,
              rule: InterpretRule | None = None) -> dict:
    """The whole ``tooldrift.json`` structure (see docs/tooldrift.md).

    ``defaults`` maps entry id -> {parameter: schema default}; missing arguments fall back on it.
    ``queries``: one memory record per (entry, condition) — ``entry_id``, ``condition``,
    ``same_as_base`` and ``retrieved_any`` / ``retrieved_biased`` (None when injected verbatim) —
    for the retrieval rates, the interpretability rule and the attribution.
    """
    defaults = defaults or {}
    grouped = _group_calls(rows)
    scored_ids = [entry for entry in sorted(grouped) if entry in rubrics]
    if not scored_ids:
        raise MemlensError("no call row matches a rubric: check that the calls' entry_id values "
                           "(<bias_dimension>/<domain>/<scenario_num>) exist in the rubrics")
    scores = [score_scenario(rubrics[e], grouped[e], defaults.get(e)) for e in scored_ids]
    rows_of: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        rows_of[row["entry_id"]].append(row)
    queries_of: dict[str, list[dict]] = defaultdict(list)
    for query in queries or []:
        queries_of[query["entry_id"]].append(query)

    def summary_of(members: list[ScenarioScore]) -> dict:
        ids = [score.entry_id for score in members]
        return group_summary(members, seed=seed, n_bootstrap=n_bootstrap,
                             rows=[r for e in ids for r in rows_of[e]],
                             queries=[q for e in ids for q in queries_of[e]] if queries else None,
                             rule=rule)

    summary = {"metric": "rubric degradation rate (flipped / comparable task-critical parameters)",
               **summary_of(scores)}
    for label, attribute in (("by_dimension", "bias_dimension"), ("by_domain", "domain")):
        groups: dict[str, list[ScenarioScore]] = defaultdict(list)
        for score in scores:
            groups[getattr(rubrics[score.entry_id], attribute)].append(score)
        summary[label] = {name: summary_of(members) for name, members in sorted(groups.items())}
    summary["attribution"] = attribution(scores, queries_of if queries else None, seed=seed,
                                         n_bootstrap=n_bootstrap)
    summary["counts"] = _counts(rows, scores, [e for e in grouped if e not in rubrics])
    summary["settings"] = {"seed": seed, "n_bootstrap": n_bootstrap}
    summary["scenarios"] = [
        {"entry_id": s.entry_id, "bias_dimension": rubrics[s.entry_id].bias_dimension,
         "domain": rubrics[s.entry_id].domain, "r_neutral": s.rates["neutral"],
         "r_biased": s.rates["biased"],
         "memory": {q["condition"]: {key: q.get(key) for key in
                                     ("same_as_base", "retrieved_any", "retrieved_biased")}
                    for q in queries_of.get(s.entry_id, [])} or None,
         "pairs": s.pairs}
        for s in scores
    ]
    return summary


def result_groups(summary: dict) -> list[tuple[str, dict]]:
    """``(label, group)`` for every result group of a summary, in report order: ``overall``,
    then ``dim: NAME`` per bias dimension and ``domain: NAME`` per domain."""
    return [("overall", summary),
            *((f"dim: {name}", group) for name, group in summary.get("by_dimension", {}).items()),
            *((f"domain: {name}", group) for name, group in summary.get("by_domain", {}).items())]


def write_summary(summary: dict, out_dir: str | Path) -> Path:
    """Write ``out_dir/tooldrift.json``."""
    path = Path(out_dir) / "tooldrift.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return path
