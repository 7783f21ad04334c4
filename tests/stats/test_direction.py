"""Direction profiles and the substitution matrix, hand-computed on two questions."""

import numpy as np
import pandas as pd
import pytest

from memlens.stats.direction import direction_profile
from memlens.stats.substitution import substitution_matrix, substitutions

ROOT = {"a": "A", "b": "B", "c": "B"}


def pairs() -> pd.DataFrame:
    rows = [("f1", "q1", "no_perturbation", "control", "ab", "ab"),
            ("r1", "q1", "age", "persona", "ab", "bb"),
            ("f2", "q2", "no_perturbation", "control", "acca", "acaa"),
            ("r2", "q2", "age", "persona", "acca", "cccc")]
    return pd.DataFrame([{"response_id": r, "question_id": q, "category": c,
                          "condition_class": k, "baseline_symbols": list(b),
                          "compared_symbols": list(x)} for r, q, c, k, b, x in rows])


def test_profile_hand_computed():
    # symbol shares, persona: r1 a 0.5->0, b 0.5->1; r2 a 0.5->0, c 0.5->1 => a -50, b +25, c +25
    # floor: f1 0; f2 a 0.5->0.75, c 0.5->0.25 => a +12.5, c -12.5 => net a -62.5, b +25, c +37.5
    table = direction_profile(pairs(), ["a", "b", "c"], ROOT, n_bootstrap=200, seed=1)
    sym = table[table["level"] == "symbol"].set_index("symbol")
    assert sym["shift_pp"].to_dict() == pytest.approx({"a": -50.0, "b": 25.0, "c": 25.0})
    assert sym["floor_shift_pp"].to_dict() == pytest.approx({"a": 12.5, "b": 0.0, "c": -12.5})
    assert sym["net_pp"].to_dict() == pytest.approx({"a": -62.5, "b": 25.0, "c": 37.5})
    assert sym.loc["a", "baseline_share_pct"] == pytest.approx(50.0)
    assert sym.loc["a", "perturbed_share_pct"] == pytest.approx(0.0)
    root = table[table["level"] == "root"].set_index("symbol")
    # root B: r1 0.5->1, r2 0.5->1 => +50; floor f2 0.5->0.25 => -12.5 => net +62.5
    assert root["net_pp"].to_dict() == pytest.approx({"A": -62.5, "B": 62.5})
    assert (table["n_responses"] == 2).all() and (table["n_questions"] == 2).all()
    # the CI holds the point estimate and BH q-values are >= the p-values
    assert ((table["ci_low"] <= table["net_pp"] + 1e-9) & (table["net_pp"] <= table["ci_high"] + 1e-9)).all()
    # 2 questions: no row is interpretable, so none enters the error-controlled family
    assert not table["interpretable"].any() and table["q_value"].isna().all()


def test_profile_response_is_the_mean_over_its_baselines():
    frame = pairs()
    extra = frame.iloc[[1]].assign(baseline_symbols=[list("bb")])  # r1 against a 2nd baseline
    table = direction_profile(pd.concat([frame, extra]), ["a", "b", "c"], ROOT, n_bootstrap=200)
    sym = table[table["level"] == "symbol"].set_index("symbol")
    # r1: mean of (-0.5, 0) for a => -0.25; r2 -0.5 => category a = -37.5
    assert sym.loc["a", "shift_pp"] == pytest.approx(-37.5)


def test_substitution_matrix_hand_computed():
    meta, values, counts, names = substitution_matrix(pairs(), ["a", "b", "c"])
    matrix = {rid: values[k].reshape(3, 3) for k, rid in enumerate(meta["response_id"])}
    # r1: path (a,b) (b,b); r2: diagonal a->c twice, c->c twice; f2: DTW 0 path of 5 cells
    np.testing.assert_allclose(matrix["r1"], [[0, .5, 0], [0, .5, 0], [0, 0, 0]])
    np.testing.assert_allclose(matrix["r2"], [[0, 0, .5], [0, 0, 0], [0, 0, .5]])
    np.testing.assert_allclose(matrix["f2"], [[.6, 0, 0], [0, 0, 0], [0, 0, .4]])
    assert counts[list(meta["response_id"]).index("r2")].reshape(3, 3)[0, 2] == 2
    table = substitutions(pairs(), ["a", "b", "c"], ROOT, n_bootstrap=200)
    sym = table[table["level"] == "symbol"]
    assert list(zip(sym["from_symbol"], sym["to_symbol"], strict=True)) == [("a", "b"), ("a", "c")]
    assert sym["net_pp"].tolist() == pytest.approx([25.0, 25.0])
    assert sym["count"].tolist() == [1, 2]
    root = table[table["level"] == "root"]
    assert list(zip(root["from_symbol"], root["to_symbol"], strict=True)) == [("A", "B")]
    assert root["net_pp"].tolist() == pytest.approx([50.0]) and root["floor_rate_pct"].tolist() == [0.0]
