"""Paired tool-drift comparison: ΔΔ by hand, restriction / refusal, and the CLI."""

import json

import pytest

from memlens.cli.main import main
from memlens.errors import MemlensError
from memlens.tooldrift.compare import compare_tooldrift, load_summary


def summary(rates: dict[str, tuple[float | None, float | None]]) -> dict:
    return {"scenarios": [{"entry_id": entry, "bias_dimension": entry.split("/")[0],
                           "domain": entry.split("/")[1], "r_neutral": n, "r_biased": b}
                          for entry, (n, b) in rates.items()]}


A = summary({"speed/finance/s1": (0.0, 0.5), "speed/legal/s1": (0.25, 0.25),
             "risk/finance/s1": (0.0, 0.0), "risk/legal/s1": (0.5, 1.0)})
B = summary({"speed/finance/s1": (0.0, 1.0), "speed/legal/s1": (0.25, 0.75),
             "risk/finance/s1": (0.0, 0.0), "risk/legal/s1": (0.5, 1.0)})


def test_delta_of_delta_by_hand():
    result = compare_tooldrift(A, B, n_bootstrap=500)
    overall = result["overall"]
    # Δ_A = mean(.5, .25, 0, 1) - mean(0, .25, 0, .5) = .4375 - .1875 = .25
    # Δ_B = mean(1, .75, 0, 1) - .1875 = .6875 - .1875 = .5
    assert overall["a"] == pytest.approx(0.25) and overall["b"] == pytest.approx(0.5)
    assert overall["delta"] == pytest.approx(0.25)
    assert overall["n_paired"] == 4 and overall["interpretable"]
    speed, risk = result["by_dimension"]["speed"], result["by_dimension"]["risk"]
    assert speed["delta"] == pytest.approx(0.5)  # (.375 - .125) -> (.875 - .125)
    assert risk["delta"] == pytest.approx(0.0) and risk["delta_ci"] == pytest.approx([0, 0])
    assert "delta_q" in speed and result["design"]["status"] == "paired"


def test_overlap_is_restricted_and_disjoint_refused():
    extra = summary({**{s["entry_id"]: (s["r_neutral"], s["r_biased"]) for s in B["scenarios"]},
                     "speed/health/s9": (0.0, 1.0)})
    result = compare_tooldrift(A, extra, n_bootstrap=200)
    assert result["design"]["status"] == "restricted"
    assert result["design"]["dropped"] == {"A": 0, "B": 1}
    assert "1 dropped from B" in result["design"]["warning"]
    assert result["overall"]["delta"] == pytest.approx(0.25)
    with pytest.raises(MemlensError, match="share no entry"):
        compare_tooldrift(A, summary({"x/y/z": (0.0, 1.0)}))


def test_groups_without_paired_rates_are_not_interpretable():
    one = summary({"speed/finance/s1": (None, 0.5), "risk/legal/s1": (0.0, 1.0)})
    result = compare_tooldrift(one, one, n_bootstrap=200)
    assert result["by_dimension"]["speed"]["interpretable"] is False
    assert result["by_dimension"]["speed"]["delta"] is None
    assert result["overall"]["interpretable"] is False  # one paired scenario only


def test_cli_tooldrift_compare(tmp_path, capsys):
    for name, data in (("a", A), ("b", B)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "tooldrift.json").write_text(json.dumps(data))
    status = main(["tooldrift", "compare", str(tmp_path / "a"), str(tmp_path / "b"),
                   "--bootstrap", "200", "--out", str(tmp_path / "out")])
    assert status == 0
    printed = capsys.readouterr().out
    assert "overall" in printed and "+0.250" in printed
    assert load_summary(tmp_path / "a")["scenarios"][0]["entry_id"] == "speed/finance/s1"
    saved = json.loads((tmp_path / "out" / "tooldrift_compare.json").read_text())
    assert saved["overall"]["delta"] == pytest.approx(0.25)
    (tmp_path / "bad.json").write_text('{"scenarios": 3}')
    assert main(["tooldrift", "compare", str(tmp_path / "a"), str(tmp_path / "bad.json")]) == 2
    assert "'scenarios' must be a list" in capsys.readouterr().err
    # the gate's tool-drift rules on the same runs
    assert main(["gate", "--tooldrift", str(tmp_path / "b"), "--tooldrift-baseline",
                 str(tmp_path / "a"), "--max-tooldrift-regression", "0.5",
                 "--bootstrap", "200"]) == 0


def test_a_run_whose_delta_is_not_interpretable_marks_the_group():
    reason = {"interpretable": False, "reasons": [{"code": "biased_rarely_retrieved",
                                                   "text": "retrieved in 0 of 4"}]}
    b = {**B, "by_dimension": {"speed": {"interpretation": reason}}}
    result = compare_tooldrift(A, b, n_bootstrap=200)
    assert result["by_dimension"]["speed"]["interpretable"] is False
    assert "B: retrieved in 0 of 4" in result["by_dimension"]["speed"]["note"]
    assert result["by_dimension"]["risk"]["interpretable"] is True
