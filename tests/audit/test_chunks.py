"""Chunked drift (memlens.audit.chunks) gives exactly the tables of the whole-store run_drift,
on a fresh run, a resume, and after a re-labelled baseline (the stale-pair rebuild)."""

import random

import pytest

from memlens.audit.chunks import StageRows, drift_chunk
from memlens.audit.drift import DRIFT_TABLE, PAIRS_TABLE, run_drift
from memlens.audit.generate import STEPS_TABLE, pending_cells
from memlens.audit.labels import LABELS_TABLE, pending_label_rows, steps_digest
from memlens.store import RunStore

SYMBOLS = ["A", "B", "C", "D"]
CTRL = "control/no_perturbation"


def design(questions=5, seed=3):
    rng = random.Random(seed)
    steps, labels = [], []
    for q in range(questions):
        cells = [(CTRL, s, "control", "no_perturbation") for s in range(3)]
        cells += [(f"persona/age/{v}", 0, "persona", "age") for v in range(2)]
        for stimulus, sample, cls, cat in cells:
            rid = f"q{q}|{stimulus}|{sample}"
            n = rng.randint(1, 5)
            steps.append({"id": rid, "question_id": f"q{q}", "stimulus_id": stimulus,
                          "sample": sample, "condition_class": cls, "category": cat,
                          "status": "ok", "steps": [f"s{i}" for i in range(n)]})
            labels.append({"id": rid, "labels": [rng.choice(SYMBOLS) for _ in range(n)],
                           "steps_sha256": steps_digest(steps[-1]["steps"])})
    return steps, labels


def tables(store):
    return ({r["id"]: r for r in store.rows(PAIRS_TABLE)},
            {r["id"]: r for r in store.rows(DRIFT_TABLE)})


def chunked(store, groups, baselines):
    state = StageRows.load(store)
    totals: dict[str, int] = {}
    for group in groups:
        for key, value in drift_chunk(store, state, group, baselines).items():
            totals[key] = totals.get(key, 0) + value
    return totals


@pytest.mark.parametrize("baselines", [1, 2])
def test_chunks_equal_the_whole_store_drift(tmp_path, baselines):
    steps, labels = design()
    groups = [["q0", "q1"], ["q2"], ["q3", "q4"]]
    with RunStore(tmp_path / "whole") as whole, RunStore(tmp_path / "chunks") as parts:
        for store in (whole, parts):
            store.put_rows(STEPS_TABLE, steps)
            store.put_rows(LABELS_TABLE, labels)
        counts = run_drift(whole, baselines)
        assert chunked(parts, groups, baselines) == counts
        assert tables(parts) == tables(whole)
        assert chunked(parts, groups, baselines)["scored"] == 0  # a resume scores nothing
        # a re-labelled baseline leaves q2's old pairs stale: both paths rebuild the tables
        relabelled = {"id": f"q2|{CTRL}|0", "labels": ["unlabeled"]}
        for store in (whole, parts):
            store.put_rows(LABELS_TABLE, [relabelled])
        run_drift(whole, baselines)
        chunked(parts, groups, baselines)
        pairs_whole, drift_whole = tables(whole)
        assert tables(parts) == (pairs_whole, drift_whole)
        assert not any(key.startswith(f"q2|{CTRL}|0") for key in drift_whole)


def test_pending_lookups_from_memory_match_the_store_reads(tmp_path):
    steps, labels = design(questions=3)
    steps[1] = {**steps[1], "status": "failed_call"}
    labels = [row for row in labels if row["id"] != steps[4]["id"]]  # steps[1]: no "ok"
    with RunStore(tmp_path) as store:
        store.put_rows(STEPS_TABLE, steps)
        store.put_rows(LABELS_TABLE, labels)
        state = StageRows.load(store)
        from types import SimpleNamespace as NS
        cells = [NS(id=row["id"]) for row in steps] + [NS(id="new|cell|0")]
        assert pending_cells(cells, store, state.steps) == pending_cells(cells, store)
        assert [c.id for c in pending_cells(cells, store, state.steps)] == [
            steps[1]["id"], "new|cell|0"]
        memory = pending_label_rows(store, state.steps_of(["q0", "q1", "q2"]), state.labels)
        assert memory == pending_label_rows(store)
        assert [row["id"] for row in memory] == [steps[4]["id"]]
