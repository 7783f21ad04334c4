"""Every stage row the audit writes has exactly the keys its TypedDict declares (a renamed key
fails here, not at run time in the report)."""

from types import SimpleNamespace as NS

from memlens.audit.drift import DriftRow, PairRow, aggregate_pairs, drift_pairs, score_pairs
from memlens.audit.generate import StepsRow, steps_row
from memlens.audit.labels import LABELS_TABLE, LabelsRow, run_labeling
from memlens.models import ChatResponse, ModelCallError
from memlens.store import RunStore


def check(row: dict, kind) -> None:
    keys = set(row)
    assert kind.__required_keys__ <= keys, kind.__required_keys__ - keys
    assert keys <= kind.__required_keys__ | kind.__optional_keys__, \
        keys - kind.__required_keys__ - kind.__optional_keys__


def cell(q, stimulus, cls, sample=0):
    return NS(id=f"{q}|{stimulus}|{sample}", question=NS(id=q, text="Rent or buy?"),
              stimulus=NS(id=stimulus, stimulus_class=cls, category="c", text="memory"),
              sample=sample)


def test_steps_labels_pairs_and_drift_rows_match_their_types(tmp_path):
    reply = "<think><step_1>We weigh cost.</step_1><step_2>Then safety.</step_2></think>"
    steps = [steps_row(cell("q", "ctrl", "control"), ChatResponse(text=reply)),
             steps_row(cell("q", "p", "persona"), ChatResponse(text=reply)),
             steps_row(cell("q", "n", "noise"), ModelCallError("HTTP 500"))]
    for row in steps:
        check(row, StepsRow)
    with RunStore(tmp_path) as store:
        store.put_rows("audit_steps", steps)

        class Labeler:
            def label(self, responses):
                return [["A", "B"][:len(r)] for r in responses]

        run_labeling(store, Labeler, progress=False)
        labels = store.rows(LABELS_TABLE)
    assert len(labels) == 2
    for row in labels:
        check(row, LabelsRow)
    pairs = score_pairs(drift_pairs(steps, labels))
    assert pairs
    for row in pairs:
        check(row, PairRow)
    for row in aggregate_pairs(pairs):
        check(row, DriftRow)
