"""``class_drift()``: an inspect metric giving the mean DTW drift per condition class.

It pairs the scored samples exactly as memlens's drift stage does (``memlens.audit.drift``:
every response with each no-memory baseline of its question, mean over the baselines) and
averages the responses' DTW per class: ``control`` is the noise floor. It is a summary for
``inspect view``; the statistics (floor, d_rel with bootstrap CIs, BH, the validity verdict)
come from ``memlens import-inspect`` and ``memlens report``.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, metric

from memlens.audit.drift import aggregate_pairs, drift_pairs, score_pairs

CLASSES = ("control", "noise", "persona", "life_event")


def drift_by_class(metadata: list[dict], baselines: int) -> dict[str, float]:
    """``{<class>_dtw: mean, <class>_n: responses}`` from scorer metadata (pure).

    >>> rows = [{"cell_id": f"q|c|{k}", "question_id": "q", "stimulus_id": "c", "sample": k,
    ...          "condition_class": "control", "category": "no_perturbation",
    ...          "symbols": list(s)} for k, s in enumerate(["ab", "ab"])]
    >>> rows.append({"cell_id": "q|p|0", "question_id": "q", "stimulus_id": "p", "sample": 0,
    ...              "condition_class": "persona", "category": "age", "symbols": ["a", "c"]})
    >>> drift_by_class(rows, 2)  # ac vs ab: one substitution in two steps
    {'control_dtw': 0.0, 'control_n': 2, 'persona_dtw': 0.5, 'persona_n': 1}
    """

    steps = [{"id": m["cell_id"], "question_id": m["question_id"],
              "stimulus_id": m["stimulus_id"], "sample": m["sample"],
              "condition_class": m["condition_class"], "category": m["category"],
              "status": "ok" if m.get("symbols") else "no_steps"} for m in metadata]
    labels = [{"id": m["cell_id"], "labels": m.get("symbols") or []} for m in metadata]
    rows = aggregate_pairs(score_pairs(drift_pairs(steps, labels, baselines)))
    out: dict[str, float] = {}
    for klass in CLASSES:
        values = [row["dtw"] for row in rows if row["condition_class"] == klass]
        if values:
            out[f"{klass}_dtw"] = sum(values) / len(values)
            out[f"{klass}_n"] = len(values)
    return out


@metric
def class_drift() -> Metric:
    """Mean DTW drift from the no-memory baselines per condition class (``control`` = floor)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        metadata = [s.score.metadata for s in scores if s.score.metadata
                    and "cell_id" in s.score.metadata]
        if not metadata:
            return {}
        return drift_by_class(metadata, int(metadata[0].get("baselines") or 1))

    return compute
