"""--memory-template in an audit: every condition rendered by it, recorded, resume guarded."""

import sys
from pathlib import Path

import pytest

from memlens.audit import build_config, run_audit
from memlens.errors import MemlensError
from memlens.store import RunStore

sys.path.insert(0, str(Path(__file__).parent))
import scripted  # noqa: E402

REPLY = "<think><step_1>We should weigh cost.</step_1></think><answer>ok</answer>"


def test_template_renders_every_condition_and_guards_the_resume(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    template = tmp_path / "mine.yaml"
    template.write_text('name: mine\nsystem: "Profile:\\n{memory_list}"\nitem: "* {fact}"\n')
    config = build_config({"labeler": "fake", "questions": questions, "stimuli": stimuli,
                           "n_questions": 1, "baselines": 2, "memory_template": str(template),
                           "n_bootstrap": 200})
    seen: list[list[dict]] = []

    def assistant(messages):
        seen.append(messages)
        return REPLY

    run_audit(config, tmp_path / "run", progress=False, model=assistant, model_name="a")
    systems = sorted({m[0]["content"] for m in seen})
    assert systems == sorted(["Profile:\n* ", "Profile:\n* Um, so, well...", "Profile:\n*    ",
                              "Profile:\n* ...!?", "Profile:\n* I am 72 years old.",
                              "Profile:\n* I am a woman.", "Profile:\n* My father died last "
                              "spring. I still think about him every day."])
    assert sum(m[0]["content"] == "Profile:\n* " for m in seen) == 2  # the two baselines
    with RunStore(tmp_path / "run") as store:
        inputs = store.read_manifest()["audit"]["inputs"]
    assert inputs["memory_template"] == "mine" and len(inputs["memory_template_sha256"]) == 64
    template.write_text('name: mine\nsystem: "Profile:\\n{memory_list}"\nitem: "+ {fact}"\n')
    with pytest.raises(MemlensError, match="memory_template content"):
        run_audit(config, tmp_path / "run", progress=False, model=assistant, model_name="a")


def test_bundled_template_by_name_and_cli_flag(tmp_path):
    from memlens.cli.main import main

    questions, stimuli = scripted.write_inputs(tmp_path)
    code = main(["audit", "--questions", questions, "--stimuli", stimuli, "--model", "fake",
                 "--labeler", "fake", "--memory-template", "json-profile", "--dry-run",
                 "--out", str(tmp_path / "r")])
    assert code == 0
    assert main(["audit", "--questions", questions, "--stimuli", stimuli, "--model", "fake",
                 "--memory-template", "nope", "--dry-run", "--out", str(tmp_path / "r2")]) == 2


def test_tool_result_template_with_a_callable_resumes(tmp_path):
    questions, stimuli = scripted.write_inputs(tmp_path)
    template = tmp_path / "tool.yaml"
    template.write_text("name: tool\nturns:\n  - {role: tool, tool_name: get_profile, "
                        "content: '{{\"facts\": {memory_json}}}'}\n")
    config = build_config({"labeler": "fake", "questions": questions, "stimuli": stimuli,
                           "n_questions": 1, "baselines": 2, "memory_template": str(template),
                           "n_bootstrap": 200})
    seen: list[list[dict]] = []

    def assistant(messages):
        seen.append(messages)
        return REPLY

    run_audit(config, tmp_path / "run", progress=False, model=assistant, model_name="t")
    assert len(seen) == 2 + 6
    tool_messages = sorted(m[1]["content"] for m in seen)
    assert tool_messages[0] == '{"facts": ["   "]}' and '{"facts": []}' in tool_messages
    assert all(m[0]["tool_calls"][0]["function"]["name"] == "get_profile" for m in seen)
    with RunStore(tmp_path / "run") as store:
        store.delete_table("audit_steps")  # force every cell through the request cache again
    run_audit(config, tmp_path / "run", progress=False, model=assistant, model_name="t")
    assert len(seen) == 8  # all from the cache
