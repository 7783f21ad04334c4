"""The examples in docs/metrics.md run and show the values the metrics return."""

import doctest
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def test_metrics_doc_examples():
    result = doctest.testfile(str(DOC), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 8
    assert result.failed == 0
