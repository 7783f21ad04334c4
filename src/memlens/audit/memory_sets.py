"""Memory sets inside an audit (``AuditConfig.memory_sets``): their cells, manifest entry and
statistics (``memlens.stats.memory_sets``: "the fact alone" versus "the fact among neutral
ones", and two attributes together versus each alone).

Their drift rows carry the classes ``neutral_set`` / ``persona_in_set`` / ``combination`` and
stay out of the single-stimulus drift table (``drift_frame``) that ``memlens.stats.analyze``
reads.
"""

from __future__ import annotations

from memlens.audit.config import AuditConfig
from memlens.audit.design import Cell, memory_set_cells
from memlens.stats.memory_sets import MemorySets, compare_memory_sets
from memlens.stimuli.memory_sets import among_neutral_sets, combination_sets, load_neutral_facts

DEFAULT_NEUTRAL_FACTS = 4
DEFAULT_MAX_COMBINATIONS = 10


def memory_sets_of(config: AuditConfig, stimuli: list) -> list:
    """The memory sets the config asks for, built from the selected stimuli ([] when off)."""
    if not config.memory_sets:
        return []

    sets: list = []
    if "among_neutral" in config.memory_sets:
        sets += among_neutral_sets(stimuli, load_neutral_facts(),
                                   config.neutral_facts or DEFAULT_NEUTRAL_FACTS, config.seed)
    if "combined" in config.memory_sets:
        sets += combination_sets(stimuli, config.max_combinations or DEFAULT_MAX_COMBINATIONS,
                                 config.seed)
    return sets


def memory_cells(config: AuditConfig, questions: list, stimuli: list,
                 samples: int | None = None) -> list[Cell]:
    """The memory-set cells of the benchmark questions ([] when off)."""
    sets = memory_sets_of(config, stimuli)
    return memory_set_cells(questions, sets, config.samples if samples is None else samples)


def memory_entry(config: AuditConfig, stimuli: list, cells: list[Cell]) -> dict:
    """Manifest entry: the sets' count, cells and content hash ({} when off)."""
    if not config.memory_sets:
        return {}
    import hashlib
    import json

    sets = memory_sets_of(config, stimuli)
    payload = json.dumps([s.to_dict() for s in sets], sort_keys=True, ensure_ascii=False)
    return {"memory_sets": len(sets), "memory_set_cells": len(cells),
            "memory_sets_sha256": hashlib.sha256(payload.encode()).hexdigest()}


def memory_set_stats(drift_rows: list[dict], config: AuditConfig) -> MemorySets | None:
    """``memlens.stats.memory_sets.compare_memory_sets`` of the drift rows (None when off)."""
    if not config.memory_sets:
        return None
    return compare_memory_sets(drift_rows, metric="dtw", seed=config.seed,
                               n_bootstrap=min(config.n_bootstrap, 10_000))
