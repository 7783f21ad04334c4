"""Mixed model against statsmodels' formula interface; degenerate fits recorded, not raised."""

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

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
