"""``memlens plan``: hand-computed power and MDE, monotone in K, the recommendation, a real pilot
through the loopback server, costs equal to ``--dry-run``, and the CLI error contract."""

import json
import math
import random
import re
import sys
from pathlib import Path

import pytest
from scipy import integrate
from scipy import stats as scipy_stats

from memlens.audit import build_config, run_audit
from memlens.audit import plan as planning
from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.models.loopback import LoopbackServer
from memlens.stats.power import difference_variance, paired_power
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

COST = planning.QuestionCost(control_prompt_tokens=100.0, perturbed_conditions=11,
                             perturbed_prompt_tokens=1200.0, life_event_conditions=3, samples=1,
                             max_tokens=160, llm_labeler=False, available_questions=200)


def nct_power(ncp: float, df: int, alpha: float) -> float:
    """Two-sided power from the noncentral t as a mixture over V ~ chi2(df) (written out, not
    scipy's nct): T = (Z + ncp) / sqrt(V / df)."""
    critical = scipy_stats.t.ppf(1 - alpha / 2, df)

    def tails(v):
        scale = critical * math.sqrt(v / df)
        return (scipy_stats.norm.sf(scale - ncp) + scipy_stats.norm.cdf(-scale - ncp)) \
            * scipy_stats.chi2.pdf(v, df)

    value, _ = integrate.quad(tails, 0, math.inf, limit=200)
    return value


def test_stated_design_power_and_mde_by_hand():
    model = planning.assumed_model(0.35, 0.2, 0.5, 0.0)
    assert (model.sigma_a2, model.sigma_e2) == pytest.approx((0.01, 0.02))
    row = planning.design_row(model, COST, questions=30, baselines=5)
    # 0.01/3 + 0.01/5 + 0.02/(3*5) + 2*0.02/(5*4) = 0.0086667
    variance = 0.01 / 3 + 0.01 / 5 + 0.02 / 15 + 0.04 / 20
    assert variance == pytest.approx(0.0086666667)
    assert row.diff_sd == pytest.approx(math.sqrt(variance))
    effect = 0.23 * 0.35
    ncp = effect * math.sqrt(30) / math.sqrt(variance)
    assert ncp == pytest.approx(4.7363, abs=1e-4)
    assert row.power == pytest.approx(paired_power(effect, math.sqrt(variance), 30, 0.001))
    assert row.power == pytest.approx(nct_power(ncp, 29, 0.001), abs=1e-6)
    assert row.power == pytest.approx(0.841, abs=1e-3)
    # the MDE reaches exactly 80 % power
    mde = row.mde_pct / 100 * 0.35
    assert nct_power(mde * math.sqrt(30) / math.sqrt(variance), 29, 0.001) == \
        pytest.approx(0.8, abs=1e-6)
    assert row.mde_pct == pytest.approx(22.1, abs=0.05)
    assert nct_power(effect * math.sqrt(29) / math.sqrt(variance), 28, 0.001) >= 0.8
    assert nct_power(effect * math.sqrt(28) / math.sqrt(variance), 27, 0.001) < 0.8
    assert row.questions_needed == 29
    # costs: 30 x (5 baselines + 11 perturbed) calls; prompt 30 x (5 x 100 + 1200)
    assert row.generation_calls == 480 and row.est_prompt_tokens == 51_000
    assert row.max_completion_tokens == 480 * 160 and row.labeler_calls == 0


def test_paper_design_k1_by_hand():
    model = planning.assumed_model(0.35, 0.2, 0.5, 0.1)
    row = planning.design_row(model, COST, questions=16, baselines=1)
    variance = 0.01 + 0.01 / 3 + 0.01 + 0.02 / 3 + 0.02  # tau^2 + a/n + a + e/n + e
    assert row.diff_sd == pytest.approx(math.sqrt(variance))
    ncp = 0.23 * 0.35 * 4 / math.sqrt(variance)
    assert row.power == pytest.approx(nct_power(ncp, 15, 0.001), abs=1e-6)
    assert row.generation_calls == 16 * (2 + 11)  # one baseline + one floor sample


@pytest.mark.parametrize("share, tau", [(0.0, 0.0), (0.5, 0.0), (1.0, 0.0), (0.3, 0.05)])
def test_more_baselines_never_lower_the_power(share, tau):
    model = planning.assumed_model(0.35, 0.2, share, tau)
    for questions in (16, 30):
        rows = [planning.design_row(model, COST, questions, k) for k in range(1, 11)]
        sds = [row.diff_sd for row in rows]
        assert all(b <= a + 1e-15 for a, b in zip(sds, sds[1:], strict=False)), sds
        # power from the written-out noncentral t (and paired_power, tested below)
        powers = [nct_power(0.23 * 0.35 * math.sqrt(questions) / sd, questions - 1, 0.001)
                  for sd in sds]
        assert all(b >= a - 1e-9 for a, b in zip(powers, powers[1:], strict=False)), powers
    result = planning.plan_designs(model, COST, (16, 30), (1, 3, 5, 8))  # the default K grid
    for questions in (16, 30):
        rows = [row for row in result.rows if row.questions == questions]
        assert [row.power for row in rows] == sorted(row.power for row in rows)
        assert [row.mde_pct for row in rows] == sorted((row.mde_pct for row in rows),
                                                       reverse=True)


def test_paired_power_where_scipy_returns_nan_for_the_lower_tail():
    """scipy's nct.cdf of the negligible lower tail is NaN here; the power must stay the
    noncentral-t value (it once switched to the normal approximation: 0.9971, not 0.9877)."""
    sd = math.sqrt(difference_variance(0.0, 0.04, 0.0, 3, 10))  # share 0: 16 x K=10 above
    ncp = 0.23 * 0.35 * 4 / sd
    assert paired_power(0.23 * 0.35, sd, 16, 0.001) == pytest.approx(nct_power(ncp, 15, 0.001),
                                                                     abs=1e-6)


def test_recommended_is_the_cheapest_adequate_design():
    result = planning.plan_designs(planning.assumed_model(), COST, (16, 30, 60, 120), (1, 3, 5, 8))
    adequate = [row for row in result.rows if row.power >= 0.8]
    best = result.recommended
    assert sum(row.recommended for row in result.rows) == 1
    assert best.power >= 0.8 and all(best.cost <= row.cost for row in adequate)
    # by hand: 30 x K=5 has power 0.841 and 480 calls; 16 x K=8 (0.537) and 30 x K=3 (0.467)
    # are cheaper but underpowered, 60 x K=3 (0.930) costs 840 calls
    assert (best.questions, best.baselines) == (30, 5)
    cheaper = [row for row in result.rows if row.cost < best.cost]
    assert cheaper and all(row.power < 0.8 for row in cheaper)
    none = planning.plan_designs(planning.assumed_model(), COST, (4,), (1, 2))
    assert none.recommended is None and "no design in the grid" in planning.format_plan(none)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["recommended"]["questions"] == 30 and len(data["rows"]) == 16


@pytest.mark.parametrize("baselines", [1, 5])
def test_costs_equal_the_dry_run_plan(baselines):
    from memlens.audit.pipeline import planned_request_groups
    from memlens.engine import plan_groups

    config = build_config({"preset": "quick", "baselines": baselines, "labeler": "openai:x"})
    groups, inputs = planned_request_groups(config)
    expected = plan_groups("embedded", groups)
    row = planning.design_row(planning.assumed_model(), planning.question_cost(config),
                              inputs["questions"], baselines)
    assert row.generation_calls == expected.calls == inputs["cells"]
    assert row.est_prompt_tokens == expected.est_prompt_tokens
    assert row.max_completion_tokens == expected.est_completion_tokens
    assert row.labeler_calls == expected.calls  # one per response for an LLM labeler


def pilot_responder(seed: int):
    """Seeded random symbol sequences (life events lean to 'E'), labeled by keyword."""
    from memlens.audit import sample_seed

    stimuli = {sample_seed(seed, q["id"], s["id"], k): s["class"]
               for q in scripted.QUESTIONS for s in scripted.STIMULI for k in range(3)}

    def responder(request: dict):
        if request.get("model") == "labeler":
            return scripted.keyword_labels(request)
        rng = random.Random(request["seed"])
        pool = "EEEDA" if stimuli[request["seed"]] == "life_event" else "ABCDE"
        return scripted.reply_for("".join(rng.choice(pool) for _ in range(rng.randint(3, 5))))

    return responder


@pytest.fixture(scope="module")
def pilot(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pilot")
    questions, stimuli = scripted.write_inputs(directory)
    with LoopbackServer(responder=pilot_responder(5)) as server:
        config = build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": questions, "stimuli": stimuli, "seed": 5, "n_bootstrap": 100,
            "max_tokens": 64, "samples": 1, "baselines": 3})
        run_audit(config, directory / "run", progress=False)
    return directory / "run"


def test_pilot_gives_finite_variance_components(pilot, capsys):
    model, config = planning.read_pilot(str(pilot))
    assert config["baselines"] == 3
    with RunStore(pilot, read_only=True) as store:
        pairs = store.rows("audit_drift_pairs")
    # 4 questions x (3 baselines x 2 partners + 6 perturbed x 3 baselines)
    assert len(pairs) == model.details["pairs"] == 4 * (6 + 18)
    assert all(math.isfinite(v) for v in (model.sigma_a2, model.sigma_e2, model.tau2))
    assert model.sigma_a2 >= 0 and model.sigma_e2 > 0 and model.tau2 >= 0
    floors = {}
    for row in pairs:
        if row["condition_class"] == "control":
            floors.setdefault(row["question_id"], []).append(row["dtw"])
    assert model.floor_mean == pytest.approx(
        sum(sum(v) / len(v) for v in floors.values()) / len(floors))
    assert model.details["questions_with_life_events"] == 4
    from memlens.audit import load_audit_run

    power = load_audit_run(pilot).stats.validity.power["dtw"]  # the report: one floor, one spread
    assert model.floor_mean == pytest.approx(power.floor_mean, rel=1e-12)
    assert math.sqrt(model.details["observed_diff_var"]) == pytest.approx(power.diff_sd)
    assert main(["plan", "--pilot", str(pilot), "--json", "--questions", "16,30"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"]["source"] == str(pilot) and data["n_c"] == 1
    assert [(r["questions"], r["baselines"]) for r in data["rows"]][:2] == [(16, 1), (16, 3)]


def test_cli_table_and_dry_run_power(tmp_path, capsys):
    # stated assumptions (the defaults, stated): the shipped measurement is not used
    assert main(["plan", "--preset", "quick", "--questions", "16,30", "--baselines", "1,5",
                 "--pair-sd", "0.2"]) == 0
    out = capsys.readouterr().out
    assert "from assumptions" in out
    assert "<- recommended" in out and "recommended: 30 questions x K = 5" in out
    # the quick preset on the embedded model was measured (memlens/data/pilots): the plan and
    # the dry run use that measurement, with the 90 % interval of the spread it rests on
    from scipy.stats import chi2

    from memlens.audit.pilots import pilot_folder

    shipped = json.loads((pilot_folder() / "embedded-quick.json").read_text(encoding="utf-8"))
    model = planning.VarianceModel(**shipped["variance"], details=shipped["details"])
    config = build_config({"preset": "quick"})
    row = planning.design_row(model, planning.question_cost(config), 16, 5)
    n = shipped["details"]["questions_with_life_events"]
    low = row.mde_pct * math.sqrt((n - 1) / chi2.ppf(0.95, n - 1))
    high = row.mde_pct * math.sqrt((n - 1) / chi2.ppf(0.05, n - 1))
    assert low < row.mde_pct < high and row.power < 0.8
    assert main(["audit", "--preset", "quick", "--out", str(tmp_path / "r"), "--dry-run",
                 "--power"]) == 0
    out = capsys.readouterr().out
    assert "from quick audits of the embedded model" in out
    assert re.search(rf"^\s+16\s+5\s+{row.power:.3f}\s+{row.mde_pct:.1f}\s+"
                     rf"{row.questions_needed}\s+256\s", out, flags=re.M), out
    assert (f"these 16 questions detect a life-event elevation of +{row.mde_pct:.1f}% DTW or more "
            f"with power 0.8 (90% interval of this estimate from {n} measured questions: "
            f"+{low:.1f}% to +{high:.1f}%)") in out
    assert (f"cannot decide on it; {row.questions_needed} questions could (--n-questions "
            f"{row.questions_needed}, {16 * row.questions_needed:,} calls") in out
    assert not (tmp_path / "r").exists()


def test_cli_error_contract(tmp_path, capsys):
    empty = tmp_path / "empty"
    with RunStore(empty) as store:
        store.write_manifest({"audit": {"config": {"baselines": 3}}})
    assert main(["plan", "--pilot", str(empty)]) == 2
    assert "no drift pair rows (audit_drift_pairs)" in capsys.readouterr().err
    assert main(["plan", "--pilot", str(tmp_path / "missing")]) == 2
    assert "no run store" in capsys.readouterr().err
    assert main(["plan", "--pilot", str(empty), "--pair-sd", "0.3"]) == 2
    assert "do not also give --pair-sd" in capsys.readouterr().err
    no_life = tmp_path / "c.json"
    no_life.write_text(json.dumps({"stimulus_categories": ["filler", "age"]}))
    assert main(["plan", "--config", str(no_life)]) == 2
    assert "no life-event condition" in capsys.readouterr().err
    for bad in (["--questions", "1,30"], ["--baselines", "0"], ["--baselines", "3,,5"],
                ["--share-response", "1.5"], ["--floor-mean", "0"], ["--tau", "nan"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["plan", *bad])
        assert exit_info.value.code == 2
        assert "memlens plan: error: argument" in capsys.readouterr().err
    with pytest.raises(MemlensError, match="no drift pair rows"):
        planning.pilot_model([], 3)
    with pytest.raises(MemlensError, match="response share"):
        planning.assumed_model(share_response=2.0)


def test_alpha_and_power_of_one_and_meaningless_mdes_are_refused_or_flagged(capsys):
    from memlens.cli.main import main

    assert main(["plan", "--alpha", "1"]) == 2
    assert "alpha must be a finite number > 0 and < 1" in capsys.readouterr().err
    assert main(["plan", "--power", "1"]) == 2
    assert main(["plan", "--questions", "2", "--baselines", "5"]) == 0
    out = capsys.readouterr().out
    assert ">1000 (n.m.)" in out and "not meaningful" in out


def test_pilot_with_a_zero_floor_is_one_clear_error():
    from memlens.audit.plan import pilot_model
    from memlens.errors import MemlensError

    rows = [{"question_id": "q1", "response_id": r, "baseline_id": b, "stimulus_id": s,
             "condition_class": c, "dtw": v}
            for r, b, s, c, v in [("c1", "c0", "ctl", "control", 0.0),
                                  ("c2", "c0", "ctl", "control", 0.0),
                                  ("l1", "c0", "life", "life_event", 0.4),
                                  ("l1", "c1", "life", "life_event", 0.5)]]
    with pytest.raises(MemlensError, match="no-memory floor is 0"):
        pilot_model(rows, 2)


@pytest.mark.parametrize("seed", [1, 2])
def test_plan_from_a_pilot_gives_the_pilots_own_report_mde(seed):
    """One variance model: at the pilot's own design, ``plan --pilot`` and the pilot's report
    state the same minimum detectable effect (they gave 18.9 % and 10.2 % for one run)."""
    from memlens.audit.plan import QuestionCost, design_row, pilot_model
    from memlens.audit.simulate import PRESETS, Truth, simulate_run
    from memlens.stats import analyze

    run = simulate_run(PRESETS["quick"], Truth(), seed)
    report = analyze(run.frame, metrics=["dtw"], n_bootstrap=200, mixed_model=False)
    cost = QuestionCost(control_prompt_tokens=0, perturbed_conditions=11,
                        perturbed_prompt_tokens=0, life_event_conditions=3, samples=1,
                        max_tokens=160, llm_labeler=False, available_questions=16)
    planned = design_row(pilot_model(run.pairs, 5), cost, 16, 5)
    assert planned.mde_pct == pytest.approx(report.validity.power["dtw"].mde_pct, rel=1e-9)


def test_a_shipped_pilot_describes_only_its_own_settings(pilot, tmp_path):
    """``memlens.audit.pilots``: the variance model a finished audit ships is the one
    ``plan --pilot`` estimates, found again for the same settings and for no others."""
    from memlens.audit.pilots import (
        measured_power,
        needed_design,
        pilot_record,
        power_sentence,
        shipped_pilot,
    )

    folder = tmp_path / "pilots"
    folder.mkdir()
    record = pilot_record([str(pilot)], "scripted pilot, test")
    # a cell shared by two runs of the same settings counts once
    assert pilot_record([str(pilot), str(pilot)], "scripted pilot, test")["variance"] == \
        record["variance"]
    (folder / "scripted.json").write_text(json.dumps(record), encoding="utf-8")
    model, recorded = planning.read_pilot(str(pilot))
    config = build_config({k: v for k, v in recorded.items() if k != "preset"})
    shipped = shipped_pilot(config, folder)
    assert (shipped.floor_mean, shipped.sigma_a2, shipped.sigma_e2, shipped.tau2) == \
        (model.floor_mean, model.sigma_a2, model.sigma_e2, model.tau2)
    assert shipped.source == "scripted pilot, test"
    for change in ({"max_tokens": 65}, {"reasoning_format": "list"}, {"labeler": "embedded"},
                   {"model": "fake"}):
        assert shipped_pilot(config.model_copy(update=change), folder) is None, change
    row, used = measured_power(config, 16, shipped)
    expected = planning.design_row(model, planning.question_cost(config), 16, config.baselines)
    assert (row.power, row.mde_pct, row.questions_needed) == \
        (expected.power, expected.mde_pct, expected.questions_needed)
    sentence = power_sentence(row, used)
    assert f"+{row.mde_pct:.1f}% DTW" in sentence and "scripted pilot, test" in sentence
    assert ("cannot decide" in sentence) == (row.power < 0.8)
    bigger = needed_design(config, row, used)
    if row.power < 0.8:
        assert (bigger.questions, bigger.baselines) == (row.questions_needed, row.baselines)
        assert bigger.power >= 0.8 and bigger.generation_calls > row.generation_calls
        assert "(--n-questions" in power_sentence(row, used, "9 calls, ~1 min")
    else:
        assert bigger is None
