"""Gate rules, exit statuses, policy errors, the Markdown summary and JUnit XML (parsed with
junitparser), on statistics of simulated drift tables with a known truth."""

import numpy as np
import pandas as pd
import pytest
from junitparser import Error, Failure, JUnitXml

from memlens.audit.compare import compare_frames, validity_of
from memlens.errors import MemlensError
from memlens.gate import RunStats, evaluate, junit_xml, load_policy, markdown_summary
from memlens.gate.exits import INSTRUMENT_INVALID, PASSED, RULE_FAILED
from memlens.stats import analyze

CATEGORIES = [("control", "no_perturbation", 0.0), ("noise", "filler", 0.0),
              ("noise", "whitespace", 0.0), ("noise", "punctuation", 0.0),
              ("persona", "age", 0.0), ("persona", "gender", 0.0),
              ("life_event", "bereavement", 0.2), ("life_event", "job_loss", 0.22)]


def tables(age_shift_b: float, seed: int = 0, n_questions: int = 40, life: float = 1.0):
    """Runs A and B of one design: shared question effects, new row noise; B's age rows get
    ``age_shift_b`` more drift. ``life`` scales the life-event effect (0 = invalid instrument)."""
    rng = np.random.default_rng(seed)
    effects = rng.normal(0, 0.05, size=n_questions)
    out = []
    for run in range(2):
        rows = []
        for q in range(n_questions):
            for klass, category, shift in CATEGORIES:
                for sample in range(1 if klass == "control" else 2):
                    value = 0.3 + effects[q] + shift * life + rng.normal(0, 0.06)
                    value += age_shift_b if run == 1 and category == "age" else 0.0
                    rows.append({"question_id": f"q{q}", "condition_class": klass,
                                 "category": category, "stimulus_id": f"{klass}/{category}",
                                 "sample": sample, "dtw": value,
                                 "sri": 0.7 * value + rng.normal(0, 0.02)})
        out.append(pd.DataFrame(rows))
    return out


def gate(age_shift_b: float, policy, *, life: float = 1.0, seed: int = 0):
    a, b = tables(age_shift_b, seed=seed, life=life)
    stats = [analyze(t.drop(columns=["stimulus_id", "sample"]), n_bootstrap=500,
                     mixed_model=False) for t in (a, b)]
    comparison = compare_frames(a, b, baselines=(1, 1), labels=("base", "cand"),
                                validity=(validity_of(stats[0]), validity_of(stats[1])),
                                n_bootstrap=1000, seed=policy.seed)
    return evaluate(policy, run=RunStats(stats[1]), baseline=RunStats(stats[0]),
                    comparison=comparison,
                    labels={"run": "cand", "baseline": "base"})


def test_same_responder_passes_and_a_stronger_persona_effect_fails():
    policy = load_policy(None, {"max_regression": 0.0, "regression_statistic": "d_rel"})
    same = gate(0.0, policy)
    assert {r.name: r.status for r in same.rules} == {
        "instrument_valid": "pass", "d_rel_ci_low": "skipped", "regression": "pass",
        "tooldrift_delta": "skipped", "tooldrift_regression": "skipped"}, same.rules
    skipped = next(r for r in same.rules if r.name == "d_rel_ci_low")
    assert skipped.summary == "not evaluated: no limit set (--max-d-rel-ci-low X)"
    assert same.exit_status == PASSED
    worse = gate(0.15, policy)
    assert worse.exit_status == RULE_FAILED
    regression = next(r for r in worse.rules if r.name == "regression")
    assert regression.status == "fail" and len(regression.offenders) == 1
    assert regression.offenders[0].startswith("age (dtw): Δ d_rel +")
    assert "q = " in regression.offenders[0] and "40 paired questions" in regression.offenders[0]


def test_an_invalid_instrument_cannot_decide():
    result = gate(0.15, load_policy(None, {"max_regression": 0.0, "max_d_rel_ci_low": 0.0}),
                  life=0.0)
    assert result.exit_status == INSTRUMENT_INVALID
    assert {r.name: r.status for r in result.rules if r.status != "skipped"} == {
        "instrument_valid": "undecided", "d_rel_ci_low": "undecided", "regression": "undecided"}


def test_d_rel_limit_names_the_offending_category_with_its_numbers():
    result = gate(0.3, load_policy(None, {"max_d_rel_ci_low": 0.5}))
    rule = next(r for r in result.rules if r.name == "d_rel_ci_low")
    assert rule.status == "fail"
    assert len(rule.offenders) == 1 and rule.offenders[0].startswith("age (dtw): d_rel +")
    assert "95% CI" in rule.offenders[0] and "n = 80 rows, 40 questions" in rule.offenders[0]


def tooldrift_group(delta, ci, n, reasons=()):
    """A typed tool-drift group with only what the Δ rule reads filled in."""
    from memlens.tooldrift.results import (
        GroupSummary,
        Interpretation,
        NoCallRate,
        PairedTest,
        Proportion,
        Reason,
        ScenarioIntervals,
    )

    return GroupSummary(n, None, None, delta, ScenarioIntervals(None, None, ci, None),
                        PairedTest("t", n, delta),
                        Interpretation(not reasons, tuple(Reason(*r) for r in reasons), 2, 0.25),
                        NoCallRate(Proportion(0, 0, None, None), {}), None)


def tooldrift_summary(overall, by_dimension=None):
    from memlens.tooldrift.results import Attribution, Counts, StatusCount, ToolDriftSummary

    none = StatusCount({}, 0)
    counts = Counts(0, none, none, 0, 0, 0, 0, 0, {}, ())
    return ToolDriftSummary("m", overall, by_dimension or {}, {}, Attribution(False, "x"),
                            counts, 0, 10, ())


def test_tooldrift_rules():
    summary = tooldrift_summary(tooldrift_group(0.3, (0.2, 0.4), 10),
                                {"speed": tooldrift_group(0.05, (-0.1, 0.2), 5)})
    result = evaluate(load_policy(None, {"max_tooldrift_delta": 0.1}), tooldrift=summary)
    assert result.exit_status == RULE_FAILED
    assert result.rules[3].offenders == ("overall: Δ +0.300 [95% CI +0.200, +0.400], lower bound "
                                         "above +0.100; 10 scenarios",)
    assert evaluate(load_policy(None, {"max_tooldrift_delta": 0.25}),
                    tooldrift=summary).exit_status == PASSED


def test_junit_xml_parses_with_one_testcase_per_rule_and_text_is_neutralised():
    result = gate(0.15, load_policy(None, {"max_regression": 0.0, "max_d_rel_ci_low": 5.0}))
    xml = junit_xml(result)
    parsed = JUnitXml.fromstring(xml.encode())
    suites = list(parsed)
    assert len(suites) == 1 and suites[0].tests == 5 and suites[0].failures == 1
    assert suites[0].skipped == 2  # the tool-drift rules: listed, not evaluated
    cases = {case.name: case for case in suites[0]}
    assert set(cases) == {"instrument_valid", "d_rel_ci_low", "regression", "tooldrift_delta",
                          "tooldrift_regression"}
    assert isinstance(cases["regression"].result[0], Failure)
    assert "age (dtw)" in cases["regression"].result[0].text
    assert cases["instrument_valid"].is_passed
    invalid = gate(0.0, load_policy(None, {"max_regression": 0.0}), life=0.0)
    errors = {c.name: c for c in list(JUnitXml.fromstring(junit_xml(invalid).encode()))[0]}
    assert isinstance(errors["instrument_valid"].result[0], Error)
    markdown = markdown_summary(result)
    assert markdown.startswith("## memlens gate: fail (exit status 1)")
    assert "| regression | ❌ fail |" in markdown


def test_hostile_category_names_stay_inert_in_xml_and_markdown():
    from memlens.gate.rules import GateResult, RuleResult

    evil = "<script>alert(1)</script>\x1b[2J|`"
    result = GateResult((RuleResult("regression", "fail", "x", (f"{evil} (dtw): Δ +1",)),), 1)
    xml = junit_xml(result)
    case = list(list(JUnitXml.fromstring(xml.encode()))[0])[0]
    assert evil.replace("\x1b", "\\u001b") in case.result[0].text  # lossless, but escaped
    assert "<script>" not in xml and "\x1b" not in xml
    markdown = markdown_summary(result)
    assert "<script>" not in markdown and "\x1b" not in markdown and "\\|" in markdown


def test_policy_file_errors_name_the_file_and_key(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("max_regression: 0.1\nmax_regresion: 0.2\n")
    with pytest.raises(MemlensError, match=r"policy.yaml: unknown key 'max_regresion'"):
        load_policy(path)
    path.write_text("alpha: 2\n")
    with pytest.raises(MemlensError, match=r"policy.yaml: key 'alpha'"):
        load_policy(path)
    path.write_text("- a\n")
    with pytest.raises(MemlensError, match="must be a mapping"):
        load_policy(path)
    path.write_text("max_regression: 0.1\nmetrics: [sri]\n")
    policy = load_policy(path, {"max_regression": 0.3, "alpha": None})
    assert policy.max_regression == 0.3 and policy.metrics == ["sri"] and policy.alpha == 0.05
    with pytest.raises(MemlensError, match="needs a baseline run"):
        evaluate(policy, run=RunStats(None, "not computed in this test"))
    with pytest.raises(MemlensError, match="no rule to check"):
        evaluate(load_policy(None))


def test_tooldrift_delta_is_undecided_when_the_run_is_not_interpretable():
    summary = tooldrift_summary(tooldrift_group(0.3, (0.2, 0.4), 10, [("no_pairs", "no pairs")]))
    result = evaluate(load_policy(None, {"max_tooldrift_delta": 0.1}), tooldrift=summary)
    assert result.exit_status == INSTRUMENT_INVALID
    assert result.rules[3].offenders == ("overall: not interpretable (no pairs)",)


def test_cli_bad_policy_or_missing_input_exits_2(tmp_path, capsys):
    from memlens.cli.main import main

    policy = tmp_path / "policy.yaml"
    policy.write_text("max_regresion: 0\n")
    assert main(["gate", "--policy", str(policy)]) == 2
    assert "unknown key 'max_regresion'" in capsys.readouterr().err
    assert main(["gate"]) == 2
    assert "no rule to check" in capsys.readouterr().err
    assert main(["gate", str(tmp_path / "nothing")]) == 2
    assert "not a memlens run directory" in capsys.readouterr().err
