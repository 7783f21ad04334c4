"""Agreement leaves out items a labeler could not label: two failed runs do not 'agree'."""

import pytest

from memlens.errors import MemlensError
from memlens.ontology.reliability import agreement_report


def test_unlabeled_items_are_left_out_and_counted():
    a = {"1": "x", "2": "unlabeled", "3": "y", "4": "x"}
    b = {"1": "x", "2": "unlabeled", "3": "unlabeled", "4": "y"}
    report = agreement_report({"a": a, "b": b})
    assert report["items"] == 2 and report["unlabeled"] == {"a": 1, "b": 2}
    assert report["pairs"][0]["agreement"] == 0.5  # items 1 (x/x) and 4 (x/y)


def test_two_failed_runs_have_no_agreement():
    failed = {str(k): "unlabeled" for k in range(5)}
    with pytest.raises(MemlensError, match="no item was labeled by every labeler"):
        agreement_report({"a": failed, "b": dict(failed)})
