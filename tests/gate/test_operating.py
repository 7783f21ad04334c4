"""A fast seeded subset of the operating-characteristics table (docs/operating-characteristics.md):
simulated audits of known truth through the real decision code, asserting the bounds."""

import pytest

from memlens.audit.simulate import PRESETS, Design, Truth, calibrate, simulate_run
from memlens.gate.operating import elevation_of, measure

pytestmark = pytest.mark.slow


def rates(design, groups, replicates, seed=0):
    return {rate.decision: rate for rate in measure(design, groups, replicates, seed=seed,
                                                    n_bootstrap=300)}


def test_simulated_run_goes_through_the_real_drift_stage():
    run = simulate_run(PRESETS["quick"], Truth(), 3)
    # 16 questions x (5 baselines + 3 noise + 5 persona + 3 life events) responses
    assert len(run.frame) == 16 * 16
    assert set(run.frame["n_baselines"]) == {4, 5}  # baselines pair with the 4 others
    again = simulate_run(PRESETS["quick"], Truth(), 3)
    assert run.frame.equals(again.frame)  # seeded


def test_calibration_gives_the_paper_sized_life_event_effect():
    weight, pct = calibrate(grid=(0.88,))
    assert weight == 0.88 and 19.0 <= pct <= 27.0
    assert 8.0 <= elevation_of(0.5) <= 18.0


def test_quick_verdict_power_and_null_rates():
    found = rates("quick", ["verdict"], 30)
    assert found["validity_pass"].rate >= 0.7  # table: ≥ 0.8 over 100 replicates
    assert found["specificity_fail"].hits <= 4  # nominal 5 %: P(≥ 5 of 30 | 0.05) < 0.02
    assert found["persona_detected_null"].hits <= 4


def test_direction_flags_only_the_planted_category():
    found = rates("quick", ["direction"], 30)
    assert found["direction_null_category"].hits <= 4
    assert found["direction_planted"].rate >= 0.8


def test_identical_values_are_not_detected():
    design = Design("contrast", 20, 3, {"age": 3, "gender": 3}, {"bereavement": 1}, samples=2)
    found = rates(design, ["contrasts"], 20)
    assert found["contrast_identical"].hits <= 3  # nominal 5 %: P(≥ 4 of 20 | 0.05) < 0.02
    # measured ≈ 0.5 at this size (2 samples per value); P(< 6 of 20 | 0.5) ≈ 0.02
    assert found["contrast_planted"].hits >= 6


def test_gate_default_false_alarm_is_bounded():
    found = rates("quick", ["gate"], 20)
    assert found["gate_false_alarm [default (Δ mean)]"].hits <= 3
