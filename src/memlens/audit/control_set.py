"""The control set inside an audit (``AuditConfig.control_set``): its cells, its manifest entry,
and the selectivity statistics (``memlens.stats.selectivity``). ``should-personalize``: the
bundled questions, crossed with the catalogue's stimuli of their attributes; ``memsyco``:
MemSyco-Bench items, each with its own dialogue as the memory (memory-use items the relevant
side, scope-control items the irrelevant side).

The control-set questions (ids ``sp/...``) get their own no-memory baselines and only the
stimuli of the attributes they depend on; their drift rows stay out of the benchmark's drift
table (``drift_frame``) and feed selectivity alone.
"""

from __future__ import annotations

from memlens.audit.config import AuditConfig
from memlens.audit.design import Cell, control_samples, control_set_cells, control_stimulus
from memlens.errors import MemlensError
from memlens.questions.benchmark import select_questions
from memlens.questions.memsyco import control_questions as memsyco_questions
from memlens.questions.memsyco import dialogue_stimulus, load_memsyco
from memlens.questions.should_personalize import load_control_set
from memlens.stats.selectivity import Selectivity, selectivity


def control_questions(config: AuditConfig, stimuli: list) -> list:
    """The control set's questions; [] when off. Attributes without a stimulus in the selected
    catalogue simply get no cells (selectivity lists them as ``unmatched_categories``)."""
    if not config.control_set:
        return []
    if config.control_set == "memsyco":
        return memsyco_questions(load_memsyco(config.control_set_dir, limit=config.control_limit))

    return within_n_questions(load_control_set(config.control_set), config)


def within_n_questions(questions: list, config: AuditConfig) -> list:
    """At most ``config.n_questions`` of the control set's questions (the seeded subset
    ``select_questions`` draws, in file order): ``--n-questions`` bounds the control set too, so
    a 2-question run is not 111 calls bigger."""
    if config.n_questions is None or config.n_questions >= len(questions):
        return questions

    return select_questions(questions, n=config.n_questions, seed=config.seed)


def control_cells(config: AuditConfig, stimuli: list, samples: int | None = None,
                  baselines: int | None = None) -> list[Cell]:
    """The control set's cells for the selected stimuli ([] when the control set is off).
    ``memsyco``: per item its no-memory baselines and its own dialogue as the one stimulus."""
    questions = control_questions(config, stimuli)
    if not questions:
        return []
    samples = config.samples if samples is None else samples
    baselines = config.baselines if baselines is None else baselines
    if config.control_set == "memsyco":
        if config.mode != "history" or config.memory_template:
            raise MemlensError("--control-set memsyco injects each item's dialogue as earlier "
                               "chat turns: use --mode history (and no --memory-template)")
        return dialogue_cells(questions, stimuli, samples, baselines)
    return control_set_cells(questions, stimuli, samples, baselines)


def dialogue_cells(questions: list, stimuli: list, samples: int, baselines: int) -> list[Cell]:
    """Cells of a control set whose questions carry their own memory (MemSyco): per question
    the no-memory samples (as for any question) and ``samples`` responses under its dialogue."""

    control = control_stimulus(stimuli)
    cells: list[Cell] = []
    for question in questions:
        cells.extend(Cell(question, control, k) for k in range(control_samples(samples, baselines)))
        memory = dialogue_stimulus(question)
        cells.extend(Cell(question, memory, k) for k in range(samples))
    return cells


def control_entry(config: AuditConfig, stimuli: list, cells: list[Cell]) -> dict:
    """Manifest entry: the set's name, its questions used, cells and content hash."""
    if not config.control_set:
        return {}
    import hashlib
    import json
    from dataclasses import asdict

    questions = control_questions(config, stimuli)
    payload = json.dumps([asdict(q) for q in questions], sort_keys=True, ensure_ascii=False)
    extra = ({"control_set_dir": config.control_set_dir or "bundled excerpt",
              "control_limit": config.control_limit}
             if config.control_set == "memsyco" else {})
    return {"control_set": config.control_set, **extra,
            "control_questions": len({cell.question.id for cell in cells}),
            "control_cells": len(cells),
            "control_set_sha256": hashlib.sha256(payload.encode()).hexdigest()}


def selectivity_of(drift_rows: list[dict], config: AuditConfig) -> Selectivity | None:
    """Selectivity (``memlens.stats.selectivity``) of an audit's drift rows; None when the
    control set is off. Seeded by the audit's seed; B = min(n_bootstrap, 10,000)."""
    if not config.control_set:
        return None
    # questions without attributes (MemSyco's scope items) are the irrelevant side
    attributes = {q.id: q.attributes for q in control_questions(config, []) if q.attributes}
    return selectivity(drift_rows, attributes, metric="dtw", seed=config.seed,
                       n_bootstrap=min(config.n_bootstrap, 10_000))
