"""From CALLS rows and rubrics to ``tooldrift.json``: rates overall, per dimension, per domain."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.tooldrift.schema import Rubric
from memlens.tooldrift.scoring import ScenarioScore, score_scenario
from memlens.tooldrift.stats import paired_test, scenario_bootstrap


def _mean(values: list[float | None]) -> float | None:
    usable = [v for v in values if v is not None]
    return sum(usable) / len(usable) if usable else None


def group_summary(scores: list[ScenarioScore], *, seed: int, n_bootstrap: int) -> dict:
    """r_neutral, r_biased, Δ = r_biased − r_neutral, their scenario-bootstrap CIs and the paired
    test, for one group of scenarios."""
    neutral = np.array([np.nan if s.rates["neutral"] is None else s.rates["neutral"] for s in scores])
    biased = np.array([np.nan if s.rates["biased"] is None else s.rates["biased"] for s in scores])
    r_neutral = _mean([s.rates["neutral"] for s in scores])
    r_biased = _mean([s.rates["biased"] for s in scores])
    return {
        "n_scenarios": len(scores),
        "r_neutral": r_neutral,
        "r_biased": r_biased,
        "delta": None if r_neutral is None or r_biased is None else r_biased - r_neutral,
        "ci": scenario_bootstrap(biased, neutral, seed=seed, n_bootstrap=n_bootstrap),
        "paired_test": paired_test(biased, neutral),
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
              n_bootstrap: int = 10_000) -> dict:
    """The whole ``tooldrift.json`` structure (see docs/tooldrift.md).

    ``defaults`` maps entry id -> {parameter: schema default}; missing arguments fall back on it.
    """
    defaults = defaults or {}
    grouped = _group_calls(rows)
    scored_ids = [entry for entry in sorted(grouped) if entry in rubrics]
    if not scored_ids:
        raise MemlensError("no call row matches a rubric: check that the calls' entry_id values "
                           "(<bias_dimension>/<domain>/<scenario_num>) exist in the rubrics")
    scores = [score_scenario(rubrics[e], grouped[e], defaults.get(e)) for e in scored_ids]
    summary = {"metric": "rubric degradation rate (flipped / comparable task-critical parameters)",
               **group_summary(scores, seed=seed, n_bootstrap=n_bootstrap)}
    for label, attribute in (("by_dimension", "bias_dimension"), ("by_domain", "domain")):
        groups: dict[str, list[ScenarioScore]] = defaultdict(list)
        for score in scores:
            groups[getattr(rubrics[score.entry_id], attribute)].append(score)
        summary[label] = {name: group_summary(members, seed=seed, n_bootstrap=n_bootstrap)
                          for name, members in sorted(groups.items())}
    summary["counts"] = _counts(rows, scores, [e for e in grouped if e not in rubrics])
    summary["settings"] = {"seed": seed, "n_bootstrap": n_bootstrap}
    summary["scenarios"] = [
        {"entry_id": s.entry_id, "bias_dimension": rubrics[s.entry_id].bias_dimension,
         "domain": rubrics[s.entry_id].domain, "r_neutral": s.rates["neutral"],
         "r_biased": s.rates["biased"], "pairs": s.pairs}
        for s in scores
    ]
    return summary


def write_summary(summary: dict, out_dir: str | Path) -> Path:
    """Write ``out_dir/tooldrift.json``."""
    path = Path(out_dir) / "tooldrift.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    return path
