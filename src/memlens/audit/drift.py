"""Drift stage: symbol sequences -> drift rows (stage table ``audit_drift``).

Per question the baseline is the first no-memory sample (sample 0 of ``control``). Every other
response of the question is compared with it: the extra no-memory samples give the
``control/no_perturbation`` rows (the noise floor), every perturbed sample its own row.

What enters a sequence: the labelled steps in order, with ``unlabeled`` steps left out (a step
the labeler could not place carries no symbol; both kinds of loss are counted in the report).
A response whose sequence is empty — failed call, no steps, or only unlabeled steps — is
*excluded* from drift and counted, rather than scored as the empty sequence (which would score
1 and confuse "the model ignored the format" with "the memory changed the reasoning"). A
question whose baseline is unusable contributes no rows; it is counted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memlens.ontology.schema import symbol_sequence

DRIFT_TABLE = "audit_drift"
DRIFT_COLUMNS = ["question_id", "condition_class", "category", "stimulus_id", "sample",
                 "dtw", "sri", "d_seq", "d_dist", "edit_distance"]


@dataclass
class DriftPairs:
    """Baseline / compared pairs ready for scoring, plus what was left out and why."""

    rows: list[dict] = field(default_factory=list)
    baselines: list[list[str]] = field(default_factory=list)
    compared: list[list[str]] = field(default_factory=list)
    excluded_responses: int = 0
    questions_without_baseline: list[str] = field(default_factory=list)


def drift_pairs(steps_rows: list[dict], label_rows: list[dict]) -> DriftPairs:
    """Pair every response with its question's baseline (pure; see the module docstring).

    >>> steps = [{"id": "q|c|0", "question_id": "q", "stimulus_id": "c", "sample": 0,
    ...           "condition_class": "control", "category": "no_perturbation", "status": "ok"},
    ...          {"id": "q|p|0", "question_id": "q", "stimulus_id": "p", "sample": 0,
    ...           "condition_class": "persona", "category": "age", "status": "ok"}]
    >>> labels = [{"id": "q|c|0", "labels": ["a", "b"]}, {"id": "q|p|0", "labels": ["b"]}]
    >>> pairs = drift_pairs(steps, labels)
    >>> pairs.baselines, pairs.compared, pairs.rows[0]["stimulus_id"]
    ([['a', 'b']], [['b']], 'p')
    """
    sequences = {row["id"]: symbol_sequence(row["labels"]) for row in label_rows}
    by_question: dict[str, list[dict]] = {}
    for row in steps_rows:
        by_question.setdefault(row["question_id"], []).append(row)
    pairs = DriftPairs()
    for question_id in sorted(by_question):
        rows = by_question[question_id]
        base = next((r for r in rows if r["condition_class"] == "control" and r["sample"] == 0),
                    None)
        base_seq = sequences.get(base["id"]) if base and base["status"] == "ok" else None
        if not base_seq:
            pairs.questions_without_baseline.append(question_id)
            pairs.excluded_responses += len(rows)
            continue
        for row in sorted(rows, key=lambda r: (r["stimulus_id"], r["sample"])):
            if row is base:
                continue
            seq = sequences.get(row["id"]) if row["status"] == "ok" else None
            if not seq:
                pairs.excluded_responses += 1
                continue
            pairs.rows.append({key: row[key] for key in
                               ("id", "question_id", "condition_class", "category",
                                "stimulus_id", "sample")} | {"baseline_id": base["id"]})
            pairs.baselines.append(base_seq)
            pairs.compared.append(seq)
    return pairs


def score_pairs(pairs: DriftPairs, alpha: float = 0.5) -> list[dict]:
    """Drift rows: each pair's metadata plus dtw, sri, d_seq, d_dist, edit_distance."""
    if not pairs.rows:
        return []
    from memlens.metrics import drift_batch

    scores = drift_batch(pairs.baselines, pairs.compared, alpha=alpha)
    out = []
    for i, row in enumerate(pairs.rows):
        metrics = {name: float(scores[name][i]) for name in
                   ("dtw", "sri", "d_seq", "d_dist", "edit_distance")}
        out.append({**row, **metrics, "baseline_symbols": list(pairs.baselines[i]),
                    "compared_symbols": list(pairs.compared[i])})
    return out


def run_drift(store) -> dict[str, int]:
    """Score pairs whose drift row is missing (or whose inputs changed) and store them."""
    from memlens.audit.generate import STEPS_TABLE
    from memlens.audit.labels import LABELS_TABLE

    pairs = drift_pairs(store.rows(STEPS_TABLE), store.rows(LABELS_TABLE))
    stored = {row["id"]: row for row in store.rows(DRIFT_TABLE)}
    keep = [i for i, row in enumerate(pairs.rows)
            if not _still_valid(stored.get(row["id"]), row, pairs, i)]
    todo = DriftPairs(rows=[pairs.rows[i] for i in keep],
                      baselines=[pairs.baselines[i] for i in keep],
                      compared=[pairs.compared[i] for i in keep])
    rows = score_pairs(todo)
    stale = set(stored) - {row["id"] for row in pairs.rows}
    if stale:  # inputs no longer usable (e.g. a re-labelled baseline): rebuild the table
        store.delete_table(DRIFT_TABLE)
        rows = score_pairs(pairs)
    if rows:
        store.put_rows(DRIFT_TABLE, rows)
    return {"pairs": len(pairs.rows), "scored": len(rows),
            "excluded_responses": pairs.excluded_responses,
            "questions_without_baseline": len(pairs.questions_without_baseline)}


def _still_valid(stored: dict | None, row: dict, pairs: DriftPairs, i: int) -> bool:
    """A stored drift row is reused only if it was scored from the same two sequences."""
    return (stored is not None and stored.get("baseline_id") == row["baseline_id"]
            and stored.get("baseline_symbols") == pairs.baselines[i]
            and stored.get("compared_symbols") == pairs.compared[i])
