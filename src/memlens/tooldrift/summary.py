"""From CALLS rows and rubrics to the typed summary (``memlens.tooldrift.results``) that is
``tooldrift.json``: rates overall, per dimension, per domain."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.jsonl import parse_json, read_text
from memlens.tooldrift.interpret import InterpretRule, verdict
from memlens.tooldrift.results import (
    ConditionRetrieval,
    Counts,
    GroupSummary,
    MemoryFlags,
    NoCallRate,
    Retrieval,
    ScenarioResult,
    StatusCount,
    ToolDriftSummary,
    parse_summary,
)
from memlens.tooldrift.rubric_metric import ScenarioScore, score_scenario
from memlens.tooldrift.schema import Rubric
from memlens.tooldrift.stats import attribution, paired_test, proportion, scenario_bootstrap


def _mean(values: list[float | None]) -> float | None:
    usable = [v for v in values if v is not None]
    return sum(usable) / len(usable) if usable else None


def no_call_rate(rows: list[dict]) -> NoCallRate:
    """Share of a group's calls where the model made no tool call, overall and per condition."""
    by_condition = {condition: proportion(sum(1 for r in rows if r["condition"] == condition
                                              and r["status"] == "no_call"),
                                          sum(1 for r in rows if r["condition"] == condition))
                    for condition in ("base", "neutral", "biased")}
    return NoCallRate(proportion(sum(1 for r in rows if r["status"] == "no_call"), len(rows)),
                      by_condition)


def retrieval_rates(queries: list[dict]) -> Retrieval | None:
    """Per condition (neutral, biased): how many queries retrieved any memory and a biased one.

    None when the memory was injected verbatim (Setting 1) or is unknown."""
    if not queries or all(q.get("retrieved_any") is None for q in queries):
        return None
    rates = {}
    for condition in ("neutral", "biased"):
        members = [q for q in queries if q["condition"] == condition]
        rates[condition] = ConditionRetrieval(
            len(members),
            proportion(sum(1 for q in members if q["retrieved_any"]), len(members)),
            proportion(sum(1 for q in members if q["retrieved_biased"]), len(members)),
            sum(1 for q in members if q["same_as_base"]))
    return Retrieval(rates["neutral"], rates["biased"])


def group_summary(scores: list[ScenarioScore], *, seed: int, n_bootstrap: int,
                  rows: list[dict] | None = None, queries: list[dict] | None = None,
                  rule: InterpretRule | None = None) -> GroupSummary:
    """r_neutral, r_biased, Δ = r_biased − r_neutral, their scenario-bootstrap CIs and the paired
    test, the no-call rate, the retrieval rates and whether Δ is interpretable, for one group of
    scenarios (``rows``: its CALLS rows; ``queries``: its memory records, see ``summarize``)."""
    neutral = np.array([np.nan if s.rates["neutral"] is None else s.rates["neutral"] for s in scores])
    biased = np.array([np.nan if s.rates["biased"] is None else s.rates["biased"] for s in scores])
    r_neutral = _mean([s.rates["neutral"] for s in scores])
    r_biased = _mean([s.rates["biased"] for s in scores])
    test = paired_test(biased, neutral)
    return GroupSummary(
        n_scenarios=len(scores), r_neutral=r_neutral, r_biased=r_biased,
        delta=None if r_neutral is None or r_biased is None else r_biased - r_neutral,
        ci=scenario_bootstrap(biased, neutral, seed=seed, n_bootstrap=n_bootstrap),
        paired_test=test, interpretation=verdict(test.n, queries, rule or InterpretRule()),
        no_call=no_call_rate(rows or []), retrieval=retrieval_rates(queries or []))


def _group_calls(rows: list[dict]) -> dict[str, dict[tuple[str, int], dict]]:
    grouped: dict[str, dict[tuple[str, int], dict]] = defaultdict(dict)
    for row in rows:
        grouped[row["entry_id"]][(row["condition"], row["k"])] = row
    return grouped


def _counts(rows: list[dict], scores: list[ScenarioScore], unscored: list[str]) -> Counts:
    by_status: dict[str, Counter] = {"no_call": Counter(), "invalid": Counter()}
    for row in rows:
        if row["status"] in by_status:
            by_status[row["status"]][row["condition"]] += 1
    totals: Counter = Counter()
    for score in scores:
        totals.update(score.counts)
    no_call, invalid = (StatusCount(dict(by_status[status]), sum(by_status[status].values()))
                        for status in ("no_call", "invalid"))
    return Counts(
        calls=len(rows), no_call=no_call, invalid=invalid,
        schema_violations=sum(1 for row in rows if row.get("violations")),
        missing_parameters=totals["missing"], unrankable_parameters=totals["unrankable"],
        pairs_with_failed_call=totals["pairs_with_failed_call"],
        unpaired_calls=totals["unpaired"],
        scenarios_without_rate={c: sum(1 for s in scores if s.rates[c] is None)
                                for c in ("neutral", "biased")},
        unscored_entries=tuple(sorted(unscored)))


def summarize(rows: list[dict], rubrics: dict[str, Rubric],
              defaults: dict[str, dict[str, Any]] | None = None, *, seed: int = 0,
              n_bootstrap: int = 10_000, queries: list[dict] | None = None,
              rule: InterpretRule | None = None) -> ToolDriftSummary:
    """The whole summary; its ``to_dict()`` is ``tooldrift.json`` (see docs/tooldrift.md).

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

    def summary_of(members: list[ScenarioScore]) -> GroupSummary:
        ids = [score.entry_id for score in members]
        return group_summary(members, seed=seed, n_bootstrap=n_bootstrap,
                             rows=[r for e in ids for r in rows_of[e]],
                             queries=[q for e in ids for q in queries_of[e]] if queries else None,
                             rule=rule)

    by_group = {}
    for label, attribute in (("by_dimension", "bias_dimension"), ("by_domain", "domain")):
        groups: dict[str, list[ScenarioScore]] = defaultdict(list)
        for score in scores:
            groups[getattr(rubrics[score.entry_id], attribute)].append(score)
        by_group[label] = {name: summary_of(members) for name, members in sorted(groups.items())}
    return ToolDriftSummary(
        metric="rubric degradation rate (flipped / comparable task-critical parameters)",
        overall=summary_of(scores), **by_group,
        attribution=attribution(scores, queries_of if queries else None, seed=seed,
                                n_bootstrap=n_bootstrap),
        counts=_counts(rows, scores, [e for e in grouped if e not in rubrics]),
        seed=seed, n_bootstrap=n_bootstrap,
        scenarios=tuple(_scenario_result(s, rubrics[s.entry_id], queries_of.get(s.entry_id, []))
                        for s in scores))


def _scenario_result(score: ScenarioScore, rubric: Rubric, queries: list[dict]) -> ScenarioResult:
    memory = {q["condition"]: MemoryFlags(q.get("same_as_base"), q.get("retrieved_any"),
                                          q.get("retrieved_biased")) for q in queries}
    return ScenarioResult(score.entry_id, rubric.bias_dimension, rubric.domain,
                          score.rates["neutral"], score.rates["biased"], memory or None,
                          score.pairs)


def write_summary(summary: ToolDriftSummary, out_dir: str | Path) -> Path:
    """Write ``out_dir/tooldrift.json`` (``summary.to_dict()``)."""
    path = Path(out_dir) / "tooldrift.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(summary.to_dict(), indent=2, ensure_ascii=False) + "\n")
    return path


def read_summary(path: str | Path) -> ToolDriftSummary:
    """``tooldrift.json`` of a run directory (or the file itself) as the typed summary; a
    missing or foreign file is a ``MemlensError`` naming it."""
    path = Path(path)
    file = path / "tooldrift.json" if path.is_dir() else path
    return parse_summary(parse_json(read_text(file, "tool-drift summary"), str(file)), str(file))
