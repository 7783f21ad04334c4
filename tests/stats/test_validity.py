"""Convergence against scipy and each validity check on hand-built results."""

import pytest
from scipy import stats

from memlens.stats.validity import convergence, validity_verdict


def results(noise_p=0.4, noise_elevation=3.0, life_p=1e-6, life_elevation=60.0):
    categories = {
        "no_perturbation": {"condition_class": "control", "mean": 0.30,
                            "elevation_pct": 0.0, "elevation_p": None},
        "filler": {"condition_class": "noise", "mean": 0.31,
                   "elevation_pct": noise_elevation, "elevation_p": noise_p},
        "age": {"condition_class": "persona", "mean": 0.36, "elevation_pct": 20.0,
                "elevation_p": 0.01},
        "bereavement": {"condition_class": "life_event", "mean": 0.48,
                        "elevation_pct": life_elevation, "elevation_p": life_p},
    }
    classes = {"noise": {"elevation_pct": noise_elevation, "elevation_p": noise_p},
               "life_event": {"elevation_pct": life_elevation, "elevation_p": life_p}}
    return {"categories": categories, "classes": classes}


def test_convergence_matches_scipy():
    dtw = results()
    sri = results()
    for name, mean in zip(sri["categories"], [0.2, 0.22, 0.21, 0.35], strict=True):
        sri["categories"][name]["mean"] = mean
    result = convergence({"dtw": dtw, "sri": sri})
    x, y = [0.30, 0.31, 0.36, 0.48], [0.2, 0.22, 0.21, 0.35]
    assert result["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert result["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue)
    assert result["n_categories"] == 4
    assert "omitted" in convergence({"dtw": dtw})


def test_all_checks_pass():
    verdict = validity_verdict({"dtw": results()}, {"omitted": "needs both"})
    assert verdict["verdict"] == "pass" and verdict["persona_interpretable"]
    assert [c["status"] for c in verdict["checks"]] == ["pass", "pass", "skipped"]


@pytest.mark.parametrize(("kwargs", "failing"), [
    ({"noise_p": 0.01}, "specificity"),
    ({"life_p": 0.002}, "sensitivity"),
    ({"life_elevation": -40.0}, "sensitivity"),
])
def test_each_failing_check_fails_the_verdict(kwargs, failing):
    verdict = validity_verdict({"dtw": results(**kwargs)}, {"omitted": "x"})
    assert verdict["verdict"] == "fail" and not verdict["persona_interpretable"]
    assert [c["name"] for c in verdict["checks"] if c["status"] == "fail"] == [failing]


def test_noise_significantly_below_the_floor_is_not_elevated():
    verdict = validity_verdict({"dtw": results(noise_p=0.01, noise_elevation=-8.0)}, {"omitted": "x"})
    assert verdict["verdict"] == "pass"


def test_weak_convergence_fails():
    weak = {"metrics": ["dtw", "sri"], "n_categories": 14, "spearman": 0.5, "spearman_p": 0.07,
            "pearson": 0.5, "pearson_p": 0.07}
    verdict = validity_verdict({"dtw": results()}, weak)
    assert verdict["verdict"] == "fail"
    assert verdict["checks"][-1]["status"] == "fail"
