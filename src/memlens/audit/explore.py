"""A Python API on a finished (or running) audit directory: every table as a pandas DataFrame.

>>> from memlens.audit.explore import explore          # doctest: +SKIP
>>> run = explore("runs/quick")                        # doctest: +SKIP
>>> run.direction().query("significant and instrument_ok")  # doctest: +SKIP

Everything is read through the read-only store (``memlens.audit.results.load_audit_run``), so
it works while an audit holds the directory and never writes. The ``stats.json`` sections come
from the stored statistics when they match the drift table, else they are computed now.
See ``docs/how-drift.md``.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import pandas as pd

from memlens.audit.answers import ANSWERS_TABLE
from memlens.audit.orthogonality import FLAG
from memlens.audit.results import AuditRun, load_audit_run
from memlens.stats.results import AuditStats, MetricStats
from memlens.store import RunStore


def load_answers(run_dir: str | Path) -> pd.DataFrame:
    """The ``audit_answers`` rows (answer text, source, words, markers), without embeddings."""

    with RunStore(Path(run_dir), read_only=True) as store:
        rows = store.rows(ANSWERS_TABLE) if ANSWERS_TABLE in store.tables() else []
    columns = ["id", "answer", "source", "words", "hedged", "refused", "embedding_model"]
    return pd.DataFrame(rows, columns=[*columns, "embedding"]).drop(columns="embedding")


class Explorer:
    """DataFrames of one audit run (see the module docstring); ``run`` is the ``AuditRun``."""

    def __init__(self, run: AuditRun):
        self.run = run

    @property
    def stats(self) -> AuditStats | None:
        """The typed statistics (``.to_json()`` is ``stats.json``); None before there are any."""
        return self.run.stats

    def drift(self) -> pd.DataFrame:
        """The drift table the statistics analyse (one row per response; answer metrics
        included when measured)."""
        return self.run.frame.copy()

    def pairs(self) -> pd.DataFrame:
        """One row per (response, baseline) pair with its metrics and symbol sequences."""
        return pd.DataFrame(list(self.run.pairs))

    def _metric_blocks(self) -> dict[str, MetricStats]:
        """Reasoning metrics, then answer metrics, by name."""
        stats = self.stats
        if stats is None:
            return {}
        return {**stats.metrics, **(stats.answer.metrics if stats.answer else {})}

    def categories(self, metric: str = "dtw") -> pd.DataFrame:
        """Per-category statistics (floor / d_rel machinery) of a reasoning metric (``dtw``,
        ``sri``) or an answer metric (``answer_cosine``, ``answer_length_ratio``, …)."""
        block = self._metric_blocks().get(metric)
        rows = []
        for name, entry in (block.categories if block else {}).items():
            row = {"category": name, **entry.to_json()}
            for key in ("elevation_ci", "d_rel_ci"):
                row[f"{key}_low"], row[f"{key}_high"] = row.pop(key)
            rows.append(row)
        return pd.DataFrame(rows)

    @property
    def persona_interpretable(self) -> bool:
        """False when the instrument did not pass its validity checks (``stats.validity``):
        persona rows are then not interpretable, whatever their q-values."""
        return self.stats is not None and self.stats.validity.persona_interpretable

    def _rows(self, section: str) -> pd.DataFrame:
        """A section's rows; ``instrument_ok`` is False on persona rows of an invalid run."""
        found = getattr(self.stats, section, None) if self.stats is not None else None
        rows = pd.DataFrame(found.rows if found is not None else [])
        if "condition_class" in rows:
            rows["instrument_ok"] = ((rows["condition_class"] != "persona")
                                     | self.persona_interpretable)
        return rows

    def direction(self) -> pd.DataFrame:
        """Direction profiles: net share change (pp) per category × root / symbol, CI, q."""
        return self._rows("direction")

    def substitutions(self) -> pd.DataFrame:
        """Top substitutions per category along the DTW paths, against the floor."""
        return self._rows("substitutions")

    def contrasts(self) -> pd.DataFrame:
        """Value contrasts within categories (empty with one value per category)."""
        return self._rows("contrasts")

    def answer_drift(self) -> pd.DataFrame:
        """Reasoning and answer drift side by side: elevation % over the floor [95 % CI], p and
        d_rel per category and metric, long format."""
        rows = []
        for metric, block in self._metric_blocks().items():
            for name, entry in block.categories.items():
                low, high = entry.elevation_ci
                rows.append({"metric": metric, "category": name,
                             "condition_class": entry.condition_class,
                             "n": entry.n, "mean": entry.mean,
                             "elevation_pct": entry.elevation_pct,
                             "elevation_ci_low": low, "elevation_ci_high": high,
                             "elevation_p": entry.elevation_p,
                             "d_rel": entry.d_rel, "d_rel_q": entry.d_rel_q})
        return pd.DataFrame(rows)

    @cached_property
    def _answers(self) -> pd.DataFrame:
        return load_answers(self.run.run_dir)

    def answers(self) -> pd.DataFrame:
        """The parsed final answer of every response (text, source, words, markers)."""
        return self._answers.copy()

    def most_drifted(self, per_category: int = 3, metric: str = "dtw") -> pd.DataFrame:
        """The ``per_category`` drift rows with the largest ``metric`` in each perturbed
        category (the report's "what changed"; rows left out by the orthogonality filter are
        left out here too)."""

        frame = pd.DataFrame([row for row in self.run.drift if not row.get(FLAG)])
        if frame.empty:
            return frame
        frame = frame[frame["condition_class"] != "control"]
        return (frame.sort_values(metric, ascending=False, kind="stable")
                .groupby("category", sort=True).head(per_category)
                .sort_values(["category", metric], ascending=[True, False]).reset_index(drop=True))


def explore(run_dir: str | Path) -> Explorer:
    """Open the audit in ``run_dir`` for exploration (MemlensError if it holds none)."""
    return Explorer(load_audit_run(run_dir))
