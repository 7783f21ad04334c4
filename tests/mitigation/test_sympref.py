"""SymPreference builder: hand-counted verdicts, the chosen/rejected rules, pair selection,
rewriting, mixing, resume, and an end-to-end run on the embedded model."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

pytest.importorskip("datasets")

from memlens.errors import MemlensError  # noqa: E402
from memlens.mitigation.judging import JudgeScore, parse_score, verdict  # noqa: E402
from memlens.mitigation.mixing import mix_general  # noqa: E402
from memlens.mitigation.personas import load_personas  # noqa: E402
from memlens.mitigation.sympref import SymPrefConfig, build_sympref  # noqa: E402
from memlens.models import FakeModel  # noqa: E402

INSTRUCTED = ["GOOD", "DISTRACTED", "NEUTRAL", "BROKEN", "GOOD"]
PLAIN = ["VAGUE", "NEUTRAL", "NEUTRAL", "DISTRACTED", ""]
SCORES = {"GOOD": (5, 0, 1), "DISTRACTED": (2, 1, 0), "VAGUE": (3, 0, 0), "NEUTRAL": (5, 0, 0)}


def scripted_generator() -> FakeModel:
    calls: dict[str, int] = defaultdict(int)

    def reply(messages, params):
        key = json.dumps(messages)
        sample = calls[key]
        calls[key] += 1
        arm = INSTRUCTED if messages[0]["role"] == "system" else PLAIN
        return arm[sample] and f"{arm[sample]}: I would think it over. Then act."

    return FakeModel(reply, model_id="scripted-generator")


def scripted_judge() -> FakeModel:
    def reply(messages, params):
        prompt = messages[0]["content"]  # a repair turn keeps the same first prompt
        if "Rewrite" in prompt:
            if "lower-quality" in prompt:
                return "It depends. Maybe."  # untagged: normalised
            return "<think><step_1>The detail is irrelevant.</step_1></think><answer>Act.</answer>"
        answer = prompt.split("<<<")[1]
        if "BROKEN" in answer:
            return "I cannot decide"
        h, d, a = next(v for k, v in SCORES.items() if k in answer)
        return json.dumps({"helpfulness": h, "distracted": d, "acknowledges_irrelevance": a})

    return FakeModel(reply, model_id="scripted-judge")


def build(tmp_path, **changes):
    config = SymPrefConfig(limit=2, **changes)
    generator, judge = scripted_generator(), scripted_judge()
    report = build_sympref(config, tmp_path, progress=False,
                           models={"model": generator, "judge": judge})
    return report, generator, judge


def test_counts_are_hand_computed(tmp_path):
    report, generator, _ = build(tmp_path)
    counts = report["counts"]
    # 2 questions × 3 personas = 6 prompts; × (5 instructed + 5 plain) = 60 candidates
    assert (counts["questions"], counts["prompts"], counts["candidates"]) == (2, 6, 60)
    # per prompt: chosen 2 (GOOD×2), rejected 3 (DISTRACTED×2, VAGUE), neither 3 (NEUTRAL),
    # invalid 1 (BROKEN), empty 1
    assert counts["verdicts"] == {"chosen": 12, "rejected": 18, "neither": 18, "invalid": 6,
                                  "empty": 6}
    assert counts["pairs_selected"] == counts["pairs_kept"] == 6
    assert counts["rewrites"] == {"rewritten": 6, "normalised": 6, "failed": 0}
    assert counts["splits"] == {"train": 4, "test": 2}
    assert len(generator.calls) == 60
    row = json.loads((tmp_path / "train.jsonl").read_text().splitlines()[0])
    assert row["prompt"][0]["role"] == "system" and "<step_1>" in row["prompt"][0]["content"]
    assert row["chosen_h"] == 5 and row["rejected_h"] == 2  # least helpful rejected first
    assert row["chosen"][0]["content"].startswith("<think><step_1>")
    assert row["rejected"][0]["content"] == ("<think><step_1>It depends.</step_1></think>"
                                             "<answer>Maybe.</answer>")
    saved = json.loads((tmp_path / "sympref_report.json").read_text())
    assert saved["counts"]["chosen"] == 12


def test_all_pairs_and_resume_without_calls(tmp_path):
    report, _, _ = build(tmp_path, pairs_per_prompt=0)
    assert report["counts"]["pairs_kept"] == 6 * 2 * 3  # chosen × rejected per prompt
    again, generator, judge = build(tmp_path, pairs_per_prompt=0)
    assert again["counts"]["pairs_kept"] == 36
    assert generator.calls == [] and judge.calls == []  # everything came from the run store


def test_personas_are_three_distinct_per_question(tmp_path):
    build(tmp_path)
    from memlens.store import RunStore

    with RunStore(tmp_path) as store:
        rows = store.rows("sympref_candidates")
    by_question = defaultdict(set)
    for row in rows:
        by_question[row["question_id"]].add(row["persona_id"])
    known = {p.id for p in load_personas()}
    assert all(len(ids) == 3 and ids <= known for ids in by_question.values())


@pytest.mark.parametrize(("scores", "expected"), [
    ((5, 0, 1), "chosen"), ((4, 1, 0), "rejected"), ((1, 0, 0), "rejected"),
    ((4, 0, 1), "neither"), ((5, 1, 1), "neither"), ((5, 0, 0), "neither"),
])
def test_rules(scores, expected):
    assert verdict(JudgeScore(*scores)) == expected


@pytest.mark.parametrize("reply", [
    '{"helpfulness": 0, "distracted": 0, "acknowledges_irrelevance": 1}',
    '{"helpfulness": 5, "distracted": 2, "acknowledges_irrelevance": 1}',
    '{"helpfulness": 5, "distracted": 0}', '{"helpfulness": 4.5, "distracted": 0, '
    '"acknowledges_irrelevance": 1}', "[5, 0, 1]", "",
])
def test_garbage_judge_replies_are_invalid_not_errors(reply):
    assert verdict(parse_score(reply)) == "invalid"


def test_mixing_drops_ties_and_length_mismatch(tmp_path):
    general = tmp_path / "general.jsonl"
    lines = [
        {"prompt": "p1", "chosen": "a b c", "rejected": "a b"},                     # kept
        {"prompt": "p2", "chosen": "same", "rejected": "same"},                     # tie
        {"prompt": "p3", "chosen": "x", "rejected": "y", "score_chosen": 3,
         "score_rejected": 3},                                                      # tie
        {"prompt": "p4", "chosen": " ".join(["w"] * 25), "rejected": "w w w w"},    # diff 21
        {"prompt": "p5", "chosen": " ".join(["w"] * 24), "rejected": "w w w w"},    # diff 20
    ]
    general.write_text("\n".join(json.dumps(line) for line in lines))
    rows = [{"prompt": [], "chosen": [], "rejected": []}] * 4
    mixed, counts = mix_general(rows, general, 0.5, 20, seed=0)
    assert counts == {"read": 5, "dropped_tie": 2, "dropped_length": 1, "eligible": 2,
                      "added": 2}
    assert len(mixed) == 6 and {r["prompt"][0]["content"] for r in mixed[4:]} == {"p1", "p5"}
    general.write_text('{"prompt": "p", "chosen": 3}\n')
    with pytest.raises(MemlensError, match=r"general.jsonl:1: field 'chosen'"):
        mix_general(rows, general, 0.5, 20, seed=0)


@pytest.mark.embedded
def test_end_to_end_on_the_embedded_model(tmp_path):
    """SmolLM2 writes the candidates, the rewrites are by the same model; a FakeModel judge
    scores by a fixed rule so chosen and rejected both occur."""
    from memlens.models import get_model

    smollm = get_model("embedded")

    def judge(messages, params):
        prompt = messages[-1]["content"]
        if "Rewrite" in prompt:
            return smollm.complete(messages, params).text
        answer = prompt.split("<<<")[1]
        h = 5 if len(answer.split()) % 2 == 0 else 3  # arbitrary but fixed
        return json.dumps({"helpfulness": h, "distracted": 0, "acknowledges_irrelevance":
                           int(h == 5)})

    config = SymPrefConfig(limit=1, personas_per_question=1, samples_per_arm=1, max_tokens=32)
    report = build_sympref(config, tmp_path, progress=False,
                           models={"model": smollm, "judge": FakeModel(judge)})
    counts = report["counts"]
    assert counts["candidates"] == 2
    empty = counts["verdicts"].get("empty", 0) + counts["verdicts"].get("failed_call", 0)
    assert counts["chosen"] + counts["rejected"] + empty == 2
    assert counts["pairs_kept"] == min(1, counts["chosen"] * counts["rejected"])
    assert counts["splits"]["train"] + counts["splits"]["test"] == counts["pairs_kept"]


def test_resume_under_other_settings_is_refused(tmp_path):
    build(tmp_path, samples_per_arm=1)
    with pytest.raises(MemlensError, match=r"different settings \(samples_per_arm, seed\)"):
        build(tmp_path, samples_per_arm=2, seed=4)
    # the split only shapes the written data set from the stored rows: allowed, no new calls
    _, generator, judge = build(tmp_path, samples_per_arm=1, test_fraction=0.5)
    assert generator.calls == [] and judge.calls == []
