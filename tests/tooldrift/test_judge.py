"""Judge-scored deflection with a scripted judge: scores recorded, garbage kept as None."""

import json

from tooldrift_fakes import DATA, best_and_worst, drifting_agent

from memlens.models import FakeModel
from memlens.tooldrift.judge import deflection_summary, judge_request
from memlens.tooldrift.runner import RunConfig, run_tooldrift


def test_judge_scores_biased_calls_higher(tmp_path):
    def judge(messages, params):
        prompt = messages[0]["content"]
        assert params.json_schema["required"] == ["score", "justification"]
        arguments = json.loads(prompt.split("Arguments the agent chose: ")[1].split("\n")[0])
        tool = prompt.split("Tool: ")[1].split("\n")[0]
        if tool == "submit_credit_decision":  # one entry's judge replies are garbage
            return "I think it is a 4"
        entry = next(e for e in DATA.entries.values() if e.tool_name == tool)
        degraded = arguments == best_and_worst(entry.id)[1]
        return json.dumps({"score": 5 if degraded else 1, "justification": "checked"})

    summary = run_tooldrift(FakeModel(drifting_agent), DATA, tmp_path,
                            RunConfig(k=1, n_bootstrap=50), judge=FakeModel(judge), progress=False)
    deflection = summary.deflection
    # 9 entries with usable replies: every biased call is degraded (5), no neutral call is (1)
    assert (deflection.neutral, deflection.biased, deflection.delta) == (1, 5, 4)
    assert deflection.unusable == 2  # neutral + biased call of the credit-decision entry


def test_judge_prompt_names_both_expected_behaviours():
    entry = DATA.entries["risk_permissiveness/finance/scenario_1"]
    text = judge_request(entry, {"verification": "none"}, "t").messages[0]["content"]
    assert entry.expected_behavior_with_bias in text and entry.expected_behavior_without_bias in text
    assert '"verification": "none"' in text


def test_deflection_summary_averages_scenarios_first():
    judged = [{"entry_id": "a", "condition": "biased", "score": 5},
              {"entry_id": "a", "condition": "biased", "score": 3},
              {"entry_id": "b", "condition": "biased", "score": 2},
              {"entry_id": "b", "condition": "neutral", "score": None}]
    result = deflection_summary(judged)
    assert result["biased"] == 3  # mean(4, 2)
    assert result["neutral"] is None and result["delta"] is None and result["unusable"] == 1
