"""``run_audit``: plan -> [orthogonality] -> generate -> steps -> labels -> drift -> statistics
(the report is ``memlens.report``'s job, asked for by the CLI).

Every stage reads and writes the run store, so an interrupted audit resumes where it stopped and
re-running a finished one calls no model and recomputes nothing.
"""

from __future__ import annotations

import hashlib
import json
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from memlens import __version__
from memlens.audit.chunks import run_chunks
from memlens.audit.config import AuditConfig
from memlens.audit.control_set import control_cells, control_entry, selectivity_of
from memlens.audit.design import Cell, control_samples, design_cells
from memlens.audit.drift import DRIFT_TABLE, PAIRS_TABLE, frame_columns, run_answer_drift
from memlens.audit.generate import STEPS_TABLE, build_request
from memlens.audit.labels import LABELS_TABLE
from memlens.audit.memory_sets import memory_cells, memory_entry, memory_set_stats
from memlens.audit.orthogonality import (
    FLAG,
    current_ratings,
    excluded_from_rows,
    flag_drift_rows,
    orthogonality_quality,
    run_orthogonality,
)
from memlens.audit.orthogonality import planned_rating_requests as rating_requests
from memlens.audit.quality import data_quality, segmentation_drift
from memlens.errors import MemlensError
from memlens.models import get_model
from memlens.models.callable import CALLABLE_PREFIX, as_chat_model
from memlens.models.fingerprint import model_fingerprint
from memlens.models.modelstring import API_BACKENDS, parse_model_string, public_config
from memlens.models.registry import call_settings
from memlens.ontology import get_labeler, load_ontology
from memlens.ontology.labelers import is_embedded
from memlens.questions import load_questions, select_questions
from memlens.questions.should_personalize import is_control_question
from memlens.runmanifest import open_run_manifest, package_versions
from memlens.stats.results import AuditStats, parse_stats
from memlens.stimuli import load_stimuli, select_stimuli
from memlens.stimuli.memory_sets import MEMORY_SET_CLASSES
from memlens.stimuli.templates import load_template
from memlens.store import RunStore

if TYPE_CHECKING:
    from memlens.stats.memory_sets import MemorySets
    from memlens.stats.results import AuditStats
    from memlens.stats.selectivity import Selectivity

STATS_TABLE = "audit_stats"
STATS_VERSION = 3  # bump when the statistics change, so stored results are recomputed
# Settings that change how fast, not what, an audit computes: they may differ on resume.
RUNTIME_ONLY = {"concurrency", "label_batch", "preset", "timeout_s", "attempts"}
# Settings of the orthogonality filter: they change which drift rows enter the statistics, not
# what was generated, so a finished audit can be filtered (or re-filtered) on resume.
ANALYSIS_ONLY = {"orthogonality_rater", "orthogonality_threshold"}


@dataclass
class AuditResult:
    """What an audit produced: where, how much, and the statistics."""

    run_dir: str
    calls: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)
    drift: dict = field(default_factory=dict)
    quality: dict = field(default_factory=dict)
    orthogonality: dict = field(default_factory=dict)
    stats: AuditStats | None = None
    stats_error: str | None = None
    report: str | None = None
    seconds: dict = field(default_factory=dict)
    selectivity: Selectivity | None = None
    """Selectivity of the should-personalize control set (None when it is off)."""
    memory_sets: MemorySets | None = None
    """Fact alone vs among neutral facts / attribute pairs (None when memory sets are off)."""

    def to_dict(self) -> dict:
        """JSON-serialisable form (the statistics as in ``stats.json``, selectivity and memory
        sets as in ``selectivity.json`` / ``memory_sets.json``)."""
        typed = {"stats": self.stats.to_json() if self.stats else None,
                 "selectivity": self.selectivity.to_dict() if self.selectivity else None,
                 "memory_sets": self.memory_sets.to_dict() if self.memory_sets else None}
        return {**asdict(replace(self, **dict.fromkeys(typed))), **typed}


def content_hash(items: list) -> str:
    """sha256 of a list of dataclass items (questions, stimuli), order included."""
    payload = json.dumps([asdict(item) for item in items], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def select_inputs(config: AuditConfig) -> tuple[list, list, object]:
    """Questions, stimuli and ontology of an audit, chosen by the config (seeded)."""

    questions = load_questions(config.questions)
    if config.n_questions is not None and config.n_questions < len(questions):
        questions = select_questions(questions, n=config.n_questions, seed=config.seed)
    stimuli = load_stimuli(config.stimuli)
    if config.stimulus_categories is not None or config.stimuli_per_category is not None:
        categories = config.stimulus_categories
        if categories is not None:
            categories = sorted(set(categories) | {"no_perturbation"})
        stimuli = select_stimuli(stimuli, categories=categories,
                                 per_category=config.stimuli_per_category, seed=config.seed)
    return questions, stimuli, load_ontology(config.ontology)


def plan_cells(config: AuditConfig) -> tuple[list[Cell], dict]:
    """All cells of the audit and the manifest entry describing its inputs."""
    questions, stimuli, ontology = select_inputs(config)
    cells = design_cells(questions, stimuli, config.samples, config.baselines)
    inputs = _inputs_entry(questions, stimuli, ontology, len(cells)) | template_entry(config)
    extra = control_cells(config, stimuli)  # should-personalize set: selectivity only
    inputs |= control_entry(config, stimuli, extra)
    sets = memory_cells(config, questions, stimuli)  # memory sets: their own statistics
    inputs |= memory_entry(config, stimuli, sets)
    planned = planned_drift_rows(cells, config)
    if sets:  # each question's memory-set cells right after its own (whole-question chunks)
        order = {question.id: index for index, question in enumerate(questions)}
        cells = sorted(cells + sets, key=lambda cell: order[cell.question.id])
    return cells + extra, {**inputs, "planned_drift_rows": planned}


def _inputs_entry(questions, stimuli, ontology, cells: int) -> dict:
    return {
        "questions": len(questions), "stimuli": len(stimuli), "cells": cells,
        "questions_sha256": content_hash(questions), "stimuli_sha256": content_hash(stimuli),
        "ontology_sha256": ontology.content_hash(), "ontology_version": ontology.version,
    }


def template_entry(config: AuditConfig) -> dict:
    """The memory template's name, source and content hash for the manifest ({} when none)."""
    if not config.memory_template:
        return {}

    template = load_template(config.memory_template)
    return {"memory_template": template.name, "memory_template_source": template.source,
            "memory_template_sha256": template.sha256}


def planned_request_groups(config: AuditConfig) -> tuple[list[tuple], dict]:
    """``(request of sample 0, number of samples)`` per (question, condition), and the inputs entry.

    The samples of one condition differ only in sample index and seed, so ``--dry-run`` can
    count and estimate them arithmetically (``memlens.engine.plan_groups``) without building
    every request: a million-cell design plans in the time of its (question, condition) pairs.
    """

    questions, stimuli, ontology = select_inputs(config)
    control = control_samples(config.samples, config.baselines)
    firsts = [cell for cell in design_cells(questions, stimuli, 1, 1) if cell.sample == 0]
    groups = [(build_request(cell, config),
               control if cell.stimulus.stimulus_class == "control" else config.samples)
              for cell in firsts]
    inputs = _inputs_entry(questions, stimuli, ontology, sum(copies for _, copies in groups))
    inputs |= template_entry(config)
    rows = {klass: count if klass == "control" else count * config.samples
            for klass, count in planned_drift_rows(firsts, config).items()}
    extra = [cell for cell in control_cells(config, stimuli, 1, 1) if cell.sample == 0]
    groups += [(build_request(cell, config),
                control if cell.stimulus.stimulus_class == "control" else config.samples)
               for cell in extra]
    inputs |= control_entry(config, stimuli, control_cells(config, stimuli))
    groups += [(build_request(cell, config), config.samples)
               for cell in memory_cells(config, questions, stimuli, 1)]
    inputs |= memory_entry(config, stimuli, memory_cells(config, questions, stimuli))
    return groups, {**inputs, "planned_drift_rows": rows}


def planned_drift_rows(cells: list[Cell], config: AuditConfig) -> dict[str, int]:
    """Drift rows the design plans per condition class (what coverage is measured against):
    every perturbed cell, and per question K floor rows (K = 1: the extra no-memory samples)."""
    counts: dict[str, int] = {}
    for cell in cells:
        klass = cell.stimulus.stimulus_class
        counts[klass] = counts.get(klass, 0) + (klass != "control")
    questions = len({cell.question.id for cell in cells})
    floor_rows = config.baselines if config.baselines >= 2 else config.samples
    counts["control"] = questions * floor_rows
    return counts


def design_summary(config: AuditConfig) -> dict:
    """What produced a drift table: baselines, samples and the design's name."""
    paper = config.baselines == 1
    return {"baselines": config.baselines, "samples": config.samples,
            "design": ("paper: one no-memory baseline plus extra no-memory samples for the floor"
                       if paper else f"{config.baselines} no-memory baselines per question; floor "
                       "= mean drift over their pairs; each drift averaged over the baselines"),
            "injection_mode": config.mode, "memory_template": config.memory_template}


INPUT_HASHES = ("questions_sha256", "stimuli_sha256", "ontology_sha256", "memory_template_sha256")
"""The input hashes a resume must match (the other ``inputs`` entries follow from them)."""


def check_manifest(store, config: AuditConfig, inputs: dict, run_dir: str | Path) -> None:
    """Refuse to resume a run directory that holds a different audit.

    The settings (less ``RUNTIME_ONLY`` and ``ANALYSIS_ONLY``) and the input hashes are compared
    and recorded by ``memlens.runmanifest.open_run_manifest``, the rule every orchestrator uses
    (a key the stored run lacks is not compared); the weights' fingerprint of a local model is
    compared first (same path, retrained checkpoint). ``write_manifest`` then writes the
    audit's full entry.
    """
    previous = store.read_manifest().get("audit")
    if not previous:
        return

    old_weights = (previous.get("model_fingerprint") or {}).get("digest")
    if old_weights and old_weights != (_model_fingerprint(config.model) or {}).get("digest"):
        raise MemlensError(
            f"run directory {run_dir} holds an audit with different settings (model weights "
            "(fingerprint)); use another --out to start a new audit, or the same settings to "
            "resume it")
    open_run_manifest(store, "audit", config.model_dump(),  # recorded in its public form
                      runtime_only=RUNTIME_ONLY | ANALYSIS_ONLY,
                      inputs={key: inputs[key] for key in INPUT_HASHES if key in inputs})


AUDIT_VERSIONED = ("numpy", "scipy", "pandas", "statsmodels", "numba", "xllamacpp",
                   "sentence-transformers", "openai", "anthropic")
"""Packages whose versions shape an audit's numbers (recorded in its manifest)."""


def _model_fingerprint(model: str) -> dict | None:
    """The audited weights' fingerprint (local hf: / vllm: / embedded models), else None."""

    return model_fingerprint(model)


def write_manifest(store, config: AuditConfig, inputs: dict) -> None:
    """Record config, versions, model strings, seeds and input hashes."""
    import platform

    settings = public_config(config.model_dump())  # model strings without credentials
    store.write_manifest({"audit": {
        "config": settings, "inputs": inputs,
        "memlens_version": __version__,
        "python": platform.python_version(), "versions": package_versions(AUDIT_VERSIONED),
        "model": settings["model"],
        "model_fingerprint": _model_fingerprint(config.model),
        "labeler": settings["labeler"],
        "seed": config.seed, "seeds": "sample seed = sha256(seed|question|stimulus|sample)[:31 bits]",
    }})


def drift_frame(store=None, *, include_excluded: bool = False, rows: list[dict] | None = None):
    """The stored drift rows as the table ``memlens.stats`` expects; rows flagged by the
    orthogonality filter are left out unless ``include_excluded``. ``rows`` (the drift table
    already read) replaces reading it from ``store``."""
    import pandas as pd

    if rows is None:
        rows = store.rows(DRIFT_TABLE)
    rows = [row for row in rows if (include_excluded or not row.get(FLAG))
            and not is_control_question(row["question_id"])  # control set: selectivity only
            and row["condition_class"] not in MEMORY_SET_CLASSES]  # memory sets: their own
    frame = pd.DataFrame(rows, columns=frame_columns(rows))  # DRIFT_COLUMNS + answer metrics
    if not frame.empty:
        frame = frame.sort_values(["question_id", "stimulus_id", "sample"], kind="stable")
    return frame.reset_index(drop=True)


def stats_key(frame, config: AuditConfig) -> str:
    """The input key of stored statistics: sha256(drift table | seed | B | version | K)."""
    return hashlib.sha256((frame.to_csv(index=False) + f"|{config.seed}|{config.n_bootstrap}"
                           + f"|{STATS_VERSION}|{config.baselines}")
                          .encode()).hexdigest()


def stored_stats(store, key: str) -> tuple[bool, AuditStats | None, str | None]:
    """``(found, stats, error)`` of the stored statistics row when its input key is ``key``."""

    stored = next((row for row in store.rows(STATS_TABLE) if row["id"] == "stats"), None)
    if stored and stored.get("input_sha256") == key:
        data = stored.get("stats")
        stats = parse_stats(data, "stored statistics", AuditStats) if data else None
        return True, stats, stored.get("error")
    return False, None, None


def compute_stats(frame, config: AuditConfig, planned: dict | None, pairs=None
                  ) -> tuple[AuditStats | None, str | None]:
    """Statistics of a drift table (pure: nothing is stored); coverage against ``planned``.

    A table the statistics cannot analyse (e.g. no noise rows) gives an error message, never
    raises: every earlier stage's work stays stored and reported.
    """
    from memlens.stats import analyze  # lazy: pulls pandas, scipy
    from memlens.stats.validity import apply_coverage  # lazy: pulls scipy

    try:
        stats = analyze(frame, metrics=["dtw", "sri"], seed=config.seed,
                        n_bootstrap=config.n_bootstrap).to_json()
    except MemlensError as problem:
        return None, str(problem)
    stats["design"] = design_summary(config)
    if planned:
        usable = frame["condition_class"].value_counts().to_dict() if len(frame) else {}
        coverage = {klass: {"planned": int(count), "usable": int(usable.get(klass, 0))}
                    for klass, count in planned.items()}
        stats["validity"] = apply_coverage(stats["validity"], coverage)
    if pairs is not None:  # direction, substitutions, contrasts, answer (issue 13)
        from memlens.audit.howdrift import how_sections  # lazy: pulls pandas, scipy

        stats.update(how_sections(frame, pairs, seed=config.seed,
                                  n_bootstrap=config.n_bootstrap, ontology=config.ontology))
    return AuditStats.model_validate(stats), None


def planned_rows(store) -> dict | None:
    """The drift rows the audit's design planned per class (from the manifest), if recorded."""
    return store.read_manifest().get("audit", {}).get("inputs", {}).get("planned_drift_rows")


def run_stats(store, config: AuditConfig, *, frame=None,
              pairs: list[dict] | None = None) -> tuple[AuditStats | None, str | None]:
    """Statistics on the drift table; reused when table, seed and B are unchanged, else
    computed and stored (``memlens.audit.results`` reads them without writing). ``frame``
    (``drift_frame``) and ``pairs`` (the pairs table) replace reading them from ``store``."""
    frame = drift_frame(store) if frame is None else frame
    key = stats_key(frame, config)
    found, stats, error = stored_stats(store, key)
    if found:
        return stats, error
    stats, error = compute_stats(frame, config, planned_rows(store),
                                 store.rows(PAIRS_TABLE) if pairs is None else pairs)
    store.put_rows(STATS_TABLE, [{"id": "stats", "input_sha256": key,
                                  "stats": stats.to_json() if stats else None, "error": error}])
    return stats, error


def labeler_options(config: AuditConfig) -> dict:
    """``--concurrency`` bounds an API labeler's calls too (its backend's own default is 32)."""

    if is_embedded(config.labeler) or config.concurrency is None:
        return {}
    if parse_model_string(config.labeler.removeprefix("llm:"))[0] not in API_BACKENDS:
        return {}
    return {"model_options": {"max_concurrency": config.concurrency}}


def chunk_size(config: AuditConfig) -> int:
    """Cells per chunk of ``run_audit``: about 8 waves of ``--concurrency`` calls (default 16).

    The chunks are overlapped (``memlens.audit.chunks.run_chunks``: generation runs on while a
    finished chunk is labelled), so a chunk boundary no longer idles the slots; smaller chunks
    mean drift rows stored sooner and less left to label alone at the end. (Strictly
    sequential chunks needed ~32 waves to keep each boundary's idle tail <= 3 %.)
    """
    return max(64, 8 * (config.concurrency or 16))


def run_audit(config: AuditConfig, run_dir: str | Path, *, progress: bool = True,
              report: bool | None = None, model=None, model_name: str | None = None) -> AuditResult:
    """Run (or resume) the audit described by ``config`` in ``run_dir``.

    Questions are processed in chunks (generate -> steps -> labels -> drift per chunk), so an
    interrupted run already holds drift rows for its finished questions and ``memlens report``
    can show them; the statistics come at the end.

    The audit never builds the report (``memlens.audit`` imports nothing from
    ``memlens.report``): call ``memlens.report.build_report(run_dir)`` afterwards, as
    ``memlens audit`` does. ``report`` is deprecated (removed in the next minor release): passing
    it warns, and ``report=True`` is refused.

    ``model`` audits a ``ChatModel`` object or a plain function ``messages -> text`` (sync or
    async, named by ``model_name``; see ``memlens.models.callable``) instead of ``config.model``,
    which is then recorded as the model's id (``callable:<name>``) and keys cache and resume.
    """
    if report is not None:
        warnings.warn("run_audit(report=...) is deprecated and will be removed in the next minor "
                      "release: leave it out and call memlens.report.build_report(run_dir) after "
                      "the audit", DeprecationWarning, stacklevel=2)
    if report:
        raise MemlensError("run_audit no longer builds the report: call "
                           "memlens.report.build_report(run_dir) after it")
    from functools import cache

    timer = time.perf_counter()
    result = AuditResult(run_dir=str(run_dir))
    cells, inputs = plan_cells(config)
    config, audited = audited_model(config, model, model_name)
    make_model = cache(lambda: audited or get_model(config.model))
    chunk = chunk_size(config)
    # --timeout / --attempts reach every API model built below (audited, rater, LLM labeler)
    with RunStore(run_dir) as store, call_settings(config.timeout_s, config.attempts):
        check_manifest(store, config, inputs, run_dir)
        write_manifest(store, config, inputs)
        make_labeler = cache(lambda: get_labeler(
            config.labeler, ontology=load_ontology(config.ontology), store=store,
            **labeler_options(config)))
        excluded: set[tuple[str, str]] = set()
        if config.orthogonality_rater:
            result.orthogonality = run_orthogonality(
                cells, config, store, cache(lambda: get_model(config.orthogonality_rater)))
            excluded = excluded_from_rows(current_ratings(store, config, cells),
                                          config.orthogonality_threshold)
        # per chunk: generate -> steps -> labels -> drift, each touching only its questions;
        # drift rows of excluded pairs are flagged as written (an interrupted run's report
        # already leaves them out)
        chunked = run_chunks(cells, config, store, make_model, make_labeler, size=chunk,
                             progress=progress, excluded=excluded)
        result.calls, result.labels, result.drift = chunked.calls, chunked.labels, chunked.drift
        result.seconds.update(chunked.seconds)
        result.drift.update(run_answer_drift(store))  # answer drift metrics (issue 13)
        flag_drift_rows(store, excluded)  # also clears flags when the filter was turned off
        result.seconds["stages"] = time.perf_counter() - timer
        # each table read once, after every stage wrote it (answers and flags update drift)
        drift_rows, pairs_rows = store.rows(DRIFT_TABLE), store.rows(PAIRS_TABLE)
        steps_rows, labels_rows = store.rows(STEPS_TABLE), store.rows(LABELS_TABLE)
        result.stats, result.stats_error = run_stats(
            store, config, frame=drift_frame(rows=drift_rows), pairs=pairs_rows)
        result.selectivity = selectivity_of(drift_rows, config)  # --control-set
        result.memory_sets = memory_set_stats(drift_rows, config)  # --memory-sets
        result.quality = data_quality(steps_rows, labels_rows, drift_rows,
                                      baselines=config.baselines)
        result.quality.update(segmentation_drift(steps_rows, pairs_rows))
        if config.orthogonality_rater:
            result.quality.update(orthogonality_quality(
                current_ratings(store, config, cells), excluded, drift_rows))
    result.seconds["total"] = time.perf_counter() - timer
    return result


def audited_model(config: AuditConfig, model, model_name: str | None) -> tuple[AuditConfig, object]:
    """The config recording a caller-given model's id, and that model (None: ``config.model``)."""

    if model is None:
        if config.model.startswith(CALLABLE_PREFIX):
            raise MemlensError(f"model {config.model!r} is a Python function: pass it to "
                               "run_audit(config, run_dir, model=function, model_name=...)")
        return config, None
    audited = as_chat_model(model, model_name)
    return config.model_copy(update={"model": audited.model_id}), audited


def planned_requests(config: AuditConfig):
    """Every generation request of the audit (for ``--dry-run``)."""
    cells, inputs = plan_cells(config)
    return [build_request(cell, config) for cell in cells], inputs


def planned_rating_requests(config: AuditConfig) -> list:
    """Every orthogonality-rater request of the audit (for ``--dry-run``); [] when off."""
    if not config.orthogonality_rater:
        return []

    questions, stimuli, _ = select_inputs(config)  # the pairs do not depend on the samples
    return rating_requests(design_cells(questions, stimuli, 1, 1))
