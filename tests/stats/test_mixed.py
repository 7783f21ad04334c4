"""Mixed model against statsmodels' formula interface; degenerate fits recorded, not raised."""

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from statsmodels.regression.mixed_linear_model import MixedLM

from memlens.stats.mixed import fit_mixed_model


def make_data(seed=0):
    rng = np.random.default_rng(seed)
    questions = np.repeat(np.arange(30), 4)
    categories = np.tile(["no_perturbation", "age", "it's odd", "filler"], 30)
    values = (rng.normal(size=120) + np.repeat(rng.normal(size=30), 4)
              + 0.6 * (categories == "age"))
    return values, categories, questions


def test_matches_statsmodels_formula_fit():
    values, categories, questions = make_data()
    ours = fit_mixed_model(values, categories, questions, metric="dtw")
    frame = pd.DataFrame({"y": values, "category": np.where(categories == "it's odd", "odd",
                                                             categories), "q": questions})
    reference = smf.mixedlm("y ~ C(category, Treatment('no_perturbation'))", frame,
                            groups=frame["q"]).fit(reml=True)
    term = "C(category, Treatment('no_perturbation'))[T.age]"
    age = ours["coefficients"]["category[T.age]"]
    assert age["estimate"] == pytest.approx(reference.params[term], rel=1e-5)
    assert age["p_value"] == pytest.approx(reference.pvalues[term], rel=1e-4)
    low, high = reference.conf_int().loc[term]
    assert age["ci"] == pytest.approx([low, high], rel=1e-4)
    assert ours["coefficients"]["Intercept"]["estimate"] == pytest.approx(
        reference.params["Intercept"], rel=1e-5)
    assert "category[T.it's odd]" in ours["coefficients"]
    assert ours["n_obs"] == 120 and ours["n_groups"] == 30 and ours["converged"]
    assert ours["formula"].startswith("dtw ~ C(category")


def test_degenerate_fit_is_recorded_never_raised():
    _, categories, questions = make_data()
    constant = np.where(categories == "age", 1.0, 0.0)  # no residual and no question variance
    result = fit_mixed_model(constant, categories, questions)
    assert result["warnings"] or "error" in result, result
    # whichever way a statsmodels release handles it, the record says so
    assert "error" in result or result["singular"] is True


def test_singular_fit_is_flagged_by_what_it_records():
    values, categories, questions = make_data()
    # remove all between-question variation: the random-intercept variance sits on the
    # boundary (statsmodels 0.14 gives 0, 0.15 gives ~1e-36); both must read as singular
    frame = pd.DataFrame({"v": values, "q": questions})
    flat = values - frame.groupby("q")["v"].transform("mean").to_numpy() + values.mean()
    result = fit_mixed_model(flat, categories, questions)
    assert "error" not in result, result
    assert result["group_variance"] < 1e-8 * np.var(flat)
    assert result["singular"] is True
    assert any(w.startswith("singular fit") for w in result["warnings"])
    regular = fit_mixed_model(*make_data())
    assert regular["singular"] is False and regular["group_variance"] > 0.1


def _panel(seed, questions=40, drop=0):
    """A drift-like panel: per question the floor once and 3 rows of each other category;
    ``drop`` random rows removed (an unbalanced table)."""
    rng = np.random.default_rng(seed)
    layout = ["no_perturbation"] + [c for c in ("filler", "age", "job_loss", "income") for _ in "abc"]
    categories = np.tile(layout, questions)
    clusters = np.repeat([f"q{i:03d}" for i in range(questions)], len(layout))
    values = (0.3 + np.repeat(rng.normal(0, 0.05, questions), len(layout))
              + 0.04 * (categories == "job_loss") + rng.normal(0, 0.15, categories.size))
    keep = np.sort(rng.permutation(categories.size)[drop:])
    return values[keep], categories[keep], clusters[keep]


@pytest.mark.parametrize(("seed", "drop"), [(2, 0), (3, 37), (4, 90), (6, 0)])
def test_started_fit_gives_the_default_start_estimates(monkeypatch, seed, drop):
    """The REML start changes where statsmodels' search begins, not where it ends: the same
    estimates as its default start to far below printed precision (.4f), and the same warnings
    (on tables where the default search converges; see the next test for one where it does not)."""
    import memlens.stats.mixed as mixed

    data = _panel(seed, drop=drop)
    started = fit_mixed_model(*data)
    monkeypatch.setattr(mixed, "_start", lambda *args: None)
    default = fit_mixed_model(*data)
    assert started["converged"] and default["converged"]
    assert started["warnings"] == default["warnings"]
    assert started["singular"] == default["singular"]
    for name, reference in default["coefficients"].items():
        ours = started["coefficients"][name]
        assert ours["estimate"] == pytest.approx(reference["estimate"], rel=1e-6, abs=1e-9)
        assert ours["se"] == pytest.approx(reference["se"], rel=1e-4)
        assert ours["ci"] == pytest.approx(reference["ci"], rel=1e-4, abs=1e-6)
        assert ours["p_value"] == pytest.approx(reference["p_value"], rel=1e-3, abs=1e-6)
    assert started["group_variance"] == pytest.approx(default["group_variance"], rel=1e-3, abs=1e-6)
    assert started["residual_variance"] == pytest.approx(default["residual_variance"], rel=1e-4)


@pytest.mark.parametrize(("seed", "drop"), [(2, 0), (3, 37)])
def test_reml_variance_ratio_matches_statsmodels(seed, drop):
    from memlens.stats.mixed import _design, reml_variance_ratio

    values, categories, clusters = _panel(seed, drop=drop)
    exog, _ = _design(categories, "no_perturbation")
    reference = MixedLM(values, exog, groups=clusters).fit(reml=True)
    expected = float(np.asarray(reference.cov_re)[0, 0]) / reference.scale
    assert reml_variance_ratio(values, exog, clusters) == pytest.approx(expected, rel=1e-3)


def test_where_statsmodels_default_search_fails_the_start_finds_a_higher_likelihood():
    """Seed 1: from its default start BFGS fails, L-BFGS stops at γ = 0.0675; the REML optimum
    (statsmodels' own profile likelihood, evaluated at both) is γ = 0.0625."""
    from memlens.stats.mixed import _design, reml_variance_ratio

    values, categories, clusters = _panel(1)
    exog, _ = _design(categories, "no_perturbation")
    model = MixedLM(values, exog, groups=clusters)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        default = model.fit(reml=True)
    assert any("Retrying MixedLM optimization" in str(item.message) for item in caught)
    default_ratio = float(np.asarray(default.cov_re)[0, 0]) / default.scale
    ours = reml_variance_ratio(values, exog, clusters)
    assert ours == pytest.approx(0.0625, abs=5e-4) and default_ratio == pytest.approx(0.0675, abs=5e-4)
    assert (model.loglike(np.array([np.sqrt(ours)]), profile_fe=True)
            > model.loglike(np.array([np.sqrt(default_ratio)]), profile_fe=True) + 1e-3)
    started = fit_mixed_model(values, categories, clusters)
    assert started["converged"] and not any("Retrying" in w for w in started["warnings"])
    assert started["group_variance"] / started["residual_variance"] == pytest.approx(ours, rel=1e-6)


def test_started_fit_evaluates_the_likelihood_once(monkeypatch):
    import memlens.stats.mixed as mixed

    calls = []
    original = MixedLM.loglike
    monkeypatch.setattr(MixedLM, "loglike", lambda self, *a, **k: calls.append(1) or original(self, *a, **k))
    fit_mixed_model(*_panel(5))
    started = len(calls)
    calls.clear()
    monkeypatch.setattr(mixed, "_start", lambda *args: None)
    fit_mixed_model(*_panel(5))
    assert started == 1 and len(calls) >= 5  # statsmodels' own start searches
