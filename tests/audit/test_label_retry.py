"""A labeler call that failed for good is retried by the next run and counted as a failure
(it used to be stored as all-unlabeled for good, and the exit code ignored it)."""

import json

from memlens.audit.generate import STEPS_TABLE
from memlens.audit.labels import LABELS_TABLE, pending_label_rows, run_labeling
from memlens.models import FakeModel, ModelCallError
from memlens.ontology import load_ontology
from memlens.ontology.llm_labeler import LLMLabeler
from memlens.store import RunStore

ONTOLOGY = load_ontology()
SYMBOL = ONTOLOGY.symbol_ids[0]


def steps_row(ident, steps):
    return {"id": ident, "question_id": "q", "stimulus_id": "s", "sample": 0, "status": "ok",
            "condition_class": "persona", "category": "age", "steps": steps, "method": "tagged"}


def test_failed_label_call_is_retried_and_counted(tmp_path):
    healthy = {"up": False}

    def reply(messages, params):
        if not healthy["up"] and "second" in messages[-1]["content"]:
            raise ModelCallError("HTTP 503: overloaded", 3)
        n = messages[-1]["content"].count("Step ")
        return json.dumps({"labels": [{"step": k, "label": SYMBOL} for k in range(1, n + 1)]})

    with RunStore(tmp_path / "run") as store:
        store.put_rows(STEPS_TABLE, [steps_row("a", ["first step"]),
                                     steps_row("b", ["second step", "more"])])
        labeler = LLMLabeler(FakeModel(replies=reply), ONTOLOGY)
        counts = run_labeling(store, lambda: labeler, progress=False)
        assert counts["responses"] == 2 and counts["failed"] == 1
        rows = {row["id"]: row for row in store.rows(LABELS_TABLE)}
        assert rows["a"]["status"] == "ok" and rows["a"]["labels"] == [SYMBOL]
        assert rows["b"]["status"] == "failed_call" and rows["b"]["labels"] == ["unlabeled"] * 2
        assert [row["id"] for row in pending_label_rows(store)] == ["b"]
        healthy["up"] = True
        again = run_labeling(store, lambda: labeler, progress=False)
        assert again["responses"] == 1 and again["failed"] == 0
        assert store.rows(LABELS_TABLE)[1]["labels"] == [SYMBOL, SYMBOL]
        assert pending_label_rows(store) == []
