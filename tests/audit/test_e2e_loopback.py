"""End to end through real HTTP: scripted replies -> known symbols -> known drift -> statistics
-> report; then a second run calls nothing."""

import json
import sys
from pathlib import Path

import pandas as pd
import pytest

from memlens.audit import build_config, run_audit
from memlens.metrics import dtw, sri
from memlens.models.loopback import LoopbackServer

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    directory = tmp_path_factory.mktemp("e2e")
    questions, stimuli = scripted.write_inputs(directory)
    with LoopbackServer(responder=scripted.make_responder(3), faults=scripted.faults_for(3)) as server:
        config = build_config({
            "model": f"openai:scripted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}",
            "questions": str(questions), "stimuli": str(stimuli), "seed": 3,
            "n_bootstrap": 500, "max_tokens": 64, "samples": 1,
            "baselines": 1})  # the paper design: the script knows samples 0 and 1
        result = run_audit(config, directory / "run", progress=False)
        first_requests = len(server.requests)
        again = run_audit(config, directory / "run", progress=False)
        second_requests = len(server.requests) - first_requests
        from memlens.cli.main import main

        cli_code = main(["audit", "--model", config.model, "--labeler", config.labeler,
                         "--questions", questions, "--stimuli", stimuli, "--seed", "3",
                         "--bootstrap", "500", "--max-tokens", "64", "--no-progress",
                         "--baselines", "1",
                         "--out", str(directory / "run")])
        assert cli_code == 3  # finished, but the scripted HTTP 400 call failed again
    return directory / "run", result, again, first_requests, second_requests


def expected_rows() -> dict[str, tuple[float, float]]:
    expected = {}
    for (q, stimulus, sample) in scripted.SCRIPT:
        if (stimulus, sample) == (scripted.CTRL, 0):
            continue
        base = scripted.expected_sequence((q, scripted.CTRL, 0))
        seq = scripted.expected_sequence((q, stimulus, sample))
        if seq is not None:
            expected[f"{q}|{stimulus}|{sample}"] = (dtw(base, seq), sri(base, seq))
    return expected


def test_drift_rows_are_the_scripted_values(audited):
    run_dir, result, *_ = audited
    table = pd.read_csv(run_dir / "tables" / "drift.csv")
    got = {f"{r.question_id}|{r.stimulus_id}|{r.sample}": (r.dtw, r.sri)
           for r in table.itertuples()}
    expected = expected_rows()
    assert set(got) == set(expected) and len(got) == 32 - 4 - 3
    for key, (d, s) in expected.items():
        assert got[key] == pytest.approx((d, s)), key
    # hand-checked anchors: ABCD vs ABCE -> one substitution of four
    assert got[f"q2|{scripted.CTRL}|1"][0] == pytest.approx(0.25)
    assert got[f"q1|{scripted.CTRL}|1"] == (0.0, 0.0)


def test_statistics_on_the_known_table(audited):
    run_dir, result, *_ = audited
    stats = json.loads((run_dir / "stats.json").read_text())
    expected = expected_rows()
    for metric, index in (("dtw", 0), ("sri", 1)):
        cats = stats["metrics"][metric]["categories"]
        floor = [v[index] for k, v in expected.items() if scripted.CTRL in k]
        grief = [v[index] for k, v in expected.items() if scripted.GRIEF in k]
        assert cats["no_perturbation"]["n"] == len(floor) == 4
        assert cats["bereavement"]["mean"] == pytest.approx(sum(grief) / len(grief))
        floor_mean = sum(floor) / len(floor)
        assert cats["bereavement"]["elevation_pct"] == pytest.approx(
            100 * (sum(grief) / len(grief) - floor_mean) / floor_mean)
        assert cats["whitespace"]["n"] == 3  # q3's call failed
    validity = stats["validity"]
    assert validity["verdict"] in ("pass", "fail", "inconclusive")
    # q3 whitespace failed its call, q4 filler was labelled garbage: 10 of 12 noise rows
    assert validity["coverage"]["noise"] == {"planned": 12, "usable": 10}
    assert validity["explanation"] and stats["design"]["baselines"] == 1


def test_quality_counts_and_report(audited):
    run_dir, result, *_ = audited
    quality = result.quality
    assert quality["failed_calls"] == 1
    assert quality["responses_without_steps"] == 1
    assert quality["responses_all_steps_unlabeled"] == 1
    assert quality["drift_rows"] == 25
    html = (run_dir / "report.html").read_text()
    assert "<script>alert" not in html
    assert "&lt;script&gt;alert(&#x27;drift&#x27;)&lt;/script&gt;" in html
    assert 'src="http' not in html and 'href="http' not in html and "<link" not in html
    for name in ("validity", "persona_forest", "tiers"):
        assert (run_dir / "figures" / f"{name}.png").stat().st_size > 1000
        assert (run_dir / "figures" / f"{name}.svg").exists()
    for name in ("drift", "categories", "mixed_model", "data_quality"):
        assert (run_dir / "tables" / f"{name}.parquet").exists()


def test_second_run_calls_nothing(audited):
    _, result, again, first, second = audited
    # 32 generation calls, then one labeler call per distinct step list (identical prompts are
    # deduplicated by the engine's cache keys) plus one repair call for the garbage reply
    distinct = {scripted.SCRIPT[c] for c in scripted.SCRIPT} - {None, "FAIL"}
    assert first == 32 + len(distinct) + 1
    # the failed call is retried (failures are not cached); nothing else is called again
    assert second == 1
    assert again.calls["pending"] == 1 and again.labels["responses"] == 0
    assert again.drift["scored"] == 0


def test_compare_two_runs_and_report_rebuild(audited, tmp_path):
    import shutil

    from memlens.cli.main import main

    run_dir, *_ = audited
    other = tmp_path / "other"
    shutil.copytree(run_dir, other, ignore=shutil.ignore_patterns("memlens.lock"))
    out = tmp_path / "cmp"
    assert main(["compare", str(run_dir), str(other), "--out", str(out)]) == 0
    table = pd.read_csv(out / "compare.csv")
    assert table["run"].nunique() == 2
    persona = table[(table["condition_class"] == "persona") & (table["metric"] == "dtw")]
    # the same audit twice: identical d_rel per category in both runs
    assert persona.groupby("category")["d_rel"].nunique().eq(1).all()
    assert (out / "compare.png").stat().st_size > 1000 and (out / "compare.svg").exists()
    assert "<script" not in (out / "compare.html").read_text()
    (other / "report.html").unlink()
    assert main(["report", str(other)]) == 0  # no server is running: no model call possible
    assert (other / "report.html").exists()


def test_manifest_records_the_audit(audited):
    from memlens.store import RunStore

    run_dir, *_ = audited
    with RunStore(run_dir) as store:
        manifest = store.read_manifest()["audit"]
    assert manifest["config"]["seed"] == 3 and manifest["seed"] == 3
    assert manifest["model"].startswith("openai:scripted@http://127.0.0.1:")
    assert manifest["inputs"]["cells"] == 32 and manifest["inputs"]["questions"] == 4
    for key in ("questions_sha256", "stimuli_sha256", "ontology_sha256"):
        assert len(manifest["inputs"][key]) == 64
    assert manifest["versions"]["statsmodels"]


def test_resume_with_other_settings_is_refused(audited):
    from memlens.audit import build_config
    from memlens.errors import MemlensError

    run_dir, *_ = audited
    with pytest.raises(MemlensError, match=r"different settings \(.*samples"):
        run_audit(build_config({"samples": 2}), run_dir, progress=False)
