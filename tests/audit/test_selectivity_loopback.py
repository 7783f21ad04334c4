"""Planted responders behind the loopback server -> the selectivity verdicts they must get.

The audited model replies with tagged steps; it drifts (another step sequence) only when its
planted rule says so: on relevant should-personalize questions only, on every question, or
never. The labeler is the scripted keyword labeler of ``scripted.py``.
"""

import sys
from pathlib import Path

import pytest

from memlens.audit import build_config, run_audit
from memlens.audit.pipeline import drift_frame
from memlens.models.loopback import LoopbackServer
from memlens.questions.should_personalize import load_should_personalize
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

CONTROL_TEXTS = {q.text for q in load_should_personalize()}
MEMORY_TEXTS = [s["text"] for s in scripted.STIMULI if s["class"] in ("persona", "life_event")]


def planted(rule: str):
    """Responder: generation by the planted rule, labeling by the scripted keyword labeler."""
    labeler = scripted.make_responder(0)

    def responder(request: dict):
        if request.get("model") == "labeler":
            return labeler(request)
        prompt = request["messages"][-1]["content"]
        has_memory = any(text in prompt for text in MEMORY_TEXTS)
        relevant = any(text in prompt for text in CONTROL_TEXTS)
        drift = has_memory and (rule == "all" or (rule == "relevant" and relevant))
        return scripted.reply_for("EEDDE" if drift else "ABCD")

    return responder


def audit(tmp_path, rule: str):
    questions, stimuli = scripted.write_inputs(tmp_path)
    with LoopbackServer(responder=planted(rule)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 5, "n_bootstrap": 500, "max_tokens": 64,
            "baselines": 2, "control_set": "should-personalize"})
        result = run_audit(config, tmp_path / rule, progress=False)
    return config, result


@pytest.mark.parametrize(("rule", "verdict"), [("relevant", "selective"),
                                               ("all", "over-sensitive"),
                                               ("none", "memory-blind")])
def test_planted_responders_get_their_verdict(tmp_path, rule, verdict):
    config, result = audit(tmp_path, rule)
    sel = result.selectivity
    # the scripted catalogue has age, gender and bereavement: 4 + 2 (combined) age questions,
    # 4 gender and 4 bereavement questions on the relevant side; 4 benchmark questions each
    assert set(sel.categories) == {"age", "gender", "bereavement"}
    for category, n_relevant in (("age", 6), ("gender", 4), ("bereavement", 4)):
        entry = sel.categories[category]
        assert entry.relevant.n == n_relevant
        assert entry.irrelevant.n == 4
        assert entry.verdict == verdict, (category, entry)
    assert sel.overall.verdict == verdict
    assert sel.summary[verdict] == ["age", "bereavement", "gender"]
    if rule == "relevant":
        # EEDDE vs ABCD: every relevant response drifts by the same DTW, the floor is 0
        entry = sel.categories["age"]
        assert entry.relevant.estimate > 0.5 and entry.irrelevant.estimate == 0
        assert entry.difference.ci_low > 0.5
    with RunStore(tmp_path / rule) as store:
        frame = drift_frame(store)
        inputs = store.read_manifest()["audit"]["inputs"]
    # the control set's rows stay out of the benchmark's statistics
    assert not frame["question_id"].str.startswith("sp/").any() and len(frame) == 4 * 8
    assert inputs["control_set"] == "should-personalize" and inputs["control_questions"] == 14
    assert inputs["planned_drift_rows"]["persona"] == 8  # benchmark cells only


def test_report_section_shows_the_figure_and_the_audit_numbers(tmp_path):
    import json

    from memlens.report import build_report
    from memlens.stats.selectivity import Selectivity

    _, result = audit(tmp_path, "relevant")
    html = build_report(tmp_path / "relevant").read_text()
    assert "Selectivity (should-personalize control set)" in html
    assert (tmp_path / "relevant" / "figures" / "selectivity.png").exists()
    stored = json.loads((tmp_path / "relevant" / "selectivity.json").read_text())
    assert stored == result.selectivity.to_dict()  # same seed, same numbers
    assert Selectivity.from_dict(stored) == result.selectivity  # read back, replicates aside
    assert html.count(">selective<") >= 4  # three categories and overall


def test_no_control_set_no_section(tmp_path):
    from memlens.report import build_report

    config, run = scripted.run_scripted_audit(tmp_path, tmp_path / "plain")
    assert run.selectivity is None
    assert "Selectivity" not in build_report(tmp_path / "plain").read_text()
