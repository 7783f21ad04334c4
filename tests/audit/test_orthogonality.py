"""The orthogonality filter end to end through the loopback server: the scripted rater judges
(q1, age) relevant with confidence 0.9 and (q2, gender) relevant with 0.3; only q1's age drift
row leaves the statistics, it stays in the store flagged, the report lists it, and a re-run
calls nothing."""

import json
import sys
from pathlib import Path

import pytest

from memlens.audit import build_config, drift_frame, run_audit
from memlens.models.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

RATED = {("q1", scripted.AGE): (True, 0.9, "Age <b>decides</b> this one."),
         ("q2", scripted.GENDER): (True, 0.3, "Gender might matter a little.")}
BROKEN = ("q3", scripted.GRIEF)  # invalid twice -> rater_error, never excluded
TEXTS = {s["text"]: s["id"] for s in scripted.STIMULI}


def rater_reply(request: dict) -> str:
    user = request["messages"][1]["content"]
    stimulus_text = user.split("\n", 1)[0].removeprefix("What the user told earlier: ")
    question = user.rsplit("case ", 1)[1].rstrip("?")
    pair = (f"q{question}", TEXTS[stimulus_text])
    if pair == BROKEN:
        return "relevant, probably"
    relevant, confidence, rationale = RATED.get(pair, (False, 0.8, "Unrelated."))
    return json.dumps({"relevant": relevant, "confidence": confidence, "rationale": rationale})


def make_responder(seed: int):
    base = scripted.make_responder(seed)
    cells = scripted.cells_by_seed(seed)

    def responder(request: dict):
        if request.get("model") == "rater":
            return rater_reply(request)
        if request.get("model") != "labeler" and scripted.SCRIPT[cells[request["seed"]]] == "FAIL":
            return scripted.reply_for("ABCE")  # no failing call here: a re-run calls nothing
        return base(request)

    return responder


@pytest.fixture(scope="module")
def filtered(tmp_path_factory):
    directory = tmp_path_factory.mktemp("ortho")
    questions, stimuli = scripted.write_inputs(directory)
    with LoopbackServer(responder=make_responder(3)) as server:
        config = build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "orthogonality_rater": f"openai:rater@{server.base_url}",
            "questions": questions, "stimuli": stimuli, "seed": 3,
            "n_bootstrap": 200, "max_tokens": 64, "samples": 1,
            "baselines": 1})
        result = run_audit(config, directory / "run", progress=False)
        rater_calls = sum(1 for r in server.requests if (r.body or {}).get("model") == "rater")
        first = len(server.requests)
        from memlens.cli.main import main

        code = main(["audit", "--model", config.model, "--labeler", config.labeler,
                     "--orthogonality-rater", config.orthogonality_rater,
                     "--orthogonality-threshold", "0.5", "--questions", questions,
                     "--stimuli", stimuli, "--seed", "3", "--bootstrap", "200",
                     "--max-tokens", "64", "--no-progress", "--baselines", "1",
                     "--out", str(directory / "run")])
        again_calls = len(server.requests) - first
        assert code == 0
    return directory / "run", config, result, rater_calls, again_calls


def test_only_the_confident_pair_leaves_the_statistics(filtered):
    from memlens.store import RunStore

    run_dir, config, result, *_ = filtered
    with RunStore(run_dir) as store:
        everything = drift_frame(store, include_excluded=True)
        analysed = drift_frame(store)
        flagged = [(r["question_id"], r["stimulus_id"]) for r in store.rows("audit_drift")
                   if r.get("excluded_orthogonality")]
    assert flagged == [("q1", scripted.AGE)]
    assert len(everything) - len(analysed) == 1
    assert (everything["category"] == "age").sum() == 4
    stats = json.loads((run_dir / "stats.json").read_text())
    for metric in ("dtw", "sri"):
        cats = stats["metrics"][metric]["categories"]
        assert cats["age"]["n"] == 3          # 4 age rows, q1's excluded
        assert cats["gender"]["n"] == 3       # unchanged: q4's reply is empty, (q2, gender) at 0.3 stays
        assert cats["bereavement"]["n"] == 4  # the rater error excludes nothing
    kept_age = analysed[analysed["category"] == "age"]["dtw"]
    assert cats["age"]["n"] == len(kept_age)
    assert stats["metrics"]["dtw"]["categories"]["age"]["mean"] == pytest.approx(kept_age.mean())


def test_quality_counts_and_report(filtered):
    run_dir, config, result, *_ = filtered
    quality = result.quality
    assert quality["pairs_rated_orthogonality"] == 12  # 4 questions x (age, gender, grief)
    assert quality["pairs_excluded_orthogonality"] == 1
    assert quality["drift_rows_excluded_orthogonality"] == 1
    assert quality["orthogonality_rater_errors"] == 1
    assert quality["drift_rows"] == 26  # every scored row is still in the store
    table = (run_dir / "tables" / "data_quality.csv").read_text()
    assert "pairs_excluded_orthogonality,1" in table
    html = (run_dir / "report.html").read_text()
    assert "Orthogonality filter" in html and "Age &lt;b&gt;decides&lt;/b&gt; this one." in html
    assert "Gender might matter" not in html  # below the threshold: not listed
    assert "<b>decides</b>" not in html
    excluded = (run_dir / "tables" / "orthogonality_excluded.csv").read_text().splitlines()
    assert len(excluded) == 2 and "q1" in excluded[1] and scripted.AGE in excluded[1]
    drift_csv = (run_dir / "tables" / "drift.csv").read_text()
    assert f"q1,persona,age,{scripted.AGE}" not in drift_csv


def test_rater_calls_and_rerun_calls_nothing(filtered):
    _, _, result, rater_calls, again_calls = filtered
    assert rater_calls == 12 + 1  # one call per pair, one repair for the broken reply
    assert result.orthogonality == {"pairs": 12, "rated": 12}
    assert again_calls == 0


def test_dry_run_lists_rater_calls(filtered, capsys):
    from memlens.cli.main import main

    run_dir, config, *_ = filtered
    code = main(["audit", "--model", config.model, "--labeler", config.labeler,
                 "--orthogonality-rater", config.orthogonality_rater,
                 "--questions", config.questions, "--stimuli", config.stimuli, "--seed", "3",
                 "--out", str(run_dir), "--dry-run"])
    out = capsys.readouterr().out
    assert code == 0
    assert "12 (question, persona/life-event stimulus) pairs" in out
    assert "0 calls to make, 12 cached" in out


def test_higher_threshold_on_resume_keeps_everything(filtered, tmp_path):
    import shutil

    run_dir, config, *_ = filtered
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns("memlens.lock"))
    stricter = build_config({**config.model_dump(), "orthogonality_threshold": 0.95})
    result = run_audit(stricter, copy, progress=False)  # all cached: no server
    assert result.quality["pairs_excluded_orthogonality"] == 0
    assert result.stats.metrics["dtw"].categories["age"].n == 4


def test_config_and_flag_validation():
    from memlens.errors import MemlensError

    with pytest.raises(MemlensError, match="orthogonality_threshold"):
        build_config({"orthogonality_threshold": 1.5})
    with pytest.raises(MemlensError, match="orthogonality_rater"):
        build_config({"orthogonality_rater": ""})


def test_control_set_questions_are_never_rated():
    """The should-personalize questions depend on the attribute by design: rating them would pay
    rater calls and count their rows as 'excluded' in the data-quality table."""
    from types import SimpleNamespace

    from memlens.audit.design import Cell
    from memlens.audit.orthogonality import rated_pairs

    benchmark = SimpleNamespace(id="mlq-001", text="How should I plan a week?")
    control = SimpleNamespace(id="sp/disability/1", text="Which hiking route suits me?")
    persona = SimpleNamespace(id="persona/age/old", stimulus_class="persona", text="I am 72.")
    noise = SimpleNamespace(id="noise/filler/1", stimulus_class="noise", text="Um, okay.")
    cells = [Cell(q, s, sample) for q in (benchmark, control) for s in (persona, noise)
             for sample in (0, 1)]
    assert [(q.id, s.id) for q, s in rated_pairs(cells)] == [("mlq-001", "persona/age/old")]
