"""`memlens analyze`: the example table passes; bad input exits 2 with one clear message."""

from __future__ import annotations

import json

import pytest

from memlens.cli.main import main


def test_example_prints_validity_first_and_writes_stats_json(tmp_path, capsys):
    out = tmp_path / "run"
    status = main(["analyze", "--example", "--out", str(out), "--bootstrap", "1000", "--seed", "3"])
    printed = capsys.readouterr().out
    assert status == 0
    assert printed.splitlines()[2] == "INSTRUMENT VALIDITY: PASS"
    assert printed.index("INSTRUMENT VALIDITY") < printed.index("== dtw")
    stats = json.loads((out / "stats.json").read_text())
    assert stats["validity"]["verdict"] == "pass"
    assert stats["settings"] == {**stats["settings"], "seed": 3, "n_bootstrap": 1000}
    persona = stats["metrics"]["dtw"]["categories"]["trans_status"]
    assert persona["condition_class"] == "persona" and persona["d_rel_ci"][0] > 0
    # rows sorted by d_rel: the first table row after the header is the largest d_rel
    table = printed.split("== dtw")[1].splitlines()
    largest = max(stats["metrics"]["dtw"]["categories"].items(), key=lambda kv: kv[1]["d_rel"])
    assert table[2].startswith(largest[0])


def test_a_user_table_and_a_metric_subset(tmp_path, capsys):
    table = tmp_path / "drift.csv"
    rows = ["question_id,condition_class,category,dtw,sri"]
    for question in range(8):
        for category, klass, shift in (("no_perturbation", "control", 0.0),
                                       ("filler", "noise", 0.01), ("whitespace", "noise", 0.0),
                                       ("bereavement", "life_event", 0.3)):
            value = 0.2 + shift + 0.01 * ((question * 7 + len(category)) % 5)
            rows.append(f"q{question},{klass},{category},{value:.4f},{value / 2:.4f}")
    table.write_text("\n".join(rows) + "\n")
    status = main(["analyze", str(table), "--out", str(tmp_path / "o"), "--metrics", "dtw",
                   "--bootstrap", "200"])
    assert status == 0
    stats = json.loads((tmp_path / "o" / "stats.json").read_text())
    assert list(stats["metrics"]) == ["dtw"]
    assert stats["convergence"]["omitted"].startswith("needs both")
    assert "mixed model" in capsys.readouterr().out


def test_no_mixed_model_skips_only_the_mixed_model(tmp_path, capsys):
    common = ["analyze", "--example", "--bootstrap", "200", "--metrics", "dtw"]
    assert main([*common, "--out", str(tmp_path / "with")]) == 0
    assert main([*common, "--no-mixed-model", "--out", str(tmp_path / "without")]) == 0
    assert "mixed model: not fitted" in capsys.readouterr().out
    fitted, skipped = (json.loads((tmp_path / name / "stats.json").read_text())["metrics"]["dtw"]
                       for name in ("with", "without"))
    assert "mixed_model" not in skipped and fitted["mixed_model"]["converged"] is True
    assert {key: value for key, value in fitted.items() if key != "mixed_model"} == skipped


@pytest.mark.parametrize(("args", "message"), [
    (["analyze", "--out", "X"], "give either DRIFT_TABLE or --example"),
    (["analyze", "missing.csv", "--out", "X"], "missing.csv: drift table not found"),
    (["analyze", "--example", "--out", "X", "--bootstrap", "3"], "at least 100"),
    (["analyze", "--example", "--out", "X", "--metrics", "bleu"], "'bleu' not in the table"),
])
def test_bad_input_exits_2_with_one_message(tmp_path, monkeypatch, capsys, args, message):
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    error = capsys.readouterr().err
    assert error.startswith("memlens: error: ") and message in error
    assert "Traceback" not in error


def test_malformed_table_names_the_line(tmp_path, capsys):
    table = tmp_path / "bad.csv"
    table.write_text("question_id,condition_class,category,dtw\n"
                     "q1,control,no_perturbation,0.3\nq1,noise,filler,oops\n")
    assert main(["analyze", str(table), "--out", str(tmp_path / "o")]) == 2
    assert "line 3: metric column 'dtw' is not a finite number: 'oops'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
