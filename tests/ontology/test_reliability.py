"""Agreement across label sets, repeat agreement and definition robustness."""

import pytest
from sklearn.metrics import cohen_kappa_score

from memlens.errors import MemlensError
from memlens.ontology import load_ontology
from memlens.ontology.reliability import (
    agreement_report,
    definition_robustness,
    format_report,
    repeat_agreement,
)


class ScriptedLabeler:
    labeler_id = "scripted"

    def __init__(self, labels):
        self.labels = labels

    def label(self, responses):
        flat = iter(self.labels)
        return [[next(flat) for _ in steps] for steps in responses]


def test_agreement_report_on_shared_ids():
    a = {"1": "x", "2": "y", "3": "x", "4": "z"}
    b = {"1": "x", "2": "x", "3": "x", "5": "y"}
    c = {"1": "x", "2": "y", "3": "y", "4": "z"}
    report = agreement_report({"a": a, "b": b, "c": c})
    assert report["items"] == 3 and report["dropped"] == {"a": 1, "b": 1, "c": 1}
    ab = report["pairs"][0]
    assert ab["agreement"] == pytest.approx(2 / 3)
    assert ab["cohen_kappa"] == pytest.approx(cohen_kappa_score(["x", "y", "x"], ["x", "x", "x"]))
    # Fleiss by hand over items 1..3: P_i = 1, 1/3, 1/3 -> mean 5/9; shares x = 6/9, y = 3/9
    # -> P_e = 4/9 + 1/9 = 5/9; kappa = 0
    assert report["fleiss_kappa"] == pytest.approx(0.0, abs=1e-12)
    assert "mean pairwise agreement" in format_report(report)


def test_agreement_report_errors():
    with pytest.raises(MemlensError, match="at least two"):
        agreement_report({"a": {"1": "x"}})
    with pytest.raises(MemlensError, match="share no item ids"):
        agreement_report({"a": {"1": "x"}, "b": {"2": "x"}})


def test_repeat_agreement_uses_two_seeds():
    runs = {1: ["a", "b", "c"], 2: ["a", "b", "b"]}
    seen = []

    def make(seed):
        seen.append(seed)
        return ScriptedLabeler(runs[seed])

    result = repeat_agreement(make, [["s1", "s2"], ["s3"]], seeds=(1, 2))
    assert seen == [1, 2]
    assert result["agreement"] == pytest.approx(2 / 3) and result["steps"] == 3


def test_definition_robustness_requires_same_ids():
    ontology = load_ontology()
    alt = load_ontology("driftlens-v1-alt")
    outputs = {ontology.content_hash(): ["a", "b"], alt.content_hash(): ["a", "a"]}
    result = definition_robustness(lambda o: ScriptedLabeler(outputs[o.content_hash()]),
                                   [["x", "y"]], ontology, alt)
    assert result["agreement"] == 0.5
    smaller = ontology.model_copy(update={"symbols": ontology.symbols[:3]})
    with pytest.raises(MemlensError, match="same symbol ids"):
        definition_robustness(lambda o: None, [["x"]], ontology, smaller)
