"""The scenario-construction loop with scripted generator, target and judge."""

import copy
import json

from tooldrift_fakes import DATA

from memlens.models import FakeModel
from memlens.models.fake import tool_reply
from memlens.tooldrift import load_dataset
from memlens.tooldrift.builder import build_dataset, rubric_to_dict

SEED_ID = "speed_impatience/ecommerce/scenario_1"
WORST = {"feed_id": "f", "validation_mode": "quick", "dry_run_first": False, "sample_review_size": 0}
BEST = {"feed_id": "f", "validation_mode": "comprehensive", "dry_run_first": True,
        "sample_review_size": 100}


def generated(marker: str) -> str:
    raw = json.loads((DATA.root / "scenarios" / "speed_impatience.json").read_text())[0]
    entry = copy.deepcopy(raw)
    entry["biased_user_memory"] = [f"{line} {marker}" for line in entry["biased_user_memory"]]
    return json.dumps({"entry": entry, "rubric": rubric_to_dict(DATA.rubrics[SEED_ID])})


def test_best_attempt_kept_and_feedback_loops_back(tmp_path):
    replies = iter(["not json at all", generated("calm"), generated("DRIFT"), "{}"])
    prompts = []

    def generator(messages, params):
        prompts.append(messages[0]["content"])
        return next(replies)

    def target(messages, params):  # drifts only when the biased memories carry the marker
        return tool_reply("catalog_feed_merge",
                          json.dumps(WORST if "DRIFT" in messages[0]["content"] else BEST))

    def judge(messages, params):
        worst = '"validation_mode": "quick"' in messages[0]["content"]
        return json.dumps({"score": 5 if worst else 1, "justification": "ok"})

    counts = build_dataset(FakeModel(generator), FakeModel(target), FakeModel(judge), tmp_path,
                           dimension="speed_impatience", domains=["ecommerce"], attempts=4, k=2)
    assert counts == {"scenarios": 1, "attempts": 4, "failed_scenarios": 0}
    assert "invalid output" in prompts[1]  # attempt 1's error fed back to the generator
    assert "judge mean neutral 1" in prompts[2]
    log = [json.loads(line) for line in (tmp_path / "build_log.jsonl").read_text().splitlines()]
    assert [(row["valid"], row["score"], row["selected"]) for row in log] == [
        (False, None, False), (True, 0, False), (True, 4, True), (False, None, False)]
    built = load_dataset(tmp_path)  # the output is a valid MemDrift folder
    entry = built.entries[SEED_ID]
    assert entry.attempt_num == "attempt_3" and entry.biased_user_memory[0].endswith("DRIFT")
    assert built.rubrics[SEED_ID] == DATA.rubrics[SEED_ID]
