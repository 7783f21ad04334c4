"""Agreement leaves out items no labeler could label: two failed runs do not 'agree'."""

import pytest

from memlens.errors import MemlensError
from memlens.ontology.reliability import agreement_report


def test_unlabeled_items_are_left_out_and_counted():
    a = {"1": "x", "2": "unlabeled", "3": "y", "4": "x"}
    b = {"1": "x", "2": "unlabeled", "3": "unlabeled", "4": "y"}
    report = agreement_report({"a": a, "b": b})
    # item 2: unlabeled by both, left out; item 3: labeled by one only, a disagreement
    assert report["items"] == 3 and report["unlabeled"] == {"a": 1, "b": 2}
    assert report["pairs"][0]["agreement"] == pytest.approx(1 / 3)  # only item 1 (x/x)


def test_two_failed_runs_have_no_agreement():
    failed = {str(k): "unlabeled" for k in range(5)}
    with pytest.raises(MemlensError, match="no item was labeled by any labeler"):
        agreement_report({"a": failed, "b": dict(failed)})
