"""A tiny audit with the real embedded model (SmolLM2) and the real embedded labeler (MiniLM)."""

import pytest

from memlens.audit import build_config, run_audit


@pytest.mark.embedded
def test_tiny_real_audit(tmp_path):
    config = build_config({"model": "embedded", "labeler": "embedded", "n_questions": 1,
                           "stimulus_categories": ["age"], "stimuli_per_category": 1,
                           "max_tokens": 32, "n_bootstrap": 100, "seed": 1,
                           "baselines": 2})
    result = run_audit(config, tmp_path / "run", progress=False)
    quality = result.quality
    assert quality["responses"] == 3 and quality["failed_calls"] == 0
    assert quality["responses_with_steps"] + quality["responses_without_steps"] == 3
    # two no-memory baselines and one persona response: every response has a drift row or
    # is counted as excluded; a usable response has one pair per other usable baseline
    assert result.drift["responses"] + result.drift["excluded_responses"] == 3
    assert result.drift["pairs"] <= 4
    # one question, no noise condition: the statistics refuse clearly, nothing is lost
    assert result.stats is None and result.stats_error
    from memlens.report import build_report  # the audit never builds the report itself

    html = build_report(tmp_path / "run").read_text()
    assert "validity: not computed" in html
    again = run_audit(config, tmp_path / "run", progress=False)
    assert again.calls["pending"] == 0 and again.labels["responses"] == 0
