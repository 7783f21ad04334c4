"""Orthogonality stage (stage table ``audit_orthogonality``): rate every (question, persona /
life-event stimulus) pair with ``config.orthogonality_rater`` and flag the drift rows of pairs
judged relevant with confidence >= ``config.orthogonality_threshold``.

Flagged drift rows stay in ``audit_drift`` (``excluded_orthogonality: true``) so the report can
show them; ``memlens.audit.pipeline.drift_frame`` leaves them out of the statistics. A pair whose
rating row exists (from the same rater, and whose call did not fail) is done: re-running calls
and computes nothing. Rater errors are recorded and never exclude a pair.
"""

from __future__ import annotations

from memlens.audit.drift import DRIFT_TABLE
from memlens.models.modelstring import public_model_string
from memlens.questions.orthogonality import (
    excluded_pairs,
    is_rated,
    pair_id,
    rate_relevance,
    rating_request,
)
from memlens.questions.should_personalize import is_control_question

ORTHO_TABLE = "audit_orthogonality"
FLAG = "excluded_orthogonality"


def cell_pairs(cells) -> list[tuple]:
    """The distinct (question, stimulus) pairs of the audit's cells, in cell order."""
    seen: dict[tuple[str, str], tuple] = {}
    for cell in cells:
        seen.setdefault((cell.question.id, cell.stimulus.id), (cell.question, cell.stimulus))
    return list(seen.values())


def rated_pairs(cells) -> list[tuple]:
    """The pairs the rater judges: persona / life-event stimuli on benchmark questions (the
    should-personalize control set is *meant* to depend on the attribute: never rated, never
    excluded)."""

    return [(q, s) for q, s in cell_pairs(cells)
            if is_rated(s) and not is_control_question(q.id)]


def planned_rating_requests(cells) -> list:
    """The rater requests of an audit (for ``--dry-run``; repair calls are not known ahead)."""

    return [rating_request(q, s) for q, s in rated_pairs(cells)]


def _done(row: dict | None, rater: str) -> bool:
    return (row is not None and row.get("rater") == rater
            and not str(row.get("error") or "").startswith("rater_error: call failed"))


def run_orthogonality(cells, config, store, make_rater) -> dict[str, int]:
    """Rate the pending pairs and store their rows; returns counts. ``make_rater()`` is called
    only when some pair is pending."""

    rater = public_model_string(config.orthogonality_rater)  # stored without URL credentials
    pairs = rated_pairs(cells)
    stored = {row["id"]: row for row in store.rows(ORTHO_TABLE)}
    todo = [(q, s) for q, s in pairs if not _done(stored.get(pair_id(q.id, s.id)), rater)]
    if todo:
        ratings = rate_relevance(todo, make_rater(), store)
        texts = {pair_id(q.id, s.id): (q.text, s.text) for q, s in todo}
        store.put_rows(ORTHO_TABLE, [
            {**rating.to_dict(), "id": rating.id, "rater": rater,
             "question_text": texts[rating.id][0], "stimulus_text": texts[rating.id][1]}
            for rating in ratings])
    return {"pairs": len(pairs), "rated": len(todo)}


def current_ratings(store, config, cells=None) -> list[dict]:
    """The stored rating rows of the configured rater (of the audit's pairs when ``cells``)."""
    if not config.orthogonality_rater:
        return []
    wanted = None
    if cells is not None:
        wanted = {pair_id(q.id, s.id) for q, s in rated_pairs(cells)}

    rater = public_model_string(config.orthogonality_rater)  # rows store it in this form
    return [row for row in store.rows(ORTHO_TABLE)
            if row.get("rater") == rater
            and (wanted is None or row["id"] in wanted)]


def excluded_from_rows(rows: list[dict], threshold: float) -> set[tuple[str, str]]:
    """Excluded (question_id, stimulus_id) pairs of stored rating rows."""

    return excluded_pairs(rows, threshold)


def flag_drift_rows(store, excluded: set[tuple[str, str]]) -> int:
    """Set ``excluded_orthogonality`` on the drift rows of excluded pairs (and clear it on the
    others); writes only rows whose flag changes. Returns the number of flagged rows."""
    changed, flagged = [], 0
    for row in store.rows(DRIFT_TABLE):
        want = (row["question_id"], row["stimulus_id"]) in excluded
        flagged += want
        if bool(row.get(FLAG)) != want:
            changed.append({**row, FLAG: want})
    if changed:
        store.put_rows(DRIFT_TABLE, changed)
    return flagged


def orthogonality_quality(rows: list[dict], excluded: set[tuple[str, str]],
                          drift_rows: list[dict]) -> dict[str, int]:
    """Data-quality counts of the filter."""
    return {
        "pairs_rated_orthogonality": len(rows),
        "pairs_excluded_orthogonality": len(excluded),
        "orthogonality_rater_errors": sum(1 for row in rows if row.get("error")),
        "drift_rows_excluded_orthogonality": sum(
            1 for row in drift_rows if (row["question_id"], row["stimulus_id"]) in excluded),
    }


def excluded_table(rows: list[dict], excluded: set[tuple[str, str]], drift_rows: list[dict]):
    """The report's table of excluded pairs: question, stimulus, confidence, rationale, and how
    many drift rows were left out of the statistics."""
    import pandas as pd

    columns = ["question_id", "question", "stimulus_id", "stimulus", "confidence", "rationale",
               "drift_rows_excluded"]
    counts: dict[tuple[str, str], int] = {}
    for row in drift_rows:
        key = (row["question_id"], row["stimulus_id"])
        counts[key] = counts.get(key, 0) + 1
    records = [[row["question_id"], row.get("question_text", ""), row["stimulus_id"],
                row.get("stimulus_text", ""), float(row["confidence"]), row["rationale"],
                counts.get((row["question_id"], row["stimulus_id"]), 0)]
               for row in sorted(rows, key=lambda r: r["id"])
               if (row["question_id"], row["stimulus_id"]) in excluded]
    return pd.DataFrame(records, columns=columns)
