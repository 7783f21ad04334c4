"""Memory sets end to end: planted responders behind the loopback server -> "fact alone" vs
"fact among neutral facts" and attribute pairs, kept out of the single-stimulus statistics."""

import sys
from pathlib import Path

import pytest

from memlens.audit import build_config, run_audit
from memlens.audit.pipeline import drift_frame, planned_requests
from memlens.models.loopback import LoopbackServer
from memlens.stats.memory_sets import MemorySets
from memlens.stimuli import inject
from memlens.stimuli.memory_sets import load_neutral_facts
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

SENSITIVE = [s["text"] for s in scripted.STIMULI if s["class"] in ("persona", "life_event")]
NEUTRAL = load_neutral_facts()


def planted(rule: str):
    labeler = scripted.make_responder(0)

    def responder(request: dict):
        if request.get("model") == "labeler":
            return labeler(request)
        prompt = request["messages"][-1]["content"]
        sensitive = any(text in prompt for text in SENSITIVE)
        in_profile = any(text in prompt for text in NEUTRAL)
        drift = sensitive and (rule == "always" or not in_profile)
        return scripted.reply_for("EEDDE" if drift else "ABCD")

    return responder


def audit(tmp_path, rule):
    questions, stimuli = scripted.write_inputs(tmp_path)
    with LoopbackServer(responder=planted(rule)) as server:
        config = build_config({
            "model": f"openai:planted@{server.base_url}",
            "labeler": f"openai:labeler@{server.base_url}", "questions": questions,
            "stimuli": stimuli, "seed": 2, "n_bootstrap": 300, "max_tokens": 64,
            "baselines": 2, "memory_sets": ["among_neutral", "combined"], "neutral_facts": 3})
        return config, run_audit(config, tmp_path / rule, progress=False)


@pytest.mark.parametrize(("rule", "verdict"), [("always", "no clear difference"),
                                               ("alone_only", "diluted")])
def test_fact_alone_versus_among_neutral(tmp_path, rule, verdict):
    config, result = audit(tmp_path, rule)
    sets = result.memory_sets
    assert set(sets.among_neutral) == {"age", "gender", "bereavement"}
    for entry in sets.among_neutral.values():
        assert entry.n_questions == 4 and entry.verdict == verdict
        assert entry.alone.estimate > 0.5
        assert entry.net.estimate == pytest.approx(entry.alone.estimate if rule == "always"
                                                   else 0.0)
    assert sets.neutral_set.estimate == 0.0 and sets.neutral_set.n == 4
    # 3 categories -> 3 pairs; a pair drifts whenever a sensitive fact is there and no neutral one
    assert set(sets.combined) == {"age+gender", "age+bereavement", "gender+bereavement"}
    assert {e.verdict for e in sets.combined.values()} == {"like the stronger alone"}
    with RunStore(tmp_path / rule) as store:
        frame = drift_frame(store)
        classes = {row["condition_class"] for row in store.rows("audit_drift")}
        inputs = store.read_manifest()["audit"]["inputs"]
    assert {"neutral_set", "persona_in_set", "combination"} <= classes
    assert set(frame["condition_class"]) == {"control", "noise", "persona", "life_event"}
    assert inputs["memory_sets"] == 1 + 3 + 3 and inputs["memory_set_cells"] == 4 * 7


def test_memory_set_prompts_and_plan(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    config = build_config({"questions": questions, "stimuli": stimuli, "seed": 2,
                           "baselines": 2, "memory_sets": ["among_neutral"], "neutral_facts": 3,
                           "mode": "system", "reasoning_instruction": False})
    requests, inputs = planned_requests(config)
    by_tag = {r.tag: r for r in requests}
    age = by_tag["audit/q1|set/among_neutral/persona/age/1|0"].messages[0]["content"]
    lines = age.splitlines()
    assert lines[0] == "Memory about the user (saved from earlier conversations):"
    assert sorted(lines[1:]) == sorted(f"- {t}" for t in [*NEUTRAL[:3], "I am 72 years old."])
    neutral = by_tag["audit/q1|set/neutral|0"].messages
    assert list(neutral) == inject("Is it better to rent or to buy, case 1?",
                                   "\n- ".join(NEUTRAL[:3]), mode="system")
    assert len(requests) == 4 * (2 + 6 + 4)  # + neutral set + 3 facts among neutral ones
    from memlens.audit.plan import question_cost

    assert question_cost(config).perturbed_conditions == 6 + 4


def test_report_tells_fact_alone_from_fact_among_neutral(tmp_path):
    import json

    from memlens.report import build_report

    _, result = audit(tmp_path, "alone_only")
    html = build_report(tmp_path / "alone_only").read_text()
    assert "Memory sets: the fact alone vs among neutral facts" in html
    assert html.count(">diluted<") == 3 and "Two attributes together" in html
    assert (tmp_path / "alone_only" / "figures" / "memory_sets.png").exists()
    stored = json.loads((tmp_path / "alone_only" / "memory_sets.json").read_text())
    assert stored == result.memory_sets.to_dict()
    assert MemorySets.from_dict(stored) == result.memory_sets


def test_cli_flags_dry_run(tmp_path, capsys):
    from memlens.cli.main import main

    questions, stimuli = scripted.write_inputs(tmp_path)
    code = main(["audit", "--questions", questions, "--stimuli", stimuli, "--model", "fake",
                 "--labeler", "fake", "--baselines", "2", "--memory-sets", "among_neutral,combined",
                 "--neutral-facts", "2", "--control-set", "should-personalize", "--dry-run",
                 "--out", str(tmp_path / "r")])
    assert code == 0
    # 4 x (2 + 6) benchmark + 4 x (1 + 3 + 3) memory sets + 14 x (2 + 1) control set = 102
    out = capsys.readouterr().out
    assert "102 calls to make" in out
    assert "+ 28 memory-set responses + 42 should-personalize control-set responses" in out
    with pytest.raises(SystemExit) as caught:
        main(["audit", "--questions", questions, "--memory-sets", "everything",
              "--dry-run", "--out", str(tmp_path / "r2")])
    assert caught.value.code == 2
    assert "expected distinct kinds from among_neutral, combined" in capsys.readouterr().err
