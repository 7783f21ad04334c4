"""``load_audit_run(run_dir)``: a finished (or partial) audit as one typed, read-only object.

The run store is opened read-only (no run lock, no write), so a run can be inspected and
reported while another process — e.g. the audit itself — holds its directory. Statistics come
from the stored ``audit_stats`` row when its input key matches the current drift table;
otherwise they are computed now, in memory, and ``AuditRun.stats_stored`` says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd

from memlens.audit.config import AuditConfig
from memlens.audit.control_set import selectivity_of
from memlens.audit.drift import DRIFT_TABLE, PAIRS_TABLE
from memlens.audit.generate import STEPS_TABLE
from memlens.audit.labels import LABELS_TABLE
from memlens.audit.memory_sets import memory_set_stats
from memlens.audit.orthogonality import (
    current_ratings,
    excluded_from_rows,
    excluded_table,
    orthogonality_quality,
)
from memlens.audit.pipeline import compute_stats, drift_frame, planned_rows, stats_key, stored_stats
from memlens.audit.quality import data_quality, segmentation_drift
from memlens.errors import MemlensError
from memlens.stats.memory_sets import MemorySets
from memlens.stats.results import AuditStats
from memlens.stats.selectivity import Selectivity
from memlens.store import RunStore


@dataclass(frozen=True)
class Orthogonality:
    """The orthogonality filter of a run: rater, threshold, counts and the excluded pairs."""

    rater: str
    threshold: float
    quality: dict
    table: pd.DataFrame


@dataclass(frozen=True)
class AuditRun:
    """Everything stored about one audit run. Fields cannot be reassigned; treat the rows,
    frame and dicts as read-only too (they are plain containers for the renderers).

    ``stats`` is the typed :class:`~memlens.stats.results.AuditStats` (``stats.to_json()`` is
    ``stats.json``). ``stats_stored`` is False when the stored statistics
    were missing or stale and ``stats`` / ``stats_error`` were computed now and not stored.
    """

    run_dir: Path
    manifest: dict  # the manifest's "audit" entry
    config: AuditConfig
    steps: tuple[dict, ...]
    labels: tuple[dict, ...]
    drift: tuple[dict, ...]
    pairs: tuple[dict, ...]
    frame: pd.DataFrame  # the drift table the statistics analyse (filtered rows left out)
    stats: AuditStats | None
    stats_error: str | None
    stats_stored: bool
    failures: int  # failed calls still in the request log
    orthogonality: Orthogonality | None
    quality: dict

    @cached_property
    def selectivity(self) -> Selectivity | None:
        """Selectivity of the should-personalize control set (None when it is off); computed
        on first use (seeded), so loading a run for the gate or compare does not pay for it."""
        return selectivity_of(list(self.drift), self.config)

    @cached_property
    def memory_sets(self) -> MemorySets | None:
        """Fact alone vs among neutral facts / attribute pairs (None when memory sets are off);
        computed on first use (seeded)."""
        return memory_set_stats(list(self.drift), self.config)


def load_audit_run(run_dir: str | Path) -> AuditRun:
    """Read the audit in ``run_dir`` through a read-only store (MemlensError if it holds none)."""

    run_dir = Path(run_dir)
    if not (run_dir / "memlens.sqlite").exists():
        raise MemlensError(f"{run_dir} is not a memlens run directory (no memlens.sqlite)")
    with RunStore(run_dir, read_only=True) as store:
        manifest = store.read_manifest().get("audit")
        if not manifest:
            raise MemlensError(f"{run_dir} holds no audit (its manifest has no 'audit' entry)")
        # a run from before K baselines existed used the paper's design (K = 1)
        config = AuditConfig.model_validate({"baselines": 1, **manifest["config"]})
        steps, labels = tuple(store.rows(STEPS_TABLE)), tuple(store.rows(LABELS_TABLE))
        drift, pairs = tuple(store.rows(DRIFT_TABLE)), tuple(store.rows(PAIRS_TABLE))
        frame = drift_frame(rows=list(drift))  # each table read once, as in run_audit
        key = stats_key(frame, config)
        stats_stored, stats, stats_error = stored_stats(store, key)
        if not stats_stored:
            stats, stats_error = compute_stats(frame, config, planned_rows(store), pairs)
        failures = len(store.failures())
        ratings = current_ratings(store, config)
    orthogonality = _orthogonality(config, ratings, drift)
    quality = data_quality(steps, labels, drift, baselines=config.baselines)
    quality.update(segmentation_drift(steps, pairs))
    if orthogonality is not None:
        quality.update(orthogonality.quality)
    return AuditRun(run_dir=run_dir, manifest=manifest, config=config, steps=steps,
                    labels=labels, drift=drift, pairs=pairs, frame=frame, stats=stats,
                    stats_error=stats_error, stats_stored=stats_stored, failures=failures,
                    orthogonality=orthogonality, quality=quality)


def _orthogonality(config: AuditConfig, ratings: list[dict],
                   drift_rows: tuple[dict, ...]) -> Orthogonality | None:
    """The filter's ratings, excluded pairs and counts (None when the filter is off)."""
    if not config.orthogonality_rater:
        return None
    excluded = excluded_from_rows(ratings, config.orthogonality_threshold)
    return Orthogonality(rater=config.orthogonality_rater,  # public: the config is the manifest's
                         threshold=config.orthogonality_threshold,
                         quality=orthogonality_quality(ratings, excluded, drift_rows),
                         table=excluded_table(ratings, excluded, drift_rows))
