"""How-drift sections of a run whose instrument failed: persona rows say they are not
interpretable (the verdict shown first in the report must not be contradicted further down)."""

import sys
from pathlib import Path

import pandas as pd

from memlens.report.how_drift import (
    answer_html,
    contrasts_html,
    direction_html,
    interpretable_text,
    substitutions_html,
)

sys.path.insert(0, str(Path(__file__).parents[1]))
from typed_stats import audit_stats, how_section  # noqa: E402


def _direction_rows():
    base = {"level": "root", "symbol": "Personal", "n_responses": 16, "n_questions": 16,
            "baseline_share_pct": 17.4, "perturbed_share_pct": 7.8, "shift_pp": -9.6,
            "floor_shift_pp": 0.0, "net_pp": -9.6, "ci_low": -16.6, "ci_high": -3.2,
            "p_value": 0.001, "q_value": 0.016, "significant": True, "interpretable": True}
    return [{**base, "category": "age", "condition_class": "persona"},
            {**base, "category": "job_loss", "condition_class": "life_event"},
            {**base, "category": "gender", "condition_class": "persona", "interpretable": False,
             "significant": False}]


def test_interpretable_text_names_the_reason():
    rows = pd.DataFrame(_direction_rows())
    assert list(interpretable_text(rows, persona_ok=False)) == [
        "no (instrument not valid)", "yes", "no (too few questions)"]
    assert list(interpretable_text(rows, persona_ok=True)) == [
        "yes", "yes", "no (too few questions)"]


def test_sections_of_an_invalid_run_flag_persona_rows():
    rows = _direction_rows()
    direction = direction_html(how_section(rows, n_pairs=10),
                               lambda fig, name: "figures/x.png", persona_ok=False)
    assert "no (instrument not valid)" in direction  # the banner: how_drift_sections
    subs = [{**{k: v for k, v in row.items() if k not in ("symbol", "baseline_share_pct",
                                                          "perturbed_share_pct", "shift_pp",
                                                          "floor_shift_pp")},
             "from_symbol": "Protective", "to_symbol": "Social", "count": 25, "rate_pct": 5.4,
             "floor_rate_pct": 3.7} for row in rows]
    assert "no (instrument not valid)" in substitutions_html(how_section(subs), persona_ok=False)
    assert "no (instrument not valid)" not in substitutions_html(how_section(subs), persona_ok=True)
    contrast = {"metric": "dtw", "category": "age", "condition_class": "persona",
                "value_a": "19", "value_b": "72", "n_pairs": 16, "n_questions": 16, "mean": 0.7,
                "floor_mean": 0.6, "difference": 0.1, "ci_low": 0.05, "ci_high": 0.15,
                "q_value": 0.01, "detected": True, "interpretable": True}
    assert "not interpretable (instrument not valid)" in contrasts_html(how_section([contrast]),
                                                                        persona_ok=False)
    assert ">yes<" in contrasts_html(how_section([contrast]), persona_ok=True)
    def moved(data):
        dtw = data["metrics"]["dtw"]
        dtw["categories"] = {"age": {**dtw["categories"]["age"], "n": 16, "elevation_pct": 30.0,
                                     "elevation_ci": [10.0, 50.0], "elevation_p": 0.001}}
        data["answer"] = {"version": 1, "metrics": {"answer_cosine": dtw},
                          "columns": ["answer_cosine"]}

    stats = audit_stats(moved)
    assert "not interpretable (instrument not valid)" in answer_html(stats, persona_ok=False)
    assert "both moved" in answer_html(stats, persona_ok=True)
