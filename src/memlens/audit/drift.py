"""Drift stage: symbol sequences -> drift rows (stage tables ``audit_drift_pairs``, ``audit_drift``).

**Baselines.** Per question the baselines are the no-memory samples ``0..K-1`` (``K`` =
``AuditConfig.baselines``). Every response of the question is compared with every usable
baseline other than itself, one *pair row* each (``audit_drift_pairs``, kept so nothing is
lost); its *drift row* (``audit_drift``, what the statistics read) carries the mean of its pair
metrics over those baselines and ``n_baselines``. So:

* a perturbed response's drift is its mean drift from the K baselines;
* a no-memory sample's drift (``control/no_perturbation`` rows, the **noise floor**) is its mean
  drift from the other K − 1 baselines; the mean of a question's floor rows is the mean drift over
  all pairs of its no-memory samples;
* K = 1 is the paper's design: sample 0 is the one baseline, and the extra no-memory samples
  ``1..n`` give the floor rows (drift from sample 0), exactly as before.

What enters a sequence: the labelled steps in order, with ``unlabeled`` steps left out (a step
the labeler could not place carries no symbol; both kinds of loss are counted in the report).
A response whose sequence is empty — failed call, no steps, or only unlabeled steps — is
*excluded* from drift and counted, rather than scored as the empty sequence (which would score
1 and confuse "the model ignored the format" with "the memory changed the reasoning"). A
question without a usable baseline contributes no rows; it is counted too.

**Answer drift.** After the chunks, :func:`attach_answer_metrics` adds :data:`ANSWER_METRICS`
to every pair whose two responses have an answers row, and their means to the drift rows (a
metric is on a drift row only when every pair of the response has it), so the floor / d_rel
statistics treat them like any drift metric (:func:`frame_columns`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

from memlens.audit.answers import ANSWERS_TABLE, run_answers, unpack_vector
from memlens.audit.generate import STEPS_TABLE
from memlens.audit.labels import LABELS_TABLE
from memlens.ontology.schema import symbol_sequence
from memlens.rowkeys import join_key
from memlens.store.rowtypes import declare_row_type

DRIFT_TABLE = "audit_drift"
PAIRS_TABLE = "audit_drift_pairs"
METRICS = ("dtw", "sri", "d_seq", "d_dist", "edit_distance")
META = ("question_id", "condition_class", "category", "stimulus_id", "sample")
DRIFT_COLUMNS = [*META[:-1], "sample", *METRICS, "n_baselines"]
ANSWER_METRICS = ("answer_cosine", "answer_length_ratio", "answer_hedging", "answer_refusal")
"""Answer drift of a (response, baseline) pair (``memlens.audit.answers``): cosine distance
1 − cos of the MiniLM embeddings of the two final answers (both empty 0, one empty 1); length
ratio (words + 1) / (baseline words + 1); and the change of the hedging / refusal markers
(response − baseline: −1, 0 or 1). Drift rows carry their means over the baselines."""


@dataclass
class DriftPairs:
    """(response, baseline) pairs ready for scoring, plus what was left out and why."""

    rows: list[dict] = field(default_factory=list)
    baselines: list[list[str]] = field(default_factory=list)
    compared: list[list[str]] = field(default_factory=list)
    excluded_responses: int = 0
    questions_without_baseline: list[str] = field(default_factory=list)


def drift_pairs(steps_rows: list[dict], label_rows: list[dict], baselines: int = 1) -> DriftPairs:
    """Pair every response with each usable baseline of its question (pure; see the module
    docstring). Pair ids are ``join_key(response_id, baseline_id)``.

    >>> steps = [{"id": "q|c|0", "question_id": "q", "stimulus_id": "c", "sample": 0,
    ...           "condition_class": "control", "category": "no_perturbation", "status": "ok"},
    ...          {"id": "q|p|0", "question_id": "q", "stimulus_id": "p", "sample": 0,
    ...           "condition_class": "persona", "category": "age", "status": "ok"}]
    >>> labels = [{"id": "q|c|0", "labels": ["a", "b"]}, {"id": "q|p|0", "labels": ["b"]}]
    >>> pairs = drift_pairs(steps, labels)
    >>> pairs.baselines, pairs.compared, pairs.rows[0]["response_id"]
    ([['a', 'b']], [['b']], 'q|p|0')
    """
    if baselines < 1:
        raise ValueError("baselines must be at least 1")
    sequences = {row["id"]: symbol_sequence(row["labels"]) for row in label_rows}
    by_question: dict[str, list[dict]] = {}
    for row in steps_rows:
        by_question.setdefault(row["question_id"], []).append(row)
    pairs = DriftPairs()

    def usable(row: dict) -> list[str] | None:
        """The response's symbol sequence, or None when it cannot enter drift."""
        return (sequences.get(row["id"]) or None) if row["status"] == "ok" else None

    for question_id in sorted(by_question):
        rows = sorted(by_question[question_id], key=lambda r: (r["stimulus_id"], r["sample"]))
        bases = [(row, usable(row)) for row in rows
                 if row["condition_class"] == "control" and row["sample"] < baselines]
        bases = [(row, seq) for row, seq in sorted(bases, key=lambda b: b[0]["sample"]) if seq]
        if not bases:
            pairs.questions_without_baseline.append(question_id)
            pairs.excluded_responses += len(rows)
            continue
        for row in rows:
            seq = usable(row)
            partners = [(base, base_seq) for base, base_seq in bases if base["id"] != row["id"]]
            if not seq or not partners:
                if not (baselines == 1 and row is bases[0][0]):  # the lone paper baseline
                    pairs.excluded_responses += 1
                continue
            for base, base_seq in partners:
                pairs.rows.append({key: row[key] for key in META}
                                  | {"id": join_key(row["id"], base["id"]),
                                     "response_id": row["id"], "baseline_id": base["id"]})
                pairs.baselines.append(base_seq)
                pairs.compared.append(seq)
    return pairs


def score_pairs(pairs: DriftPairs, alpha: float = 0.5) -> list[dict]:
    """Pair rows: each pair's metadata plus dtw, sri, d_seq, d_dist, edit_distance."""
    if not pairs.rows:
        return []
    from memlens.metrics import drift_batch  # lazy: pulls numba

    scores = drift_batch(pairs.baselines, pairs.compared, alpha=alpha)
    out = []
    for i, row in enumerate(pairs.rows):
        metrics = {name: float(scores[name][i]) for name in METRICS}
        out.append({**row, **metrics, "baseline_symbols": list(pairs.baselines[i]),
                    "compared_symbols": list(pairs.compared[i])})
    return out


def aggregate_pairs(pair_rows: list[dict]) -> list[dict]:
    """Drift rows: one per response, its metrics averaged over its baselines.

    Each row keeps ``n_baselines``, ``baseline_ids`` and, for the trajectory viewer, the first
    baseline's ``baseline_id`` and symbol sequences. Ordered by response id.

    >>> rows = aggregate_pairs([
    ...     {"response_id": "r", "baseline_id": "b0", "question_id": "q", "condition_class": "persona",
    ...      "category": "age", "stimulus_id": "p", "sample": 0, "dtw": 0.5, "sri": 0.2, "d_seq": 0.5,
    ...      "d_dist": 0.1, "edit_distance": 1.0, "baseline_symbols": ["a"], "compared_symbols": ["b"]},
    ...     {"response_id": "r", "baseline_id": "b1", "question_id": "q", "condition_class": "persona",
    ...      "category": "age", "stimulus_id": "p", "sample": 0, "dtw": 0.0, "sri": 0.0, "d_seq": 0.0,
    ...      "d_dist": 0.0, "edit_distance": 0.0, "baseline_symbols": ["b"], "compared_symbols": ["b"]}])
    >>> rows[0]["dtw"], rows[0]["n_baselines"], rows[0]["baseline_id"]
    (0.25, 2, 'b0')
    """
    by_response: dict[str, list[dict]] = {}
    for row in pair_rows:
        by_response.setdefault(row["response_id"], []).append(row)
    out = []
    for response_id in sorted(by_response):
        group = sorted(by_response[response_id], key=lambda r: r["baseline_id"])
        first = group[0]
        row = {key: first[key] for key in META} | {"id": response_id}
        row |= {name: sum(float(r[name]) for r in group) / len(group) for name in METRICS}
        row |= {"n_baselines": len(group), "baseline_ids": [r["baseline_id"] for r in group],
                "baseline_id": first["baseline_id"],
                "baseline_symbols": first["baseline_symbols"],
                "compared_symbols": first["compared_symbols"]}
        out.append(row)
    return out


def run_drift(store, baselines: int = 1) -> dict[str, int]:
    """Score pairs whose pair row is missing (or whose inputs changed), store them, and rebuild
    the drift rows of the responses they touch."""

    pairs = drift_pairs(store.rows(STEPS_TABLE), store.rows(LABELS_TABLE), baselines)
    stored = {row["id"]: row for row in store.rows(PAIRS_TABLE)}
    todo_index = [i for i, row in enumerate(pairs.rows)
                  if not _still_valid(stored.get(row["id"]), pairs, i)]
    todo = DriftPairs(rows=[pairs.rows[i] for i in todo_index],
                      baselines=[pairs.baselines[i] for i in todo_index],
                      compared=[pairs.compared[i] for i in todo_index])
    scored = score_pairs(todo)
    current = {row["id"] for row in pairs.rows}
    stale_pairs = set(stored) - current
    if stale_pairs:  # inputs no longer usable (e.g. a re-labelled baseline): rebuild both tables
        store.delete_table(PAIRS_TABLE)
        store.delete_table(DRIFT_TABLE)
        scored = score_pairs(pairs)
    if scored:
        store.put_rows(PAIRS_TABLE, scored)
        touched = {row["response_id"] for row in scored}
        all_pairs = {**{k: v for k, v in stored.items() if k in current},
                     **{row["id"]: row for row in scored}}
        rows = aggregate_pairs([row for row in all_pairs.values()
                                if row["response_id"] in touched])
        store.put_rows(DRIFT_TABLE, rows)
    responses = len({row["response_id"] for row in pairs.rows})
    return {"pairs": len(pairs.rows), "responses": responses, "scored": len(scored),
            "excluded_responses": pairs.excluded_responses,
            "questions_without_baseline": len(pairs.questions_without_baseline)}


def _still_valid(stored: dict | None, pairs: DriftPairs, i: int) -> bool:
    """A stored pair row is reused only if it was scored from the same two sequences."""
    return (stored is not None and stored.get("baseline_symbols") == pairs.baselines[i]
            and stored.get("compared_symbols") == pairs.compared[i])


def answer_pair_metrics(response: dict, baseline: dict, vectors: dict) -> dict[str, float]:
    """The :data:`ANSWER_METRICS` of one pair from two answers rows (``vectors``: id -> unit
    vector or None). ``answer_cosine`` is left out when an embedding is missing.

    >>> r = {"id": "r", "words": 3, "hedged": True, "refused": False}
    >>> b = {"id": "b", "words": 1, "hedged": False, "refused": False}
    >>> answer_pair_metrics(r, b, {"r": None, "b": None})
    {'answer_length_ratio': 2.0, 'answer_hedging': 1.0, 'answer_refusal': 0.0}
    """
    out: dict[str, float] = {}
    empty_r, empty_b = not response.get("words"), not baseline.get("words")
    vec_r, vec_b = vectors.get(response["id"]), vectors.get(baseline["id"])
    if empty_r or empty_b:
        out["answer_cosine"] = 0.0 if empty_r and empty_b else 1.0
    elif vec_r is not None and vec_b is not None:
        out["answer_cosine"] = float(min(2.0, max(0.0, 1.0 - float(vec_r @ vec_b))))
    out["answer_length_ratio"] = (float(response.get("words", 0)) + 1.0) / (
        float(baseline.get("words", 0)) + 1.0)
    out["answer_hedging"] = float(bool(response.get("hedged"))) - float(bool(baseline.get("hedged")))
    out["answer_refusal"] = float(bool(response.get("refused"))) - float(bool(baseline.get("refused")))
    return out


def attach_answer_metrics(store) -> dict[str, int]:
    """Add the answer metrics to pair rows and drift rows (see the module docstring); writes
    only the rows whose values change, so a finished audit's re-run writes nothing."""
    answers = {row["id"]: row for row in store.rows(ANSWERS_TABLE)}
    vectors = {rid: unpack_vector(row["embedding"]) if row.get("embedding") else None
               for rid, row in answers.items()}
    pair_rows, changed = store.rows(PAIRS_TABLE), []
    by_response: dict[str, list[dict]] = {}
    for row in pair_rows:
        response, baseline = answers.get(row["response_id"]), answers.get(row["baseline_id"])
        key = (f"{response['text_sha256']}|{baseline['text_sha256']}|"
               f"{vectors[response['id']] is not None}{vectors[baseline['id']] is not None}"
               if response and baseline else None)
        if row.get("answer_key") != key:
            row = {k: v for k, v in row.items() if k not in ANSWER_METRICS} | {"answer_key": key}
            if key is not None:
                row |= answer_pair_metrics(response, baseline, vectors)
            changed.append(row)
        by_response.setdefault(row["response_id"], []).append(row)
    if changed:
        store.put_rows(PAIRS_TABLE, changed)
    drift_changed = []
    for row in store.rows(DRIFT_TABLE):
        group = by_response.get(row["id"], [])
        want = {name: sum(float(r[name]) for r in group) / len(group)
                for name in ANSWER_METRICS if group and all(name in r for r in group)}
        have = {name: row[name] for name in ANSWER_METRICS if name in row}
        if want != have:
            drift_changed.append({k: v for k, v in row.items() if k not in ANSWER_METRICS} | want)
    if drift_changed:
        store.put_rows(DRIFT_TABLE, drift_changed)
    return {"pairs_scored": len(changed), "drift_rows_updated": len(drift_changed)}


def run_answer_drift(store, *, encoder="default") -> dict[str, int]:
    """The answer stage of an audit: answers rows for new responses, then the answer metrics
    on pair and drift rows (:func:`attach_answer_metrics`)."""
    counts = run_answers(store, encoder=encoder)
    return {f"answers_{key}": value for key, value in counts.items()} | attach_answer_metrics(store)


def frame_columns(rows: list[dict]) -> list[str]:
    """Columns of the drift frame: :data:`DRIFT_COLUMNS` plus each answer metric that every row
    carries (an audit from before answer drift, or one still running, has none)."""
    return [*DRIFT_COLUMNS, *(name for name in ANSWER_METRICS
                              if rows and all(name in row for row in rows))]


class _CellMetrics(TypedDict):
    """The fields a pair row and a drift row share: the response's cell and its metrics."""

    id: str
    question_id: str
    condition_class: str
    category: str
    stimulus_id: str
    sample: int
    dtw: float
    sri: float
    d_seq: float
    d_dist: float
    edit_distance: float
    baseline_id: str
    baseline_symbols: list[str]
    compared_symbols: list[str]


class _AnswerMetrics(TypedDict, total=False):
    """Answer drift (``attach_answer_metrics``); absent in audits from before answer drift."""

    answer_cosine: float
    answer_length_ratio: float
    answer_hedging: float
    answer_refusal: float


class _PairRequired(_CellMetrics):
    """``id`` is ``join_key(response_id, baseline_id)``."""

    response_id: str


class PairRow(_PairRequired, _AnswerMetrics, total=False):
    """One ``audit_drift_pairs`` row: a (response, baseline) pair and its metrics."""

    answer_key: str | None
    """The two answers the answer metrics were computed from."""


class _DriftRequired(_CellMetrics):
    """``id`` is the response id; ``baseline_id`` the first baseline (the viewer shows it)."""

    n_baselines: int
    baseline_ids: list[str]


class DriftRow(_DriftRequired, _AnswerMetrics, total=False):
    """One ``audit_drift`` row: a response's metrics averaged over its baselines (what the
    statistics read)."""

    excluded_orthogonality: bool
    """Flagged by the orthogonality filter: left out of the statistics."""


declare_row_type(PAIRS_TABLE, PairRow)  # checked on every read (memlens.store.rowtypes)
declare_row_type(DRIFT_TABLE, DriftRow)
