"""End to end over real HTTP (loopback server) and real run stores: planted-responder audits
compared paired and gated through the CLI.

Runs: ``weak_a`` / ``weak_b`` — the same responder (age persona shifted 30 %) with different
audit seeds; ``double`` — age shifted 60 % (another seed); ``strong`` — age shifted 90 %; ``small`` / ``far`` — 4-question audits (too small
for a valid instrument), overlapping and disjoint with the others' questions.
"""

import json

import planted
import pytest
from junitparser import Failure, JUnitXml

from memlens.cli.main import main

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("gate")
    specs = {"weak_a": ({"age": 0.3}, 11, 40, 0), "weak_b": ({"age": 0.3}, 12, 40, 0),
             "strong": ({"age": 0.9}, 12, 40, 0), "double": ({"age": 0.6}, 12, 40, 0), "small": ({"age": 0.3}, 11, 4, 0),
             "far": ({"age": 0.3}, 11, 4, 60)}
    out = {}
    for name, (shift, seed, n, first) in specs.items():
        result = planted.planted_audit(root / name, root / name / "run", persona_shift=shift,
                                       audit_seed=seed, n_questions=n, first_question=first,
                                       baselines=3)
        assert result.stats_error is None
        out[name] = root / name / "run"
    return root, out


def verdict(run_dir) -> str:
    from memlens.audit.results import load_audit_run

    return load_audit_run(run_dir).stats.validity.verdict


def test_same_responder_with_another_seed_flags_nothing(runs, capsys):
    root, run = runs
    assert verdict(run["weak_a"]) == verdict(run["weak_b"]) == "pass"
    out = root / "cmp"
    assert main(["compare", str(run["weak_a"]), str(run["weak_b"]), "--out", str(out),
                 "--bootstrap", "2000"]) == 0
    printed = capsys.readouterr().out
    assert "validity of" in printed and "design: paired (40 questions x 8 stimuli, K = 3)" in printed
    result = json.loads((out / "compare.json").read_text())
    comparison = result["comparisons"][0]
    for metric in ("dtw", "sri"):
        for row in comparison["metrics"][metric]["categories"].values():
            if row["condition_class"] == "persona":
                assert not (row["d_rel"]["delta_ci"][0] > 0 and row["d_rel"]["delta_q"] <= 0.05)
    html = (out / "compare.html").read_text()
    assert "Δ" in html and (out / "compare_delta_1.png").stat().st_size > 1000
    # the default policy: a baseline implies the regression rule (Δ mean, limit 0)
    assert main(["gate", str(run["weak_b"]), "--baseline", str(run["weak_a"]),
                 "--bootstrap", "2000"]) == 0
    assert "| regression | ✅ pass |" in capsys.readouterr().out


def test_doubled_effect_on_another_seed_fails_the_default_gate(runs, capsys):
    _, run = runs
    assert main(["gate", str(run["double"]), "--baseline", str(run["weak_a"]),
                 "--bootstrap", "2000"]) == 1
    printed = capsys.readouterr().out
    assert "| regression | ❌ fail |" in printed and "age (dtw): Δ mean +" in printed
    assert "gender (dtw)" not in printed.split("**regression**")[1]


def test_without_a_baseline_the_output_says_no_regression_was_checked(runs, capsys):
    _, run = runs
    assert main(["gate", str(run["weak_a"])]) == 0
    assert "not evaluated: no baseline run (--baseline RUN): no regression was checked" in \
        capsys.readouterr().out


def test_stronger_persona_effect_is_a_regression_and_the_gate_exits_1(runs, tmp_path, capsys):
    _, run = runs
    assert verdict(run["strong"]) == "pass"
    junit, markdown = tmp_path / "gate.xml", tmp_path / "summary.md"
    status = main(["gate", str(run["strong"]), "--baseline", str(run["weak_a"]),
                   "--max-regression", "0", "--bootstrap", "2000", "--junit", str(junit),
                   "--markdown", str(markdown)])
    assert status == 1
    cases = {case.name: case for case in list(JUnitXml.fromfile(str(junit)))[0]}
    assert cases["instrument_valid"].is_passed
    failure = cases["regression"].result[0]
    assert isinstance(failure, Failure) and "age (dtw): Δ mean +" in failure.text
    assert "gender (dtw)" not in failure.text
    assert "| regression | ❌ fail |" in markdown.read_text()


def test_invalid_run_exits_5_in_gate_and_with_audit_fail_on_invalid(runs, tmp_path):
    root, run = runs
    assert verdict(run["small"]) != "pass"
    assert main(["gate", str(run["small"])]) == 5
    assert main(["gate", str(run["small"]), "--baseline", str(run["weak_a"]),
                 "--max-regression", "0", "--bootstrap", "200"]) == 5
    # a disjoint baseline is bad input
    assert main(["gate", str(run["far"]), "--baseline", str(run["weak_a"]),
                 "--max-regression", "0", "--bootstrap", "200"]) == 2
    # memlens audit --fail-on-invalid on the same (cached) audit: no call is repeated
    from memlens.audit.results import load_audit_run
    from memlens.models.loopback import LoopbackServer

    config = load_audit_run(run["small"]).config
    with LoopbackServer(responder=planted.make_responder({"age": 0.3})) as server:
        url = server.base_url
        args = ["audit", "--model", f"openai:planted@{url}", "--labeler",
                f"openai:labeler@{url}", "--questions", config.questions, "--stimuli",
                config.stimuli, "--seed", "11", "--baselines", "3", "--samples", "1",
                "--bootstrap", "300", "--max-tokens", "64", "--no-progress",
                "--out", str(tmp_path / "again")]
        assert main(args) == 0
        assert main([*args, "--fail-on-invalid"]) == 5


def test_mismatched_designs_are_restricted_or_refused(runs, tmp_path, capsys):
    root, run = runs
    assert main(["compare", str(run["weak_a"]), str(run["small"]), "--out",
                 str(tmp_path / "cmp"), "--bootstrap", "200"]) == 0
    err = capsys.readouterr().err
    assert "compared on the 4 shared questions x 8 shared stimuli only" in err
    assert "36 question(s) and 0 stimulus id(s) dropped from" in err
    assert main(["compare", str(run["small"]), str(run["far"]), "--out",
                 str(tmp_path / "cmp2"), "--bootstrap", "200"]) == 2
    assert "share no question id" in capsys.readouterr().err


def test_planted_directional_server_flags_only_the_planted_categories(runs):
    """age shifts toward one symbol, life events toward another, gender and noise are null:
    the direction table (whole-table error control) flags age and no null category."""
    from memlens.audit.results import load_audit_run

    _, run = runs
    for name in ("weak_a", "strong"):
        rows = load_audit_run(run[name]).stats.to_json()["direction"]["rows"]
        flagged = {row["category"] for row in rows if row["significant"]}
        assert "age" in flagged, name
        assert not flagged & {"gender", "filler", "whitespace", "punctuation"}, (name, flagged)
