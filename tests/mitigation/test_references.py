"""Reference builder: the judge's pick becomes o*(x), invalid picks fall back and are counted,
output is an 80/20 HF data set with perturbed prompts, re-runs make no calls."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

pytest.importorskip("datasets")

from memlens.errors import MemlensError  # noqa: E402
from memlens.mitigation.references import ReferenceConfig, build_references  # noqa: E402
from memlens.models import FakeModel  # noqa: E402

CANDIDATES = [
    "Maybe.",                                                            # sentence: one step
    "<think><step_1>Split the cost into a fair share.</step_1><step_2>Budget the money."
    "</step_2></think><answer>Split it.</answer>",
    "<think><step_1>Stay safe and avoid the risk.</step_1></think><answer>Wait.</answer>",
]


def policy() -> FakeModel:
    counts: dict[str, int] = defaultdict(int)

    def reply(messages, params):
        key = messages[-1]["content"]
        counts[key] += 1
        return CANDIDATES[(counts[key] - 1) % len(CANDIDATES)]

    return FakeModel(reply, model_id="policy")


def judge(picks: dict[str, str]) -> FakeModel:
    """Replies with the pick for a question id substring, else garbage."""
    def reply(messages, params):
        prompt = messages[-1]["content"]
        return next((pick for key, pick in picks.items() if key in prompt), "no idea")

    return FakeModel(reply, model_id="judge")


def test_judge_pick_is_labeled_into_the_reference(tmp_path):
    from datasets import load_from_disk

    from memlens.questions import load_questions

    questions = load_questions()[:5]
    picks = {questions[0].text: '{"best": 2}', questions[1].text: '{"best": 3}',
             questions[2].text: '{"best": 9}', questions[3].text: "```json\n{\"best\": 2}\n```"}
    config = ReferenceConfig(limit=5, candidates=3, labeler="keyword")
    report = build_references(config, tmp_path, progress=False,
                              models={"model": policy(), "judge": judge(picks)})
    counts = report["counts"]
    # q3 (out of range) and q5 (no JSON) fall back to the candidate with most steps (#2)
    assert counts == {"questions": 5, "candidates": 15, "failed_or_empty": 0,
                      "judge_invalid": 2, "no_steps": 0, "references": 5,
                      "splits": {"train": 4, "test": 1}}
    rows = [json.loads(line) for name in ("train", "test")
            for line in (tmp_path / f"{name}.jsonl").read_text().splitlines()]
    by_id = {row["question_id"]: row for row in rows}
    fair = ["social.fairness_reciprocity", "practical.resources_cost"]
    assert by_id[questions[0].id]["reference"] == fair
    assert by_id[questions[1].id]["reference"] == ["protective.safety_wellbeing_risk"]
    assert by_id[questions[2].id]["reference"] == fair
    prompt = by_id[questions[0].id]["prompt"]
    assert prompt[-1]["content"].endswith("</answer>") and questions[0].text in prompt[-1]["content"]
    assert not prompt[-1]["content"].startswith(questions[0].text)  # a stimulus comes first
    dataset = load_from_disk(str(tmp_path / "dataset"))
    assert set(dataset) == {"train", "test"} and "reference" in dataset["train"].column_names

    again_policy = policy()
    build_references(config, tmp_path, progress=False,
                     models={"model": again_policy, "judge": judge(picks)})
    assert again_policy.calls == []


def test_references_feed_the_dtw_reward(tmp_path):
    from memlens.mitigation import DTWReward

    config = ReferenceConfig(limit=2, candidates=3, labeler="keyword")
    build_references(config, tmp_path, progress=False,
                     models={"model": policy(), "judge": FakeModel(['{"best": 2}'])})
    row = json.loads((tmp_path / "train.jsonl").read_text().splitlines()[0])
    reward = DTWReward("keyword")
    assert reward([CANDIDATES[1], CANDIDATES[2]], reference=[row["reference"]] * 2) == [-0.0,
                                                                                        -1.0]


def test_stimuli_without_persona_or_noise_are_refused_before_any_call(tmp_path):
    from memlens.errors import MemlensError

    stimuli = tmp_path / "stimuli.jsonl"
    stimuli.write_text(json.dumps({"id": "control/none", "class": "control", "category": "none",
                                   "text": ""}) + "\n")
    config = ReferenceConfig(limit=1, candidates=2, labeler="keyword", stimuli=str(stimuli))
    model = policy()
    with pytest.raises(MemlensError, match="no persona or noise stimulus"):
        build_references(config, tmp_path / "out", progress=False,
                         models={"model": model, "judge": FakeModel(['{"best": 1}'])})
    assert model.calls == []


def test_a_judge_must_be_named(tmp_path, capsys):
    """No silent default judge: the API and the CLI both ask for one before any model call."""
    from memlens.cli.main import main

    with pytest.raises(MemlensError, match="a judge model is required"):
        build_references(ReferenceConfig(model="fake", limit=1), tmp_path / "refs", progress=False)
    with pytest.raises(SystemExit):
        main(["mitigate", "references", "--model", "fake", "--out", str(tmp_path / "cli")])
    assert "--judge" in capsys.readouterr().err


def test_resume_under_other_settings_is_refused(tmp_path):
    config = ReferenceConfig(limit=2, candidates=2, labeler="keyword")
    build_references(config, tmp_path, progress=False, models={"model": policy(), "judge": judge({})})
    changed = ReferenceConfig(limit=2, candidates=3, labeler="keyword", max_tokens=64)
    with pytest.raises(MemlensError, match=r"references run with different settings "
                                           r"\(candidates, max_tokens\)"):
        build_references(changed, tmp_path, progress=False,
                         models={"model": policy(), "judge": judge({})})
    again = policy()  # test_fraction only splits the written data set: a resume may change it
    build_references(ReferenceConfig(limit=2, candidates=2, labeler="keyword", test_fraction=0.5),
                     tmp_path, progress=False, models={"model": again, "judge": judge({})})
    assert again.calls == []
