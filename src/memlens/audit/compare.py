"""Paired comparison of two audit runs: design check, then Δ (B − A) per metric and category.

**Design check** (:func:`check_design`). A run's design is its question ids × stimulus ids (as
present in its drift table) × its number of no-memory baselines K. Identical designs are
compared as they are (``paired``); overlapping ones are restricted to the shared questions and
stimuli (``restricted``, with a warning naming how many questions / stimuli were dropped from
each run); runs sharing no question or no stimulus, or with different K (their drift values
are averages over different baselines), are refused with a :class:`MemlensError`.

**Comparison** (:func:`compare_audits`). For every metric column both drift tables have:
:func:`memlens.stats.paired.paired_categories` — Δ mean drift and Δ d_rel with the paired
cluster bootstrap over the shared questions, bootstrap p-values, BH within condition class.
Each run's validity verdict comes first; when either run's verdict is not ``pass``, persona
deltas are marked ``interpretable: false`` (the instrument cannot support them). When both runs'
statistics hold a ``direction`` profile, the Δ of every share both hold is added
(descriptive: stored shares carry no per-question data to resample).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from memlens.errors import MemlensError
from memlens.stats.analyze import to_jsonable
from memlens.stats.paired import paired_categories
from memlens.stats.table import metric_columns, validate_drift_table

COMPARE_FORMAT_VERSION = 1


@dataclass(frozen=True)
class DesignCheck:
    """The outcome of :func:`check_design` (never ``disjoint``: that raises)."""

    status: str  # "paired" | "restricted"
    questions: tuple[str, ...]
    stimuli: tuple[str, ...]
    baselines: int
    dropped: dict = field(default_factory=dict)  # run label -> {"questions": n, "stimuli": n}
    warning: str | None = None

    def to_dict(self) -> dict:
        """Plain-dict form for ``compare.json``."""
        return {"status": self.status, "n_questions": len(self.questions),
                "n_stimuli": len(self.stimuli), "baselines": self.baselines,
                "dropped": self.dropped, "warning": self.warning}


def _ids(frame: pd.DataFrame, column: str) -> set[str]:
    return set(frame[column].astype(str)) if column in frame.columns and not frame.empty else set()


def check_design(frame_a: pd.DataFrame, frame_b: pd.DataFrame, baselines_a: int, baselines_b: int,
                 labels: tuple[str, str] = ("A", "B")) -> DesignCheck:
    """Compare two drift tables' designs (see the module docstring); raises on disjoint ones."""
    name_a, name_b = labels
    if frame_a.empty or frame_b.empty:
        empty = name_a if frame_a.empty else name_b
        raise MemlensError(f"run {empty} has no drift rows: nothing to compare")
    if baselines_a != baselines_b:
        raise MemlensError(
            f"runs {name_a} and {name_b} have different numbers of no-memory baselines "
            f"(K = {baselines_a} vs K = {baselines_b}): their drift values average over different "
            "baselines and cannot be paired; re-run one with --baselines "
            f"{baselines_a}")
    questions = {label: _ids(f, "question_id") for label, f in zip(labels, (frame_a, frame_b),
                                                                   strict=True)}
    stimuli = {label: _ids(f, "stimulus_id") for label, f in zip(labels, (frame_a, frame_b),
                                                                 strict=True)}
    shared_q = questions[name_a] & questions[name_b]
    shared_s = stimuli[name_a] & stimuli[name_b]
    if not shared_q or not shared_s:
        what = "question" if not shared_q else "stimulus"
        raise MemlensError(
            f"runs {name_a} and {name_b} share no {what} id ({len(questions[name_a])} vs "
            f"{len(questions[name_b])} questions, {len(stimuli[name_a])} vs "
            f"{len(stimuli[name_b])} stimuli): disjoint designs cannot be compared paired")
    dropped = {label: {"questions": len(questions[label] - shared_q),
                       "stimuli": len(stimuli[label] - shared_s)} for label in labels}
    status, warning = "paired", None
    if any(n for counts in dropped.values() for n in counts.values()):
        status = "restricted"
        parts = "; ".join(f"{counts['questions']} question(s) and {counts['stimuli']} "
                          f"stimulus id(s) dropped from {label}" for label, counts in dropped.items())
        warning = (f"the runs' designs differ: compared on the {len(shared_q)} shared questions x "
                   f"{len(shared_s)} shared stimuli only ({parts})")
    return DesignCheck(status, tuple(sorted(shared_q)), tuple(sorted(shared_s)), baselines_a,
                       dropped, warning)


def restrict(frame: pd.DataFrame, design: DesignCheck) -> pd.DataFrame:
    """The rows of ``frame`` inside the design's shared questions and stimuli."""
    keep = frame["question_id"].astype(str).isin(design.questions) & \
        frame["stimulus_id"].astype(str).isin(design.stimuli)
    return frame[keep].reset_index(drop=True)


def validity_of(stats: dict | None, error: str | None = None) -> dict:
    """``verdict``, ``persona_interpretable`` and ``explanation`` of a run's statistics."""
    validity = (stats or {}).get("validity") or {}
    return {"verdict": validity.get("verdict", "not_computed"),
            "persona_interpretable": bool(validity.get("persona_interpretable", False)),
            "explanation": validity.get("explanation") or error or "no statistics"}


def compare_frames(frame_a: pd.DataFrame, frame_b: pd.DataFrame, *, baselines: tuple[int, int],
                   validity: tuple[dict, dict], labels: tuple[str, str] = ("A", "B"),
                   seed: int = 0, n_bootstrap: int = 10_000,
                   directions: tuple[dict | None, dict | None] = (None, None)) -> dict:
    """The comparison of two drift tables (the body of ``compare.json``; see the module
    docstring). ``validity`` holds :func:`validity_of` of each run."""
    if n_bootstrap < 100:
        raise MemlensError(f"--bootstrap must be at least 100 (got {n_bootstrap})")
    design = check_design(frame_a, frame_b, *baselines, labels=labels)
    tables = []
    for label, frame in zip(labels, (frame_a, frame_b), strict=True):
        try:
            tables.append(validate_drift_table(restrict(frame, design), source=f"run {label}"))
        except MemlensError as error:
            raise MemlensError(f"cannot compare on the shared design: {error}") from error
    shared = [m for m in metric_columns(tables[0]) if m in metric_columns(tables[1])]
    interpretable = all(v["persona_interpretable"] for v in validity)
    metrics = {}
    for metric in shared:
        categories = paired_categories(tables[0], tables[1], metric, seed=seed,
                                       n_bootstrap=n_bootstrap)
        for row in categories.values():
            row["interpretable"] = interpretable or row["condition_class"] != "persona"
        metrics[metric] = {"categories": categories}
    result = {"format_version": COMPARE_FORMAT_VERSION, "runs": list(labels),
              "validity": dict(zip(labels, validity, strict=True)),
              "persona_interpretable": interpretable, "design": design.to_dict(),
              "settings": {"seed": seed, "n_bootstrap": n_bootstrap, "confidence": 0.95,
                           "q_family": "condition class", "delta": "B - A"},
              "metrics": metrics,
              "metrics_not_shared": sorted(set(metric_columns(tables[0]))
                                           ^ set(metric_columns(tables[1])))}
    if all(isinstance(d, dict) for d in directions):
        result["direction"] = direction_deltas(*directions)
    return to_jsonable(result)


def compare_audits(run_a, run_b, *, labels: tuple[str, str] = ("A", "B"), seed: int = 0,
                   n_bootstrap: int = 10_000) -> dict:
    """:func:`compare_frames` of two loaded runs (``memlens.audit.results.AuditRun``)."""
    return compare_frames(
        run_a.frame, run_b.frame, baselines=(run_a.config.baselines, run_b.config.baselines),
        validity=(validity_of(run_a.stats, run_a.stats_error),
                  validity_of(run_b.stats, run_b.stats_error)),
        labels=labels, seed=seed, n_bootstrap=n_bootstrap,
        directions=((run_a.stats or {}).get("direction"), (run_b.stats or {}).get("direction")))


MAX_DIRECTION_SHARES = 500


def direction_deltas(a: dict, b: dict) -> dict:
    """Δ (B − A) of every numeric leaf both direction profiles hold, by its dotted path.

    >>> direction_deltas({"dtw": {"to_E": 0.2, "n": 9}}, {"dtw": {"to_E": 0.5}})["shares"]
    {'dtw.to_E': {'a': 0.2, 'b': 0.5, 'delta': 0.3}}
    """
    flat_a, flat_b = _leaves(a), _leaves(b)
    shares = {}
    for path in sorted(set(flat_a) & set(flat_b))[:MAX_DIRECTION_SHARES]:
        shares[path] = {"a": flat_a[path], "b": flat_b[path],
                        "delta": round(flat_b[path] - flat_a[path], 12)}
    return {"shares": shares, "note": "descriptive: stored shares carry no per-question data, "
                                      "so no paired interval is computed"}


def _leaves(value, prefix: str = "") -> dict[str, float]:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            out.update(_leaves(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {prefix: float(value)}
    return {}
