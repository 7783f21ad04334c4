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
from memlens.audit.results import AuditRun, load_audit_run


def load_answers(run_dir: str | Path) -> pd.DataFrame:
    """The ``audit_answers`` rows (answer text, source, words, markers), without embeddings."""
    from memlens.store import RunStore

    with RunStore(Path(run_dir), read_only=True) as store:
        rows = store.rows(ANSWERS_TABLE) if ANSWERS_TABLE in store.tables() else []
    columns = ["id", "answer", "source", "words", "hedged", "refused", "embedding_model"]
    return pd.DataFrame(rows, columns=[*columns, "embedding"]).drop(columns="embedding")


class Explorer:
    """DataFrames of one audit run (see the module docstring); ``run`` is the ``AuditRun``."""

    def __init__(self, run: AuditRun):
        self.run = run

    @property
    def stats(self) -> dict:
        """``stats.json``'s structure (empty when the run has no statistics yet)."""
        return self.run.stats or {}

    def drift(self) -> pd.DataFrame:
        """The drift table the statistics analyse (one row per response; answer metrics
        included when measured)."""
        return self.run.frame.copy()

    def pairs(self) -> pd.DataFrame:
        """One row per (response, baseline) pair with its metrics and symbol sequences."""
        return pd.DataFrame(list(self.run.pairs))

    def categories(self, metric: str = "dtw") -> pd.DataFrame:
        """Per-category statistics (floor / d_rel machinery) of a reasoning metric (``dtw``,
        ``sri``) or an answer metric (``answer_cosine``, ``answer_length_ratio``, …)."""
        block = (self.stats.get("metrics", {}).get(metric)
                 or self.stats.get("answer", {}).get("metrics", {}).get(metric) or {})
        rows = [{"category": name, **{k: v for k, v in entry.items() if not isinstance(v, list)},
                 **{f"{k}_low": (v or [None, None])[0] for k, v in entry.items()
                    if k.endswith("_ci")},
                 **{f"{k}_high": (v or [None, None])[1] for k, v in entry.items()
                    if k.endswith("_ci")}}
                for name, entry in (block.get("categories") or {}).items()]
        return pd.DataFrame(rows)

    @property
    def persona_interpretable(self) -> bool:
        """False when the instrument did not pass its validity checks (``stats.validity``):
        persona rows are then not interpretable, whatever their q-values."""
        return bool((self.stats.get("validity") or {}).get("persona_interpretable"))

    def _rows(self, section: str) -> pd.DataFrame:
        """A section's rows; ``instrument_ok`` is False on persona rows of an invalid run."""
        rows = pd.DataFrame(self.stats.get(section, {}).get("rows") or [])
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
        blocks = {**{m: b for m, b in self.stats.get("metrics", {}).items()},
                  **self.stats.get("answer", {}).get("metrics", {})}
        for metric, block in blocks.items():
            for name, entry in (block.get("categories") or {}).items():
                low, high = (entry.get("elevation_ci") or [None, None])[:2]
                rows.append({"metric": metric, "category": name,
                             "condition_class": entry.get("condition_class"),
                             "n": entry.get("n"), "mean": entry.get("mean"),
                             "elevation_pct": entry.get("elevation_pct"),
                             "elevation_ci_low": low, "elevation_ci_high": high,
                             "elevation_p": entry.get("elevation_p"),
                             "d_rel": entry.get("d_rel"), "d_rel_q": entry.get("d_rel_q")})
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
        from memlens.audit.orthogonality import FLAG

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
