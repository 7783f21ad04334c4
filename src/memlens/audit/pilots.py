"""Variance models measured on known models, shipped so that an audit can say before it starts
what its design can detect there (docs/audit.md, "What the quick audit can decide").

One JSON file per measured setting in ``memlens/data/pilots/``, written by
``python scripts/ship_pilot.py NAME RUN_DIR…`` from finished audits: the variance model that
``memlens plan --pilot RUN_DIR`` estimates (:func:`memlens.audit.plan.pilot_model`) and the
settings it holds for. A config uses a shipped model only when every setting that shapes the
drift noise is the same (:data:`MATCH_KEYS`): another model, labeler, prompt format, token cap
or sampling makes it a guess, and then nothing is claimed.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from importlib.resources import files
from pathlib import Path

from memlens.audit.config import AuditConfig
from memlens.audit.plan import (
    DesignRow,
    VarianceModel,
    design_row,
    pilot_model,
    pilot_rows,
    question_cost,
)
from memlens.errors import MemlensError
from memlens.stats.power import sd_upper_limit
from memlens.targets import PAPER_EFFECT_PCT, TARGET_POWER

MATCH_KEYS = ("model", "labeler", "ontology", "mode", "reasoning_instruction", "reasoning_format",
              "max_tokens", "temperature", "top_p", "top_k", "memory_template", "system_prompt",
              "stimulus_categories", "stimuli_per_category", "samples")
"""Settings a shipped variance model must share with a config to describe it."""


def pilot_folder() -> Path:
    """``memlens/data/pilots`` inside the installed package."""
    return Path(str(files("memlens") / "data" / "pilots"))


def shipped_pilot(config: AuditConfig, folder: Path | None = None) -> VarianceModel | None:
    """The measured variance model of ``config``'s settings, if one is shipped; else None."""
    folder = pilot_folder() if folder is None else folder
    wanted = {key: _normal(getattr(config, key)) for key in MATCH_KEYS}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
        record = json.loads(path.read_text(encoding="utf-8"))
        if {key: _normal(record["settings"].get(key)) for key in MATCH_KEYS} == wanted:
            return VarianceModel(**{**record["variance"], "details": record.get("details", {})})
    return None


def pilot_record(run_dirs: list[str], note: str) -> dict:
    """What ``scripts/ship_pilot.py`` writes for finished audits of the same settings: the
    variance model of their drift pairs together (a cell shared by two runs — same question,
    condition and seed, hence the same reply — counts once), the settings it holds for, and
    ``note`` (where and when it was measured)."""
    rows: dict[str, dict] = {}
    settings = baselines = None
    for run_dir in run_dirs:
        run_rows, config = pilot_rows(run_dir)
        unknown = [key for key in MATCH_KEYS if key not in config]
        if unknown:
            raise MemlensError(f"{run_dir}: its recorded config lacks {', '.join(unknown)}; "
                               "re-run the audit with this memlens version")
        these = {key: _normal(config[key]) for key in MATCH_KEYS}
        if settings is not None and (these != settings or config.get("baselines") != baselines):
            raise MemlensError(f"{run_dir}: not the settings of {run_dirs[0]} (a shipped "
                               f"variance model holds for one setting: {', '.join(MATCH_KEYS)}, "
                               "baselines)")
        settings, baselines = these, config.get("baselines")
        rows.update((str(row["id"]), row) for row in run_rows)
    model = pilot_model(list(rows.values()), int(baselines or 1), source=note)
    variance = asdict(model)
    details = variance.pop("details")
    return {"settings": settings, "runs": len(run_dirs), "design": {"baselines": baselines},
            "variance": variance, "details": details}


def measured_power(config: AuditConfig, questions: int,
                   model: VarianceModel | None = None) -> tuple[DesignRow, VarianceModel] | None:
    """This design's row (power for a paper-sized effect, MDE, questions needed) under the shipped
    variance model of its settings; None when none is shipped."""
    model = shipped_pilot(config) if model is None else model
    if model is None:
        return None
    return design_row(model, question_cost(config), questions, config.baselines), model


def needed_design(config: AuditConfig, row: DesignRow, model: VarianceModel) -> DesignRow | None:
    """The design with ``row.questions_needed`` questions (same K), for its cost; None when the
    row already has the power or no number of questions gives it."""
    if row.power >= TARGET_POWER or not row.questions_needed:
        return None
    return design_row(model, question_cost(config), row.questions_needed, row.baselines)


def mde_interval(row: DesignRow, model: VarianceModel, level: float = 0.9) -> tuple[float, float] | None:
    """How far the MDE may be off because the spread was estimated from the pilot's n questions:
    the MDE scales with the spread, whose ``level`` interval runs between its one-sided limits
    at ``(1 − level) / 2`` and ``(1 + level) / 2`` (:func:`memlens.stats.power.sd_upper_limit`,
    χ² with n − 1 degrees of freedom). None without a pilot question count (or below 3).

    >>> m = VarianceModel(0.6, 0.01, 0.02, 0.0, "pilot", details={"questions_with_life_events": 16})
    >>> row = DesignRow(16, 5, 0.1, 0.41, 30.0, 27, 256, 15000, 32768, 0)
    >>> [round(x, 1) for x in mde_interval(row, m)]
    [23.2, 43.1]
    """
    n = int((model.details or {}).get("questions_with_life_events") or 0)
    tail = (1.0 - level) / 2.0
    low, high = sd_upper_limit(row.mde_pct, n, tail), sd_upper_limit(row.mde_pct, n, 1.0 - tail)
    return (low, high) if math.isfinite(low) and math.isfinite(high) else None


def power_sentence(row: DesignRow, model: VarianceModel, needed_eta: str | None = None) -> str:
    """One plain sentence on what the design can decide, from the measured variance model, with
    the 90 % interval of its MDE (:func:`mde_interval`); ``needed_eta`` is the estimated cost of
    the design that could (e.g. ``"384 calls, ~12 min"``).

    >>> from memlens.audit.plan import DesignRow, VarianceModel
    >>> m = VarianceModel(0.6, 0.01, 0.02, 0.0, source="quick audits of embedded, 2026-12-02",
    ...                   details={"questions_with_life_events": 38})
    >>> row = DesignRow(16, 5, 0.1, 0.26, 36.4, 33, 256, 15000, 32768, 0)
    >>> print(power_sentence(row, m))
    power (measured: quick audits of embedded, 2026-12-02): these 16 questions detect a life-event elevation of +36.4% DTW or more with power 0.8 (90% interval of this estimate from 38 measured questions: +30.6% to +45.1%), so a paper-sized +23% effect would be found with power 0.26 only — this design cannot decide on it; 33 questions could (--n-questions 33; see memlens plan)
    """
    interval = mde_interval(row, model)
    spread = (f" (90% interval of this estimate from "
              f"{model.details['questions_with_life_events']} measured questions: "
              f"+{interval[0]:.1f}% to +{interval[1]:.1f}%)" if interval else "")
    head = (f"power (measured: {model.source}): these {row.questions} questions detect a "
            f"life-event elevation of +{row.mde_pct:.1f}% {model.metric.upper()} or more with "
            f"power {TARGET_POWER:g}{spread}")
    if row.power >= TARGET_POWER:
        return (f"{head}, so a paper-sized +{PAPER_EFFECT_PCT:g}% effect would be found "
                f"(power {row.power:.2f})")
    eta = f", {needed_eta}" if needed_eta else ""
    tail = (f"; {row.questions_needed} questions could (--n-questions {row.questions_needed}"
            f"{eta}; see memlens plan)" if row.questions_needed else "")
    return (f"{head}, so a paper-sized +{PAPER_EFFECT_PCT:g}% effect would be found with power "
            f"{row.power:.2f} only — this design cannot decide on it{tail}")


def _normal(value):
    """Settings compared as JSON would store them (tuples as lists)."""
    return json.loads(json.dumps(value))
