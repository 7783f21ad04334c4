"""Data-quality counts of an audit: what could not be measured, and why (SPEC §1.4, §1.8)."""

from __future__ import annotations

from collections import Counter


def data_quality(steps_rows: list[dict], label_rows: list[dict], drift_rows: list[dict],
                 unlabeled: str = "unlabeled", baselines: int = 1) -> dict[str, int]:
    """Counts for the report's data-quality table (pure).

    >>> steps = [{"id": "a", "status": "ok", "method": "tagged", "question_id": "q"},
    ...          {"id": "b", "status": "no_steps", "method": "none", "question_id": "q"},
    ...          {"id": "c", "status": "failed_call", "method": "none", "question_id": "q"}]
    >>> labels = [{"id": "a", "labels": ["x", "unlabeled"]}]
    >>> q = data_quality(steps, labels, [])
    >>> q["responses"], q["failed_calls"], q["responses_without_steps"], q["unlabeled_steps"]
    (3, 1, 1, 1)
    """
    status = Counter(row["status"] for row in steps_rows)
    methods = Counter(row.get("method", "none") for row in steps_rows if row["status"] != "failed_call")
    labels = [label for row in label_rows for label in row["labels"]]
    all_unlabeled = sum(1 for row in label_rows
                        if row["labels"] and all(x == unlabeled for x in row["labels"]))
    questions = {row["question_id"] for row in steps_rows}
    measured = {row["question_id"] for row in drift_rows}
    # K = 1: every response but each question's one baseline is compared; K >= 2: all are
    compared = len(steps_rows) - (len(questions) if baselines == 1 else 0)
    quality = {
        "questions": len(questions),
        "responses": len(steps_rows),
        "failed_calls": status["failed_call"],
        "responses_without_steps": status["no_steps"],
        "responses_with_steps": status["ok"],
        "steps": len(labels),
        "unlabeled_steps": sum(1 for x in labels if x == unlabeled),
        "responses_all_steps_unlabeled": all_unlabeled,
        "drift_rows": len(drift_rows),
        "responses_excluded_from_drift": max(compared - len(drift_rows), 0),
        "questions_without_drift_rows": len(questions - measured),
    }
    quality.update({f"step_split_{method}": count for method, count in sorted(methods.items())})
    return quality


def segmentation_drift(steps_rows: list[dict], pair_rows: list[dict],
                       metric: str = "dtw") -> dict[str, float | int]:
    """Drift of pairs whose two responses were split the same way (both tagged, both
    paragraphs, …) vs differently — segmentation itself is a source of drift. Reported for all
    pairs and for the floor pairs alone (two no-memory samples), with n.

    >>> steps = [{"id": "a", "method": "tagged"}, {"id": "b", "method": "tagged"},
    ...          {"id": "c", "method": "sentences"}]
    >>> pairs = [{"response_id": "b", "baseline_id": "a", "dtw": 0.2, "condition_class": "control"},
    ...          {"response_id": "c", "baseline_id": "a", "dtw": 0.6, "condition_class": "noise"}]
    >>> out = segmentation_drift(steps, pairs)
    >>> out["same_split_pairs"], out["same_split_mean_dtw"], out["different_split_mean_dtw"]
    (1, 0.2, 0.6)
    """
    method = {row["id"]: row.get("method", "none") for row in steps_rows}
    groups: dict[str, list[float]] = {"same": [], "different": [], "floor_same": [],
                                      "floor_different": []}
    for row in pair_rows:
        kind = "same" if method.get(row["response_id"]) == method.get(row["baseline_id"]) \
            else "different"
        groups[kind].append(float(row[metric]))
        if row.get("condition_class") == "control":
            groups["floor_" + kind].append(float(row[metric]))
    out: dict[str, float | int] = {}
    for kind, values in groups.items():
        out[f"{kind}_split_pairs"] = len(values)
        out[f"{kind}_split_mean_{metric}"] = (round(sum(values) / len(values), 4) if values
                                             else None)
    return out
