"""A response's text is stored once in the stage tables: the steps row keeps the steps (not the
text again) and the labels row a digest of the steps (not a copy)."""

import json
from types import SimpleNamespace as NS

from memlens.audit.generate import steps_row
from memlens.audit.labels import pending_label_rows, steps_digest
from memlens.models import ChatResponse


def test_steps_row_holds_the_text_once():
    text = "\n".join(f"{k + 1}. {'word ' * 200}{k}." for k in range(1000))  # ~1 MB
    cell = NS(id="q|s|0", question=NS(id="q", text="Q?"), sample=0,
              stimulus=NS(id="s", stimulus_class="noise", category="filler", text=""))
    row = steps_row(cell, ChatResponse(text=text))
    assert "text" not in row and row["text_chars"] == len(text) and len(row["steps"]) >= 999
    assert len(json.dumps(row)) < 1.05 * len(text)


def test_labels_rows_keep_a_digest_and_old_rows_still_count():
    class Store:
        def __init__(self, labels):
            self.tables = {"audit_steps": [{"id": "a", "status": "ok", "steps": ["x", "y"]}],
                           "audit_labels": labels}

        def rows(self, table):
            return self.tables[table]

    digest = steps_digest(["x", "y"])
    assert pending_label_rows(Store([{"id": "a", "steps_sha256": digest, "labels": []}])) == []
    assert pending_label_rows(Store([{"id": "a", "steps": ["x", "y"], "labels": []}])) == []
    assert len(pending_label_rows(Store([{"id": "a", "steps_sha256": "0", "labels": []}]))) == 1
