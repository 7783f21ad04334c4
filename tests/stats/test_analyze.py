"""analyze() on simulated tables with a known truth, and its JSON structure."""

import json

import numpy as np
import pytest
from pydantic import ValidationError
from scipy import stats

from memlens.errors import MemlensError
from memlens.stats import DriftStats, analyze, parse_stats

CATEGORY_KEYS = {"condition_class", "n", "mean", "sd", "elevation_pct", "elevation_p", "d_rel",
                 "d_rel_ci", "d_rel_p", "d_rel_q", "cohen_d", "letters"}


def test_structure_is_complete_and_json_safe(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=30)
    result = analyze(table, seed=1, n_bootstrap=500)
    data = json.loads(json.dumps(result.to_json(), allow_nan=False))
    for metric in ("dtw", "sri"):
        categories = data["metrics"][metric]["categories"]
        assert len(categories) == 11
        for row in categories.values():
            assert CATEGORY_KEYS <= set(row)
            assert len(row["d_rel_ci"]) == 2
        assert "category[T.disability]" in data["metrics"][metric]["mixed_model"]["coefficients"]
    assert set(data["convergence"]) >= {"spearman", "pearson", "spearman_p", "pearson_p"}
    assert data["validity"]["verdict"] in ("pass", "fail")
    # stats.json is the serialised form: it reads back to the same typed result
    assert DriftStats.model_validate(data) == result
    assert result.metrics["dtw"].categories["age"].d_rel == data["metrics"]["dtw"][
        "categories"]["age"]["d_rel"]


def test_a_misnamed_or_missing_key_fails_where_the_statistics_are_read(simulate,
                                                                        tiered_effects):
    data = analyze(simulate(tiered_effects, n_questions=10), n_bootstrap=100,
                   mixed_model=False).to_json()
    renamed = json.loads(json.dumps(data))
    renamed["metrics"]["dtw"]["categories"]["age"]["drel"] = renamed["metrics"]["dtw"][
        "categories"]["age"].pop("d_rel")
    with pytest.raises(MemlensError, match=r"stats.json: not a memlens statistics file "
                                           r"\(key 'metrics.dtw.categories.age.d_rel': Field required"):
        parse_stats(renamed, "stats.json")
    with pytest.raises(MemlensError, match="unknown key 'metrics.dtw.categories.age.drel'"):
        parse_stats(renamed, "stats.json")
    del data["validity"]
    with pytest.raises(MemlensError, match="key 'validity': Field required"):
        parse_stats(data, "stats.json")
    result = analyze(simulate(tiered_effects, n_questions=10), n_bootstrap=100,
                     mixed_model=False)
    with pytest.raises(ValidationError, match="frozen"):
        result.metrics["dtw"].categories["age"].d_rel = 0.0


def test_point_values_match_direct_computation(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=25, seed=3)
    row = analyze(table, n_bootstrap=200, mixed_model=False).metrics["dtw"].categories["age"]
    age = table.loc[table["category"] == "age", "dtw"].to_numpy()
    floor = table.loc[table["category"] == "no_perturbation", "dtw"].to_numpy()
    noise = table.loc[table["condition_class"] == "noise", "dtw"].to_numpy()
    assert row.mean == pytest.approx(age.mean())
    assert row.sd == pytest.approx(age.std(ddof=1))
    assert row.elevation_pct == pytest.approx(100 * (age.mean() - floor.mean()) / floor.mean())
    assert row.d_rel == pytest.approx((age.mean() - noise.mean()) / noise.std(ddof=1))
    per_question = table[table["category"] == "age"].groupby("question_id")["dtw"].mean()
    floor_q = table[table["category"] == "no_perturbation"].set_index("question_id")["dtw"]
    expected_p = stats.ttest_rel(per_question.sort_index(), floor_q.sort_index()).pvalue
    assert row.elevation_p == pytest.approx(expected_p)


def test_planted_tiers_are_recovered(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=60, seed=11)
    result = analyze(table, seed=2, n_bootstrap=2000, mixed_model=False)
    assert result.validity.verdict == "pass"
    categories = result.metrics["dtw"].categories
    names = [name for _, name in tiered_effects]
    truth = [tiered_effects[key] for key in tiered_effects]
    estimated = [categories[name].d_rel for name in names]
    assert stats.spearmanr(truth, estimated).statistic > 0.85
    for name in ("bereavement", "job_loss", "illness", "disability", "gender"):
        assert categories[name].d_rel_q < 0.05
        assert categories[name].d_rel_ci[0] > 0
    for name in ("filler", "whitespace", "punctuation"):
        assert set(categories[name].letters).isdisjoint(categories["bereavement"].letters)
    assert categories["disability"].q_family == "persona"


def test_null_tables_rarely_pass(simulate, null_effects):
    # No category has any effect, so sensitivity (life events p < 0.001) should almost never pass.
    passes = 0
    for seed in range(25):
        table = simulate(null_effects, n_questions=30, seed=500 + seed)
        result = analyze(table, seed=seed, n_bootstrap=200, mixed_model=False)
        passes += result.validity.verdict == "pass"
    assert passes <= 1


def test_a_noise_category_with_a_real_effect_fails_specificity(simulate, tiered_effects):
    tiered_effects[("noise", "filler")] = 0.1
    result = analyze(simulate(tiered_effects, n_questions=60, seed=4), n_bootstrap=300,
                     mixed_model=False)
    assert result.validity.verdict == "fail"
    failed = [c for c in result.validity.checks if c.status == "fail"]
    assert {c.name for c in failed} == {"specificity"}
    assert all("filler" in c.elevated for c in failed)  # and the pooled class it lifts


def test_same_seed_same_result_and_seed_changes_intervals(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=20)
    first = analyze(table, seed=5, n_bootstrap=300, mixed_model=False)
    again = analyze(table, seed=5, n_bootstrap=300, mixed_model=False)
    other = analyze(table, seed=6, n_bootstrap=300, mixed_model=False)
    assert first == again
    ci = first.metrics["dtw"].categories["age"].d_rel_ci
    assert ci != other.metrics["dtw"].categories["age"].d_rel_ci


def test_bad_arguments_get_clear_errors(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=5)
    with pytest.raises(MemlensError, match="'bleu' not in the table"):
        analyze(table, metrics=["bleu"])
    with pytest.raises(MemlensError, match="at least 100"):
        analyze(table, n_bootstrap=5)
    table["model"] = np.where(np.arange(len(table)) % 2 == 0, "a", "b")
    with pytest.raises(MemlensError, match="holds 2 models"):
        analyze(table, n_bootstrap=100)
    with pytest.raises(MemlensError, match="model 'c' is not in"):
        analyze(table, n_bootstrap=100, model="c")


def test_sigma_zero_noise_gives_null_not_a_crash(simulate, tiered_effects):
    table = simulate(tiered_effects, n_questions=10)
    table.loc[table["condition_class"] == "noise", "dtw"] = 0.25
    result = analyze(table, n_bootstrap=100, mixed_model=False)
    assert result.metrics["dtw"].categories["age"].d_rel is None
    json.dumps(result.to_json(), allow_nan=False)


def test_zero_floor_elevation_is_undefined_and_few_questions_not_interpretable():
    """A floor of rounding residue (−2.8e-17) once printed an elevation of 1.37e18 %."""
    import numpy as np
    import pandas as pd

    from memlens.stats.bootstrap import Moments, elevation_pct

    residue = Moments(np.array([2.0]), np.array([-2.8e-17]), np.array([0.0]))
    treated = Moments(np.array([2.0]), np.array([0.4]), np.array([0.0]))
    assert np.isnan(elevation_pct(treated, residue)).all()
    rows = []
    for q in range(4):
        for category, klass, value in (("no_perturbation", "control", 0.3),
                                       ("filler", "noise", 0.31 + 0.01 * q),
                                       ("whitespace", "noise", 0.29 + 0.01 * q),
                                       ("age", "persona", 0.5 + 0.02 * q),
                                       ("job_loss", "life_event", 0.6)):
            rows.append({"question_id": f"q{q}", "condition_class": klass,
                         "category": category, "dtw": value})
    from memlens.stats import analyze

    stats = analyze(pd.DataFrame(rows), n_bootstrap=200, mixed_model=False)
    age = stats.metrics["dtw"].categories["age"]
    assert age.n_questions == 4 and not age.interpretable
