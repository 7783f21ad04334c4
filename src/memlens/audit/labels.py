"""Label stage: the steps of each usable response -> one ontology symbol per step
(stage table ``audit_labels``), in batches, each batch stored before the next starts."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import TypedDict

from memlens.audit.generate import STEPS_TABLE, StepsRow
from memlens.engine.progress import current_overall, overall_paused
from memlens.ontology import UNLABELED
from memlens.store.rowtypes import declare_row_type

LABELS_TABLE = "audit_labels"


class LabelsRow(TypedDict):
    """One ``audit_labels`` row: a symbol per step of the response with the same id."""

    id: str
    steps_sha256: str
    """``steps_digest`` of the labelled steps (labels of other steps are relabelled)."""
    labels: list[str]
    """One ontology symbol id (or ``unlabeled``) per step."""
    status: str
    """``ok``, or ``failed_call`` (the labeler's call failed: retried by the next run)."""


# checked on every read (memlens.store.rowtypes); ``status`` and the digest came in later releases
declare_row_type(LABELS_TABLE, LabelsRow, required=frozenset({"id", "labels"}))


def steps_digest(steps: list[str]) -> str:
    """sha256 of a response's steps: a labels row records it instead of a copy of the steps."""
    return hashlib.sha256(json.dumps(steps, ensure_ascii=False).encode()).hexdigest()


def _labelled_digest(row: dict) -> str:
    """The steps digest of a stored labels row (older rows stored the steps themselves)."""
    return row.get("steps_sha256") or steps_digest(row.get("steps") or [])


def pending_label_rows(store, steps_rows: list[StepsRow] | None = None,
                       labelled: dict[str, LabelsRow] | None = None) -> list[StepsRow]:
    """Steps rows that have steps but no stored labels, labels for other steps, or labels
    left ``unlabeled`` by a failed labeler call (retried, like failed generation calls).

    ``steps_rows`` and ``labelled`` (labels rows by id) replace reading the whole tables (a
    chunked audit passes its chunk's rows and ``memlens.audit.chunks.StageRows.labels``).
    """
    if labelled is None:
        labelled = {row["id"]: row for row in store.rows(LABELS_TABLE)}
    pending = []
    for row in store.rows(STEPS_TABLE) if steps_rows is None else steps_rows:
        if row.get("status") != "ok":
            continue
        done = labelled.get(row["id"])
        if done is None or done.get("status") == "failed_call" \
                or _labelled_digest(done) != steps_digest(row["steps"]):
            pending.append(row)
    return pending


def run_labeling(store, make_labeler: Callable[[], object], *, batch: int = 64,
                 progress: bool = True, state=None, questions=None) -> dict[str, int]:
    """Label every pending response; returns counts of responses and steps labelled.

    ``make_labeler`` is called only when there is work, so a finished run loads no model.
    A labeler reply of the wrong length is recorded as all-``unlabeled`` (model garbage is
    recorded, never raised). With ``state`` (``memlens.audit.chunks.StageRows``) and
    ``questions`` only those questions' responses are looked at, from memory.
    """
    if state is not None:
        todo = pending_label_rows(store, state.steps_of(questions or ()), state.labels)
    else:
        todo = pending_label_rows(store)
    counts = {"responses": len(todo), "steps": sum(len(r["steps"]) for r in todo), "failed": 0}
    if not todo:
        return counts
    from tqdm import tqdm

    labeler = make_labeler()
    overall = current_overall()
    if overall is not None:
        overall.set_stage("label")
    bar = tqdm(total=len(todo), desc="label", unit="resp", disable=not progress,
               position=1 if overall is not None else None, leave=overall is None)
    for start in range(0, len(todo), batch):
        part = todo[start:start + batch]
        with overall_paused():  # an LLM labeler's calls count per response, here
            labels = labeler.label([row["steps"] for row in part])
        failed = getattr(labeler, "failed_calls", set())
        rows: list[LabelsRow] = []
        for index, (row, symbols) in enumerate(zip(part, labels, strict=True)):
            symbols = list(symbols)
            if len(symbols) != len(row["steps"]):
                symbols = [UNLABELED] * len(row["steps"])
            rows.append(LabelsRow(id=row["id"], steps_sha256=steps_digest(row["steps"]),
                                  labels=symbols,
                                  status="failed_call" if index in failed else "ok"))
        counts["failed"] += sum(index in failed for index in range(len(part)))
        store.put_rows(LABELS_TABLE, rows)
        if state is not None:
            state.add_labels(rows)
        bar.update(len(part))
        if overall is not None:
            overall.advance(len(part))
    bar.close()
    return counts
