"""GRPO rewards: hand-computed format terms, DTW/SRI against known trajectories, batching,
caching, conversational input, pickling, bad dataset columns."""

from __future__ import annotations

import pickle

import pytest

from memlens.errors import MemlensError
from memlens.metrics import dtw, sri
from memlens.mitigation import (
    DTWReward,
    SRIReward,
    StepLabeling,
    WeightedReward,
    format_reward,
    paper_rewards,
)


class TableLabeler:
    """Labels a step by its first word (A, B, C...), counting label calls; picklable."""

    labeler_id = "table"

    def __init__(self):
        self.batches: list[list[list[str]]] = []

    def label(self, responses):
        self.batches.append(responses)
        return [[step.split()[0] for step in steps] for steps in responses]


def tagged(*steps: str, answer: str | None = "ok") -> str:
    body = "".join(f"<step_{i}>{s}</step_{i}>" for i, s in enumerate(steps, 1))
    return f"<think>{body}</think>" + (f"<answer>{answer}</answer>" if answer is not None else "")


@pytest.mark.parametrize(("text", "expected"), [
    ("<step_", 0.25),                                   # step tag only, no parsable step
    ("<answer>x</answer>", 0.25),                       # answer only
    ("<step1>ab</step1>", 0.5),                         # a tagged step ≥ 2 chars, no '<step_'
    ("<step_1>ab</step_1>", 0.75),                      # tag + length
    (tagged("ab", "long step"), 1.0),                   # all three
    (tagged("a", "long step"), 0.5),                    # shortest step has 1 char
    ("<step_1>   </step_1><step_2>ok</step_2>", 0.75),  # whitespace-only step is empty: skipped
    ("Plain prose. Two sentences.", 0.0),               # untagged steps never count
    ("", 0.0),
])
def test_format_reward_terms(text, expected):
    assert format_reward([text]) == [expected]


def test_format_reward_conversational_equals_plain():
    text = tagged("first", "second")
    conversational = [[{"role": "assistant", "content": text}]]
    assert format_reward(conversational) == format_reward([text]) == [1.0]


def test_dtw_reward_known_trajectories():
    labeler = TableLabeler()
    reward = DTWReward(labeler)
    completions = [tagged("A x", "B y", "C z"), tagged("A q"), "", tagged("B b", "B c")]
    references = [["A", "C", "C", "D"], '["A"]', ["A"], ["B"]]
    values = reward(completions, reference=references)
    # DTW([A,B,C],[A,C,C,D]) = raw 2 / 4; identical → 0; no steps → 1; [B,B] vs [B] → 0
    assert values == [-0.5, -0.0, -1.0, -0.0]
    assert values[0] == -dtw(["A", "B", "C"], ["A", "C", "C", "D"])
    assert len(labeler.batches) == 1  # one batched call for the whole group


def test_unlabeled_steps_leave_the_trajectory_as_in_the_audit():
    """A step the labeler cannot place carries no symbol (same rule as the audit's drift rows):
    [A, unlabeled, C] is scored as [A, C]."""
    reward = DTWReward(TableLabeler())
    completions = [tagged("A x", "unlabeled y", "C z"), tagged("unlabeled only")]
    values = reward(completions, reference=[["A", "C"], ["A"]])
    # [A, C] vs [A, C] -> 0; all steps unlabeled -> empty trajectory vs [A] -> 1
    assert values == [-0.0, -1.0]


def test_labels_are_cached_by_step_text():
    labeler = TableLabeler()
    reward = DTWReward(labeler, reference_column="ref")
    reward([tagged("A 1", "B 2")], ref=[["A", "B"]])
    reward([tagged("A 1", "B 2"), tagged("B 2", "C 3")], ref=[["A"], ["C"]])
    assert labeler.batches == [[["A 1", "B 2"]], [["C 3"]]]


def test_shared_labeling_labels_once_for_dtw_and_sri():
    labeler = TableLabeler()
    rewards = paper_rewards("dtw+sri+fmt", labeler=StepLabeling(labeler))
    kwargs = {"reference": [["B", "A"]]}
    completion = [tagged("A a", "B b")]
    values = {r.__name__: r(completion, **kwargs)[0] for r in rewards}
    assert values == {"format_reward": 1.0, "dtw_reward": -dtw("AB", "BA"),
                      "sri_reward": -sri("AB", "BA")}
    assert values["sri_reward"] == -0.5  # d_seq = 2/2, d_dist = 0
    assert len(labeler.batches) == 1


def test_weighted_sum_hand_computed():
    labeler = TableLabeler()
    total = WeightedReward([(format_reward, 1.0), (DTWReward(labeler), 2.0)])
    # format 1.0 (tag, answer, steps ≥ 2 chars); dtw([A,B],[A]) = 1/2 → 2·(−0.5)
    assert total([tagged("A a", "B b")], reference=[["A"]]) == [1.0 - 1.0]
    assert total.__name__ == "format_reward+2*dtw_reward"


def test_rewards_pickle_round_trip_and_work_after():
    reward = DTWReward("keyword")
    completion = [tagged("Split the bill so each pays a fair share.")]
    before = reward(completion, reference=[["social.fairness_reciprocity"]])
    clone = pickle.loads(pickle.dumps(reward))
    assert clone.labeling._labeler is None  # rebuilt lazily in the worker
    assert clone(completion, reference=[["social.fairness_reciprocity"]]) == before == [-0.0]
    assert pickle.loads(pickle.dumps(format_reward))([tagged("ab")]) == [1.0]
    weighted = pickle.loads(pickle.dumps(WeightedReward([(format_reward, 1), (reward, 1)])))
    assert weighted(completion, reference=[["social.fairness_reciprocity"]]) == [1.0]


def test_missing_reference_column_is_a_clear_error():
    with pytest.raises(MemlensError, match="no column 'reference'.*'question'"):
        DTWReward(TableLabeler())(["x"], question=["q"])


@pytest.mark.parametrize(("cell", "message"), [
    ("[not json", "row 0: not a JSON list"),
    ('{"a": 1}', "row 0: expected a list of symbol ids"),
    ([1, 2], "row 0: expected a list of symbol ids"),
])
def test_bad_reference_cells(cell, message):
    with pytest.raises(MemlensError, match=message):
        SRIReward(TableLabeler())([tagged("A a")], reference=[cell])


def test_unknown_reward_variant():
    with pytest.raises(MemlensError, match="unknown reward"):
        paper_rewards("dtw+kl")
