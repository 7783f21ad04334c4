"""Agreement statistics checked against statsmodels and scikit-learn reference implementations."""

import math

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from memlens.errors import MemlensError
from memlens.ontology.agreement import (
    cohen_kappa,
    fleiss_kappa,
    pairwise_agreement,
    ratings_to_counts,
)

LABELS = ["social.a", "practical.b", "protective.c", "personal.d", "unlabeled"]


def _random_labels(seed: int, n_items: int, n_raters: int, noise: float) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, len(LABELS), n_items)
    rows = []
    for item in range(n_items):
        row = []
        for _ in range(n_raters):
            value = truth[item] if rng.random() > noise else rng.integers(0, len(LABELS))
            row.append(LABELS[value])
        rows.append(row)
    return rows


def test_pairwise_agreement_hand_computed():
    assert pairwise_agreement(["a", "b", "c"], ["a", "b", "d"]) == pytest.approx(2 / 3)
    assert pairwise_agreement(["a"], ["a"]) == 1.0


def test_cohen_kappa_hand_computed():
    # p_o = 3/4; p_e = (2*1 + 2*3)/16 = 0.5; kappa = 0.25/0.5 = 0.5
    assert cohen_kappa(["x", "x", "y", "y"], ["x", "y", "y", "y"]) == pytest.approx(0.5)
    # perfect disagreement on a balanced set: p_o = 0, p_e = 0.5 -> -1
    assert cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cohen_kappa_matches_sklearn(seed):
    rows = _random_labels(seed, 60, 2, noise=0.4)
    a, b = [r[0] for r in rows], [r[1] for r in rows]
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_cohen_kappa_undefined_when_one_label_only():
    assert math.isnan(cohen_kappa(["a", "a"], ["a", "a"]))


@pytest.mark.parametrize("seed,n_raters", [(0, 2), (1, 3), (2, 5), (3, 4)])
def test_fleiss_labels_match_statsmodels(seed, n_raters):
    rows = _random_labels(seed, 80, n_raters, noise=0.5)
    codes = np.array([[LABELS.index(x) for x in row] for row in rows])
    table, _ = aggregate_raters(codes)
    expected = sm_fleiss_kappa(table, method="fleiss")
    assert fleiss_kappa(rows) == pytest.approx(expected, abs=1e-12)
    assert fleiss_kappa(codes.tolist(), kind="labels") == pytest.approx(expected, abs=1e-12)


def test_fleiss_counts_match_statsmodels_textbook_table():
    # Fleiss (1971) example as used on Wikipedia: 10 items, 14 raters, 5 categories; kappa 0.210.
    table = np.array([
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ])
    assert fleiss_kappa(table) == pytest.approx(sm_fleiss_kappa(table), abs=1e-12)
    assert fleiss_kappa(table.tolist(), kind="counts") == pytest.approx(0.20993, abs=1e-5)


def test_fleiss_two_raters_is_scotts_pi_not_cohen():
    rows = [["a", "a"], ["b", "b"], ["a", "b"]]
    # Hand: P_i = 1, 1, 0 -> 2/3; shares a=1/2, b=1/2 -> P_e = 1/2; kappa = (2/3-1/2)/(1/2) = 1/3
    assert fleiss_kappa(rows) == pytest.approx(1 / 3)


def test_ratings_to_counts():
    counts, categories = ratings_to_counts([["b", "a"], ["a", "a"]])
    assert categories == ["a", "b"]
    assert counts.tolist() == [[1, 1], [2, 0]]


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: pairwise_agreement(["a"], ["a", "b"]), "different lengths"),
        (lambda: cohen_kappa([], []), "zero items"),
        (lambda: fleiss_kappa([["a", "b"], ["a"]]), "row 1 has 1 labels"),
        (lambda: fleiss_kappa([[0, 1, 1], [2, 2, 2]]), "kind='labels'"),
        (lambda: fleiss_kappa([[-1, 3], [1, 1]], kind="counts"), "negative"),
        (lambda: fleiss_kappa([["a"], ["b"]]), "at least two"),
        (lambda: fleiss_kappa([["a", "b"]], kind="nope"), "kind must be"),
    ],
)
def test_bad_input_raises_clear_error(call, message):
    with pytest.raises(MemlensError, match=message):
        call()
