"""How an audit's reasoning drifted: the ``direction``, ``substitutions``, ``contrasts`` and
``answer`` sections of ``stats.json``, computed from the drift frame and the pair rows.

The analyses are the pure functions of :mod:`memlens.stats.direction`,
:mod:`memlens.stats.substitution` and :mod:`memlens.stats.contrasts`; answer drift is the
ordinary floor / d_rel statistics (:func:`memlens.stats.panel.category_statistics`) of the
answer metric columns (:data:`memlens.audit.drift.ANSWER_METRICS`). Pairs whose response is not
in the frame (left out by the orthogonality filter) are left out here too. Each section holds
its own ``error`` instead of failing the statistics.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from memlens.audit.drift import ANSWER_METRICS
from memlens.errors import MemlensError
from memlens.ontology import load_ontology
from memlens.rowkeys import join_key
from memlens.stats.analyze import to_jsonable
from memlens.stats.contrasts import (
    contrast_design,
    contrast_pairs,
    score_contrast_pairs,
    value_contrasts,
)
from memlens.stats.direction import direction_profile
from memlens.stats.panel import category_statistics
from memlens.stats.substitution import substitutions
from memlens.stats.table import FLOOR_CATEGORY, validate_drift_table

SECTIONS_VERSION = 2
"""2: value contrasts tested by within-question label permutation (``excess``, ``testable``);
direction and substitution q-values over the whole table."""
HOW_BOOTSTRAP = 2_000
"""Replicates of the how-sections' bootstraps, answer drift included (at most the run's B): a
95 % percentile interval is stable at 2,000, and the direction and substitution tables hold
hundreds of cells."""
CONTRAST_CLASSES = ("persona", "life_event")
NEEDS_VALUES = ("value contrasts need at least two values (stimuli) per category: run the "
                "audit with --stimuli-per-category 2 or more (`memlens plan` prices it)")


def pair_frame(frame: pd.DataFrame, pair_rows: Sequence[dict]) -> pd.DataFrame:
    """The pair rows (as a DataFrame) whose response is a row of the drift frame."""
    columns = ["response_id", "baseline_id", "question_id", "category", "condition_class",
               "stimulus_id", "sample", "baseline_symbols", "compared_symbols"]
    if frame.empty or not pair_rows:
        return pd.DataFrame(columns=columns)
    kept = {join_key(q, s, int(k)) for q, s, k in
            zip(frame["question_id"], frame["stimulus_id"], frame["sample"], strict=True)}
    rows = [row for row in pair_rows if row["response_id"] in kept]
    return pd.DataFrame(rows, columns=columns)


def ontology_maps(ontology_path: str | None, pairs: pd.DataFrame) -> tuple[list[str], dict]:
    """The symbols (ontology order, then any other observed symbol) and symbol -> root."""

    ontology = load_ontology(ontology_path)
    symbols = list(ontology.symbol_ids)
    root_of = {s: ontology.root_of(s) for s in symbols}
    seen = {s for column in ("baseline_symbols", "compared_symbols") for seq in pairs[column]
            for s in seq}
    for extra in sorted(seen - set(symbols)):
        symbols.append(extra)
        root_of[extra] = extra
    return symbols, root_of


def how_sections(frame: pd.DataFrame, pair_rows: Sequence[dict], *, seed: int = 0,
                 n_bootstrap: int = HOW_BOOTSTRAP, ontology: str | None = None) -> dict:
    """The four sections (JSON-ready); see the module docstring."""
    settings = {"version": SECTIONS_VERSION, "seed": seed,
                "n_bootstrap": min(n_bootstrap, HOW_BOOTSTRAP), "confidence": 0.95,
                "alpha": 0.05, "floor": FLOOR_CATEGORY}
    boot = {"seed": seed, "n_bootstrap": settings["n_bootstrap"]}
    pairs = pair_frame(frame, pair_rows)
    out: dict = {}
    try:
        symbols, root_of = ontology_maps(ontology, pairs)
    except MemlensError as problem:
        error = {"error": str(problem), **settings}
        return {"direction": error, "substitutions": error, "contrasts": error,
                "answer": answer_section(frame, seed, settings["n_bootstrap"])}
    out["direction"] = _section(settings, lambda: direction_rows(pairs, symbols, root_of, boot))
    out["substitutions"] = _section(settings,
                                    lambda: substitution_rows(pairs, symbols, root_of, boot))
    out["contrasts"] = _section(settings, lambda: contrast_section(frame, pairs, boot))
    out["answer"] = answer_section(frame, seed, settings["n_bootstrap"])
    return to_jsonable(out)


def _section(settings: dict, compute) -> dict:
    try:
        return {**settings, **compute()}
    except MemlensError as problem:
        return {**settings, "error": str(problem)}


def direction_rows(pairs, symbols, root_of, boot) -> dict:
    """``rows`` of :func:`memlens.stats.direction.direction_profile`."""

    table = direction_profile(pairs, symbols, root_of, **boot)
    return {"rows": table.to_dict("records"), "n_pairs": int(len(pairs)),
            "unit": "percentage points of a response's labelled steps"}


def substitution_rows(pairs, symbols, root_of, boot) -> dict:
    """``rows`` of :func:`memlens.stats.substitution.substitutions`."""

    table = substitutions(pairs, symbols, root_of, **boot)
    return {"rows": table.to_dict("records"), "n_pairs": int(len(pairs)),
            "unit": "percentage points of DTW path cells"}


def contrast_responses(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per usable persona / life-event response with its symbol sequence."""
    part = pairs[pairs["condition_class"].isin(CONTRAST_CLASSES)].drop_duplicates("response_id")
    return part.rename(columns={"compared_symbols": "symbols"})[
        ["question_id", "category", "condition_class", "stimulus_id", "sample", "symbols"]]


def contrast_section(frame: pd.DataFrame, pairs: pd.DataFrame, boot) -> dict:
    """Value contrasts, or the note that the design has one value per category."""

    responses = contrast_responses(pairs)
    design = contrast_design(responses)
    if not design["categories_with_values"]:
        return {"rows": [], "design": design, "note": NEEDS_VALUES}
    responses = responses.reset_index(drop=True)
    scored = score_contrast_pairs(contrast_pairs(responses), responses)
    floor = frame[frame["category"] == FLOOR_CATEGORY]
    table = value_contrasts(scored, floor, **boot)
    note = "" if not design["single_value_categories"] else (
        f"{len(design['single_value_categories'])} categories have one value only: "
        + NEEDS_VALUES)
    return {"rows": table.to_dict("records"), "design": design, "note": note,
            "n_contrast_pairs": int(len(scored))}


def answer_section(frame: pd.DataFrame, seed: int, n_bootstrap: int) -> dict:
    """Floor / d_rel statistics of the answer metric columns present in the frame."""
    columns = [name for name in ANSWER_METRICS if name in frame.columns]
    if not columns:
        return {"version": SECTIONS_VERSION, "metrics": {}, "columns": [],
                "note": "answer drift was not measured for this run (an audit from before "
                        "answer drift, or one still running: re-run `memlens audit` to resume)"}

    try:
        table = validate_drift_table(frame)
        metrics = {name: category_statistics(table, name, seed=seed, n_bootstrap=n_bootstrap)
                   for name in columns}
    except MemlensError as problem:
        return {"version": SECTIONS_VERSION, "metrics": {}, "columns": columns,
                "error": str(problem)}
    return to_jsonable({"version": SECTIONS_VERSION, "metrics": metrics, "columns": columns,
                        "n_rows": int(len(table)), "n_bootstrap": n_bootstrap, "seed": seed})
