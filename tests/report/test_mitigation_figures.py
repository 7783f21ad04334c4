"""The drift-versus-capability figure of ``memlens mitigate eval``, drawn in ``report``."""

import math

import pandas as pd
import pytest

from memlens.report.mitigation_figures import (
    capability_score,
    drift_capability_figure,
    pooled_capability,
)


def test_pooled_capability_sums_hits_and_items():
    # MMLU 0.5 of 20 = 10 hits, GSM8K 0.25 of 20 = 5 hits: 15 / 40 with a Wilson interval
    score, low, high, n, label = pooled_capability(
        {"MMLU": 0.5, "MMLU_n": 20, "GSM8K": 0.25, "GSM8K_n": 20})
    assert (score, n) == (0.375, 40) and label.startswith("pooled capability (MMLU, GSM8K)")
    z = 1.959963984540054
    centre = (0.375 + z * z / 80) / (1 + z * z / 40)
    half = z * math.sqrt(0.375 * 0.625 / 40 + z * z / 6400) / (1 + z * z / 40)
    assert (low, high) == pytest.approx((centre - half, centre + half), abs=1e-9)
    assert pooled_capability({"Helpfulness": 4}) is None
    assert capability_score({"Diversity": 0.3}) == (0.3, "lexical diversity")


def test_figure_files_are_written_with_labels(tmp_path):
    frame = pd.DataFrame([
        {"model": "base-model", "fingerprint": "abc123", "DTW": 0.42, "DTW_lo": 0.35,
         "DTW_hi": 0.5, "DTW_n": 30, "MMLU": 0.5, "MMLU_n": 20},
        {"model": "tuned", "fingerprint": None, "DTW": 0.3, "DTW_lo": 0.2, "DTW_hi": 0.38,
         "DTW_n": 30, "MMLU": 0.45, "MMLU_n": 20}])
    written = drift_capability_figure(frame, tmp_path / "drift_vs_capability")
    assert [path.name for path in written] == ["drift_vs_capability.png",
                                               "drift_vs_capability.svg"]
    assert written[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = written[1].read_text()
    for text in ("base-model [abc123] n=30", "tuned n=30", "Drift versus capability"):
        assert text in svg
