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
deltas are marked ``interpretable: false`` (the instrument cannot support them), and so is
every row resting on fewer than :data:`memlens.stats.direction.MIN_QUESTIONS` (8) paired
questions, whatever its p (``not_interpretable_reason`` says which).

**Direction** (:func:`direction_deltas`). When both runs have pair rows on the shared design,
``direction`` holds one row per (category, level, symbol) both direction profiles hold: each
run's ``net_pp`` (``a``, ``b``), Δ = b − a with a paired cluster-bootstrap 95 % CI over the
shared questions (the same question draws in both runs), bootstrap p and BH q across the
symbols of one category and level. A row is not interpretable when its category has fewer than
:data:`memlens.stats.direction.MIN_QUESTIONS` shared questions or, for persona rows, when
either run's instrument is not valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd

from memlens.audit.howdrift import HOW_BOOTSTRAP, ontology_maps, pair_frame
from memlens.errors import MemlensError
from memlens.stats.analyze import to_jsonable
from memlens.stats.direction import MIN_QUESTIONS, paired_direction
from memlens.stats.paired import paired_categories
from memlens.stats.results import DriftStats
from memlens.stats.table import metric_columns, validate_drift_table

COMPARE_FORMAT_VERSION = 2


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


def validity_of(stats: DriftStats | None, error: str | None = None) -> dict:
    """``verdict``, ``persona_interpretable`` and ``explanation`` of a run's statistics."""
    if stats is None:
        return {"verdict": "not_computed", "persona_interpretable": False,
                "explanation": error or "no statistics"}
    validity = stats.validity
    return {"verdict": validity.verdict, "persona_interpretable": validity.persona_interpretable,
            "explanation": validity.explanation or error or "no statistics"}


def compare_frames(frame_a: pd.DataFrame, frame_b: pd.DataFrame, *, baselines: tuple[int, int],
                   validity: tuple[dict, dict], labels: tuple[str, str] = ("A", "B"),
                   seed: int = 0, n_bootstrap: int = 10_000,
                   pairs: tuple[Sequence[dict] | None, Sequence[dict] | None] = (None, None),
                   ontologies: tuple[str | None, str | None] = (None, None)) -> dict:
    """The comparison of two drift tables (the body of ``compare.json``; see the module
    docstring). ``validity`` holds :func:`validity_of` of each run; ``pairs`` each run's pair
    rows (with ``ontologies``, its ontology path) for the ``direction`` entry, which is left out
    unless both runs have pair rows on the shared design."""
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
            enough = row["n_questions"] >= MIN_QUESTIONS
            row["interpretable"] = enough and (interpretable or row["condition_class"] != "persona")
            row["not_interpretable_reason"] = (
                None if row["interpretable"] else
                f"fewer than {MIN_QUESTIONS} paired questions ({row['n_questions']})"
                if not enough else "instrument not valid")
        metrics[metric] = {"categories": categories}
    result = {"format_version": COMPARE_FORMAT_VERSION, "runs": list(labels),
              "validity": dict(zip(labels, validity, strict=True)),
              "persona_interpretable": interpretable, "design": design.to_dict(),
              "settings": {"seed": seed, "n_bootstrap": n_bootstrap, "confidence": 0.95,
                           "q_family": "condition class", "delta": "B - A"},
              "metrics": metrics,
              "metrics_not_shared": sorted(set(metric_columns(tables[0]))
                                           ^ set(metric_columns(tables[1])))}
    pair_frames = [pair_frame(restrict(frame, design), rows or ())
                   for frame, rows in zip((frame_a, frame_b), pairs, strict=True)]
    if not any(part.empty for part in pair_frames):
        result["direction"] = direction_deltas(*pair_frames, ontologies=ontologies,
                                               persona_interpretable=interpretable, seed=seed,
                                               n_bootstrap=n_bootstrap)
    return to_jsonable(result)


def compare_audits(run_a, run_b, *, labels: tuple[str, str] = ("A", "B"), seed: int = 0,
                   n_bootstrap: int = 10_000) -> dict:
    """:func:`compare_frames` of two loaded runs (``memlens.audit.results.AuditRun``)."""
    return compare_frames(
        run_a.frame, run_b.frame, baselines=(run_a.config.baselines, run_b.config.baselines),
        validity=(validity_of(run_a.stats, run_a.stats_error),
                  validity_of(run_b.stats, run_b.stats_error)),
        labels=labels, seed=seed, n_bootstrap=n_bootstrap,
        pairs=(run_a.pairs, run_b.pairs), ontologies=(run_a.config.ontology, run_b.config.ontology))


def direction_deltas(pairs_a: pd.DataFrame, pairs_b: pd.DataFrame, *,
                     ontologies: tuple[str | None, str | None] = (None, None),
                     persona_interpretable: bool = True, seed: int = 0,
                     n_bootstrap: int = HOW_BOOTSTRAP) -> dict:
    """The ``direction`` entry: Δ net_pp (B − A) of the runs' direction profiles, paired
    (:func:`memlens.stats.direction.paired_direction` on :func:`memlens.audit.howdrift.pair_frame`
    rows already cut to the shared design), at most :data:`HOW_BOOTSTRAP` replicates as in
    ``stats.json``. Persona rows are not interpretable unless ``persona_interpretable``; runs
    whose ontologies differ get ``error`` and no rows."""
    settings = {"seed": seed, "n_bootstrap": min(n_bootstrap, HOW_BOOTSTRAP), "confidence": 0.95,
                "min_questions": MIN_QUESTIONS, "q_family": "the symbols of one category and level",
                "unit": "percentage points of a response's labelled steps", "delta": "B - A"}
    observed = pd.concat([pairs_a, pairs_b], ignore_index=True)
    try:
        maps = [ontology_maps(path, observed) for path in dict.fromkeys(ontologies)]
    except MemlensError as problem:
        return {**settings, "rows": [], "error": f"direction profiles not compared: {problem}"}
    if any(other != maps[0] for other in maps[1:]):
        return {**settings, "rows": [],
                "error": "direction profiles not compared: the runs use different ontologies "
                         f"({ontologies[0] or 'default'} vs {ontologies[1] or 'default'})"}
    symbols, root_of = maps[0]
    table = paired_direction(pairs_a, pairs_b, symbols, root_of, seed=seed,
                             n_bootstrap=settings["n_bootstrap"])
    rows = table.to_dict("records")
    for row in rows:
        row["interpretable"] = bool(row["interpretable"] and (
            persona_interpretable or row["condition_class"] != "persona"))
    return {**settings, "rows": rows}
