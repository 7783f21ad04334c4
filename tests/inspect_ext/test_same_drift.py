"""The same small audit through memlens's runner and through ``inspect eval`` + import: the
same requests reach the server, and the drift tables and statistics are identical.

Both runs talk to one OpenAI-compatible loopback server on 127.0.0.1 (memlens's ``openai:``
backend, inspect's ``openai-api`` provider). Its replies are a function of the request's seed
(``tests/audit/scripted.py``: known symbol sequences), and the labeler is the scripted LLM
labeler on the same server, so every difference between the two paths would show.
"""

import sys
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("inspect_ai")
pytestmark = pytest.mark.slow  # ~30 s on a loaded 2-core machine: two runs, two imports

from memlens.audit import build_config, run_audit  # noqa: E402
from memlens.audit.pipeline import drift_frame  # noqa: E402
from memlens.models.loopback import LoopbackServer  # noqa: E402
from memlens.store import RunStore  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "audit"))
import scripted  # noqa: E402

SEED = 3
SETTINGS = {"seed": SEED, "n_bootstrap": 200, "max_tokens": 64, "samples": 1, "baselines": 1}


def responder():
    """Generation by seed (the scripted cells; the HTTP-400 and garbage cells get "ABC"),
    labeling by keywords."""
    cells = scripted.cells_by_seed(SEED)

    def reply(request: dict):
        if request.get("model") == "labeler":
            return scripted.keyword_labels(request)
        script = scripted.SCRIPT[cells[request["seed"]]]
        if script is None:
            return {"content": "", "finish_reason": "length"}
        return scripted.reply_for("ABC" if script in ("FAIL", "GARBAGE") else script)

    return reply


def generation_calls(server, start: int, stop: int) -> list[tuple]:
    """What each generation request asked for, sorted: seed, sampling and message texts."""
    calls = []
    for received in server.requests[start:stop]:
        body = received.body or {}
        if body.get("model") == "labeler":
            continue
        messages = tuple((m["role"], m["content"] if isinstance(m["content"], str)
                          else "".join(part["text"] for part in m["content"]))
                         for m in body["messages"])
        calls.append((body["seed"], body.get("temperature"), body.get("top_p"),
                      body.get("top_k"), body.get("max_tokens")
                      or body.get("max_completion_tokens"), messages))
    return sorted(calls)


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory):
    import inspect_ai

    from memlens.inspect_ext.importer import import_inspect_log
    from memlens.inspect_ext.tasks import reasoning_drift

    directory = tmp_path_factory.mktemp("same")
    questions, stimuli = scripted.write_inputs(directory)
    with LoopbackServer(responder=responder()) as server, pytest.MonkeyPatch.context() as env:
        env.setenv("LOOP_API_KEY", "not-a-secret")
        config = build_config({"model": f"openai:scripted@{server.base_url}",
                               "labeler": f"openai:labeler@{server.base_url}",
                               "questions": questions, "stimuli": stimuli, **SETTINGS})
        memlens_result = run_audit(config, directory / "memlens", progress=False)
        after_memlens = len(server.requests)
        task = reasoning_drift(preset="none", labeler=f"openai:labeler@{server.base_url}",
                               questions=questions, stimuli=stimuli, **SETTINGS)
        [log] = inspect_ai.eval(task, model="openai-api/loop/scripted",
                                model_base_url=server.base_url, log_dir=str(directory / "logs"),
                                display="none")
        after_inspect = len(server.requests)
        imported = import_inspect_log(log.location, directory / "inspect", progress=False)
        after_import = len(server.requests)
        again = import_inspect_log(log.location, directory / "inspect", progress=False)
    return {"server": server, "log": log, "memlens": memlens_result, "imported": imported,
            "again": again, "counts": (after_memlens, after_inspect, after_import),
            "dir": directory}


def test_the_inspect_run_sends_the_same_generation_requests(both_runs):
    server, (after_memlens, after_inspect, after_import) = both_runs["server"], both_runs["counts"]
    ours = generation_calls(server, 0, after_memlens)
    theirs = generation_calls(server, after_memlens, after_inspect)
    assert len(ours) == 4 * (2 + 6) == len(theirs)  # 4 questions x (2 no-memory + 6 stimuli)
    assert ours == theirs
    assert {call[3] for call in theirs} == {50}  # top_k reached the server through inspect too
    assert both_runs["log"].status == "success"
    assert after_import == after_inspect  # the import calls no model: the scorer labelled all


def test_drift_tables_and_statistics_are_identical(both_runs):
    directory = both_runs["dir"]
    with RunStore(directory / "memlens", read_only=True) as a, \
            RunStore(directory / "inspect", read_only=True) as b:
        ours, theirs = drift_frame(a), drift_frame(b)
    assert len(ours) == 4 * 7 - 1  # q4's empty reply is excluded from drift, as memlens does
    pd.testing.assert_frame_equal(ours, theirs)
    # hand-checked anchor: q2's second no-memory sample ABCE vs its baseline ABCD
    row = ours[(ours.question_id == "q2") & (ours.condition_class == "control")].iloc[0]
    assert row.dtw == pytest.approx(0.25)
    a_stats, b_stats = both_runs["memlens"].stats.to_json(), both_runs["imported"].stats.to_json()
    a_stats.pop("design"), b_stats.pop("design")
    assert a_stats == b_stats


def test_import_again_resumes_without_recomputing(both_runs):
    again = both_runs["again"]
    assert again.calls["pending"] == 0 and again.labels["responses"] == 0
    assert again.stats.to_json() == both_runs["imported"].stats.to_json()


def test_the_log_records_symbols_in_the_score_metadata(both_runs):
    sample = next(s for s in both_runs["log"].samples if s.id == f"q1|{scripted.AGE}|0")
    meta = sample.scores["reasoning_steps"].metadata
    assert meta["symbols"] == scripted.expected_sequence(("q1", scripted.AGE, 0))
    assert sample.scores["reasoning_steps"].value == 4


def test_the_class_drift_metric_is_memlens_drift_per_class(both_runs):
    """inspect's summary metric (what ``inspect view`` shows per task) is the class mean of
    memlens's own drift rows."""
    with RunStore(both_runs["dir"] / "memlens", read_only=True) as store:
        frame = drift_frame(store)
    [scores] = both_runs["log"].results.scores
    for klass, rows in frame.groupby("condition_class"):
        assert scores.metrics[f"{klass}_dtw"].value == pytest.approx(rows.dtw.mean())
        assert scores.metrics[f"{klass}_n"].value == len(rows)
