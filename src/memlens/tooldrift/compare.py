"""Paired comparison of two tool-drift runs on the same entries: Δ of Δ per dimension and domain.

Each run's per-scenario rates come from its ``tooldrift.json`` (``scenarios``: ``entry_id``,
``bias_dimension``, ``domain``, ``r_neutral``, ``r_biased``). A run's Δ = r_biased − r_neutral
(means over the scenarios that have each rate, as in ``tooldrift.json``); the comparison is
ΔΔ = Δ_B − Δ_A with a *paired* cluster bootstrap over the shared scenarios (one seeded draw of
scenarios applied to both runs, :mod:`memlens.stats.paired`), its 95 % percentile CI and
bootstrap p-value, overall and per bias dimension and domain (BH q-values within each of the two
families). Runs sharing no entry are refused; partly overlapping ones are restricted to the
shared entries with a warning naming how many were dropped from each run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from memlens.errors import MemlensError
from memlens.fileio import atomic_write_text
from memlens.jsonl import parse_json, read_text
from memlens.numfmt import number
from memlens.stats import to_jsonable
from memlens.stats.bootstrap import mean_difference
from memlens.stats.multiple import benjamini_hochberg
from memlens.stats.paired import aligned_sums, paired_bootstrap
from memlens.stats.paired import p_text as _p

MIN_SCENARIOS = 2
"""Groups with fewer shared scenarios with both rates in both runs are marked not interpretable."""


def load_summary(path: str | Path) -> dict:
    """``tooldrift.json`` of a run directory (or the file itself), checked for ``scenarios``."""
    path = Path(path)
    file = path / "tooldrift.json" if path.is_dir() else path
    if not file.is_file():
        raise MemlensError(f"{file}: no tooldrift.json (run `memlens tooldrift run --out "
                           f"{path}` first)")
    summary = parse_json(read_text(file, "tool-drift summary"), str(file))
    scenarios = summary.get("scenarios") if isinstance(summary, dict) else None
    if not isinstance(scenarios, list) or not all(
            isinstance(s, dict) and {"entry_id", "r_neutral", "r_biased"} <= set(s)
            for s in scenarios):
        raise MemlensError(f"{file}: 'scenarios' must be a list of objects with entry_id, "
                           "r_neutral and r_biased (a tooldrift.json written by memlens)")
    return summary


def _rows(summary: dict, entries: set[str]):
    values, clusters, groups = [], [], []
    for scenario in summary["scenarios"]:
        if scenario["entry_id"] not in entries:
            continue
        for condition in ("neutral", "biased"):
            rate = scenario.get(f"r_{condition}")
            if rate is not None:
                values.append(float(rate))
                clusters.append(scenario["entry_id"])
                groups.append(condition)
    return np.array(values, float), np.array(clusters, dtype=object), np.array(groups)


def _group(summary_a: dict, summary_b: dict, entries: set[str], seed: int,
           n_bootstrap: int) -> dict:
    """ΔΔ over the scenarios ``entries`` of both runs."""
    runs = [_rows(summary, entries) for summary in (summary_a, summary_b)]
    both = set.intersection(*[
        {c for c in set(clusters) if {"neutral", "biased"} <= set(groups[clusters == c])}
        for _, clusters, groups in runs])
    result = {"n_scenarios": len(entries), "n_paired": len(both),
              "interpretable": len(both) >= MIN_SCENARIOS}
    if not both:
        return {**result, "a": None, "b": None, "delta": None, "delta_ci": [None, None],
                "delta_p": None, "note": "no scenario has both rates in both runs"}
    sums_a, sums_b = aligned_sums(runs)
    estimate = paired_bootstrap(sums_a, sums_b, statistic=mean_difference, reference="neutral",
                                seed=seed, n_bootstrap=n_bootstrap)["biased"]
    return {**result, **estimate.to_dict()}


def _interpretation_marker(summary_a: dict, summary_b: dict, labels: tuple[str, str]):
    """A function marking a ΔΔ group not interpretable when either run's own Δ of that group is
    not (``tooldrift.json``'s ``interpretation``), with that run's reasons."""

    def mark(family: str | None, name: str | None, row: dict) -> dict:
        reasons = []
        for label, summary in zip(labels, (summary_a, summary_b), strict=True):
            group = summary if family is None else (summary.get(family) or {}).get(name) or {}
            interpretation = group.get("interpretation") or {}
            if interpretation.get("interpretable") is False:
                texts = "; ".join(r.get("text", "") for r in interpretation.get("reasons") or [])
                reasons.append(f"{label}: {texts}")
        if reasons:
            row = {**row, "interpretable": False, "note": "; ".join(reasons)}
        return row

    return mark


def compare_tooldrift(summary_a: dict, summary_b: dict, *, labels: tuple[str, str] = ("A", "B"),
                      seed: int = 0, n_bootstrap: int = 10_000) -> dict:
    """ΔΔ (B − A) overall, ``by_dimension`` and ``by_domain`` (see the module docstring)."""
    if n_bootstrap < 100:
        raise MemlensError(f"--bootstrap must be at least 100 (got {n_bootstrap})")
    ids = [{s["entry_id"] for s in summary["scenarios"]} for summary in (summary_a, summary_b)]
    shared = ids[0] & ids[1]
    if not shared:
        raise MemlensError(f"tool-drift runs {labels[0]} and {labels[1]} share no entry "
                           f"({len(ids[0])} vs {len(ids[1])} scenarios): disjoint runs cannot be "
                           "compared paired")
    dropped = {label: len(own - shared) for label, own in zip(labels, ids, strict=True)}
    warning = None
    if any(dropped.values()):
        warning = (f"the runs hold different entries: compared on the {len(shared)} shared "
                   "scenarios only (" + "; ".join(f"{n} dropped from {label}"
                                                  for label, n in dropped.items()) + ")")
    info = {s["entry_id"]: s for s in summary_a["scenarios"] if s["entry_id"] in shared}
    _mark = _interpretation_marker(summary_a, summary_b, labels)
    result = {"format_version": 1, "runs": list(labels), "delta": "delta_B - delta_A",
              "design": {"status": "restricted" if warning else "paired",
                         "n_scenarios": len(shared), "dropped": dropped, "warning": warning},
              "settings": {"seed": seed, "n_bootstrap": n_bootstrap, "confidence": 0.95,
                           "cluster": "scenario", "min_scenarios": MIN_SCENARIOS},
              "overall": _mark(None, None, _group(summary_a, summary_b, shared, seed,
                                                  n_bootstrap))}
    for family, key in (("by_dimension", "bias_dimension"), ("by_domain", "domain")):
        names = sorted({str(s.get(key)) for s in info.values()})
        groups = {name: _mark(family, name, _group(
            summary_a, summary_b, {e for e, s in info.items() if str(s.get(key)) == name},
            seed, n_bootstrap)) for name in names}
        q_values = benjamini_hochberg([np.nan if g["delta_p"] is None else g["delta_p"]
                                       for g in groups.values()])
        for group, q in zip(groups.values(), q_values, strict=True):
            group["delta_q"] = float(q)
        result[family] = groups
    return to_jsonable(result)


def format_tooldrift_comparison(result: dict) -> str:
    """Terminal table of :func:`compare_tooldrift`."""
    a, b = result["runs"]
    lines = [f"tool-drift paired comparison: B = {b} vs A = {a} (ΔΔ = Δ_B − Δ_A, "
             f"paired bootstrap over {result['design']['n_scenarios']} scenarios, "
             f"B = {result['settings']['n_bootstrap']}, seed {result['settings']['seed']})"]
    if result["design"]["warning"]:
        lines.append(f"WARNING: {result['design']['warning']}")
    lines.append(f"{'group':<34}{'n':>4}  {'Δ_A':>7}{'Δ_B':>8}  {'ΔΔ [95% CI]':<30}"
                 f"{'p':>7}{'q':>7}  flag")

    def line(name: str, row: dict) -> str:
        low, high = row.get("delta_ci") or (None, None)
        flag = "" if row.get("interpretable") else "not interpretable (too few scenarios)"
        delta = f"{number(row.get('delta'), '+.3f')} [{number(low, '+.3f')}, {number(high, '+.3f')}]"
        return (f"{name[:33]:<34}{row['n_paired']:>4}  {number(row.get('a'), '+.3f'):>7}"
                f"{number(row.get('b'), '+.3f'):>8}  {delta:<30}"
                f"{_p(row.get('delta_p')):>7}{_p(row.get('delta_q')):>7}  {flag}")

    lines.append(line("overall", result["overall"]))
    for family in ("by_dimension", "by_domain"):
        for name, row in result[family].items():
            lines.append(line(f"{family[3:]}: {name}", row))
    return "\n".join(lines)


def write_comparison(result: dict, out_dir: str | Path) -> Path:
    """Write ``out_dir/tooldrift_compare.json``."""

    path = Path(out_dir) / "tooldrift_compare.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    return path
