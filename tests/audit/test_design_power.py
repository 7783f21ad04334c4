"""Old (K = 1) vs new (K = 5) baseline design, by simulation through the real drift stage and
the real statistics (small, seeded versions of ``benchmarks/bench_design_power.py``)."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_design_power.py"
_SPEC = importlib.util.spec_from_file_location("bench_design_power", _PATH)
sim = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(sim)

B = 100


@pytest.fixture(scope="module")
def null_runs():
    """40 null replicates per design at 16 questions (the quick preset's size)."""
    return {k: [sim.replicate(16, k, 1000 + r, n_bootstrap=B) for r in range(40)]
            for k in (1, 5)}


@pytest.fixture(scope="module")
def effect_runs():
    """24 replicates per design at 30 questions with the paper-sized life-event effect."""
    return {k: [sim.replicate(30, k, 5000 + r, weight=sim.PAPER_WEIGHT,
                              planted_persona=sim.PLANTED_PERSONA, n_bootstrap=B)
                for r in range(24)] for k in (1, 5)}


def test_simulated_rows_follow_the_design():
    steps, labels = sim.simulate_rows(2, 5, np.random.default_rng(0))
    assert len(steps) == len(labels) == 2 * (5 + 11)
    table = sim.drift_table(steps, labels, 5)
    assert len(table) == 2 * (5 + 11)  # every no-memory sample is a floor row
    steps1, labels1 = sim.simulate_rows(2, 1, np.random.default_rng(0))
    assert len(sim.drift_table(steps1, labels1, 1)) == 2 * (1 + 11)  # sample 0 is the baseline


def test_calibrated_weight_gives_the_paper_effect():
    weight, pct = sim.calibrate_weight(n_questions=100, grid=[sim.PAPER_WEIGHT])
    assert weight == sim.PAPER_WEIGHT and 18.0 < pct < 28.0


def test_more_baselines_raise_sensitivity_power(effect_runs):
    power = {k: np.mean([r["sensitivity"] == "pass" for r in runs])
             for k, runs in effect_runs.items()}
    elevation = {k: np.mean([r["life_elevation"] for r in runs]) for k, runs in effect_runs.items()}
    assert all(15.0 < e < 32.0 for e in elevation.values()), elevation
    assert power[5] >= 0.8 and power[5] - power[1] >= 0.3, power


def test_null_specificity_false_failures_are_rare_with_five_baselines(null_runs):
    false_fail = np.mean([r["specificity"] == "fail" for r in null_runs[5]])
    assert false_fail <= 0.1


def test_shared_baseline_error_correlation_drops_with_five_baselines(null_runs):
    corr = {k: sim.mean_error_correlation(runs) for k, runs in null_runs.items()}
    assert corr[1] > 0.35 and corr[5] < corr[1] - 0.1, corr


def test_null_responder_rarely_shows_a_persona_finding(null_runs):
    for runs in null_runs.values():
        with_finding = np.mean([min(r["d_rel_q"].values()) <= 0.05 for r in runs])
        assert with_finding <= 0.25
